package client_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestClientDescriptionIsCurrent: the client was generated from the
// description the server serves now.
func TestClientDescriptionIsCurrent(t *testing.T) {
	committed, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "run", "../dev/cmd/openapi").Output()
	if err != nil {
		t.Fatalf("go run ../dev/cmd/openapi: %v", err)
	}
	if !bytes.Equal(committed, out) {
		t.Errorf("client/openapi.json is not the description the API serves: run `go generate ./client` and commit the result")
	}
}
