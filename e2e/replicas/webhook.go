package replicas

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/webhooks"
)

// HookEvents are the events the load's webhook subscribes to: everything
// the load makes happen (and revision.failed, which it must not).
var HookEvents = []string{webhooks.RevisionPublished, webhooks.RevisionScheduled, webhooks.RevisionFailed,
	webhooks.AssetUploadFinished, webhooks.AssetUploadError}

// Receiver is a webhook endpoint on loopback (the stack sets
// PRESSROOM_WEBHOOK_ALLOW_PRIVATE) that answers 200 to every request and
// logs it. With DB, it also notes at each arrival which deliveries of its
// webhook are pending, so CheckWebhook can tell a delivery sent out of
// order from one whose event committed late (docs/webhooks.md: events
// committed concurrently have no order between them).
type Receiver struct {
	DB bun.IDB

	srv *httptest.Server

	mu        sync.Mutex
	got       []Arrival
	webhookID string
	secret    string
}

// Arrival is one request the receiver got.
type Arrival struct {
	ID, Timestamp, Signature string
	Body                     []byte
	At                       time.Time
	// Pending are the webhook's pending deliveries (id → seq) when the
	// request arrived; nil when they could not be read.
	Pending map[string]int64
}

// NewReceiver starts a receiver; Close stops it.
func NewReceiver(db bun.IDB) *Receiver {
	r := &Receiver{DB: db}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the receiver's address.
func (r *Receiver) URL() string { return r.srv.URL }

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	a := Arrival{ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
		Signature: req.Header.Get("webhook-signature"), Body: body, At: time.Now()}
	r.mu.Lock()
	hook := r.webhookID
	r.mu.Unlock()
	if r.DB != nil && hook != "" {
		ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
		var rows []struct {
			ID  string
			Seq int64
		}
		if err := r.DB.NewRaw("SELECT id::text AS id, seq FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending'", hook).Scan(ctx, &rows); err == nil {
			a.Pending = map[string]int64{}
			for _, row := range rows {
				a.Pending[row.ID] = row.Seq
			}
		}
		cancel()
	}
	r.mu.Lock()
	r.got = append(r.got, a)
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// Arrivals returns a copy of the log, in arrival order.
func (r *Receiver) Arrivals() []Arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// Webhook is the id of the webhook subscribed (by Subscribe).
func (r *Receiver) Webhook() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.webhookID
}

// Subscribe creates the site's webhook to the receiver (POST /webhooks),
// subscribed to HookEvents, and keeps its id and secret.
func (r *Receiver) Subscribe(ctx context.Context, hc *http.Client, base, token string) error {
	res := Send(ctx, hc, base, token, http.MethodPost, "/webhooks", map[string]any{"data": map[string]any{"type": "webhooks",
		"attributes": map[string]any{"url": r.URL(), "events": HookEvents, "description": "replicas load receiver"}}})
	var d struct {
		Data struct {
			ID         string
			Attributes struct{ Secret string }
		}
	}
	if res.Err != nil || res.Status != 201 || json.Unmarshal(res.Raw, &d) != nil || d.Data.Attributes.Secret == "" {
		return fmt.Errorf("POST /webhooks = %s", res)
	}
	r.mu.Lock()
	r.webhookID, r.secret = d.Data.ID, d.Data.Attributes.Secret
	r.mu.Unlock()
	return nil
}

// WebhookFigures are what CheckWebhook counted.
type WebhookFigures struct {
	Events, Deliveries, Requests int
	// Resends are requests of a delivery the receiver had already
	// answered, sent again before any later delivery: the at-least-once
	// case docs/webhooks.md describes (a worker died after the answer and
	// before recording it). Reported, not an error.
	Resends int
	// LateCommits are deliveries that arrived after one of higher seq
	// because their event had not committed when that one was sent.
	LateCommits int
}

func (f WebhookFigures) String() string {
	return fmt.Sprintf("%d events, %d deliveries, %d requests (%d resends of an answered delivery, %d behind a later event that committed first)",
		f.Events, f.Deliveries, f.Requests, f.Resends, f.LateCommits)
}

