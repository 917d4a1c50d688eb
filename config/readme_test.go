package config_test

import (
	"os"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/config"
)

// The README's configuration table is the user's view of config.Variables;
// this keeps the two from drifting apart.
func TestREADMEListsEveryVariable(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, v := range config.Variables {
		row := "| `" + v.Name + "` |"
		if !strings.Contains(readme, row) {
			t.Errorf("README's configuration table has no row for %s", v.Name)
		}
		if v.Default != "" && !strings.Contains(readme, row+" `"+v.Default+"` |") {
			t.Errorf("README shows a different default for %s (want %q)", v.Name, v.Default)
		}
	}
}
