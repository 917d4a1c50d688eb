package workflows_test

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"

	pressroomworker "github.com/pressroom/pressroom/worker"
)

// TestReplayRecordedHistories replays histories of real runs (recorded by
// the e2e tests with PRESSROOM_RECORD_HISTORY=1) against the current
// workflow code. A failure means a change is not deterministic for
// workflows already running: version it with workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/*.history.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			pressroomworker.RegisterWorkflows(r)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}
