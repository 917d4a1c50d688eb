package oauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/models"
)

// key is a parsed signing key; it serves as both op.SigningKey and op.Key.
type key struct {
	id       string
	private  *rsa.PrivateKey
	retireAt time.Time
}

func (k *key) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *key) Algorithm() jose.SignatureAlgorithm          { return jose.RS256 }
func (k *key) Use() string                                 { return "sig" }
func (k *key) ID() string                                  { return k.id }

// publicKey is the op.Key published in the JWKS.
type publicKey struct{ *key }

func (k publicKey) Key() any { return &k.private.PublicKey }

// signingKey is the op.SigningKey used to sign.
type signingKey struct{ *key }

func (k signingKey) Key() any { return k.private }

// Keys manages the provider's signing keys in Postgres. A key signs for
// Rotation, then stays published until every token it signed has expired.
// Every replica reads the same keys; the one that finds the active key
// retired makes the next (an advisory lock keeps it to one).
type Keys struct {
	db       bun.IDB
	rotation time.Duration
	// keep is how long a retired key stays published: the longest token life.
	keep time.Duration

	mu         sync.Mutex
	cached     []*key
	fetchedAt  time.Time
	lastForced time.Time
}

// mayReload rate-limits forced reloads, so tokens with made-up key ids
// cannot turn every request into a database query.
func (k *Keys) mayReload() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if time.Since(k.lastForced) < 5*time.Second {
		return false
	}
	k.lastForced = time.Now()
	return true
}

// NewKeys returns the key manager.
func NewKeys(db bun.IDB, rotation, keep time.Duration) *Keys {
	return &Keys{db: db, rotation: rotation, keep: keep}
}

// cacheFor bounds how stale the in-memory key list may be; a token signed by
// a key this replica has not seen yet triggers a reload anyway.
const cacheFor = time.Minute

// Active returns the key to sign with, creating one when none is active.
func (k *Keys) Active(ctx context.Context) (*key, error) {
	keys, err := k.load(ctx, false)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, kk := range keys {
		if kk.retireAt.After(now) {
			return kk, nil
		}
	}
	if err := k.rotate(ctx); err != nil {
		return nil, err
	}
	keys, err = k.load(ctx, true)
	if err != nil {
		return nil, err
	}
	for _, kk := range keys {
		if kk.retireAt.After(now) {
			return kk, nil
		}
	}
	return nil, fmt.Errorf("no active signing key after rotation")
}

// Published returns every key still verifying tokens, newest first.
func (k *Keys) Published(ctx context.Context, reload bool) ([]*key, error) {
	return k.load(ctx, reload)
}

// parseKey parses the row's PEM private key.
func parseKey(r models.SigningKey) (*key, error) {
	block, _ := pem.Decode([]byte(r.PrivatePEM))
	if block == nil {
		return nil, fmt.Errorf("signing key %s: not PEM", r.ID)
	}
	priv, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", r.ID, err)
	}
	return &key{id: r.ID, private: priv, retireAt: r.RetireAt}, nil
}

func (k *Keys) load(ctx context.Context, force bool) ([]*key, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !force && k.cached != nil && time.Since(k.fetchedAt) < cacheFor {
		return k.cached, nil
	}
	rows, err := models.PublishedSigningKeys(ctx, k.db)
	if err != nil {
		return nil, err
	}
	keys := make([]*key, 0, len(rows))
	for _, r := range rows {
		key, err := parseKey(r)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	k.cached, k.fetchedAt = keys, time.Now()
	return keys, nil
}

// lookup finds one published key by id in the database and adds it to the
// cache, for a token naming a key this replica has not seen while a full
// reload is not allowed yet (mayReload): a key another replica made just
// after this one reloaded verifies at once, instead of being refused until
// the next reload. Key ids are UUIDs; anything else is not looked up, and
// a made-up UUID costs one primary-key lookup, no more than the revocation
// check every request makes. It returns nil when there is no such key.
func (k *Keys) lookup(ctx context.Context, id string) (*key, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, nil
	}
	row, err := models.PublishedSigningKey(ctx, k.db, id)
	if err != nil || row == nil {
		return nil, err
	}
	found, err := parseKey(*row)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cached != nil {
		// Newest first, as load orders them; a new slice, since callers
		// may hold the old one.
		k.cached = append([]*key{found}, k.cached...)
	}
	return found, nil
}

// rotate makes a new key unless another replica just did.
func (k *Keys) rotate(ctx context.Context) error {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate signing key: %w", err)
	}
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(priv)}))
	now := time.Now().UTC()
	return models.AddSigningKey(ctx, k.db, &models.SigningKey{
		ID: uuid.NewString(), Algorithm: string(jose.RS256), PrivatePEM: pemText,
		CreatedAt: now, RetireAt: now.Add(k.rotation), DropAt: now.Add(k.rotation + k.keep),
	})
}

// RotateNow retires the active key at once so the next signing makes a new
// one; the old key stays published. Operators use it after a suspected leak
// (together with revoking tokens), tests to check rotation.
func (k *Keys) RotateNow(ctx context.Context) error {
	err := models.RetireSigningKeys(ctx, k.db)
	k.mu.Lock()
	k.cached = nil
	k.mu.Unlock()
	return err
}

var (
	_ op.SigningKey = signingKey{}
	_ op.Key        = publicKey{}
)
