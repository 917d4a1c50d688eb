package e2e

// Webhooks (docs/webhooks.md) end to end: a real receiver on loopback (the
// tests set PRESSROOM_WEBHOOK_ALLOW_PRIVATE, testsupport.Config), events
// from real publishes and reverts, the worker's dispatcher and workflows.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/worker"
	"github.com/pressroom/pressroom/workflows"
)

// received is one request a receiver got.
type received struct {
	ID, Timestamp, Signature string
	Body                     []byte
	At                       time.Time
}

// receiver is a webhook endpoint on loopback that answers each request
// with the status answer gives it (by the request's number, from 1).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int) int
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	t.Helper()
	r := &receiver{answer: answer}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got = append(r.got, received{ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
		Signature: req.Header.Get("webhook-signature"), Body: body, At: time.Now()})
	n := len(r.got)
	r.mu.Unlock()
	status := 200
	if r.answer != nil {
		status = r.answer(n)
	}
	w.WriteHeader(status)
	fmt.Fprintf(w, "answer %d to request %d", status, n)
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// verifySignature checks a request the way the Standard Webhooks
// specification describes it: HMAC-SHA256, under the base64-decoded part
// of the secret after "whsec_", of "<webhook-id>.<webhook-timestamp>.<body>",
// base64-encoded after "v1," in webhook-signature (space-separated list).
func verifySignature(t *testing.T, secret string, r received) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q is not whsec_<base64>", secret)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(r.ID + "." + r.Timestamp + "."))
	m.Write(r.Body)
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	for _, sig := range strings.Fields(r.Signature) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			var ts int64
			if _, err := fmt.Sscan(r.Timestamp, &ts); err != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
				t.Fatalf("webhook-timestamp %q is not now", r.Timestamp)
			}
			return
		}
	}
	t.Fatalf("webhook-signature %q does not verify (want %s)", r.Signature, want)
}

// createWebhook posts a webhook and returns its id and the secret the 201 shows.
func (e *editor) createWebhook(url string, events ...string) (string, string) {
	e.t.Helper()
	d := e.do(http.MethodPost, "/webhooks", map[string]any{"data": map[string]any{"type": "webhooks",
		"attributes": map[string]any{"url": url, "events": events, "description": "test receiver"}}})
	if d.Status != 201 {
		e.t.Fatalf("POST /webhooks = %d %s", d.Status, d.Raw)
	}
	r := d.resource(e.t)
	secret, _ := r.Attributes["secret"].(string)
	return r.ID, secret
}

// deliveries lists a webhook's deliveries (newest first).
func (e *editor) deliveries(webhookID string) []resource {
	e.t.Helper()
	d := e.do(http.MethodGet, "/webhooks/"+webhookID+"/deliveries", nil)
	if d.Status != 200 {
		e.t.Fatalf("GET deliveries = %d %s", d.Status, d.Raw)
	}
	var rs []resource
	if err := json.Unmarshal(d.Data, &rs); err != nil {
		e.t.Fatal(err)
	}
	return rs
}

