// Package auth holds the credential primitives that the API, the OAuth
// provider and the CLI share: password and secret hashing, and random secrets.
package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: OWASP's recommended minimum (19 MiB, 2 passes) raised
// to 64 MiB / 1 pass / 2 lanes, about 40 ms on one core here. The parameters are
// stored in each hash, so raising them later does not lock anyone out.
const (
	argonTime    = 1
	argonMemory  = 64 * 1024
	argonThreads = 2
	argonKeyLen  = 32
	saltLen      = 16
	// MaxPasswordBytes bounds what is hashed, so a huge password cannot be
	// used to burn CPU and memory.
	MaxPasswordBytes = 1024
)

// ErrMismatch means a password or secret does not match its hash.
var ErrMismatch = errors.New("auth: password does not match")

// HashPassword returns an argon2id hash in the PHC string format
// ($argon2id$v=19$m=...,t=...,p=...$salt$key).
func HashPassword(password string) (string, error) {
	if len(password) == 0 || len(password) > MaxPasswordBytes {
		return "", fmt.Errorf("password must be 1 to %d bytes", MaxPasswordBytes)
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("read random salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// UnusablePasswordHash is a hash in HashPassword's format that no
// password matches (a random key under a random salt): the password of a
// user who has not set one yet. Checking it costs what checking any hash
// costs, so a sign-in cannot tell such a user from another.
func UnusablePasswordHash() string {
	b := make([]byte, saltLen+argonKeyLen)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail (Go 1.24)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(b[:saltLen]), b64.EncodeToString(b[saltLen:]))
}

// CheckPassword compares password with a hash made by HashPassword in
// constant time. It returns ErrMismatch when they differ.
func CheckPassword(hash, password string) error {
	if len(password) > MaxPasswordBytes {
		return ErrMismatch
	}
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return errors.New("auth: unknown password hash format")
	}
	var version int
	var memory, time uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return errors.New("auth: unsupported argon2 version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &time, &threads); err != nil {
		return fmt.Errorf("auth: bad argon2 parameters: %w", err)
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return fmt.Errorf("auth: bad salt: %w", err)
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return fmt.Errorf("auth: bad key: %w", err)
	}
	got := argon2.IDKey([]byte(password), salt, time, memory, threads, uint32(len(want)))
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrMismatch
	}
	return nil
}

// RandomSecret returns n random bytes, URL-safe base64 encoded.
func RandomSecret(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
