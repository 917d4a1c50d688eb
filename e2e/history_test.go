package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// recordHistory writes a finished workflow's history into
// workflows/testdata for the replay test, when PRESSROOM_RECORD_HISTORY is
// set: `PRESSROOM_RECORD_HISTORY=1 go test -run TestUploadPNGEndToEnd ./e2e/`.
// Replaying it proves that changed workflow code still accepts histories of
// runs already in flight.
func (s *system) recordHistory(t *testing.T, workflowID, name string) {
	t.Helper()
	if os.Getenv("PRESSROOM_RECORD_HISTORY") == "" {
		return
	}
	it := s.Temporal.GetWorkflowHistory(context.Background(), workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "workflows", "testdata", name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d events of %s in %s", len(h.Events), workflowID, path)
}