// awaitDeliveries waits until the webhook has n deliveries, none pending.
func (e *editor) awaitDeliveries(webhookID string, n int, within time.Duration) []resource {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for {
		ds := e.deliveries(webhookID)
		done := len(ds) == n
		for _, d := range ds {
			done = done && d.Attributes["status"] != "pending"
		}
		if done {
			return ds
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("deliveries of %s after %s: %+v", webhookID, within, ds)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// revertedDraft creates a page and reverts its draft: a draft.reverted
// event, committed by the API alone (no worker needed).
func (e *editor) revertedDraft(slug string) string {
	e.t.Helper()
	_, draft := e.page("Page "+slug, slug, "")
	if d := e.do(http.MethodDelete, "/drafts/"+draft, nil); d.Status != 204 {
		e.t.Fatalf("DELETE /drafts = %d %s", d.Status, d.Raw)
	}
	return draft
}

func TestWebhookPublishDeliversASignedEvent(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	hookID, secret := e.createWebhook(rcv.URL+"/hook", "revision.published", "draft.reverted")
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < 40 {
		t.Fatalf("the 201 shows secret %q", secret)
	}
	masked := "whsec_…" + secret[len(secret)-4:]
	got := e.do(http.MethodGet, "/webhooks/"+hookID, nil).resource(t)
	if got.Attributes["secret"] != masked || got.Attributes["active"] != true || got.Attributes["url"] != rcv.URL+"/hook" {
		t.Fatalf("GET /webhooks/:id = %+v (secret should be %q)", got.Attributes, masked)
	}

	_, draft := e.page("Home", "home", "")
	rev := e.mustPublish(draft)
	ds := e.awaitDeliveries(hookID, 1, time.Minute)
	reqs := rcv.requests()
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(reqs))
	}
	verifySignature(t, secret, reqs[0])
	var msg struct {
		Type      string
		Timestamp string
		Data      struct {
			Data struct {
				Type, ID   string
				Attributes map[string]any
			}
		}
	}
	if err := json.Unmarshal(reqs[0].Body, &msg); err != nil {
		t.Fatalf("body %s: %v", reqs[0].Body, err)
	}
	if _, err := time.Parse(time.RFC3339, msg.Timestamp); err != nil || msg.Type != "revision.published" ||
		msg.Data.Data.Type != "revisions" || msg.Data.Data.ID != rev.ID || msg.Data.Data.Attributes["status"] != "published" {
		t.Fatalf("body = %s", reqs[0].Body)
	}
	d := ds[0]
	if d.Type != "webhook-deliveries" || reqs[0].ID != d.ID || d.Attributes["status"] != "succeeded" || d.Attributes["attempts"] != 1.0 ||
		d.Attributes["last-status-code"] != 200.0 || d.Attributes["event"] != "revision.published" || d.Attributes["delivered-at"] == nil {
		t.Fatalf("delivery = %+v (webhook-id %s)", d, reqs[0].ID)
	}
	s.awaitWorkflow(t, workflows.WebhookDeliveryID(d.ID), time.Minute)
	s.recordHistory(t, workflows.WebhookDeliveryID(d.ID), "webhook-delivery-succeeded.history.json")
	if one := e.do(http.MethodGet, "/webhook-deliveries/"+d.ID, nil); one.Status != 200 || !strings.Contains(string(one.Raw), hookID) {
		t.Fatalf("GET /webhook-deliveries/:id = %d %s", one.Status, one.Raw)
	}
	// The operator's view: the workflow carries both search attributes.
	wf := s.describe(t, workflows.WebhookDeliveryID(d.ID))
	fields := wf.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
	for _, name := range []string{"PressroomSiteId", "PressroomWebhookId"} {
		if fields[name] == nil || !strings.Contains(string(fields[name].GetData()), map[string]string{"PressroomSiteId": s.Site.ID.String(), "PressroomWebhookId": hookID}[name]) {
			t.Errorf("search attribute %s = %v", name, fields[name])
		}
	}

	// A revert is the next event; it arrives after the publish.
	reverted := e.revertedDraft("gone")
	ds = e.awaitDeliveries(hookID, 2, time.Minute)
	reqs = rcv.requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), `"type":"draft.reverted"`) || !strings.Contains(string(reqs[1].Body), reverted) {
		t.Fatalf("second request: %d requests, last %s", len(reqs), reqs[len(reqs)-1].Body)
	}
	verifySignature(t, secret, reqs[1])

	// Rotating the secret shows the new one once; deliveries sign with it.
	p := e.do(http.MethodPatch, "/webhooks/"+hookID, map[string]any{"data": map[string]any{"type": "webhooks", "id": hookID,
		"attributes": map[string]any{"rotate-secret": true}}})
	rotated, _ := p.resource(t).Attributes["secret"].(string)
	if p.Status != 200 || rotated == secret || !strings.HasPrefix(rotated, "whsec_") || strings.Contains(rotated, "…") {
		t.Fatalf("PATCH rotate-secret = %d %s", p.Status, p.Raw)
	}
	if again := e.do(http.MethodGet, "/webhooks/"+hookID, nil).resource(t); again.Attributes["secret"] != "whsec_…"+rotated[len(rotated)-4:] {
		t.Fatalf("after rotation GET shows %v", again.Attributes["secret"])
	}
	e.revertedDraft("gone-again")
	e.awaitDeliveries(hookID, 3, time.Minute)
	verifySignature(t, rotated, rcv.requests()[2])
}

func TestWebhookRetriesUntilTheReceiverSucceeds(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, func(n int) int {
		if n <= 2 {
			return 500
		}
		return 200
	})
	hookID, secret := e.createWebhook(rcv.URL, "draft.reverted")
	e.revertedDraft("retried")
	// While it retries, the Temporal UI shows the last error on the
	// pending activity.
	var id string
	deadline := time.Now().Add(time.Minute)
	for id == "" && time.Now().Before(deadline) {
		if ds := e.deliveries(hookID); len(ds) == 1 {
			id = ds[0].ID
		}
		time.Sleep(50 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("no delivery")
	}
	pa := s.awaitPendingActivity(t, workflows.WebhookDeliveryID(id), time.Minute, func(pa *workflowpb.PendingActivityInfo) bool {
		return strings.Contains(pa.GetLastFailure().GetMessage(), "the receiver answered 500")
	})
	t.Logf("pending activity: %s attempt %d, last failure %q", pa.GetActivityType().GetName(), pa.GetAttempt(), pa.GetLastFailure().GetMessage())

	ds := e.awaitDeliveries(hookID, 1, time.Minute)
	d := ds[0].Attributes
	if d["status"] != "succeeded" || d["attempts"] != 3.0 || d["last-status-code"] != 200.0 || d["last-error"] != nil {
		t.Fatalf("delivery = %+v", d)
	}
	s.awaitWorkflow(t, workflows.WebhookDeliveryID(id), time.Minute)
	s.recordHistory(t, workflows.WebhookDeliveryID(id), "webhook-delivery-retried.history.json")
	reqs := rcv.requests()
	if len(reqs) != 3 {
		t.Fatalf("receiver got %d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		if r.ID != id {
			t.Errorf("webhook-id %q on a retry, want %q every time", r.ID, id)
		}
		verifySignature(t, secret, r)
	}
	// Backoff: the second retry waits about twice as long as the first.
	first, second := reqs[1].At.Sub(reqs[0].At), reqs[2].At.Sub(reqs[1].At)
	t.Logf("retries after %s and %s (base %s)", first, second, s.Config.Webhooks.RetryBase)
	if first < s.Config.Webhooks.RetryBase || second < 2*s.Config.Webhooks.RetryBase || second < first*3/2 {
		t.Errorf("retries after %s and %s: not an exponential backoff from %s", first, second, s.Config.Webhooks.RetryBase)
	}
}

