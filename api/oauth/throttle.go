package oauth

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// dummyHash is checked when a login names no known user, so that an unknown
// username takes as long as a wrong password and usernames cannot be probed
// by timing. Nobody's password: it is a hash of a random phrase.
const dummyHash = "$argon2id$v=19$m=65536,t=1,p=2$QfPRr98zmPX8vrqR8DCXJw$v0PVsTkLLKm/WHJcgNP7eJ4WYacMGIoqQjpFvKPSSck"

// ThrottleSettings bounds failed password attempts and failed client
// authentications. Counting happens in Postgres, so the limits hold across
// every API replica.
type ThrottleSettings struct {
	// MaxPerUser failures for one user within Window lock that user.
	MaxPerUser int
	// MaxPerAddress failures from one client address within Window lock it.
	MaxPerAddress int
	Window        time.Duration
	LockFor       time.Duration
	// ClientMaxPerAddress failed client authentications from one address
	// within Window lock client authentication from it for LockFor.
	ClientMaxPerAddress int
	// AuthorizeMaxPerAddress requests to GET /oauth/authorize from one
	// address within Window (each stores a row) lock it for LockFor.
	AuthorizeMaxPerAddress int
}

// DefaultThrottle: 5 failures per user or 20 per address in 15 minutes lock
// sign-in for 15 minutes; 20 failed client authentications per address lock
// client authentication; 60 authorization requests per address lock
// /oauth/authorize.
var DefaultThrottle = ThrottleSettings{MaxPerUser: 5, MaxPerAddress: 20, Window: 15 * time.Minute, LockFor: 15 * time.Minute,
	ClientMaxPerAddress: 20, AuthorizeMaxPerAddress: 60}

type throttle struct {
	db bun.IDB
	s  ThrottleSettings

	mu    sync.Mutex
	freed chan struct{} // closed (and replaced) when an attempt here ends
	// queues holds, per user key, this process's attempts waiting for a
	// place, in arrival order: only the first looks for a place, so places
	// are taken in arrival order rather than by whichever waiter wakes
	// first. Each entry is a live request, which leaves at its wait's end.
	queues map[string][]*queued
}

// queued is one attempt in a queue; turn is closed when it is first.
type queued struct{ turn chan struct{} }

// join puts an attempt at the end of key's queue.
func (t *throttle) join(key string) *queued {
	t.mu.Lock()
	defer t.mu.Unlock()
	q := &queued{turn: make(chan struct{})}
	if t.queues == nil {
		t.queues = map[string][]*queued{}
	}
	if len(t.queues[key]) == 0 {
		close(q.turn)
	}
	t.queues[key] = append(t.queues[key], q)
	return q
}

// leave takes an attempt out of key's queue, giving the turn to the next.
func (t *throttle) leave(key string, q *queued) {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := t.queues[key]
	i := slices.Index(list, q)
	if i < 0 {
		return
	}
	list = slices.Delete(list, i, i+1)
	if len(list) == 0 {
		delete(t.queues, key)
		return
	}
	if i == 0 {
		close(list[0].turn)
	}
	t.queues[key] = list
}

// ended wakes the attempts of this process waiting for a place.
func (t *throttle) ended() {
	t.mu.Lock()
	if t.freed != nil {
		close(t.freed)
		t.freed = nil
	}
	t.mu.Unlock()
}

func (t *throttle) whenFreed() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.freed == nil {
		t.freed = make(chan struct{})
	}
	return t.freed
}

// userKey is the throttle key of a sign-in: the user it resolves to, so
// that every spelling the lookup accepts (case, Unicode folding by
// Postgres's lower(), which is not Go's) shares one budget, and two users
// whose names only Go would fold together (İ and i) do not. A name that
// resolves to nobody has no account to protect; it is keyed by its
// spelling, so probing it behaves like probing a real one.
func userKey(u *models.User, username string) string {
	if u != nil {
		return "user:" + u.ID.String()
	}
	return "name:" + strings.ToLower(strings.TrimSpace(username))
}
func addrKey(ip string) string { return "addr:" + ip }

// authorizeAddrKey counts an address's authorization requests.
func authorizeAddrKey(ip string) string { return "authorize-addr:" + ip }

