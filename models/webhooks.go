package models

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/webhooks"
)

// Webhook is a site's subscription to events (docs/webhooks.md).
type Webhook struct {
	bun.BaseModel `bun:"table:webhooks,alias:webhook"`

	SiteRecord
	URL         string   `bun:"url,notnull"`
	Events      []string `bun:"events,array,notnull"`
	Active      bool     `bun:"active,notnull"`
	Description *string  `bun:"description"`
	// SecretSealed is the signing secret sealed by a SecretBox; the API
	// shows it only masked (SecretLast4) after the create.
	SecretSealed []byte `bun:"secret_sealed,notnull"`
	SecretLast4  string `bun:"secret_last4,notnull"`
	Version      int    `bun:"version,notnull"`
	// When and why Pressroom deactivated the webhook itself
	// (DeactivateWebhook: a 410, or its queue past the pending limit);
	// nil while it is active, and when an editor deactivated it.
	DeactivatedAt     *time.Time `bun:"deactivated_at"`
	DeactivatedReason *string    `bun:"deactivated_reason"`
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// WebhookDelivery is one event's delivery to one webhook.
type WebhookDelivery struct {
	bun.BaseModel `bun:"table:webhook_deliveries,alias:delivery"`

	SiteRow
	WebhookID uuid.UUID `bun:"webhook_id,type:uuid,notnull"`
	EventID   uuid.UUID `bun:"event_id,type:uuid,notnull"` // one delivery per event and webhook
	Seq       int64     `bun:"seq,notnull"`                // the event's: a webhook's deliveries go out in seq order
	Event     string    `bun:"event,notnull"`              // the event's type, copied for lists and filters
	Status    string    `bun:"status,notnull"`             // DeliveryPending, DeliverySucceeded or DeliveryFailed
	Attempts  int       `bun:"attempts,notnull"`           // requests sent; a retry by hand keeps counting
	// The last attempt's answer: its HTTP status (nil when none came: a
	// timeout, a refused connection), what went wrong (nil after a
	// success) and the start of its body (webhooks.StoredResponse bytes).
	LastStatusCode *int       `bun:"last_status_code"`
	LastError      *string    `bun:"last_error"`
	LastResponse   *string    `bun:"last_response"`
	NextAttemptAt  *time.Time `bun:"next_attempt_at"` // when the next retry is due, while one is
	StartedAt      *time.Time `bun:"started_at"`      // when its workflow was started; nil until then (the sweep's work)
	DeliveredAt    *time.Time `bun:"delivered_at"`    // when a 2xx answer came
}

// SecretBox seals webhook secrets at rest (AES-256-GCM under a key derived
// from PRESSROOM_WEBHOOK_SECRET_KEY): the worker must recover a secret to
// sign with it, so it cannot be hashed like a client secret; a database
// dump alone does not reveal it.
type SecretBox struct{ aead cipher.AEAD }

// NewSecretBox derives the sealing key from key.
func NewSecretBox(key string) (*SecretBox, error) {
	if key == "" {
		return nil, errors.New("webhook secret key is empty")
	}
	k := sha256.Sum256([]byte("pressroom webhook secrets\x00" + key))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &SecretBox{aead: aead}, nil
}

// Seal encrypts secret, bound to the webhook's id.
func (b *SecretBox) Seal(webhookID uuid.UUID, secret string) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal webhook secret: %w", err)
	}
	return b.aead.Seal(nonce, nonce, []byte(secret), webhookID[:]), nil
}

// Open decrypts what Seal sealed for the same webhook.
func (b *SecretBox) Open(webhookID uuid.UUID, sealed []byte) (string, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("sealed webhook secret is too short")
	}
	out, err := b.aead.Open(nil, sealed[:n], sealed[n:], webhookID[:])
	if err != nil {
		return "", errors.New("open webhook secret: wrong PRESSROOM_WEBHOOK_SECRET_KEY or damaged row")
	}
	return string(out), nil
}

// The finders of a site's webhooks and webhook deliveries by id.
var (
	FindWebhook  = Finder[Webhook]("webhook")
	FindDelivery = Finder[WebhookDelivery]("webhook delivery")
)