func TestWebhookGoneDeactivatesAndRetryRedelivers(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	var mu sync.Mutex
	status := http.StatusGone
	rcv := newReceiver(t, func(int) int { mu.Lock(); defer mu.Unlock(); return status })
	hookID, _ := e.createWebhook(rcv.URL, "draft.reverted")
	e.revertedDraft("gone")
	ds := e.awaitDeliveries(hookID, 1, time.Minute)
	d := ds[0]
	if d.Attributes["status"] != "failed" || d.Attributes["last-status-code"] != 410.0 || d.Attributes["attempts"] != 1.0 ||
		!strings.Contains(fmt.Sprint(d.Attributes["last-error"]), "410") {
		t.Fatalf("delivery = %+v", d.Attributes)
	}
	s.awaitWorkflow(t, workflows.WebhookDeliveryID(d.ID), time.Minute)
	s.recordHistory(t, workflows.WebhookDeliveryID(d.ID), "webhook-delivery-gone.history.json")
	if w := e.do(http.MethodGet, "/webhooks/"+hookID, nil).resource(t); w.Attributes["active"] != false {
		t.Fatalf("webhook after a 410: %+v", w.Attributes)
	}
	// An inactive webhook gets no deliveries.
	e.revertedDraft("unheard")
	time.Sleep(time.Second)
	if n := len(e.deliveries(hookID)); n != 1 {
		t.Fatalf("%d deliveries to an inactive webhook", n)
	}
	if n := len(rcv.requests()); n != 1 {
		t.Fatalf("receiver got %d requests", n)
	}
	// Retrying a delivery that is not failed is refused; a failed one is
	// redelivered once the webhook is active again.
	mu.Lock()
	status = 204
	mu.Unlock()
	if p := e.do(http.MethodPatch, "/webhooks/"+hookID, map[string]any{"data": map[string]any{"type": "webhooks", "id": hookID,
		"attributes": map[string]any{"active": true}}}); p.Status != 200 {
		t.Fatalf("PATCH active = %d %s", p.Status, p.Raw)
	}
	r := e.do(http.MethodPost, "/webhook-deliveries/"+d.ID+"/retry", nil)
	if r.Status != 202 || r.resource(t).Attributes["status"] != "pending" {
		t.Fatalf("POST retry = %d %s", r.Status, r.Raw)
	}
	ds = e.awaitDeliveries(hookID, 1, time.Minute)
	if a := ds[0].Attributes; a["status"] != "succeeded" || a["attempts"] != 2.0 || a["last-status-code"] != 204.0 {
		t.Fatalf("retried delivery = %+v", a)
	}
	if r := e.do(http.MethodPost, "/webhook-deliveries/"+d.ID+"/retry", nil); r.Status != 422 {
		t.Fatalf("retry of a succeeded delivery = %d %s", r.Status, r.Raw)
	}
	reqs := rcv.requests()
	if len(reqs) != 2 || reqs[0].ID != reqs[1].ID {
		t.Fatalf("requests %+v: want 2 with one webhook-id", reqs)
	}
}

// Deliveries to one webhook go out in event order: while the first is
// retried, the later ones wait for it.
func TestWebhookDeliveriesKeepEventOrder(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, func(n int) int {
		if n <= 2 {
			return 503
		}
		return 200
	})
	hookID, _ := e.createWebhook(rcv.URL, "draft.reverted")
	drafts := []string{e.revertedDraft("first"), e.revertedDraft("second"), e.revertedDraft("third")}
	ds := e.awaitDeliveries(hookID, 3, 2*time.Minute)
	var order []string
	for _, r := range rcv.requests() {
		for i, d := range drafts {
			if strings.Contains(string(r.Body), d) {
				order = append(order, fmt.Sprint(i+1))
			}
		}
	}
	if got := strings.Join(order, ","); got != "1,1,1,2,3" {
		t.Fatalf("events arrived in the order %s, want 1,1,1,2,3 (the first retried twice, the others after it)", got)
	}
	for _, d := range ds {
		if d.Attributes["status"] != "succeeded" {
			t.Errorf("delivery %+v", d.Attributes)
		}
	}
	// ds is newest first: ds[1] is the second event's delivery, started by the first.
	s.awaitWorkflow(t, workflows.WebhookDeliveryID(ds[1].ID), time.Minute)
	s.recordHistory(t, workflows.WebhookDeliveryID(ds[1].ID), "webhook-delivery-handed-on.history.json")
}

