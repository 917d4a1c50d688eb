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

// Wait returns how long sign-in stays locked for this username or address.
func (t *throttle) Wait(ctx context.Context, username, ip string) (time.Duration, error) {
	var until []time.Time
	err := t.db.NewSelect().Table("oauth_login_failures").Column("locked_until").
		Where("key IN (?, ?) AND locked_until > now()", userKey(username), addrKey(ip)).Scan(ctx, &until)
	if err != nil {
		return 0, fmt.Errorf("read login throttle: %w", err)
	}
	var wait time.Duration
	for _, u := range until {
		wait = max(wait, time.Until(u))
	}
	return wait, nil
}

// Fail counts a failed attempt for the username and the address.
func (t *throttle) Fail(ctx context.Context, username, ip string) error {
	for _, k := range []struct {
		key string
		max int
	}{{userKey(username), t.s.MaxPerUser}, {addrKey(ip), t.s.MaxPerAddress}} {
		_, err := t.db.NewRaw(`
INSERT INTO oauth_login_failures AS f (key, failures, window_start) VALUES (?, 1, now())
ON CONFLICT (key) DO UPDATE SET
  failures     = CASE WHEN f.window_start < now() - make_interval(secs => ?) THEN 1 ELSE f.failures + 1 END,
  window_start = CASE WHEN f.window_start < now() - make_interval(secs => ?) THEN now() ELSE f.window_start END`,
			k.key, t.s.Window.Seconds(), t.s.Window.Seconds()).Exec(ctx)
		if err != nil {
			return fmt.Errorf("count failed login: %w", err)
		}
		if _, err := t.db.NewRaw(`UPDATE oauth_login_failures SET locked_until = now() + make_interval(secs => ?)
WHERE key = ? AND failures >= ? AND (locked_until IS NULL OR locked_until < now())`, t.s.LockFor.Seconds(), k.key, k.max).Exec(ctx); err != nil {
			return fmt.Errorf("lock login: %w", err)
		}
	}
	return nil
}

// Succeed clears the username's failures (not the address's: one good
// password must not reset a spray of guesses from the same address).
func (t *throttle) Succeed(ctx context.Context, username string) error {
	_, err := t.db.NewDelete().Table("oauth_login_failures").Where("key = ?", userKey(username)).Exec(ctx)
	return err
}
