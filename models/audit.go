package models

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// AuditEvent is one row of the audit trail (docs/audit.md): who did what
// to which record of which site, from where, when. Changed names the
// attributes a write sent, never their values.
type AuditEvent struct {
	bun.BaseModel `bun:"table:audit_events"`

	ID            uuid.UUID  `bun:"id,pk,type:uuid"`
	SiteID        *uuid.UUID `bun:"site_id,type:uuid"`
	UserID        *uuid.UUID `bun:"user_id,type:uuid"`
	OAuthClientID *string    `bun:"oauth_client_id"`
	Action        string     `bun:"action,notnull"`
	ItemType      string     `bun:"item_type,notnull"`
	ItemID        *string    `bun:"item_id"`
	Changed       []string   `bun:"changed,array"`
	RequestID     string     `bun:"request_id,notnull"`
	ClientAddress string     `bun:"client_address,notnull"`
	CreatedAt     time.Time  `bun:"created_at,notnull"`
	// SiteClientID is the oauth-clients resource (site_clients.id) of the
	// client OAuthClientID names, while it exists (read, never written).
	SiteClientID *uuid.UUID `bun:"site_client_id,scanonly"`
}

// Audit is what a request's change will be recorded as: the API fills it
// as the request goes (the route's action, the principal, the decoded
// document's attribute names, the new record's id) and carries it in the
// request's context, and the transaction helper records it last in the
// change's transaction (RecordAudit). Safe for the one request's goroutines.
type Audit struct {
	mu       sync.Mutex
	event    AuditEvent
	recorded bool
}