func TestWebhookURLsMustBePublicUnlessAllowed(t *testing.T) {
	t.Parallel()
	s := start(t, func(c *config.Config) { c.Webhooks.AllowPrivate = false })
	e := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	port := rcv.URL[strings.LastIndex(rcv.URL, ":"):]
	for _, u := range []string{rcv.URL, "http://localhost" + port, "http://[::1]" + port, "http://169.254.169.254/latest/meta-data/", "http://10.0.0.7/", "ftp://example.com/",
		// IPv6 forms of loopback and ranges that are not globally reachable
		"http://[::127.0.0.1]" + port, "http://[2002:7f00:1::1]" + port, "http://[2001::1]/", "http://[fec0::1]/", "http://[2001:db8::1]/"} {
		d := e.do(http.MethodPost, "/webhooks", map[string]any{"data": map[string]any{"type": "webhooks",
			"attributes": map[string]any{"url": u, "events": []string{"draft.reverted"}}}})
		if d.Status != 422 || len(d.Errors) != 1 || d.Errors[0].Source.Pointer != "/data/attributes/url" {
			t.Errorf("POST /webhooks %s = %d %s", u, d.Status, d.Raw)
		}
	}
	for _, bad := range []map[string]any{
		{"url": rcv.URL},
		{"url": rcv.URL, "events": []string{}},
		{"url": rcv.URL, "events": []string{"page.published"}},
		{"url": rcv.URL, "events": []string{"draft.reverted"}, "secret": "whsec_mine"},
	} {
		if d := e.do(http.MethodPost, "/webhooks", map[string]any{"data": map[string]any{"type": "webhooks", "attributes": bad}}); d.Status != 422 {
			t.Errorf("POST /webhooks %v = %d %s", bad, d.Status, d.Raw)
		}
	}
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}

// The URL passed the check when it was saved (here: the API allows private
// addresses), but the worker's dialer refuses what the name resolves to
// when it connects: a rebinding name gets no further than this.
func TestWebhookHostResolvingToLoopbackIsRefusedWhenConnecting(t *testing.T) {
	t.Parallel()
	s := startWithoutWorker(t)
	cfg := s.Config
	cfg.Webhooks.AllowPrivate = false
	w := worker.New(s.Temporal, worker.Deps{Config: cfg, DB: s.DB.DB, Storage: s.Storage, Log: testLogger()})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	e := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	port := rcv.URL[strings.LastIndex(rcv.URL, ":"):]
	hookID, _ := e.createWebhook("http://localhost"+port+"/hook", "draft.reverted")
	e.revertedDraft("rebound")
	deadline := time.Now().Add(time.Minute)
	for {
		ds := e.deliveries(hookID)
		if len(ds) == 1 && ds[0].Attributes["attempts"].(float64) >= 2 {
			a := ds[0].Attributes
			if a["status"] != "pending" || !strings.Contains(fmt.Sprint(a["last-error"]), "not public") || a["next-attempt-at"] == nil {
				t.Fatalf("delivery = %+v", a)
			}
			t.Logf("refused: %v", a["last-error"])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries: %+v", ds)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("the receiver on loopback got %d requests", n)
	}
	// Deleting the webhook ends its deliveries.
	if d := e.do(http.MethodDelete, "/webhooks/"+hookID, nil); d.Status != 204 {
		t.Fatalf("DELETE = %d %s", d.Status, d.Raw)
	}
}

func TestWebhooksOfAnotherSiteAreNotFound(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	other := s.editor(t, "editor@other.test")
	rcv := newReceiver(t, nil)
	hookID, _ := e.createWebhook(rcv.URL, "draft.reverted")
	e.revertedDraft("mine")
	ds := e.awaitDeliveries(hookID, 1, time.Minute)
	dID := ds[0].ID
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, "/webhooks/" + hookID, nil},
		{http.MethodPatch, "/webhooks/" + hookID, map[string]any{"data": map[string]any{"type": "webhooks", "id": hookID, "attributes": map[string]any{"active": false}}}},
		{http.MethodDelete, "/webhooks/" + hookID, nil},
		{http.MethodGet, "/webhooks/" + hookID + "/deliveries", nil},
		{http.MethodGet, "/webhook-deliveries/" + dID, nil},
		{http.MethodGet, "/webhook-deliveries/" + dID + "/webhook", nil},
		{http.MethodPost, "/webhook-deliveries/" + dID + "/retry", nil},
	} {
		if d := other.do(c.method, c.path, c.body); d.Status != 404 {
			t.Errorf("%s %s as another site = %d %s", c.method, c.path, d.Status, d.Raw)
		}
	}
	if d := other.do(http.MethodGet, "/webhooks", nil); d.Status != 200 || strings.Contains(string(d.Raw), hookID) {
		t.Errorf("GET /webhooks as another site = %d %s", d.Status, d.Raw)
	}
	// The other site's events do not reach this site's webhook.
	other.revertedDraft("theirs")
	time.Sleep(time.Second)
	if n := len(e.deliveries(hookID)); n != 1 {
		t.Errorf("%d deliveries after another site's event", n)
	}
	if d := e.do(http.MethodGet, "/webhooks/"+hookID, nil); d.Status != 200 || d.resource(t).Attributes["active"] != true {
		t.Errorf("the webhook changed: %d %s", d.Status, d.Raw)
	}
}

