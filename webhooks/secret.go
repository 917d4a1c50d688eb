package webhooks

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// SecretPrefix starts every Standard Webhooks secret.
const SecretPrefix = "whsec_"

// NewSecret makes a secret: whsec_ and 32 random bytes in base64 (the
// Standard Webhooks format; its libraries decode what follows the prefix).
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// Mask is how a secret is shown after its creation: the prefix, an
// ellipsis and its last 4 characters (enough to tell two apart).
func Mask(last4 string) string { return SecretPrefix + "…" + last4 }

// Last4 is the part of a secret Mask shows.
func Last4(secret string) string {
	if len(secret) < 4 {
		return secret
	}
	return secret[len(secret)-4:]
}

// Headers are the Standard Webhooks request headers of one message.
type Headers struct {
	ID, Timestamp, Signature string
}

// Set writes the headers onto h.
func (s Headers) Set(h http.Header) {
	h.Set("webhook-id", s.ID)
	h.Set("webhook-timestamp", s.Timestamp)
	h.Set("webhook-signature", s.Signature)
}

// Sign signs body as message id at time at with secret: the signature is
// "v1," and the base64 HMAC-SHA256 of "<id>.<unix seconds>.<body>" under
// the secret's decoded bytes, computed by the Standard Webhooks library.
func Sign(secret, id string, at time.Time, body []byte) (Headers, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return Headers{}, fmt.Errorf("webhook secret: %w", err)
	}
	sig, err := wh.Sign(id, at, body)
	if err != nil {
		return Headers{}, fmt.Errorf("sign webhook: %w", err)
	}
	return Headers{ID: id, Timestamp: fmt.Sprint(at.Unix()), Signature: sig}, nil
}

// ValidSecret tells whether s is a whsec_ secret the signer can use.
func ValidSecret(s string) bool {
	if !strings.HasPrefix(s, SecretPrefix) {
		return false
	}
	_, err := standardwebhooks.NewWebhook(s)
	return err == nil
}
