package models

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The OAuth provider's sign-in throttle store (api/oauth/throttle.go holds
// its policy): places taken by attempts in progress
// (oauth_login_attempts) and failures counted per key, with the key's lock
// (oauth_login_failures).

// ThrottleKey is a key of the sign-in throttle with its limit.
type ThrottleKey struct {
	Key   string
	Limit int
}

// ReserveLoginAttempt takes, in one transaction under advisory locks on
// both keys (so two attempts cannot both take the last place), a place
// under each key for the attempt id, kept for ttl. ok is false when some
// key has no free place; until is the latest lock of a locked key (nil:
// none). Failures older than window do not count.
//
// The transaction is four round trips (begin, locks, check-and-take,
// commit), two of them under the locks: every round trip here slows the
// turnover of places for all attempts queued behind it.
func ReserveLoginAttempt(ctx context.Context, db bun.IDB, id uuid.UUID, keys [2]ThrottleKey, window, ttl time.Duration) (until *time.Time, ok bool, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		a, b := throttleLockID(keys[0].Key), throttleLockID(keys[1].Key)
		if b < a {
			a, b = b, a // one order everywhere: no deadlock between attempts
		}
		// A target list is evaluated left to right: a, then b.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?), pg_advisory_xact_lock(?)", a, b); err != nil {
			return fmt.Errorf("lock sign-in throttle: %w", err)
		}
		// A statement of its own, after the locks: under READ COMMITTED its
		// snapshot is taken once the locks are held, so it sees every
		// place taken by an attempt that held them before. In one
		// snapshot, a finished attempt is either still in progress or
		// already a failure here, never neither. The places are taken
		// (and the key's expired places cleared) only if every key has
		// one free and none is locked.
		if err := tx.NewRaw(`
WITH k (key, lim) AS (VALUES (?0::text, ?1::int), (?2::text, ?3::int)),
s AS (
  SELECT k.key,
    (SELECT f.locked_until FROM oauth_login_failures f WHERE f.key = k.key AND f.locked_until > now()) AS until,
    COALESCE((SELECT f.failures FROM oauth_login_failures f WHERE f.key = k.key AND f.locked_until IS NULL
              AND f.window_start >= now() - make_interval(secs => ?4)), 0)
      + (SELECT count(*) FROM oauth_login_attempts a WHERE a.key = k.key AND a.expires_at > now()) >= k.lim AS full
  FROM k),
v AS (SELECT NOT EXISTS (SELECT FROM s WHERE s.until IS NOT NULL OR s.full) AS ok),
expired AS (
  DELETE FROM oauth_login_attempts a USING k, v WHERE v.ok AND a.key = k.key AND a.expires_at <= now()),
taken AS (
  INSERT INTO oauth_login_attempts (id, key, expires_at)
  SELECT ?5::uuid, k.key, now() + make_interval(secs => ?6) FROM k, v WHERE v.ok)
SELECT (SELECT max(s.until) FROM s), v.ok FROM v`,
			keys[0].Key, keys[0].Limit, keys[1].Key, keys[1].Limit, window.Seconds(), id, ttl.Seconds()).
			Scan(ctx, &until, &ok); err != nil {
			return fmt.Errorf("reserve sign-in attempt: %w", err)
		}
		return nil
	})
	return until, ok, err
}

func throttleLockID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte("pressroom sign-in throttle\x00" + key))
	return int64(h.Sum64())
}

// SucceedLoginAttempt gives the attempt id's places back and clears the
// failures of key. One statement (atomic on its own), one round trip.
func SucceedLoginAttempt(ctx context.Context, db bun.IDB, id uuid.UUID, key string) error {
	if _, err := db.NewRaw(`
WITH released AS (DELETE FROM oauth_login_attempts WHERE id = ?)
DELETE FROM oauth_login_failures WHERE key = ?`, id, key).Exec(ctx); err != nil {
		return fmt.Errorf("end sign-in attempt: %w", err)
	}
	return nil
}

// ReleaseLoginAttempt gives the attempt id's places back.
func ReleaseLoginAttempt(ctx context.Context, db bun.IDB, id uuid.UUID) error {
	if _, err := db.NewRaw(`DELETE FROM oauth_login_attempts WHERE id = ?`, id).Exec(ctx); err != nil {
		return fmt.Errorf("release sign-in attempt: %w", err)
	}
	return nil
}

// CountLoginFailure counts one failure under key within window; the
// limit-th locks the key for lockFor. A locked key stays as it is.
func CountLoginFailure(ctx context.Context, db bun.IDB, key string, window time.Duration, limit int, lockFor time.Duration) error {
	_, err := db.NewRaw(`
INSERT INTO oauth_login_failures AS f (key, failures, window_start, locked_until)
VALUES (?0, 1, now(), CASE WHEN 1 >= ?2 THEN now() + make_interval(secs => ?3) END)
ON CONFLICT (key) DO UPDATE SET
  failures = CASE
    WHEN f.locked_until > now() THEN f.failures
    WHEN f.locked_until IS NOT NULL OR f.window_start < now() - make_interval(secs => ?1) THEN 1
    ELSE f.failures + 1 END,
  window_start = CASE
    WHEN f.locked_until > now() THEN f.window_start
    WHEN f.locked_until IS NOT NULL OR f.window_start < now() - make_interval(secs => ?1) THEN now()
    ELSE f.window_start END,
  locked_until = CASE
    WHEN f.locked_until > now() THEN f.locked_until
    WHEN f.locked_until IS NOT NULL OR f.window_start < now() - make_interval(secs => ?1) THEN
      CASE WHEN 1 >= ?2 THEN now() + make_interval(secs => ?3) END
    WHEN f.failures + 1 >= ?2 THEN now() + make_interval(secs => ?3)
    ELSE NULL END`, key, window.Seconds(), limit, lockFor.Seconds()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("count failed attempt: %w", err)
	}
	return nil
}

// LoginLockedUntil returns until when key is locked (nil: not locked).
func LoginLockedUntil(ctx context.Context, db bun.IDB, key string) (*time.Time, error) {
	var until *time.Time
	if err := db.NewRaw(`SELECT max(locked_until) FROM oauth_login_failures WHERE key = ? AND locked_until > now()`, key).
		Scan(ctx, &until); err != nil {
		return nil, fmt.Errorf("read throttle: %w", err)
	}
	return until, nil
}