// A receiver that is down for 30 s gets the event once it is back: the
// delivery is retried (same webhook-id) and succeeds exactly once.
func TestWebhookReceiverDownFor30Seconds(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: a receiver down for 30 s")
	}
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // down: connections are refused
	hookID, secret := e.createWebhook("http://"+addr+"/hook", "draft.reverted")
	e.revertedDraft("while-down")
	down := time.Now()
	time.Sleep(30 * time.Second)
	ds := e.deliveries(hookID)
	if len(ds) != 1 || ds[0].Attributes["status"] != "pending" || !strings.Contains(fmt.Sprint(ds[0].Attributes["last-error"]), "refused") {
		t.Fatalf("delivery while the receiver is down: %+v", ds)
	}
	t.Logf("after 30 s down: %v attempts, last error %v", ds[0].Attributes["attempts"], ds[0].Attributes["last-error"])
	rcv := &receiver{}
	var ln2 net.Listener
	for i := 0; ; i++ {
		if ln2, err = net.Listen("tcp", addr); err == nil || i == 50 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	rcv.Server = &httptest.Server{Listener: ln2, Config: &http.Server{Handler: http.HandlerFunc(rcv.serve)}}
	rcv.Start()
	t.Cleanup(rcv.Close)
	ds = e.awaitDeliveries(hookID, 1, 2*time.Minute)
	reqs := rcv.requests()
	if ds[0].Attributes["status"] != "succeeded" || len(reqs) != 1 || reqs[0].ID != ds[0].ID {
		t.Fatalf("after the receiver came back: %+v, %d requests", ds[0].Attributes, len(reqs))
	}
	verifySignature(t, secret, reqs[0])
	t.Logf("delivered %.1fs after the event, on attempt %v", reqs[0].At.Sub(down).Seconds(), ds[0].Attributes["attempts"])
}

// SIGKILL the worker after an event commits and before it is delivered:
// the next worker's dispatcher (or the scheduled sweep) starts the
// delivery, which arrives exactly once.
func TestWebhookWorkerKilledBetweenCommitAndDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: kills a worker process")
	}
	t.Parallel()
	build := testsupport.BuildPressroom(t)
	s := startWithoutWorker(t)
	e := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	hookID, secret := e.createWebhook(rcv.URL, "draft.reverted", "revision.published")
	bin := build()
	tmp := t.TempDir()
	first := s.startWorkerProcess(t, bin, tmp, "worker-1")

	// With the worker up, a publish is delivered.
	_, draft := e.page("Live", "live", "")
	e.mustPublish(draft)
	e.awaitDeliveries(hookID, 1, time.Minute)

	first.Kill()
	t.Logf("killed worker-1 (pid %d)", first.Pid())
	reverted := e.revertedDraft("after-the-kill") // commits with no worker to hear it
	time.Sleep(2 * time.Second)
	var unstarted int
	if err := s.DB.NewSelect().Table("webhook_deliveries").ColumnExpr("count(*)").Where("started_at IS NULL").Scan(context.Background(), &unstarted); err != nil {
		t.Fatal(err)
	}
	if unstarted != 1 || len(rcv.requests()) != 1 {
		t.Fatalf("with the worker dead: %d unstarted deliveries, %d requests", unstarted, len(rcv.requests()))
	}

	s.startWorkerProcess(t, bin, tmp, "worker-2")
	ds := e.awaitDeliveries(hookID, 2, 2*time.Minute)
	time.Sleep(2 * time.Second) // a duplicate would arrive meanwhile
	reqs := rcv.requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), reverted) {
		t.Fatalf("receiver got %d requests, want 2 (one per event)", len(reqs))
	}
	verifySignature(t, secret, reqs[1])
	for _, d := range ds {
		if d.Attributes["status"] != "succeeded" || d.Attributes["attempts"] != 1.0 {
			t.Errorf("delivery %+v", d.Attributes)
		}
	}
	// The worker process created the sweep schedule at its start.
	h := s.Temporal.ScheduleClient().GetHandle(context.Background(), workflows.WebhookSweepScheduleID+"-"+s.Config.Webhooks.TaskQueue)
	if _, err := h.Describe(context.Background()); err != nil {
		t.Errorf("webhook sweep schedule: %v", err)
	}
}

