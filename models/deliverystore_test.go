package models_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/webhooks"
)

// backlog is the queue of one stuck webhook in these tests: long enough
// that a plan walking it is plain (the old dispatch read every row of it),
// short enough to write in a second.
const backlog = 20000

// queueWorld is two sites: site A's webhook has a backlog of pending
// deliveries behind a head that keeps failing (its receiver answers 500),
// site B's webhook one fresh delivery, unstarted.
type queueWorld struct {
	db               *testsupport.Database
	siteA, siteB     uuid.UUID
	hookA, hookB     uuid.UUID
	headA, deliveryB uuid.UUID
}

func newQueueWorld(t *testing.T) *queueWorld {
	t.Helper()
	ctx := context.Background()
	w := &queueWorld{db: testsupport.NewDatabase(t)}
	a := testsupport.NewWebhookHistory(t, w.db, "queue-a")
	b := testsupport.NewWebhookHistory(t, w.db, "queue-b")
	w.siteA, w.siteB = a.SiteID, b.SiteID
	// Finished history of both, then A's backlog, then B's delivery.
	var ids []uuid.UUID
	_, ids = a.Event(time.Now(), models.DeliverySucceeded)
	w.hookA = webhookOf(t, w.db, ids[0])
	_, ids = b.Event(time.Now(), models.DeliverySucceeded)
	w.hookB = webhookOf(t, w.db, ids[0])
	if _, err := w.db.NewRaw(`WITH ev AS (
			INSERT INTO webhook_events (id, site_id, type, subject_type, subject_id, subject, created_at)
			SELECT gen_random_uuid(), ?0, 'draft.reverted', 'drafts', gen_random_uuid(), 'null', now() FROM generate_series(1, ?2)
			RETURNING id, seq, created_at)
		INSERT INTO webhook_deliveries (id, site_id, webhook_id, event_id, seq, event, created_at)
		SELECT gen_random_uuid(), ?0, ?1, id, seq, 'draft.reverted', created_at FROM ev`, w.siteA, w.hookA, backlog).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.db.NewRaw(`UPDATE webhook_deliveries SET started_at = now(), attempts = 3, last_status_code = 500,
			last_error = 'the receiver answered 500: down' WHERE id = (SELECT id FROM webhook_deliveries
			WHERE webhook_id = ? AND status = 'pending' ORDER BY seq LIMIT 1) RETURNING id`, w.hookA).Scan(ctx, &w.headA); err != nil {
		t.Fatal(err)
	}
	_, ids = b.Event(time.Now(), models.DeliveryPending)
	w.deliveryB = ids[0]
	// What autovacuum does after a bulk write: the planner knows the table.
	if _, err := w.db.ExecContext(ctx, "ANALYZE webhook_deliveries, webhooks"); err != nil {
		t.Fatal(err)
	}
	return w
}

