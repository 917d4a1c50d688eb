package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/webhooks"
	"github.com/pressroom/pressroom/workflows"
)

// Webhooks are the activities of webhook delivery (workflows/webhook.go)
// and the dispatcher that starts delivery workflows.
type Webhooks struct {
	DB       *bun.DB
	Temporal client.Client
	Box      *models.SecretBox
	// HTTP sends the deliveries: webhooks.Client (10 s, no redirects, the
	// SSRF guard unless allowed).
	HTTP      *http.Client
	Config    config.Webhooks
	PublicURL string
	Log       *slog.Logger
}

// DispatchBatch bounds the deliveries one dispatch starts; the rest wait
// for the next (which the dispatcher runs at once while there are more).
const DispatchBatch = 500

// DispatchWebhookDeliveries starts the workflow of each webhook's next
// delivery, its oldest pending one, when it has not been started, and
// returns how many it started. It looks at the webhooks of sites, the
// sites whose events woke the worker's dispatcher (NOTIFY carries the
// site), or with sites nil at every webhook with a pending delivery (at
// the dispatcher's start and every 30 s). Later deliveries of a webhook
// are started one after another by the one before
// (FinishWebhookDelivery), so a backlog of thousands of events is
// thousands of rows, not thousands of waiting workflows; and a dispatch
// looks at each webhook's head only (models.LockDeliveryHeads), so its cost
// does not grow with any queue's length.
func (w *Webhooks) DispatchWebhookDeliveries(ctx context.Context, sites []uuid.UUID) (int, error) {
	return w.dispatch(ctx, models.HeadQuery{Sites: sites})
}

// SweepWebhookHeads is the scheduled sweep: it starts the next
// delivery of every webhook that has one pending, started or not. A
// workflow that is running is left alone; one that a crash never started,
// or that ended without passing the turn on (terminated by hand, say), is
// started (again): the chain of a webhook's deliveries cannot stall.
func (w *Webhooks) SweepWebhookHeads(ctx context.Context) (int, error) {
	return w.dispatch(ctx, models.HeadQuery{Started: true})
}

// dispatch walks the heads q selects, DispatchBatch at a time: it starts
// the heads of active webhooks and fails the queues of inactive ones.
func (w *Webhooks) dispatch(ctx context.Context, q models.HeadQuery) (int, error) {
	q.Limit = DispatchBatch
	started := 0
	for {
		b, n, err := w.dispatchBatch(ctx, q)
		started += n
		if err != nil {
			return started, err
		}
		if err := w.failInactive(ctx, b.Heads); err != nil {
			return started, err
		}
		if !b.More {
			return started, nil
		}
		q.After = b.Next
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, started)
		}
	}
}

// dispatchBatch locks a batch of heads and starts the workflows of those
// of active webhooks, marking them started in the same transaction.
func (w *Webhooks) dispatchBatch(ctx context.Context, q models.HeadQuery) (models.HeadBatch, int, error) {
	var b models.HeadBatch
	var n int
	err := w.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if b, err = models.LockDeliveryHeads(ctx, tx, q); err != nil {
			return err
		}
		ok := make([]bool, len(b.Heads))
		errs := make([]error, len(b.Heads))
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for i := range b.Heads {
			if !b.Heads[i].Active {
				continue // its queue is failed below, after this transaction
			}
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer func() { <-sem; wg.Done() }()
				h := b.Heads[i]
				errs[i] = w.start(ctx, &models.WebhookDelivery{SiteRow: models.SiteRow{ID: h.ID, SiteID: h.SiteID}, WebhookID: h.WebhookID})
				ok[i] = errs[i] == nil
			}(i)
		}
		wg.Wait()
		var ids []uuid.UUID
		for i, h := range b.Heads {
			if ok[i] {
				ids = append(ids, h.ID)
			}
		}
		if err := models.MarkDeliveriesStarted(ctx, tx, ids); err != nil {
			return err
		}
		n = len(ids)
		return errors.Join(errs...)
	})
	return b, n, err
}