// CheckWebhook returns every broken webhook invariant of settled work (nil
// when none), with the figures:
//   - every change the load made is one committed event: each published
//     revision one revision.published, each scheduled one (publish_at set)
//     one revision.scheduled, each failed one revision.failed, each
//     finished or errored upload one asset-upload.finished or .error; no
//     other event;
//   - every event has one delivery to the webhook, succeeded (none pending
//     or failed), and GET /webhooks/:id/deliveries lists exactly those;
//   - the receiver got every delivery, signed with the webhook's secret,
//     with the event's type, and no request it cannot name; a delivery
//     answered once is not sent again after a later one (a resend right
//     away is the documented at-least-once case, counted);
//   - deliveries arrived in event order (seq): one arrives after a later
//     event's only if it was not pending yet when the delivery before that
//     later one arrived (its event committed late, concurrently).
func CheckWebhook(ctx context.Context, db bun.IDB, hc *http.Client, base, token string, r *Receiver) ([]string, WebhookFigures) {
	var bad []string
	var fig WebhookFigures
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	hook := r.Webhook()
	if hook == "" {
		return []string{"no webhook was subscribed"}, fig
	}

	// Every change is one event.
	var events []struct {
		ID, Type, SubjectID string
		Seq                 int64
	}
	if err := db.NewRaw("SELECT id::text AS id, type, subject_id::text AS subject_id, seq FROM webhook_events").Scan(ctx, &events); err != nil {
		return []string{err.Error()}, fig
	}
	fig.Events = len(events)
	got := map[string]int{} // type subject → events
	for _, e := range events {
		got[e.Type+" "+e.SubjectID]++
	}
	var want []string
	if err := db.NewRaw(`SELECT 'revision.published ' || id FROM revisions WHERE status = 'published'
		UNION ALL SELECT 'revision.scheduled ' || id FROM revisions WHERE publish_at IS NOT NULL
		UNION ALL SELECT 'revision.failed ' || id FROM revisions WHERE status = 'failed'
		UNION ALL SELECT 'asset-upload.finished ' || id FROM asset_uploads WHERE status = 'finished'
		UNION ALL SELECT 'asset-upload.error ' || id FROM asset_uploads WHERE status = 'error'`).Scan(ctx, &want); err != nil {
		return append(bad, err.Error()), fig
	}
	for _, k := range want {
		if got[k] != 1 {
			add("%s: %d events, want exactly 1", k, got[k])
		}
		delete(got, k)
	}
	for k, n := range got {
		add("%d events %s of nothing that happened", n, k)
	}

	// Every event is one delivery to the webhook, succeeded.
	var ds []struct {
		ID, EventID, Event, Status string
		Seq                        int64
		Attempts                   int
	}
	if err := db.NewRaw("SELECT id::text AS id, event_id::text AS event_id, event, status, seq, attempts FROM webhook_deliveries WHERE webhook_id = ?", hook).Scan(ctx, &ds); err != nil {
		return append(bad, err.Error()), fig
	}
	fig.Deliveries = len(ds)
	byEvent := map[string]int{}
	type delivery struct {
		event string
		seq   int64
	}
	deliveries := map[string]delivery{}
	for _, d := range ds {
		byEvent[d.EventID]++
		deliveries[d.ID] = delivery{d.Event, d.Seq}
		if d.Status != "succeeded" {
			add("delivery %s (%s, seq %d) is %s after %d attempts", d.ID, d.Event, d.Seq, d.Status, d.Attempts)
		}
	}
	for _, e := range events {
		if byEvent[e.ID] != 1 {
			add("event %s (%s of %s) has %d deliveries to the webhook, want 1", e.ID, e.Type, e.SubjectID, byEvent[e.ID])
		}
	}

	// The API lists the same deliveries, succeeded.
	listed := map[string]bool{}
	for page := 1; ; page++ {
		res := Send(ctx, hc, base, token, http.MethodGet, fmt.Sprintf("/webhooks/%s/deliveries?page[size]=100&page[number]=%d", hook, page), nil)
		var doc struct {
			Data []struct {
				ID         string
				Attributes struct{ Status, Event string }
			}
		}
		if res.Err != nil || res.Status != 200 || json.Unmarshal(res.Raw, &doc) != nil {
			add("GET /webhooks/%s/deliveries page %d = %s", hook, page, res)
			break
		}
		for _, d := range doc.Data {
			listed[d.ID] = true
			if d.Attributes.Status != "succeeded" {
				add("GET /webhooks/:id/deliveries shows %s (%s) %s", d.ID, d.Attributes.Event, d.Attributes.Status)
			}
		}
		if len(doc.Data) < 100 || page > 1000 {
			break
		}
	}
	if len(listed) != len(deliveries) {
		add("GET /webhooks/:id/deliveries lists %d deliveries, the database has %d", len(listed), len(deliveries))
	}
	for id := range deliveries {
		if !listed[id] {
			add("GET /webhooks/:id/deliveries does not list delivery %s", id)
		}
	}

	// What the receiver got.
	arrivals := r.Arrivals()
	fig.Requests = len(arrivals)
	r.mu.Lock()
	secret := r.secret
	r.mu.Unlock()
	var first []Arrival // each delivery's first arrival, in order
	seen := map[string]bool{}
	for i, a := range arrivals {
		d, ok := deliveries[a.ID]
		if !ok {
			add("the receiver got request %q, no delivery of the webhook", a.ID)
			continue
		}
		if err := verify(secret, a); err != nil {
			add("delivery %s: %v", a.ID, err)
		}
		var body struct{ Type string }
		if json.Unmarshal(a.Body, &body) != nil || body.Type != d.event {
			add("delivery %s of %s came with type %q", a.ID, d.event, body.Type)
		}
		if seen[a.ID] {
			if arrivals[i-1].ID != a.ID {
				add("delivery %s (seq %d) was sent again after a later delivery", a.ID, d.seq)
			}
			fig.Resends++
			continue
		}
		seen[a.ID] = true
		first = append(first, a)
	}
	for id, d := range deliveries {
		if !seen[id] {
			add("delivery %s (%s, seq %d) never reached the receiver", id, d.event, d.seq)
		}
	}
	seqs := map[string]int64{}
	for id, d := range deliveries {
		seqs[id] = d.seq
	}
	order, late := outOfOrder(first, seqs)
	fig.LateCommits = late
	return append(bad, order...), fig
}