// NewAudit starts the audit of a request: action ("pages.update") on a
// record of itemType, by a user or a client, on a site.
func NewAudit(action, itemType string, siteID *uuid.UUID, userID *uuid.UUID, clientID string, requestID, clientAddress string) *Audit {
	a := &Audit{event: AuditEvent{Action: action, ItemType: itemType, SiteID: siteID, UserID: userID,
		RequestID: clip(requestID, 100), ClientAddress: clip(clientAddress, 100), Changed: []string{}}}
	if clientID != "" {
		a.event.OAuthClientID = &clientID
	}
	return a
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// SetItem names the record the change is about (a created record's new id).
func (a *Audit) SetItem(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.event.ItemID = &id
}

// SetActor names the site and the person the event is about (a sign-in's,
// known once the credentials are checked).
func (a *Audit) SetActor(siteID, userID *uuid.UUID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.event.SiteID, a.event.UserID = siteID, userID
}

// SetClient names the site and the integration client the event is
// about (a client_credentials grant's, known once the client is checked).
func (a *Audit) SetClient(siteID *uuid.UUID, clientID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.event.SiteID, a.event.OAuthClientID = siteID, &clientID
}

// SetAction replaces the action (a sign-in that failed).
func (a *Audit) SetAction(action string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.event.Action = action
}

// AddChanged adds attribute or relationship names the change sends.
func (a *Audit) AddChanged(names ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, n := range names {
		if !containsString(a.event.Changed, n) {
			a.event.Changed = append(a.event.Changed, n)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RolledBack tells a that the transaction RecordAudit wrote it in rolled
// back: the next one records it again. A nil a does nothing.
func (a *Audit) RolledBack() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recorded = false
}

// Unchanged tells a that the request changed nothing (a PATCH sending no
// change, a replayed idempotent request): nothing to record. A nil a does
// nothing.
func (a *Audit) Unchanged() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recorded = true
}

// Recorded tells whether RecordAudit wrote the audit in a transaction that
// has not rolled back.
func (a *Audit) Recorded() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.recorded
}

type auditKey struct{}

// WithAudit carries a in ctx, for RecordAudit.
func WithAudit(ctx context.Context, a *Audit) context.Context {
	return context.WithValue(ctx, auditKey{}, a)
}

// AuditOf is ctx's audit, or nil.
func AuditOf(ctx context.Context) *Audit {
	a, _ := ctx.Value(auditKey{}).(*Audit)
	return a
}

// RecordAudit inserts ctx's audit, if any, in tx: the transaction of the
// change it records. Without one (a change no request made: a workflow's),
// or once recorded by an earlier transaction of the request that did not
// roll back, it does nothing: one event per request.
func RecordAudit(ctx context.Context, tx bun.IDB) error {
	a := AuditOf(ctx)
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.recorded {
		return nil
	}
	e := a.event
	// A time-ordered id (UUIDv7): each insert lands at the right edge of
	// the primary key's index instead of on a random page of it.
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("record audit event %s: %w", e.Action, err)
	}
	// A prepared statement (prepared.go): every audited write runs it, so
	// Postgres parses and plans it once per connection, not per request.
	if _, err := ExecPrepared(ctx, tx, `INSERT INTO audit_events
		(id, site_id, user_id, oauth_client_id, action, item_type, item_id, changed, request_id, client_address)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, UUIDParam(id), NullUUIDParam(e.SiteID), NullUUIDParam(e.UserID),
		e.OAuthClientID, e.Action, e.ItemType, e.ItemID, append([]string{}, e.Changed...), e.RequestID, e.ClientAddress); err != nil {
		return fmt.Errorf("record audit event %s: %w", e.Action, err)
	}
	a.recorded = true
	return nil
}

// AuditFilter selects a site's audit events for ListAuditEvents. Zero
// fields select everything.
type AuditFilter struct {
	UserID        *uuid.UUID
	OAuthClientID string // the client's client-id
	// SiteClientID is the client's oauth-clients resource id.
	SiteClientID *uuid.UUID
	ItemType     string
	ItemID       string
	Action       string
	From, Before *time.Time // created_at >= From, < Before
	// After is a cursor (AuditCursor of the last event of the page before).
	After string
	Limit int
}

// ErrBadCursor is a page[after] that is no cursor ListAuditEvents made.
var ErrBadCursor = errors.New("malformed audit cursor")

// AuditCursor is the cursor of e: the page after it starts at the event
// next older than e.
func AuditCursor(e AuditEvent) string { return Cursor(e.CreatedAt, e.ID) }

// Cursor is the page[after] cursor of a row of a list ordered newest
// first by (created_at, id): the audit trail's, a record's versions'.
func Cursor(at time.Time, id uuid.UUID) string {
	return base64.RawURLEncoding.EncodeToString([]byte(at.UTC().Format(time.RFC3339Nano) + "," + id.String()))
}

// ParseCursor reads a Cursor (ErrBadCursor for anything else).
func ParseCursor(s string) (time.Time, uuid.UUID, error) { return parseAuditCursor(s) }

func parseAuditCursor(s string) (time.Time, uuid.UUID, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, uuid.Nil, ErrBadCursor
	}
	at, id, ok := strings.Cut(string(raw), ",")
	if !ok {
		return time.Time{}, uuid.Nil, ErrBadCursor
	}
	t, terr := time.Parse(time.RFC3339Nano, at)
	u, uerr := uuid.Parse(id)
	if terr != nil || uerr != nil {
		return time.Time{}, uuid.Nil, ErrBadCursor
	}
	return t, u, nil
}

// ListAuditEvents is one page of a site's audit events, newest first
// (created_at, then id, descending), at most f.Limit of them, after the
// cursor f.After. more tells whether older events follow.
func ListAuditEvents(ctx context.Context, db bun.IDB, siteID uuid.UUID, f AuditFilter) (events []AuditEvent, more bool, err error) {
	if f.Limit <= 0 {
		return nil, false, fmt.Errorf("list audit events: limit %d is not positive", f.Limit)
	}
	q := auditEventQuery(db, &events).Where("site_id = ?", siteID)
	if f.UserID != nil {
		q = q.Where("user_id = ?", *f.UserID)
	}
	if f.OAuthClientID != "" {
		q = q.Where("oauth_client_id = ?", f.OAuthClientID)
	}
	if f.SiteClientID != nil {
		q = q.Where("oauth_client_id = (SELECT sc.client_id FROM site_clients sc WHERE sc.id = ? AND sc.site_id = ?)", *f.SiteClientID, siteID)
	}
	if f.ItemType != "" {
		q = q.Where("item_type = ? AND item_id = ?", f.ItemType, f.ItemID)
	}
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if f.From != nil {
		q = q.Where("created_at >= ?", *f.From)
	}
	if f.Before != nil {
		q = q.Where("created_at < ?", *f.Before)
	}
	if f.After != "" {
		at, id, err := parseAuditCursor(f.After)
		if err != nil {
			return nil, false, err
		}
		q = q.Where("(created_at, id) < (?, ?)", at, id)
	}
	if err := q.OrderExpr("created_at DESC, id DESC").Limit(int64(f.Limit + 1)).Scan(ctx); err != nil {
		return nil, false, fmt.Errorf("list audit events: %w", err)
	}
	if len(events) > f.Limit {
		return events[:f.Limit], true, nil
	}
	return events, false, nil
}

// auditEventQuery reads audit events with the oauth-clients resource id of
// the client each names (none for a person, or a deleted client).
func auditEventQuery(db bun.IDB, rows any) *bun.SelectQuery {
	return db.NewSelect().Model(rows).ColumnExpr("?TableAlias.*").
		ColumnExpr("(SELECT sc.id FROM site_clients sc WHERE sc.client_id = ?TableAlias.oauth_client_id) AS site_client_id")
}

// FindAuditEvent is one audit event of a site.
func FindAuditEvent(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*AuditEvent, error) {
	e := new(AuditEvent)
	if err := auditEventQuery(db, e).Where("site_id = ? AND id = ?", siteID, id).Scan(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// AuditEventsByIDs reads the site's audit events ids (those it has).
func AuditEventsByIDs(ctx context.Context, db bun.IDB, siteID uuid.UUID, ids []uuid.UUID) ([]AuditEvent, error) {
	var rows []AuditEvent
	if len(ids) == 0 {
		return rows, nil
	}
	err := auditEventQuery(db, &rows).Where("site_id = ? AND id IN (?)", siteID, bun.In(Unique(ids))).Scan(ctx)
	return rows, err
}

// AuditPruneBatch bounds the rows one pruning statement deletes, as
// WebhookPruneBatch does.
const AuditPruneBatch = 5000

// PrunedAuditEvents counts what PruneAuditEvents deleted.
type PrunedAuditEvents struct {
	Events int `json:"events"`
}

// PruneAuditEvents deletes the audit events created before cutoff, oldest
// first, batch rows per statement (each its own short transaction), until
// none is left; progress, if not nil, gets the total after each. Running
// it twice, or at once on two workers, is harmless.
func PruneAuditEvents(ctx context.Context, db bun.IDB, cutoff time.Time, batch int, progress func(PrunedAuditEvents)) (PrunedAuditEvents, error) {
	var done PrunedAuditEvents
	if batch <= 0 {
		return done, fmt.Errorf("prune audit events: batch %d is not positive", batch)
	}
	err := PruneInBatches(ctx, db, batch, []PruneStep{{What: "audit events", Count: &done.Events, Query: `DELETE FROM audit_events WHERE id IN (
			SELECT id FROM audit_events WHERE created_at < ? ORDER BY created_at LIMIT ? FOR UPDATE SKIP LOCKED)`,
		Args: []any{cutoff, batch}}}, func() {
		if progress != nil {
			progress(done)
		}
	})
	return done, err
}
