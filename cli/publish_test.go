package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The published path runs against the real API in e2e/cli_test.go; these
// cover the outcomes a real stack cannot be made to give on demand: a
// revision still publishing when the POST returns, and a failed publish.
// The fake answers only what Publish asks, in the API's documented shapes
// (docs/drafts.md).
func fakeRevisionsAPI(t *testing.T, post func(w http.ResponseWriter), revision func(n int32) string) *httptest.Server {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.api+json")
		switch {
		case r.Method == "GET" && r.URL.Path == "/drafts":
			fmt.Fprint(w, `{"data":[{"type":"drafts","id":"d1","attributes":{"event":"create","object-changes":{"title":[null,"About"]}},
				"relationships":{"item":{"data":{"type":"pages","id":"p1"}}}}],"links":{"next":null},"meta":{"total":1}}`)
		case r.Method == "POST" && r.URL.Path == "/revisions":
			if r.Header.Get("Idempotency-Key") == "" {
				t.Error("POST /revisions without an Idempotency-Key")
			}
			post(w)
		case r.Method == "GET" && r.URL.Path == "/revisions/r1":
			fmt.Fprint(w, revision(gets.Add(1)))
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func revisionDoc(status string, versions int, msg string) string {
	m := "null"
	if msg != "" {
		m = fmt.Sprintf("%q", msg)
	}
	return fmt.Sprintf(`{"data":{"type":"revisions","id":"r1","attributes":{"comments":"c","status":%q,"versions-count":%d,"error-message":%s}}}`, status, versions, m)
}

func publishWith(srv *httptest.Server, wait time.Duration) (*PublishResult, string, error) {
	var out bytes.Buffer
	o := Options{API: srv.URL, Getenv: func(k string) string {
		if k == "PRESSROOM_TOKEN" {
			return "tok"
		}
		return ""
	}, Stdout: &out, Stderr: io.Discard, ConfigDir: "/nonexistent"}
	res, err := Publish(context.Background(), o, PublishOptions{All: true, Comment: "c", Wait: wait})
	return res, out.String(), err
}

func TestPublishFollowsARevisionStillPublishing(t *testing.T) {
	t.Parallel()
	srv := fakeRevisionsAPI(t, func(w http.ResponseWriter) {
		w.WriteHeader(202)
		fmt.Fprint(w, revisionDoc("publishing", 0, ""))
	}, func(n int32) string {
		if n < 2 {
			return revisionDoc("publishing", 0, "")
		}
		return revisionDoc("published", 3, "")
	})
	res, out, err := publishWith(srv, time.Minute)
	if err != nil || res.Status != "published" || out != "published: revision r1, 3 versions\n" {
		t.Errorf("Publish = %+v, %q, %v; want published after following the revision", res, out, err)
	}

	// When it is still publishing after the wait, it says so; not a failure.
	srv = fakeRevisionsAPI(t, func(w http.ResponseWriter) {
		w.WriteHeader(202)
		fmt.Fprint(w, revisionDoc("publishing", 0, ""))
	}, func(int32) string { return revisionDoc("publishing", 0, "") })
	res, out, err = publishWith(srv, time.Millisecond)
	if err != nil || res.Status != "publishing" || !strings.HasPrefix(out, "still publishing: revision r1") {
		t.Errorf("Publish = %+v, %q, %v; want still publishing", res, out, err)
	}
}

func TestPublishFailureIsAnErrorWithTheReason(t *testing.T) {
	t.Parallel()
	srv := fakeRevisionsAPI(t, func(w http.ResponseWriter) {
		w.WriteHeader(422)
		fmt.Fprint(w, `{"errors":[{"status":"422","code":"publish_failed","title":"Publish failed","detail":"the page's parent was deleted"}]}`)
	}, nil)
	res, out, err := publishWith(srv, time.Minute)
	if !errors.Is(err, ErrPublishFailed) || res == nil || res.Status != "failed" || out != "failed: the page's parent was deleted\n" {
		t.Errorf("Publish = %+v, %q, %v; want a failure with the server's reason", res, out, err)
	}

	srv = fakeRevisionsAPI(t, func(w http.ResponseWriter) {
		w.WriteHeader(409)
		fmt.Fprint(w, `{"errors":[{"status":"409","code":"draft_in_flight","detail":"draft d1 is held by revision r0"}]}`)
	}, nil)
	_, _, err = publishWith(srv, time.Minute)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 409 || !strings.Contains(err.Error(), "draft d1 is held by revision r0") {
		t.Errorf("Publish against a 409 = %v; want the API's error", err)
	}
}

func TestDraftListShowsTitles(t *testing.T) {
	t.Parallel()
	srv := fakeRevisionsAPI(t, nil, nil)
	var out bytes.Buffer
	o := Options{API: srv.URL, Getenv: func(string) string { return "tok" }, Stdout: &out, Stderr: io.Discard}
	if _, err := Publish(context.Background(), o, PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "DRAFT  EVENT   RECORD    TITLE\nd1     create  pages/p1  About\n"; out.String() != want {
		t.Errorf("list = %q, want %q", out.String(), want)
	}
}
