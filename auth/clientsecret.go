package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// Client secrets are 256-bit random values: no guessing attack gets
// anywhere near them, so a slow, memory-hard hash buys nothing and costs
// 64 MiB per check. They are stored as HMAC-SHA-256 under a server key
// (PRESSROOM_CLIENT_SECRET_KEY): microseconds per check, and a stolen
// database alone neither verifies guesses nor lets anyone who can write to
// it plant a secret of their own.
const clientSecretPrefix = "$hmac-sha256$"

// HashClientSecret returns the stored form of a client secret under key.
func HashClientSecret(key []byte, secret string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(secret))
	return clientSecretPrefix + base64.RawStdEncoding.EncodeToString(m.Sum(nil))
}

// IsLegacyClientSecretHash reports whether hash is an argon2id hash from
// before client secrets were HMACs; it still verifies (slowly, under the
// HashLimiter) and should be replaced by HashClientSecret once the secret
// has been seen.
func IsLegacyClientSecretHash(hash string) bool { return strings.HasPrefix(hash, "$argon2id$") }

// CheckClientSecret compares secret with an HMAC hash made by
// HashClientSecret in constant time; it returns ErrMismatch when they
// differ or hash is not of that form.
func CheckClientSecret(key []byte, hash, secret string) error {
	if len(secret) > MaxPasswordBytes {
		return ErrMismatch
	}
	want := HashClientSecret(key, secret)
	ok := hmac.Equal([]byte(want), []byte(hash))
	if !ok || !strings.HasPrefix(hash, clientSecretPrefix) {
		return ErrMismatch
	}
	return nil
}
