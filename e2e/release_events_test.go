package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/workflows"
)

// Releases for operators (issue 29 §4, docs/releases.md): the webhook
// events release.published and release.cancelled reach a receiver, once
// each, signed, naming the release and its revision; the publish workflow
// of a release's revision carries the search attribute PressroomReleaseId,
// and Temporal's visibility finds it by the release.

func TestReleaseEventsAndSearchAttribute(t *testing.T) {
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	hookID, secret := e.createWebhook(rcv.URL+"/hook", "release.published", "release.cancelled")

	published := e.createRelease("Launch")
	_, draft := e.page("Launch", "launch", "")
	e.mustStage(published, draft)
	d := e.publishRelease(published)
	if d.Status != 201 {
		t.Fatalf("publish the release = %d %s", d.Status, d.Raw)
	}
	rev := d.resource(t).ID
	cancelled := e.createRelease("Dropped")
	_, other := e.page("Dropped", "dropped", "")
	e.mustStage(cancelled, other)
	if d := e.do(http.MethodDelete, "/releases/"+cancelled, nil); d.Status != 204 {
		t.Fatalf("cancel = %d %s", d.Status, d.Raw)
	}
	// An open release, and a staging, send nothing.
	e.createRelease("Still open")

	e.awaitDeliveries(hookID, 2, time.Minute)
	time.Sleep(500 * time.Millisecond) // nothing more arrives
	count := map[string]int{}
	for _, r := range rcv.requests() {
		verifySignature(t, secret, r)
		var msg struct {
			Type string
			Data struct {
				Data struct {
					Type, ID      string
					Attributes    map[string]any
					Relationships map[string]struct{ Data *struct{ Type, ID string } }
				}
			}
		}
		if err := json.Unmarshal(r.Body, &msg); err != nil {
			t.Fatalf("body %s: %v", r.Body, err)
		}
		count[msg.Type]++
		res, revision := msg.Data.Data, msg.Data.Data.Relationships["revision"].Data
		switch msg.Type {
		case "release.published":
			if res.Type != "releases" || res.ID != published || res.Attributes["status"] != "published" || revision == nil || revision.Type != "revisions" || revision.ID != rev {
				t.Errorf("release.published body = %s (release %s, revision %s)", r.Body, published, rev)
			}
		case "release.cancelled":
			if res.Type != "releases" || res.ID != cancelled || res.Attributes["status"] != "cancelled" || revision != nil {
				t.Errorf("release.cancelled body = %s (release %s)", r.Body, cancelled)
			}
		}
	}
	if count["release.published"] != 1 || count["release.cancelled"] != 1 || len(rcv.requests()) != 2 {
		t.Fatalf("the receiver counted %v in %d requests, want one of each", count, len(rcv.requests()))
	}
	for _, d := range e.deliveries(hookID) {
		if d.Attributes["status"] != "succeeded" {
			t.Errorf("delivery %s = %v", d.ID, d.Attributes)
		}
	}

	// The operator's view: the release's publish workflow, found by the
	// release in Temporal's visibility, and its search attributes.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wfID := workflows.PublishRevisionID(rev)
	s.awaitVisible(ctx, t, fmt.Sprintf(`PressroomReleaseId = %q AND WorkflowId = %q`, published, wfID), 1)
	s.awaitVisible(ctx, t, fmt.Sprintf(`PressroomReleaseId = %q`, published), 1)
	s.awaitVisible(ctx, t, fmt.Sprintf(`PressroomReleaseId = %q`, cancelled), 0)
	fields := s.describe(t, wfID).GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
	for name, want := range map[string]string{"PressroomReleaseId": published, "PressroomRevisionId": rev} {
		if fields[name] == nil || !strings.Contains(string(fields[name].GetData()), want) {
			t.Errorf("search attribute %s = %v, want %s", name, fields[name], want)
		}
	}
}