// Uploads and theme publications are events too.
func TestWebhookEventsOfUploadsAndThemes(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	hookID, secret := e.createWebhook(rcv.URL, "asset-upload.finished", "asset-upload.error", "theme.published")
	up := s.ingest(t, e.token, "logo.png", "image/png", pngFile(t, 8, 8))
	bad := s.ingest(t, e.token, "broken.png", "image/png", []byte("not a png at all"))
	if up.Attributes["status"] != "finished" || bad.Attributes["status"] != "error" {
		t.Fatalf("uploads ended %v and %v", up.Attributes["status"], bad.Attributes["status"])
	}
	theme := s.thmTheme(t, e.token, "Look")
	if d := s.thmPublish(t, e.token, theme.ID); d.Status != 200 {
		t.Fatalf("PATCH /site theme = %d", d.Status)
	}
	e.awaitDeliveries(hookID, 3, time.Minute)
	want := map[string]string{"asset-upload.finished": up.ID, "asset-upload.error": bad.ID, "theme.published": theme.ID}
	for _, r := range rcv.requests() {
		verifySignature(t, secret, r)
		var msg struct {
			Type string
			Data struct {
				Data struct {
					Type, ID      string
					Relationships map[string]struct{ Data json.RawMessage }
				}
			}
		}
		if err := json.Unmarshal(r.Body, &msg); err != nil {
			t.Fatal(err)
		}
		if id, ok := want[msg.Type]; !ok || msg.Data.Data.ID != id {
			t.Errorf("unexpected event %s", r.Body)
		}
		delete(want, msg.Type)
		if msg.Type == "asset-upload.finished" && !strings.Contains(string(msg.Data.Data.Relationships["asset"].Data), `"assets"`) {
			t.Errorf("asset-upload.finished without its asset: %s", r.Body)
		}
		// The subject is rendered as GET renders it (nothing changed it since).
		var sent struct {
			Data struct {
				Data struct {
					Attributes    map[string]any
					Relationships map[string]struct{ Data json.RawMessage }
					Meta          map[string]any
				}
			}
		}
		_ = json.Unmarshal(r.Body, &sent)
		path := "/" + msg.Data.Data.Type + "/" + msg.Data.Data.ID
		var got struct {
			Data struct {
				Attributes    map[string]any
				Relationships map[string]struct{ Data json.RawMessage }
				Meta          map[string]any
			}
		}
		_ = json.Unmarshal(e.do(http.MethodGet, path, nil).Raw, &got)
		if a, b := fmt.Sprint(sent.Data.Data.Attributes), fmt.Sprint(got.Data.Attributes); a != b {
			t.Errorf("%s: attributes sent %s, GET %s", msg.Type, a, b)
		}
		if a, b := fmt.Sprint(sent.Data.Data.Meta), fmt.Sprint(got.Data.Meta); a != b {
			t.Errorf("%s: meta sent %s, GET %s", msg.Type, a, b)
		}
		for name, rel := range sent.Data.Data.Relationships {
			if g := got.Data.Relationships[name].Data; len(g) > 0 && string(g) != string(rel.Data) {
				t.Errorf("%s: relationship %s sent %s, GET %s", msg.Type, name, rel.Data, g)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("events not delivered: %v", want)
	}
}

// A publish that fails records revision.failed with the failure
// (drafts.MarkFailed, which the publish activity calls on a rejection).
func TestWebhookRevisionFailed(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	hookID, secret := e.createWebhook(rcv.URL, "revision.failed")
	rev := &drafts.Revision{SiteRecord: models.NewSiteRecord(s.Site.ID), Comments: "doomed", Status: drafts.Publishing,
		DraftIDs: []uuid.UUID{uuid.New()}}
	ctx := context.Background()
	if _, err := s.DB.NewInsert().Model(rev).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := drafts.MarkFailed(ctx, s.DB.DB, rev.ID, &drafts.PublishError{Message: "1 of the listed drafts no longer exist"}); err != nil {
		t.Fatal(err)
	}
	// Marking it again (a retried activity) records nothing more.
	if err := drafts.MarkFailed(ctx, s.DB.DB, rev.ID, &drafts.PublishError{Message: "again"}); err != nil {
		t.Fatal(err)
	}
	e.awaitDeliveries(hookID, 1, time.Minute)
	reqs := rcv.requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"type":"revision.failed"`) ||
		!strings.Contains(string(reqs[0].Body), "no longer exist") || !strings.Contains(string(reqs[0].Body), rev.ID.String()) {
		t.Fatalf("%d requests: %s", len(reqs), reqs[0].Body)
	}
	verifySignature(t, secret, reqs[0])
}

// The Temporal schedule's sweep restarts a webhook's queue whose head lost
// its workflow (terminated by hand here; a crash between a delivery's end
// and the start of the next is the same for the sweep).
func TestWebhookScheduledSweepRestartsAStalledQueue(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	var mu sync.Mutex
	status := 500
	rcv := newReceiver(t, func(int) int { mu.Lock(); defer mu.Unlock(); return status })
	hookID, _ := e.createWebhook(rcv.URL, "draft.reverted")
	e.revertedDraft("stalled")
	e.revertedDraft("queued")
	var head string
	deadline := time.Now().Add(time.Minute)
	for head == "" && time.Now().Before(deadline) {
		for _, d := range e.deliveries(hookID) {
			if d.Attributes["attempts"] != 0.0 {
				head = d.ID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if head == "" {
		t.Fatal("no attempt")
	}
	ctx := context.Background()
	if err := s.Temporal.TerminateWorkflow(ctx, workflows.WebhookDeliveryID(head), "", "test: the queue's head loses its workflow"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	status = 200
	mu.Unlock()
	time.Sleep(3 * time.Second)
	if ds := e.deliveries(hookID); ds[0].Attributes["status"] != "pending" || ds[1].Attributes["status"] != "pending" {
		t.Fatalf("before the sweep: %+v", ds)
	}
	cfg := s.Config
	cfg.Webhooks.SweepEvery = 2 * time.Second
	if err := worker.EnsureSchedules(ctx, s.Temporal, cfg); err != nil {
		t.Fatal(err)
	}
	// Idempotent: every worker calls it at start.
	if err := worker.EnsureSchedules(ctx, s.Temporal, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Temporal.ScheduleClient().GetHandle(ctx, workflows.WebhookSweepScheduleID+"-"+cfg.Webhooks.TaskQueue).Delete(ctx)
	})
	ds := e.awaitDeliveries(hookID, 2, time.Minute)
	for _, d := range ds {
		if d.Attributes["status"] != "succeeded" {
			t.Errorf("delivery %+v", d.Attributes)
		}
	}
}

// The scheduling events and a revert's publication: revision.scheduled when
// a revision is scheduled, revision.cancelled when it is cancelled, and
// revision.published for a revert (the one place a revision becomes
// published records it), each committed with its change and delivered in
// that order.
func TestWebhookScheduledCancelledAndRevertEvents(t *testing.T) {
	t.Parallel()
	s := start(t)
	e := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	hookID, secret := e.createWebhook(rcv.URL, "revision.scheduled", "revision.cancelled", "revision.published")
	_, draft := e.page("Later", "later", "")
	d := e.schedule(time.Now().Add(time.Hour), draft)
	if d.Status != 201 {
		t.Fatalf("schedule = %d %s", d.Status, d.Raw)
	}
	scheduled := d.resource(t).ID
	if d := e.do(http.MethodDelete, "/revisions/"+scheduled, nil); d.Status != 204 {
		t.Fatalf("cancel = %d %s", d.Status, d.Raw)
	}
	published := e.mustPublish(draft).ID
	revert := e.revert(published, false)
	e.awaitDeliveries(hookID, 4, time.Minute)
	reqs := rcv.requests()
	want := []struct{ typ, id string }{
		{"revision.scheduled", scheduled}, {"revision.cancelled", scheduled},
		{"revision.published", published}, {"revision.published", revert.ID},
	}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(reqs), len(want))
	}
	for i, w := range want {
		body := string(reqs[i].Body)
		if !strings.Contains(body, `"type":"`+w.typ+`"`) || !strings.Contains(body, w.id) {
			t.Errorf("delivery %d = %s, want %s of %s", i, body, w.typ, w.id)
		}
		verifySignature(t, secret, reqs[i])
	}
}

// One site's receiver answering 500 cannot queue deliveries without end
// (issue 25 #5): with PRESSROOM_WEBHOOK_PENDING_LIMIT at 3, the event that
// finds 3 deliveries pending behind a failing one deactivates the webhook
// instead. The webhook says why (GET /webhooks/:id), webhook.deactivated
// reaches the site's webhook that subscribed to it, the queue fails, and
// another site's deliveries go on meanwhile.
func TestWebhookPendingLimitDeactivatesAFailingWebhook(t *testing.T) {
	t.Parallel()
	s := start(t, func(c *config.Config) { c.Webhooks.PendingLimit = 3 })
	e := s.editor(t, "editor@demo.test")
	other := s.editor(t, "editor@other.test")
	down := newReceiver(t, func(int) int { return 500 })
	up := newReceiver(t, nil)
	elsewhere := newReceiver(t, nil)
	failing, _ := e.createWebhook(down.URL, "draft.reverted")
	listener, secret := e.createWebhook(up.URL+"/listener", "webhook.deactivated")
	otherHook, _ := other.createWebhook(elsewhere.URL, "draft.reverted")

	// The first delivery fails (and is retried); two more queue behind it.
	e.revertedDraft("first")
	e.awaitFailedAttempt(failing)
	e.revertedDraft("second")
	e.revertedDraft("third")
	if n := len(e.deliveries(failing)); n != 3 {
		t.Fatalf("%d deliveries queued, want 3", n)
	}
	// Another site's delivery goes while this queue is stuck at the limit.
	other.revertedDraft("theirs")
	if ds := other.awaitDeliveries(otherHook, 1, time.Minute); ds[0].Attributes["status"] != "succeeded" {
		t.Fatalf("the other site's delivery: %+v", ds[0].Attributes)
	}

	// The fourth event finds the limit reached: no delivery, deactivated.
	e.revertedDraft("fourth")
	w := e.do(http.MethodGet, "/webhooks/"+failing, nil).resource(t)
	reason := fmt.Sprint(w.Attributes["deactivated-reason"])
	if w.Attributes["active"] != false || w.Attributes["deactivated-at"] == nil ||
		!strings.Contains(reason, "3 deliveries were pending") || !strings.Contains(reason, "the receiver answered 500") {
		t.Fatalf("GET /webhooks/:id after the limit: %+v", w.Attributes)
	}
	t.Logf("deactivated-reason: %s", reason)
	// Its queue fails at once, by the dispatcher (which keeps the last
	// error after the reason), not delivery by delivery as retries wake.
	ds := e.awaitDeliveries(failing, 3, time.Minute)
	for _, d := range ds {
		if d.Attributes["status"] != "failed" || !strings.HasPrefix(fmt.Sprint(d.Attributes["last-error"]), "the webhook is inactive") {
			t.Errorf("queued delivery after the deactivation: %+v", d.Attributes)
		}
	}
	if head := fmt.Sprint(ds[2].Attributes["last-error"]); !strings.Contains(head, "(last error: the receiver answered 500") {
		t.Errorf("the retried delivery's last-error %q: not failed with its queue", head)
	}
	// webhook.deactivated is recorded and delivered, signed, to the
	// webhook that subscribed to it.
	ds = e.awaitDeliveries(listener, 1, time.Minute)
	if ds[0].Attributes["event"] != "webhook.deactivated" || ds[0].Attributes["status"] != "succeeded" {
		t.Fatalf("listener's delivery: %+v", ds[0].Attributes)
	}
	checkDeactivatedMessage(t, up, secret, failing, reason)
	// Other sites go on.
	other.revertedDraft("theirs-after")
	other.awaitDeliveries(otherHook, 2, time.Minute)

	// Made active again, it no longer says why it was deactivated.
	p := e.do(http.MethodPatch, "/webhooks/"+failing, map[string]any{"data": map[string]any{"type": "webhooks", "id": failing,
		"attributes": map[string]any{"active": true}}})
	if a := p.resource(t).Attributes; p.Status != 200 || a["active"] != true || a["deactivated-reason"] != nil || a["deactivated-at"] != nil {
		t.Fatalf("PATCH active = %d %s", p.Status, p.Raw)
	}
	if d := e.do(http.MethodPatch, "/webhooks/"+failing, map[string]any{"data": map[string]any{"type": "webhooks", "id": failing,
		"attributes": map[string]any{"deactivated-reason": "mine"}}}); d.Status != 422 {
		t.Errorf("PATCH deactivated-reason = %d %s", d.Status, d.Raw)
	}
}

// awaitFailedAttempt waits until the webhook's one delivery has failed an
// attempt with a 500 (it is retried).
func (e *editor) awaitFailedAttempt(webhookID string) {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ds := e.deliveries(webhookID)
		if len(ds) == 1 && strings.Contains(fmt.Sprint(ds[0].Attributes["last-error"]), "the receiver answered 500") {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the first delivery did not fail: %+v", ds)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkDeactivatedMessage checks the one request rcv got: webhook.deactivated
// about the webhook id, deactivated for reason, signed with secret.
func checkDeactivatedMessage(t *testing.T, rcv *receiver, secret, id, reason string) {
	t.Helper()
	reqs := rcv.requests()
	if len(reqs) != 1 {
		t.Fatalf("listener got %d requests", len(reqs))
	}
	verifySignature(t, secret, reqs[0])
	var msg struct {
		Type string
		Data struct {
			Data struct {
				Type, ID   string
				Attributes map[string]any
			}
		}
	}
	if err := json.Unmarshal(reqs[0].Body, &msg); err != nil {
		t.Fatal(err)
	}
	if a := msg.Data.Data.Attributes; msg.Type != "webhook.deactivated" || msg.Data.Data.Type != "webhooks" || msg.Data.Data.ID != id ||
		a["active"] != false || a["deactivated-reason"] != reason {
		t.Fatalf("webhook.deactivated body: %s", reqs[0].Body)
	}
}