// webhookOf is the webhook of a delivery.
func webhookOf(t *testing.T, db bun.IDB, deliveryID uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	if err := db.NewRaw("SELECT webhook_id FROM webhook_deliveries WHERE id = ?", deliveryID).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// planNode is a node of EXPLAIN (ANALYZE, FORMAT JSON).
type planNode struct {
	NodeType      string     `json:"Node Type"`
	Relation      string     `json:"Relation Name"`
	Index         string     `json:"Index Name"`
	Rows          float64    `json:"Actual Rows"`
	Loops         float64    `json:"Actual Loops"`
	RemovedFilter float64    `json:"Rows Removed by Filter"`
	Plans         []planNode `json:"Plans"`
}

// deliveryReads explains stmt (run and rolled back) and returns the rows
// its plan read from webhook_deliveries, counted over every scan of the
// table (rows returned and rows filtered out, times loops), and the node
// types of those scans and of every join.
func deliveryReads(t *testing.T, db *testsupport.Database, stmt string) (float64, []string) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var out []byte
	if err := tx.QueryRowContext(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+stmt).Scan(&out); err != nil {
		t.Fatalf("explain %s: %v", stmt, err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain output %s: %v", out, err)
	}
	var rows float64
	var nodes []string
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.Relation == "webhook_deliveries" {
			rows += (n.Rows + n.RemovedFilter) * n.Loops
			nodes = append(nodes, n.NodeType+" "+n.Index)
		}
		if strings.Contains(n.NodeType, "Join") || strings.Contains(n.NodeType, "Nested Loop") {
			nodes = append(nodes, n.NodeType)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plans[0].Plan)
	return rows, nodes
}

// checkIndexDriven explains every SELECT, WITH and UPDATE the statements
// hold and fails if one reads more than most rows of webhook_deliveries,
// scans the table whole, or anti-joins it by hashing.
func checkIndexDriven(t *testing.T, db *testsupport.Database, what string, stmts []string, most float64) {
	t.Helper()
	explained := 0
	for _, s := range stmts {
		verb := strings.ToUpper(strings.Fields(strings.TrimSpace(s) + " x")[0])
		if verb != "SELECT" && verb != "WITH" && verb != "UPDATE" {
			continue // BEGIN, COMMIT
		}
		explained++
		rows, nodes := deliveryReads(t, db, s)
		plan := strings.Join(nodes, ", ")
		t.Logf("%s: %.0f rows of webhook_deliveries read (%s)", what, rows, plan)
		if rows > most || strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Hash Anti Join") {
			t.Errorf("%s reads %.0f rows of webhook_deliveries with a backlog of %d elsewhere (at most %.0f, by index): %s\n%s",
				what, rows, backlog, most, plan, s)
		}
	}
	if explained == 0 {
		t.Fatalf("%s ran no statement to explain: %q", what, stmts)
	}
}

// lockHeads runs LockDeliveryHeads in a transaction it rolls back, and
// returns the heads and the statements it ran.
func lockHeads(t *testing.T, db *testsupport.Database, q models.HeadQuery) ([]models.DeliveryHead, []string) {
	t.Helper()
	ctx := context.Background()
	var b models.HeadBatch
	stmts := db.Statements.During(func() {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		if b, err = models.LockDeliveryHeads(ctx, tx, q); err != nil {
			t.Fatal(err)
		}
	})
	return b.Heads, stmts
}

// A webhook stuck with 20,000 deliveries queued behind a failing one
// costs the dispatch of another site's delivery nothing: the heads are
// found along webhook_deliveries_pending_idx, one probe per webhook, so
// the rows read stay a handful (the dispatch before read every queued row
// on each dispatch: 20,000 here, 100,000 → 0.8 s on a copy of the table).
// Dispatching every site, and the sweep, read a few rows per webhook too.
func TestDispatchCostDoesNotGrowWithABacklog(t *testing.T) {
	t.Parallel()
	w := newQueueWorld(t)
	const most = 20 // rows: a probe or two per webhook, and the lock of each head

	heads, stmts := lockHeads(t, w.db, models.HeadQuery{Sites: []uuid.UUID{w.siteB}, Limit: 500})
	if len(heads) != 1 || heads[0].ID != w.deliveryB || heads[0].SiteID != w.siteB || heads[0].WebhookID != w.hookB || !heads[0].Active {
		t.Fatalf("dispatch of site B locked %+v, want its delivery %s", heads, w.deliveryB)
	}
	checkIndexDriven(t, w.db, "dispatch of site B", stmts, most)

	// Every site: A's head was started already, so only B's is taken.
	heads, stmts = lockHeads(t, w.db, models.HeadQuery{Limit: 500})
	if len(heads) != 1 || heads[0].ID != w.deliveryB {
		t.Fatalf("dispatch of every site locked %+v, want B's delivery %s only", heads, w.deliveryB)
	}
	checkIndexDriven(t, w.db, "dispatch of every site", stmts, most)

	// The sweep takes both heads, started or not.
	heads, stmts = lockHeads(t, w.db, models.HeadQuery{Started: true, Limit: 500})
	got := map[uuid.UUID]bool{}
	for _, h := range heads {
		got[h.ID] = true
	}
	if len(heads) != 2 || !got[w.headA] || !got[w.deliveryB] {
		t.Fatalf("sweep locked %+v, want A's head %s and B's delivery %s", heads, w.headA, w.deliveryB)
	}
	checkIndexDriven(t, w.db, "sweep", stmts, most)

	// An event of site B: its outbox statement does not look at A's queue.
	// (Rolled back, so that explaining its statement can run it again.)
	stmts = w.db.Statements.During(func() { recordEvent(t, w.db, w.siteB, 0, false) })
	checkIndexDriven(t, w.db, "an event of site B", stmts, most)

	// An event of site A: behind its failing head, the outbox counts A's
	// queue, and stops at the limit (the default when explained again).
	stmts = w.db.Statements.During(func() { recordEvent(t, w.db, w.siteA, 100, false) })
	checkIndexDriven(t, w.db, "an event of site A", stmts, models.DefaultWebhookPendingLimit+most)
}