// ListWebhooks loads one page of the site's webhooks.
func ListWebhooks(ctx context.Context, db bun.IDB, siteID uuid.UUID, page Page) ([]Webhook, int64, error) {
	return List[Webhook](ctx, db, page, "site_id = ?", siteID)
}

// MaxWebhooks bounds a site's webhooks: each event fans out to all.
const MaxWebhooks = 20

// WebhookSecret is a new signing secret of a webhook: Plain is shown once,
// in the answer that made it; Sealed and Last4 are stored.
type WebhookSecret struct {
	Plain  string
	Sealed []byte
	Last4  string
}

// Issue makes a new signing secret for the webhook id, sealed for it.
func (b *SecretBox) Issue(webhookID uuid.UUID) (WebhookSecret, error) {
	plain, err := webhooks.NewSecret()
	if err != nil {
		return WebhookSecret{}, err
	}
	sealed, err := b.Seal(webhookID, plain)
	if err != nil {
		return WebhookSecret{}, err
	}
	return WebhookSecret{Plain: plain, Sealed: sealed, Last4: webhooks.Last4(plain)}, nil
}

// CreateWebhook inserts w, unless its site has MaxWebhooks already (the
// site row is locked meanwhile, so two creates cannot both pass).
func CreateWebhook(ctx context.Context, db bun.IDB, w *Webhook) error {
	if _, err := db.NewRaw("SELECT 1 FROM sites WHERE id = ? FOR UPDATE", w.SiteID).Exec(ctx); err != nil {
		return fmt.Errorf("lock site: %w", err)
	}
	n, err := db.NewSelect().Model((*Webhook)(nil)).Where("site_id = ?", w.SiteID).Count(ctx)
	if err != nil {
		return err
	}
	if n >= MaxWebhooks {
		return &Error{Kind: ErrTooLarge, Code: "too_many_webhooks", Detail: fmt.Sprintf("A site has at most %d webhooks.", MaxWebhooks)}
	}
	_, err = db.NewInsert().Model(w).Exec(ctx)
	return err
}

// DeleteWebhook deletes the site's webhook id with its deliveries; a
// delivery workflow still running finds its delivery gone and ends.
func DeleteWebhook(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) error {
	res, err := db.NewDelete().Model((*Webhook)(nil)).Where("id = ? AND site_id = ?", id, siteID).Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return NotFound("webhook")
	}
	return nil
}

// ListDeliveries loads one page of the deliveries of the site's webhook
// (NotFound without it).
func ListDeliveries(ctx context.Context, db bun.IDB, siteID, webhookID uuid.UUID, page Page) ([]WebhookDelivery, int64, error) {
	if _, err := FindWebhook(ctx, db, siteID, webhookID); err != nil {
		return nil, 0, err
	}
	return List[WebhookDelivery](ctx, db, page, "site_id = ? AND webhook_id = ?", siteID, webhookID)
}

// RetryDelivery makes the site's failed delivery id pending again, to be
// started at once by the worker's dispatcher (NOTIFY). Only a failed
// delivery can be retried: a pending one is being worked on, a succeeded
// one was received.
func RetryDelivery(ctx context.Context, db bun.IDB, siteID, id uuid.UUID) (*WebhookDelivery, error) {
	d, err := FindDelivery(ctx, db, siteID, id)
	if err != nil {
		return nil, err
	}
	if d.Status != DeliveryFailed {
		return nil, &Error{Kind: ErrInvalid, Code: "not_failed", Detail: "Only a failed delivery can be retried; this one is " + d.Status + "."}
	}
	err = db.NewUpdate().Model(d).Set("status = ?, started_at = NULL, next_attempt_at = NULL, delivered_at = NULL", DeliveryPending).
		Where("id = ? AND site_id = ? AND status = ?", id, siteID, DeliveryFailed).Returning("*").Scan(ctx)
	if IsNoRows(err) {
		return nil, Stale(0)
	}
	if err != nil {
		return nil, err
	}
	if err := notifyDispatcher(ctx, db, siteID); err != nil {
		return nil, err
	}
	return d, nil
}