// attemptTTL bounds how long a place taken by an attempt stays taken if
// its process dies before giving it back. A live attempt takes at most the
// hashing wait plus one check.
const attemptTTL = time.Minute

// attemptPoll is how often an attempt with no free place looks again
// when no attempt of this process ends first (places freed by other
// replicas are only seen this way).
const attemptPoll = 100 * time.Millisecond

// reservation is a place held under some keys by one attempt in progress.
type reservation struct {
	id   uuid.UUID
	keys []limitedKey
}

type limitedKey struct {
	key   string
	limit int
}

// errAttemptBusy: every place under some key stays taken until the wait ends.
var errAttemptBusy = fmt.Errorf("sign-in attempts in progress fill the failure budget")

// Attempt reserves a place for one sign-in attempt under the user and the
// address before the password is checked. Only failures count against the
// limits, but a place is held by every attempt in progress: an attempt goes
// ahead only while failures plus attempts in progress stay under each
// limit, so parallel guesses cannot outnumber the failures still allowed.
// When no place is free it waits (up to maxWait) for attempts in progress
// to end, behind the attempts of the same user that came first; a success frees its place, a failure turns it into a failure.
// It returns how long sign-in stays locked (>0: refused, nothing held), or
// errAttemptBusy when no place came free in time.
func (t *throttle) Attempt(ctx context.Context, user, ip string, maxWait time.Duration) (*reservation, time.Duration, error) {
	r := &reservation{id: uuid.New(), keys: []limitedKey{{user, t.s.MaxPerUser}, {addrKey(ip), t.s.MaxPerAddress}}}
	deadline := time.Now().Add(maxWait)
	// Attempts of one user take places in arrival order (within this
	// process): wait for the turn, then look.
	q := t.join(user)
	defer t.leave(user, q)
	turn := time.NewTimer(maxWait)
	defer turn.Stop()
	select {
	case <-q.turn:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	case <-turn.C:
		return nil, 0, errAttemptBusy
	}
	for {
		freed := t.whenFreed() // before looking, so no end is missed
		wait, ok, err := t.reserve(ctx, r)
		if err != nil || wait > 0 || ok {
			return r, wait, err
		}
		if time.Now().After(deadline) {
			return nil, 0, errAttemptBusy
		}
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-freed:
		case <-time.After(attemptPoll + rand.N(attemptPoll)):
		}
	}
}

// reserve takes r's places in one transaction, under advisory locks on its
// keys (so two attempts cannot both take the last place). ok is false when
// some key has no free place.
//
// The transaction is four round trips (begin, locks, check-and-take,
// commit), two of them under the locks. It is the one step of a sign-in
// that attempts of one user (and of one address) take one at a time: a
// place freed is only used again once the next attempt's reserve has run,
// so every round trip here, each waiting for a CPU behind argon2id's
// goroutines, slows the turnover of places for all attempts queued behind
// it (at ten round trips, it was what slowed the turnover).
func (t *throttle) reserve(ctx context.Context, r *reservation) (wait time.Duration, ok bool, err error) {
	if len(r.keys) != 2 {
		return 0, false, fmt.Errorf("reserve sign-in attempt: %d throttle keys, want 2", len(r.keys))
	}
	err = t.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		a, b := lockID(r.keys[0].key), lockID(r.keys[1].key)
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
		var until *time.Time
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
			r.keys[0].key, r.keys[0].limit, r.keys[1].key, r.keys[1].limit, t.s.Window.Seconds(), r.id, attemptTTL.Seconds()).
			Scan(ctx, &until, &ok); err != nil {
			return fmt.Errorf("reserve sign-in attempt: %w", err)
		}
		if until != nil {
			ok = false
			wait = max(time.Until(*until), time.Second)
		}
		return nil
	})
	return wait, ok, err
}

func lockID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte("pressroom sign-in throttle\x00" + key))
	return int64(h.Sum64())
}