// recordEvent records a draft.reverted event of the site in a transaction
// of its own, with the pending limit set for it (0: the default), and
// commits it when commit is set.
func recordEvent(t *testing.T, db bun.IDB, siteID uuid.UUID, limit int, commit bool) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if limit > 0 {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL pressroom.webhook_pending_limit = %d", limit)); err != nil {
			t.Fatal(err)
		}
	}
	if err := models.RecordEvent(ctx, tx, models.Event{SiteID: siteID, Type: webhooks.DraftReverted, SubjectType: "drafts", SubjectID: uuid.New()}); err != nil {
		t.Fatal(err)
	}
	if commit {
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

// bound is a site with three webhooks subscribed to draft.reverted: one
// whose receiver keeps failing, one that answers (a burst queues behind
// it) and one that also hears of webhook.deactivated.
type bound struct {
	db                         *testsupport.Database
	site                       uuid.UUID
	failing, healthy, listener uuid.UUID
}

func newBound(t *testing.T) *bound {
	t.Helper()
	ctx := context.Background()
	b := &bound{db: testsupport.NewDatabase(t)}
	site, err := models.CreateSite(ctx, b.db, "Bound", "bound")
	if err != nil {
		t.Fatal(err)
	}
	b.site = site.ID
	for _, h := range []struct {
		id     *uuid.UUID
		events []string
	}{{&b.failing, []string{webhooks.DraftReverted}}, {&b.healthy, []string{webhooks.DraftReverted}},
		{&b.listener, []string{webhooks.DraftReverted, webhooks.WebhookDeactivated}}} {
		w := &models.Webhook{SiteRecord: models.NewSiteRecord(b.site), URL: "https://receiver.example/hook", Events: h.events, Active: true,
			SecretSealed: []byte("sealed"), SecretLast4: "abcd", Version: 1}
		if err := models.CreateWebhook(ctx, b.db, w); err != nil {
			t.Fatal(err)
		}
		*h.id = w.ID
	}
	return b
}

// fail makes the webhook's oldest pending delivery one whose last attempt
// failed, as DeliverWebhook records a 500.
func (b *bound) fail(t *testing.T, hook uuid.UUID) {
	t.Helper()
	if _, err := b.db.NewRaw(`UPDATE webhook_deliveries SET attempts = 1, started_at = now(), last_status_code = 500,
			last_error = 'the receiver answered 500: down' WHERE id = (SELECT id FROM webhook_deliveries
			WHERE webhook_id = ? AND status = 'pending' ORDER BY seq LIMIT 1)`, hook).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// deliveries counts the webhook's deliveries of each status and event.
func (b *bound) deliveries(t *testing.T, hook uuid.UUID) map[string]int {
	t.Helper()
	var rows []struct{ Status, Event string }
	if err := b.db.NewRaw("SELECT status, event FROM webhook_deliveries WHERE webhook_id = ?", hook).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, r := range rows {
		n[r.Status]++
		n[r.Event]++
	}
	return n
}

// checkDeactivatedEvent checks that one webhook.deactivated event was
// recorded, about the failing webhook as deactivated, without its secret.
func (b *bound) checkDeactivatedEvent(t *testing.T) {
	t.Helper()
	var events []struct {
		SubjectID uuid.UUID       `bun:"subject_id"`
		Subject   json.RawMessage `bun:"subject"`
	}
	if err := b.db.NewRaw("SELECT subject_id, subject FROM webhook_events WHERE type = ?", webhooks.WebhookDeactivated).
		Scan(context.Background(), &events); err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].SubjectID != b.failing {
		t.Fatalf("webhook.deactivated events %+v, want one about %s", events, b.failing)
	}
	var subject map[string]any
	if err := json.Unmarshal(events[0].Subject, &subject); err != nil || subject["active"] != false || subject["deactivated_reason"] == nil {
		t.Errorf("event subject %s (%v): not the deactivated webhook", events[0].Subject, err)
	}
	if _, ok := subject["secret_sealed"]; ok {
		t.Errorf("event subject copies the sealed secret: %s", events[0].Subject)
	}
}

// A webhook with the limit of deliveries pending behind one that keeps
// failing is deactivated by the next event, which it does not get: it
// says why, webhook.deactivated is recorded once (and delivered to the
// webhook that subscribed to it), and its queue is failed at once. A
// webhook that answers is not cut off for a burst.
func TestRecordEventDeactivatesAFailingWebhookPastThePendingLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBound(t)
	const limit = 3
	for i := range limit + 2 {
		recordEvent(t, b.db, b.site, limit, true)
		if i == 0 {
			b.fail(t, b.failing)
		}
	}
	// limit events queued for the failing webhook, then it was cut off.
	got, err := models.FindWebhook(ctx, b.db, b.site, b.failing)
	if err != nil {
		t.Fatal(err)
	}
	if got.Active || got.DeactivatedAt == nil || got.DeactivatedReason == nil ||
		!strings.Contains(*got.DeactivatedReason, "3 deliveries were pending") || !strings.Contains(*got.DeactivatedReason, "the receiver answered 500: down") {
		t.Fatalf("failing webhook after %d events: active %v, deactivated at %v because %v", limit+2, got.Active, got.DeactivatedAt, deref(got.DeactivatedReason))
	}
	if n := b.deliveries(t, b.failing); n[models.DeliveryPending] != limit || n[webhooks.DraftReverted] != limit {
		t.Errorf("failing webhook's deliveries: %v, want the %d before the limit, pending", n, limit)
	}
	// The healthy one queued a burst past the limit and stays active.
	if n := b.deliveries(t, b.healthy); n[models.DeliveryPending] != limit+2 {
		t.Errorf("healthy webhook's deliveries: %v, want all %d", n, limit+2)
	}
	if h, err := models.FindWebhook(ctx, b.db, b.site, b.healthy); err != nil || !h.Active || h.DeactivatedReason != nil {
		t.Errorf("healthy webhook %+v (%v): deactivated", h, err)
	}
	// One webhook.deactivated event about it, delivered to the listener.
	b.checkDeactivatedEvent(t)
	if n := b.deliveries(t, b.listener); n[webhooks.WebhookDeactivated] != 1 || n[webhooks.DraftReverted] != limit+2 {
		t.Errorf("listener's deliveries: %v, want the webhook.deactivated one and every draft.reverted", n)
	}

	// The dispatcher, woken for the site, finds the inactive webhook's
	// head, started as it is, and fails its queue in one go.
	heads, _ := lockHeads(t, b.db, models.HeadQuery{Sites: []uuid.UUID{b.site}, Limit: 500})
	var inactive []uuid.UUID
	for _, h := range heads {
		if !h.Active {
			inactive = append(inactive, h.WebhookID)
		}
	}
	if len(inactive) != 1 || inactive[0] != b.failing {
		t.Fatalf("dispatch found heads %+v, want the failing webhook's, inactive", heads)
	}
	failed, err := models.FailInactiveQueues(ctx, b.db, []uuid.UUID{b.failing, b.healthy})
	if err != nil || failed != limit {
		t.Fatalf("FailInactiveQueues = %d, %v; want %d", failed, err, limit)
	}
	var errs []string
	if err := b.db.NewRaw("SELECT last_error FROM webhook_deliveries WHERE webhook_id = ? ORDER BY seq", b.failing).Scan(ctx, &errs); err != nil {
		t.Fatal(err)
	}
	if n := b.deliveries(t, b.failing); n[models.DeliveryFailed] != limit || len(errs) != limit ||
		errs[0] != models.InactiveDeliveryError+" (last error: the receiver answered 500: down)" || errs[1] != models.InactiveDeliveryError {
		t.Errorf("failing webhook's deliveries %v, last errors %q", n, errs)
	}
	if n := b.deliveries(t, b.healthy); n[models.DeliveryPending] != limit+2 {
		t.Errorf("an active webhook's queue was touched: %v", n)
	}
}

