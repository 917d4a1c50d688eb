package oauth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// dummyHash is checked when a login names no known user, so that an unknown
// username takes as long as a wrong password and usernames cannot be probed
// by timing. Nobody's password: it is a hash of a random phrase.
const dummyHash = "$argon2id$v=19$m=65536,t=1,p=2$QfPRr98zmPX8vrqR8DCXJw$v0PVsTkLLKm/WHJcgNP7eJ4WYacMGIoqQjpFvKPSSck"

// ThrottleSettings bounds failed password attempts. Counting happens in
// Postgres, so the limits hold across every API replica.
type ThrottleSettings struct {
	// MaxPerUser failures for one username within Window lock that username.
	MaxPerUser int
	// MaxPerAddress failures from one client address within Window lock it.
	MaxPerAddress int
	Window        time.Duration
	LockFor       time.Duration
}

// DefaultThrottle: 5 failures per username or 20 per address in 15 minutes
// lock sign-in for 15 minutes.
var DefaultThrottle = ThrottleSettings{MaxPerUser: 5, MaxPerAddress: 20, Window: 15 * time.Minute, LockFor: 15 * time.Minute}

type throttle struct {
	db bun.IDB
	s  ThrottleSettings
}

func userKey(username string) string { return "user:" + strings.ToLower(strings.TrimSpace(username)) }
func addrKey(ip string) string       { return "addr:" + ip }

// Attempt counts a sign-in attempt for the username and the address before
// the password is checked, and returns how long sign-in stays locked (0:
// go ahead). Counting first, in one atomic statement per key, means
// parallel guesses cannot all slip in before the first failure is
// recorded: every attempt in flight holds a place in the count. Succeed
// gives the places back.
func (t *throttle) Attempt(ctx context.Context, username, ip string) (time.Duration, error) {
	// The username first: a locked username refuses the attempt before the
	// address is counted, and a locked address gives the username its place
	// back, so a refused attempt (no password checked) counts nowhere.
	wait, err := t.take(ctx, userKey(username), t.s.MaxPerUser)
	if err != nil || wait > 0 {
		return wait, err
	}
	wait, err = t.take(ctx, addrKey(ip), t.s.MaxPerAddress)
	if err != nil || wait > 0 {
		if gerr := t.giveBack(ctx, userKey(username)); gerr != nil {
			return 0, gerr
		}
	}
	return wait, err
}

// take counts one attempt under key, locking it when the count exceeds
// limit, and returns how long the key stays locked.
func (t *throttle) take(ctx context.Context, key string, limit int) (time.Duration, error) {
	var until *time.Time
	err := t.db.NewRaw(`
INSERT INTO oauth_login_failures AS f (key, failures, window_start) VALUES (?0, 1, now())
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
    WHEN f.locked_until IS NOT NULL OR f.window_start < now() - make_interval(secs => ?1) THEN NULL
    WHEN f.failures + 1 > ?2 THEN now() + make_interval(secs => ?3)
    ELSE NULL END
RETURNING locked_until`, key, t.s.Window.Seconds(), limit, t.s.LockFor.Seconds()).Scan(ctx, &until)
	if err != nil {
		return 0, fmt.Errorf("count sign-in attempt: %w", err)
	}
	if until == nil {
		return 0, nil
	}
	return max(time.Until(*until), 0), nil
}

// Succeed clears the username's count and gives the address back the place
// this attempt took (a successful sign-in is not a guess; but it must not
// reset a spray of guesses from the same address either).
func (t *throttle) Succeed(ctx context.Context, username, ip string) error {
	if _, err := t.db.NewDelete().Table("oauth_login_failures").Where("key = ?", userKey(username)).Exec(ctx); err != nil {
		return err
	}
	return t.giveBack(ctx, addrKey(ip))
}

// giveBack returns the place one attempt took under key, unless it is locked.
func (t *throttle) giveBack(ctx context.Context, key string) error {
	_, err := t.db.NewRaw(`UPDATE oauth_login_failures SET failures = GREATEST(failures - 1, 0)
WHERE key = ? AND locked_until IS NULL`, key).Exec(ctx)
	if err != nil {
		return fmt.Errorf("release sign-in attempt: %w", err)
	}
	return nil
}