// Fail turns r's places into failures, locking any key that reaches its
// limit.
func (t *throttle) Fail(ctx context.Context, r *reservation) error {
	defer t.ended()
	return t.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := release(ctx, tx, r); err != nil {
			return err
		}
		for _, k := range r.keys {
			if err := t.fail(ctx, tx, k.key, k.limit); err != nil {
				return err
			}
		}
		return nil
	})
}

// Succeed gives r's places back and clears the user's failures; the
// address's stay (a success must not reset a spray of guesses from it).
// One statement (atomic on its own), one round trip: the place is in use
// until it ends.
func (t *throttle) Succeed(ctx context.Context, r *reservation) error {
	defer t.ended()
	if _, err := t.db.NewRaw(`
WITH released AS (DELETE FROM oauth_login_attempts WHERE id = ?)
DELETE FROM oauth_login_failures WHERE key = ?`, r.id, r.keys[0].key).Exec(ctx); err != nil {
		return fmt.Errorf("end sign-in attempt: %w", err)
	}
	return nil
}

// Cancel gives r's places back without counting anything: the password was
// not checked.
func (t *throttle) Cancel(ctx context.Context, r *reservation) error {
	defer t.ended()
	return release(ctx, t.db, r)
}

func release(ctx context.Context, db bun.IDB, r *reservation) error {
	if _, err := db.NewRaw(`DELETE FROM oauth_login_attempts WHERE id = ?`, r.id).Exec(ctx); err != nil {
		return fmt.Errorf("release sign-in attempt: %w", err)
	}
	return nil
}

// failed counts one failure under key (client authentication, which holds
// no places: a wrong guess at a 256-bit secret gains nothing, so the count
// only bounds the work an address causes).
func (t *throttle) failed(ctx context.Context, key string, limit int) error {
	return t.fail(ctx, t.db, key, limit)
}

func (t *throttle) fail(ctx context.Context, db bun.IDB, key string, limit int) error {
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
    ELSE NULL END`, key, t.s.Window.Seconds(), limit, t.s.LockFor.Seconds()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("count failed attempt: %w", err)
	}
	return nil
}

// hit counts one request under key, unless key is locked: then it returns
// how long it stays locked and counts nothing. The limit-th request within
// the window locks the key for LockFor. For requests that cost storage
// whether or not they succeed (GET /oauth/authorize stores a row each), so
// every one counts, not only failures. The count lives in Postgres like the
// others (one row per address, pruned once stale): it holds across
// replicas and takes no memory. Two statements, not atomic: concurrent
// requests may pass the limit by as many as run at once, then the key locks.
func (t *throttle) hit(ctx context.Context, key string, limit int) (time.Duration, error) {
	if wait, err := t.locked(ctx, key); err != nil || wait > 0 {
		return wait, err
	}
	return 0, t.fail(ctx, t.db, key, limit)
}

// locked returns how long key stays locked (0: not locked).
func (t *throttle) locked(ctx context.Context, key string) (time.Duration, error) {
	var until *time.Time
	if err := t.db.NewRaw(`SELECT max(locked_until) FROM oauth_login_failures WHERE key = ? AND locked_until > now()`, key).
		Scan(ctx, &until); err != nil {
		return 0, fmt.Errorf("read throttle: %w", err)
	}
	if until == nil {
		return 0, nil
	}
	return max(time.Until(*until), time.Second), nil
}

// throttleAuthorize counts a GET /oauth/authorize against its address
// (ThrottleSettings.AuthorizeMaxPerAddress): each valid one stores a
// sign-in request row, so a flood from one address would grow the database.
// While the address is locked it answers 429 with Retry-After on a page
// (done is true); the request is not looked at, so nothing redirects.
func (p *Provider) throttleAuthorize(c *fiber.Ctx) (done bool, err error) {
	wait, err := p.throttle.hit(c.UserContext(), authorizeAddrKey(c.IP()), p.throttle.s.AuthorizeMaxPerAddress)
	if err != nil || wait <= 0 {
		return false, err
	}
	c.Set(fiber.HeaderRetryAfter, itoa(wait))
	return true, render(c, http.StatusTooManyRequests, "problem", pageData{Title: "Sign-in problem",
		Error: fmt.Sprintf("Too many sign-in requests came from your network; try again in %d minutes.", int(wait.Minutes()+0.999))})
}