// Two transactions that both find the webhook past the limit deactivate
// it once: the second waits for the first's row lock, then finds it
// inactive, and records no second webhook.deactivated.
func TestConcurrentEventsDeactivateAWebhookOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBound(t)
	const limit = 2
	for i := range limit {
		recordEvent(t, b.db, b.site, limit, true)
		if i == 0 {
			b.fail(t, b.failing)
		}
	}
	first, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Rollback() }()
	record := func(tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL pressroom.webhook_pending_limit = %d", limit)); err != nil {
			return err
		}
		return models.RecordEvent(ctx, tx, models.Event{SiteID: b.site, Type: webhooks.DraftReverted, SubjectType: "drafts", SubjectID: uuid.New()})
	}
	if err := record(first); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		second <- b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return record(tx) })
	}()
	select {
	case err := <-second:
		t.Fatalf("the second transaction did not wait for the first's deactivation: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.db.NewRaw("SELECT count(*) FROM webhook_events WHERE type = ?", webhooks.WebhookDeactivated).Scan(ctx, &n); err != nil || n != 1 {
		t.Fatalf("%d webhook.deactivated events (%v), want 1", n, err)
	}
	if d := b.deliveries(t, b.failing); d[models.DeliveryPending] != limit {
		t.Errorf("failing webhook's deliveries %v: want the %d before the limit", d, limit)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// RecordEvent's limit without a connection setting is the configuration's
// default.
func TestPendingLimitDefaultIsTheConfigurations(t *testing.T) {
	t.Parallel()
	c, err := config.FromEnv(func(string) string { return "" })
	if err != nil || c.Webhooks.PendingLimit != models.DefaultWebhookPendingLimit {
		t.Fatalf("PRESSROOM_WEBHOOK_PENDING_LIMIT defaults to %d (%v), models.DefaultWebhookPendingLimit is %d",
			c.Webhooks.PendingLimit, err, models.DefaultWebhookPendingLimit)
	}
}

// An event written twice under one key (Event.ID from models.EventKeyID: a
// review workflow's activity retried after its commit) is one event with
// one delivery per webhook; an event without a key is new every time.
func TestRecordEventWithAKeyWritesOnce(t *testing.T) {
	b := newBound(t)
	ctx := context.Background()
	subject := uuid.New()
	write := func(id uuid.UUID) {
		t.Helper()
		if err := b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return models.RecordEvent(ctx, tx, models.Event{SiteID: b.site, Type: webhooks.DraftReverted, SubjectType: "drafts", SubjectID: subject, ID: id})
		}); err != nil {
			t.Fatal(err)
		}
	}
	key := models.EventKeyID("release-review-x/reminder/y/1")
	if key != models.EventKeyID("release-review-x/reminder/y/1") || key == models.EventKeyID("release-review-x/reminder/y/2") {
		t.Fatal("EventKeyID is not a function of its key")
	}
	write(key)
	write(key)
	if n := b.deliveries(t, b.healthy)[webhooks.DraftReverted]; n != 1 {
		t.Errorf("%d deliveries of the keyed event, want 1", n)
	}
	write(uuid.Nil)
	write(uuid.Nil)
	if n := b.deliveries(t, b.healthy)[webhooks.DraftReverted]; n != 3 {
		t.Errorf("%d deliveries after two unkeyed events, want 3", n)
	}
}