// outOfOrder checks first (each delivery's first arrival, in arrival
// order) against event order: when b arrives right after c, nothing still
// pending when c arrived may have a lower seq than b (it had committed, so
// c's end would have handed the turn to it, not to b). An arrival after
// one of higher seq is otherwise a late commit, counted.
func outOfOrder(first []Arrival, seq map[string]int64) (bad []string, late int) {
	sent := map[string]bool{}
	for i, b := range first {
		sent[b.ID] = true
		if i == 0 {
			continue
		}
		c := first[i-1]
		if seq[c.ID] > seq[b.ID] {
			late++
		}
		var ids []string
		for id, s := range c.Pending {
			if id != c.ID && !sent[id] && s < seq[b.ID] {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			bad = append(bad, fmt.Sprintf("delivery %s (seq %d) arrived before %s (seq %d), which was already pending when the delivery before it (%s) arrived: out of event order",
				b.ID, seq[b.ID], id, c.Pending[id], c.ID))
		}
	}
	return bad, late
}

// verify checks a's Standard Webhooks signature by signing its body again
// with the secret (HMAC is deterministic).
func verify(secret string, a Arrival) error {
	ts, err := strconv.ParseInt(a.Timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q: %w", a.Timestamp, err)
	}
	h, err := webhooks.Sign(secret, a.ID, time.Unix(ts, 0), a.Body)
	if err != nil {
		return err
	}
	if !slices.Contains(strings.Fields(a.Signature), h.Signature) {
		return fmt.Errorf("webhook-signature %q does not verify", a.Signature)
	}
	return nil
}