// failInactive fails the queues of the inactive webhooks among heads'
// (deactivated by PATCH, a 410 or the pending limit): at once, rather
// than one workflow after another.
func (w *Webhooks) failInactive(ctx context.Context, heads []models.DeliveryHead) error {
	var ids []uuid.UUID
	for _, h := range heads {
		if !h.Active {
			ids = append(ids, h.WebhookID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	n, err := models.FailInactiveQueues(ctx, w.DB, ids)
	if n > 0 && w.Log != nil {
		w.Log.Info("failed the pending deliveries of inactive webhooks", "webhooks", len(ids), "deliveries", n)
	}
	return err
}

// start starts the delivery's workflow; one of that id that is running is
// left as it is.
func (w *Webhooks) start(ctx context.Context, d *models.WebhookDelivery) error {
	in := workflows.WebhookDeliveryInput{DeliveryID: d.ID.String(), WebhookID: d.WebhookID.String(), SiteID: d.SiteID.String(),
		RetryBase: w.Config.RetryBase, GiveUpAfter: w.Config.GiveUpAfter}
	return workflows.StartWebhookDelivery(ctx, w.Temporal, w.Config.TaskQueue, in)
}

// WebhookTurn tells whether the delivery may be attempted now: it is
// pending, its webhook active, and no earlier delivery to that webhook is
// pending. A delivery whose webhook is inactive fails here.
func (w *Webhooks) WebhookTurn(ctx context.Context, deliveryID string) (workflows.WebhookTurn, error) {
	row, err := models.LoadDeliveryTurn(ctx, w.DB, deliveryID)
	if models.IsNoRows(err) {
		return workflows.WebhookTurn{Done: true}, nil // deleted with its webhook
	}
	if err != nil {
		return workflows.WebhookTurn{}, fmt.Errorf("load delivery: %w", err)
	}
	if row.Status != models.DeliveryPending {
		return workflows.WebhookTurn{Done: true}, nil
	}
	if row.Active == nil || !*row.Active {
		// Its earlier error kept after the reason, as FailInactiveQueues
		// (the dispatcher's path for the same case) keeps it.
		if err := models.GiveUpDelivery(ctx, w.DB, row.ID.String(), models.InactiveDeliveryError); err != nil {
			return workflows.WebhookTurn{}, fmt.Errorf("fail delivery of an inactive webhook: %w", err)
		}
		return workflows.WebhookTurn{Done: true}, nil
	}
	before, err := models.EarlierPendingDelivery(ctx, w.DB, row.WebhookID, row.Seq)
	if err != nil {
		return workflows.WebhookTurn{}, err
	}
	if before != "" {
		return workflows.WebhookTurn{Before: before}, nil
	}
	return workflows.WebhookTurn{Go: true}, nil
}

// deliveryRow is a delivery with what sending it needs.
type deliveryRow = models.DeliveryToSend

// DeliverWebhook makes one attempt: it POSTs the signed event to the
// webhook's URL and records the outcome with the delivery. A 2xx succeeds;
// a 410 fails the delivery and deactivates the webhook
// (models.DeactivateWebhook; not retried);
// anything else is returned as an error carrying the status and the start
// of the answer, so the workflow retries it and the pending activity shows
// it. A delivery that already succeeded is not sent again.
func (w *Webhooks) DeliverWebhook(ctx context.Context, in workflows.WebhookDeliveryInput) error {
	d, err := models.LoadDeliveryToSend(ctx, w.DB, in.DeliveryID)
	if models.IsNoRows(err) {
		return reject("the delivery is gone (its webhook was deleted)")
	}
	if err != nil {
		return fmt.Errorf("load delivery: %w", err)
	}
	switch d.Status {
	case models.DeliverySucceeded:
		return nil
	case models.DeliveryFailed:
		// Failed while this attempt waited: its webhook was deactivated
		// (FailInactiveQueues). Nothing to send, and no more retries.
		return reject("the delivery failed meanwhile: %s", deref(d.LastError))
	}
	if !d.Active {
		// Deactivated while this attempt waited (its row was locked when
		// the dispatcher failed the queue): failed as the queue was, the
		// earlier error kept after the reason.
		if err := models.GiveUpDelivery(ctx, w.DB, d.ID.String(), models.InactiveDeliveryError); err != nil {
			return err
		}
		return reject(models.InactiveDeliveryError)
	}
	secret, err := w.Box.Open(d.WebhookID, d.SecretSealed)
	if err != nil {
		return err
	}
	body, err := w.payload(&d)
	if err != nil {
		return err
	}
	// webhook-id is the delivery's id: the same on every attempt, so the
	// receiver can de-duplicate.
	h, err := webhooks.Sign(secret, d.ID.String(), time.Now(), body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return reject("bad webhook URL: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Pressroom-Webhooks/1")
	h.Set(req.Header)
	resp, err := w.HTTP.Do(req)
	if err != nil {
		msg := "request failed: " + trimURL(err.Error(), d.URL)
		if rerr := w.attempted(ctx, &d, in, nil, msg, nil); rerr != nil {
			return rerr
		}
		return errors.New(msg)
	}
	snippet := readSnippet(resp.Body)
	_ = resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return models.SucceedDelivery(ctx, w.DB, d.ID, code, snippet)
	case code == http.StatusGone:
		return w.gone(ctx, &d, code, snippet)
	}
	msg := fmt.Sprintf("the receiver answered %d", code)
	if s := strings.TrimSpace(snippet); s != "" {
		msg += ": " + truncate(s, 200)
	}
	if err := w.attempted(ctx, &d, in, &code, msg, &snippet); err != nil {
		return err
	}
	return errors.New(msg)
}

// gone answers a 410: the delivery fails with the answer, and the webhook
// is deactivated (models.DeactivateWebhook records webhook.deactivated;
// the dispatcher fails the rest of its queue once this commits).
func (w *Webhooks) gone(ctx context.Context, d *deliveryRow, code int, snippet string) error {
	msg := "the receiver answered 410 Gone: the webhook was deactivated"
	err := w.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := w.failIn(ctx, tx, d.ID, &code, msg, &snippet); err != nil {
			return err
		}
		_, err := models.DeactivateWebhook(ctx, tx, d.SiteID, d.WebhookID, "the receiver answered 410 Gone")
		return err
	})
	if err != nil {
		return fmt.Errorf("deactivate webhook: %w", err)
	}
	return reject("%s", msg)
}

// attempted records a failed attempt that will be retried, with when.
func (w *Webhooks) attempted(ctx context.Context, d *deliveryRow, in workflows.WebhookDeliveryInput, code *int, msg string, snippet *string) error {
	var next *time.Time
	if activity.IsActivity(ctx) && in.RetryBase > 0 {
		info := activity.GetInfo(ctx)
		wait := in.RetryBase << min(info.Attempt-1, 30)
		if wait <= 0 || wait > workflows.MaxRetryInterval {
			wait = workflows.MaxRetryInterval
		}
		at := time.Now().Add(wait).UTC()
		if in.GiveUpAfter <= 0 || at.Before(info.ScheduledTime.Add(in.GiveUpAfter)) {
			next = &at
		}
	}
	return models.RecordDeliveryAttempt(ctx, w.DB, d.ID, code, msg, snippet, next)
}

func (w *Webhooks) fail(ctx context.Context, id uuid.UUID, code *int, msg string, snippet *string) error {
	return w.failIn(ctx, w.DB, id, code, msg, snippet)
}

func (w *Webhooks) failIn(ctx context.Context, db bun.IDB, id uuid.UUID, code *int, msg string, snippet *string) error {
	return models.FailDelivery(ctx, db, id, code, msg, snippet)
}

// FinishWebhookDelivery ends a delivery: with a failure, a pending
// delivery becomes failed (its last error kept, prefixed by failure). It
// returns the next pending delivery to the same webhook, whose turn it is.
func (w *Webhooks) FinishWebhookDelivery(ctx context.Context, deliveryID, failure string) (string, error) {
	if failure != "" {
		if err := models.GiveUpDelivery(ctx, w.DB, deliveryID, failure); err != nil {
			return "", err
		}
	}
	next, err := models.NextPendingDelivery(ctx, w.DB, deliveryID)
	if err != nil || next == nil {
		return "", err
	}
	// Its turn: start its workflow (the caller's signal wakes it if it was
	// started already and waits).
	if err := w.start(ctx, next); err != nil {
		return "", err
	}
	if err := models.MarkDeliveriesStarted(ctx, w.DB, []uuid.UUID{next.ID}); err != nil {
		return "", err
	}
	return next.ID.String(), nil
}

// message is the body of a delivery (Standard Webhooks' recommended shape).
type message struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// subjectShape is how the API renders a subject type (api/revisions.go,
// api/uploads.go, api/drafts.go, api/themes.go): which columns are its
// attributes, which references its to-one relationships (column → name
// and type), and whether it carries meta.version. The worker cannot call
// the API's renderers (it does not link package api), so this table
// mirrors them for the columns a row holds; members the API computes
// (a theme's layouts, a revision's versions) are left out.
type subjectShape struct {
	attrs     []string
	toOne     map[string][2]string
	versioned bool
}

var subjectShapes = map[string]subjectShape{
	"revisions": {attrs: []string{"comments", "status", "versions_count", "error_message", "locales", "created_at"},
		toOne: map[string][2]string{"user_id": {"user", "users"}}},
	"asset-uploads": {attrs: []string{"file_name", "key", "content_type", "file_size", "user_agent", "status", "error_message", "created_at", "updated_at"},
		toOne: map[string][2]string{"asset_id": {"asset", "assets"}, "asset_image_id": {"asset-file", "asset-images"}}},
	"drafts": {attrs: []string{"event", "object_changes", "created_at", "updated_at"},
		toOne: map[string][2]string{"user_id": {"user", "users"}}, versioned: true},
	"themes": {attrs: []string{"title", "description", "published_at", "created_at", "updated_at"},
		toOne: map[string][2]string{"user_id": {"user", "users"}}, versioned: true},
	// release.published and release.cancelled: the release as GET
	// /releases/:id shows it, its publishing revision named (null for a
	// cancel); its drafts are unstaged by then, and left out.
	"releases": {attrs: []string{"title", "description", "status", "created_at", "updated_at"},
		toOne: map[string][2]string{"user_id": {"user", "users"}, "revision_id": {"revision", "revisions"}}, versioned: true},
	// release.review-requested, release.approved, release.changes-requested
	// and release.review-reminder: the review as GET /release-reviews/:id
	// shows it (stale as recorded; the reminder's is the request).
	"release-reviews": {attrs: []string{"verdict", "comment", "stale", "created_at"},
		toOne: map[string][2]string{"release_id": {"release", "releases"}, "user_id": {"user", "users"}}},
	// webhook.deactivated: the webhook as GET /webhooks/:id shows it (the
	// event's row holds no sealed secret; its masked form is added below).
	"webhooks": {attrs: []string{"url", "events", "active", "description", "deactivated_reason", "deactivated_at", "created_at", "updated_at"},
		versioned: true},
}

// identifier is a resource identifier, its members in the API's order.
type identifier struct {
	Type any `json:"type"`
	ID   any `json:"id"`
}

// apiTimestamp renders a timestamp of a row (Postgres' JSON form) the way
// the API does: UTC, milliseconds, Z.
func apiTimestamp(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return v
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// payload is the message body: the event type, when it happened, and the
// subject as a JSON:API document, as GET renders it, of its row as the
// change left it.
func (w *Webhooks) payload(d *deliveryRow) ([]byte, error) {
	var row map[string]any
	if err := json.Unmarshal(d.Subject, &row); err != nil {
		return nil, fmt.Errorf("decode event subject: %w", err)
	}
	shape, ok := subjectShapes[d.SubjectType]
	if !ok {
		return nil, reject("no rendering for subject type %q", d.SubjectType)
	}
	attrs := map[string]any{}
	for _, col := range shape.attrs {
		v := row[col]
		if strings.HasSuffix(col, "_at") {
			v = apiTimestamp(v)
		}
		attrs[strings.ReplaceAll(col, "_", "-")] = v
	}
	rels := map[string]any{}
	for col, rel := range shape.toOne {
		if v := row[col]; v != nil {
			rels[rel[0]] = map[string]any{"data": identifier{Type: rel[1], ID: v}}
		} else {
			rels[rel[0]] = map[string]any{"data": nil}
		}
	}
	self := w.PublicURL + "/" + d.SubjectType + "/" + d.SubjectID.String()
	switch d.SubjectType {
	case "webhooks":
		last4, _ := row["secret_last4"].(string)
		attrs["secret"] = webhooks.Mask(last4)
		rels["deliveries"] = map[string]any{"links": map[string]string{"self": self + "/relationships/deliveries", "related": self + "/deliveries"}}
	case "drafts": // the drafted record, of the type the draft names
		rels["item"] = map[string]any{"data": identifier{Type: row["item_type"], ID: row["item_id"]}}
	case "revisions":
		ids := []identifier{}
		list, _ := row["draft_ids"].([]any)
		for _, id := range list {
			ids = append(ids, identifier{Type: "drafts", ID: id})
		}
		rels["drafts"] = map[string]any{"data": ids}
	}
	res := map[string]any{"type": d.SubjectType, "id": d.SubjectID.String(), "attributes": attrs, "relationships": rels,
		"links": map[string]any{"self": self}}
	if v, ok := row["version"]; ok && shape.versioned {
		res["meta"] = map[string]any{"version": v}
	}
	data, err := json.Marshal(map[string]any{"data": res, "jsonapi": map[string]string{"version": "1.1"}})
	if err != nil {
		return nil, err
	}
	return json.Marshal(message{Type: d.EventType, Timestamp: d.EventAt.UTC().Format("2006-01-02T15:04:05.000Z"), Data: data})
}

// readSnippet reads at most webhooks.MaxResponse bytes of an answer and
// keeps the first webhooks.StoredResponse (valid UTF-8 only).
func readSnippet(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, webhooks.MaxResponse))
	if len(b) > webhooks.StoredResponse {
		b = b[:webhooks.StoredResponse]
	}
	return strings.ToValidUTF8(strings.ReplaceAll(string(b), "\x00", ""), "")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// trimURL drops the URL from a client error: Go quotes it, and the
// message is shown next to the webhook anyway.
func trimURL(msg, url string) string {
	return strings.TrimSpace(strings.ReplaceAll(msg, fmt.Sprintf("Post %q:", url), ""))
}
