package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
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
func fakeRevisionsAPI(t *testing.T, post func(w http.ResponseWriter, r *http.Request), revision func(n int32) string) *httptest.Server {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.api+json")
		switch {
		case r.Method == "GET" && r.URL.Path == "/drafts":
			serveDrafts(t, w, r)
		case r.Method == "GET" && r.URL.Path == "/users/me":
			fmt.Fprint(w, `{"data":{"type":"users","id":"u1","attributes":{"email":"ed@demo.test","name":"Ed"}}}`)
		case r.Method == "GET" && r.URL.Path == "/users/u2":
			fmt.Fprint(w, `{"data":{"type":"users","id":"u2","attributes":{"email":"ann@demo.test","name":"Ann"}}}`)
		case r.Method == "POST" && r.URL.Path == "/publish-plans":
			// d1 (ed's) needs the page ann created (d2) published with it.
			fmt.Fprint(w, `{"data":{"type":"publish-plans","id":"p","attributes":{}},"included":[`+draftJSON("d1", "u1", "create", "contents", "c1", `{"title":[null,"Intro"]}`)+`,`+
				draftJSON("d2", "u2", "create", "pages", "p2", `{"title":[null,"News"],"slug":[null,"news"]}`)+`]}`)
		case r.Method == "POST" && r.URL.Path == "/revisions":
			if r.Header.Get("Idempotency-Key") == "" {
				t.Error("POST /revisions without an Idempotency-Key")
			}
			post(w, r)
		case r.Method == "GET" && r.URL.Path == "/revisions/r1":
			fmt.Fprint(w, revision(gets.Add(1)))
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func draftJSON(id, user, event, itemType, itemID, changes string) string {
	return fmt.Sprintf(`{"type":"drafts","id":%q,"attributes":{"event":%q,"object-changes":%s,"created-at":"2026-11-27T10:00:00Z","updated-at":"2026-11-27T10:00:00Z"},
		"relationships":{"item":{"data":{"type":%q,"id":%q}},"user":{"data":{"type":"users","id":%q}}}}`, id, event, changes, itemType, itemID, user)
}

// serveDrafts answers GET /drafts as the API does for the CLI's query:
// newest first, with users and items included; filter[user] keeps one
// user's drafts.
func serveDrafts(t *testing.T, w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("sort") != "-updated-at" || q.Get("include") != "user,item" {
		t.Errorf("GET /drafts?%s: want sort=-updated-at and include=user,item", r.URL.RawQuery)
	}
	data := []string{
		draftJSON("d3", "u2", "update", "pages", "p1", `{"title":["About","About us"],"slug":["about","about-us"],"parent-id":[null,"p9"]}`),
		draftJSON("d1", "u1", "create", "contents", "c1", `{"title":[null,"Intro\u001b[31m"]}`),
		draftJSON("d4", "u2", "delete", "content-blocks", "b1", `{}`),
	}
	if f := q.Get("filter[user]"); f != "" {
		if f != "u1" {
			t.Errorf("filter[user]=%s, want the caller's id u1", f)
		}
		data = data[1:2]
	}
	fmt.Fprint(w, `{"data":[`+strings.Join(data, ",")+`],"included":[
		{"type":"users","id":"u1","attributes":{"email":"ed@demo.test","name":"Ed"}},
		{"type":"users","id":"u2","attributes":{"email":"ann@demo.test","name":"Ann"}},
		{"type":"pages","id":"p1","attributes":{"title":"About us","path":"/team/about-us"}},
		{"type":"contents","id":"c1","attributes":{"title":"Intro\u001b[31m"}},
		{"type":"content-blocks","id":"b1","attributes":{"var-name":"body"}}],
		"links":{"next":null},"meta":{"total":3}}`)
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
	o := tokenOptions(srv, &out, io.Discard, "", false)
	res, err := Publish(context.Background(), o, PublishOptions{All: true, Yes: true, Comment: "c", Wait: wait})
	return res, out.String(), err
}

func tokenOptions(srv *httptest.Server, stdout, stderr io.Writer, stdin string, terminal bool) Options {
	return Options{API: srv.URL, Getenv: func(k string) string {
		if k == "PRESSROOM_TOKEN" {
			return "tok"
		}
		return ""
	}, Stdin: strings.NewReader(stdin), Stdout: stdout, Stderr: stderr, ConfigDir: "/nonexistent", Terminal: terminal}
}

func TestPublishFollowsARevisionStillPublishing(t *testing.T) {
	t.Parallel()
	srv := fakeRevisionsAPI(t, func(w http.ResponseWriter, _ *http.Request) {
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
	srv = fakeRevisionsAPI(t, func(w http.ResponseWriter, _ *http.Request) {
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
	srv := fakeRevisionsAPI(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(422)
		fmt.Fprint(w, `{"errors":[{"status":"422","code":"publish_failed","title":"Publish failed","detail":"the page's parent was deleted"}]}`)
	}, nil)
	res, out, err := publishWith(srv, time.Minute)
	if !errors.Is(err, ErrPublishFailed) || res == nil || res.Status != "failed" || out != "failed: the page's parent was deleted\n" {
		t.Errorf("Publish = %+v, %q, %v; want a failure with the server's reason", res, out, err)
	}

	srv = fakeRevisionsAPI(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(409)
		fmt.Fprint(w, `{"errors":[{"status":"409","code":"draft_in_flight","detail":"draft d1 is held by revision r0"}]}`)
	}, nil)
	_, _, err = publishWith(srv, time.Minute)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 409 || !strings.Contains(err.Error(), "draft d1 is held by revision r0") {
		t.Errorf("Publish against a 409 = %v; want the API's error", err)
	}
}

func TestDraftListNewestFirstWithAuthorAndSummary(t *testing.T) {
	t.Parallel()
	srv := fakeRevisionsAPI(t, nil, nil)
	var out bytes.Buffer
	o := tokenOptions(srv, &out, io.Discard, "", false)
	if _, err := Publish(context.Background(), o, PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC).Local().Format("2006-01-02 15:04")
	// In the API's order (newest first); a title's escape sequence is not
	// passed to the terminal.
	want := "DRAFT  UPDATED           AUTHOR         CHANGE\n" +
		"d3     " + at + "  ann@demo.test  update page /team/about-us: parent, slug, title\n" +
		"d1     " + at + "  ed@demo.test   create content \"Intro\\x1b[31m\"\n" +
		"d4     " + at + "  ann@demo.test  delete content block body\n"
	if out.String() != want {
		t.Errorf("list =\n%s\nwant\n%s", out.String(), want)
	}
}

func TestSummaryWithoutTheRecord(t *testing.T) {
	t.Parallel()
	d := Draft{Event: "create", ItemType: "pages", ItemID: "p1"}
	if got := summarize(d, resource{}, map[string]any{"title": []any{nil, "News\x1b]0;pwned\x07"}}); got != `create page "News\x1b]0;pwned\a"` {
		t.Errorf("summary = %q", got)
	}
	if got := printable("a\x1b[2Jb\tc\u009bd"); got != "a [2Jb c d" {
		t.Errorf("printable = %q", got)
	}
}

// posts counts POST /revisions.
func countingPost(n *atomic.Int32) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(201)
		fmt.Fprint(w, revisionDoc("published", 3, ""))
	}
}

func TestPublishAllAsksFirst(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	srv := fakeRevisionsAPI(t, countingPost(&posts), nil)
	ctx := context.Background()

	// No terminal, no --yes: refused, nothing published.
	var stdout, stderr bytes.Buffer
	_, err := Publish(ctx, tokenOptions(srv, &stdout, &stderr, "", false), PublishOptions{All: true})
	if !errors.Is(err, ErrNotConfirmed) || !strings.Contains(err.Error(), "would publish 3 drafts by 2 people") ||
		!strings.Contains(err.Error(), "--yes") || posts.Load() != 0 {
		t.Errorf("--all without a terminal = %v, %d posts", err, posts.Load())
	}

	// On a terminal it lists the drafts and asks; "n" (or nothing) publishes nothing.
	for _, answer := range []string{"n\n", "\n", ""} {
		stdout.Reset()
		stderr.Reset()
		res, err := Publish(ctx, tokenOptions(srv, &stdout, &stderr, answer, true), PublishOptions{All: true})
		if err != nil || res != nil || posts.Load() != 0 || !strings.Contains(stderr.String(), "Publish 3 drafts by 2 people? [y/N] ") ||
			!strings.Contains(stdout.String(), "ann@demo.test") {
			t.Errorf("--all answered %q = %+v, %v, %d posts\n%s%s", answer, res, err, posts.Load(), stdout.String(), stderr.String())
		}
	}
	res, err := Publish(ctx, tokenOptions(srv, io.Discard, io.Discard, "y\n", true), PublishOptions{All: true})
	if err != nil || res.Status != "published" || posts.Load() != 1 {
		t.Errorf("--all answered y = %+v, %v, %d posts", res, err, posts.Load())
	}
	// --yes does not ask, terminal or not.
	res, err = Publish(ctx, tokenOptions(srv, io.Discard, io.Discard, "", false), PublishOptions{All: true, Yes: true})
	if err != nil || res.Status != "published" || posts.Load() != 2 {
		t.Errorf("--all --yes = %+v, %v, %d posts", res, err, posts.Load())
	}
}

// TestPublishMine: only the caller's drafts are listed (filter[user]) and
// published; when they need another editor's draft published with them
// (the publish plan's closure), that is named and asked about.
func TestPublishMine(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	srv := fakeRevisionsAPI(t, func(w http.ResponseWriter, r *http.Request) {
		// Only the caller's draft is listed: d2 comes with it by the
		// closure, on the server.
		if b, _ := io.ReadAll(r.Body); !strings.Contains(string(b), `"id":"d1"`) || strings.Contains(string(b), `"id":"d2"`) ||
			strings.Contains(string(b), `"id":"d3"`) {
			t.Errorf("POST /revisions lists %s; want d1 only", b)
		}
		countingPost(&posts)(w, r)
	}, nil)
	ctx := context.Background()
	var stderr bytes.Buffer
	_, err := Publish(ctx, tokenOptions(srv, io.Discard, &stderr, "", false), PublishOptions{Mine: true})
	if !errors.Is(err, ErrNotConfirmed) || posts.Load() != 0 ||
		!regexp.MustCompile(`Your drafts need 1 draft by other people published with them:\n.*\nd2 .* ann@demo.test +create page "News"`).MatchString(stderr.String()) {
		t.Errorf("--mine needing ann's draft, no terminal = %v, %d posts\n%s", err, posts.Load(), stderr.String())
	}
	stderr.Reset()
	res, err := Publish(ctx, tokenOptions(srv, io.Discard, &stderr, "y\n", true), PublishOptions{Mine: true})
	if err != nil || res.Status != "published" || posts.Load() != 1 || !strings.Contains(stderr.String(), "Publish those too? [y/N]") {
		t.Errorf("--mine answered y = %+v, %v, %d posts\n%s", res, err, posts.Load(), stderr.String())
	}
	if _, err := Publish(ctx, tokenOptions(srv, io.Discard, io.Discard, "", false), PublishOptions{Mine: true, Yes: true}); err != nil || posts.Load() != 2 {
		t.Errorf("--mine --yes = %v, %d posts", err, posts.Load())
	}
	if _, err := Publish(ctx, tokenOptions(srv, io.Discard, io.Discard, "", false), PublishOptions{Mine: true, All: true}); err == nil {
		t.Error("--mine with --all was taken")
	}
}
