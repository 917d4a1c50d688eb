package oauth

import (
	"context"
	"fmt"
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
	keys := [2]models.ThrottleKey{{Key: r.keys[0].key, Limit: r.keys[0].limit}, {Key: r.keys[1].key, Limit: r.keys[1].limit}}
	until, ok, err := models.ReserveLoginAttempt(ctx, t.db, r.id, keys, t.s.Window, attemptTTL)
	if err == nil && until != nil {
		ok = false
		wait = max(time.Until(*until), time.Second)
	}
	return wait, ok, err
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
		return models.RecordAudit(ctx, tx) // the failed sign-in's, if any
	})
}

// Succeed gives r's places back and clears the user's failures; the
// address's stay (a success must not reset a spray of guesses from it).
// One statement (atomic on its own), one round trip: the place is in use
// until it ends.
func (t *throttle) Succeed(ctx context.Context, r *reservation) error {
	defer t.ended()
	return models.SucceedLoginAttempt(ctx, t.db, r.id, r.keys[0].key)
}

// Cancel gives r's places back without counting anything: the password was
// not checked.
func (t *throttle) Cancel(ctx context.Context, r *reservation) error {
	defer t.ended()
	return release(ctx, t.db, r)
}

func release(ctx context.Context, db bun.IDB, r *reservation) error {
	return models.ReleaseLoginAttempt(ctx, db, r.id)
}

// failed counts one failure under key (client authentication, which holds
// no places: a wrong guess at a 256-bit secret gains nothing, so the count
// only bounds the work an address causes).
func (t *throttle) failed(ctx context.Context, key string, limit int) error {
	return t.fail(ctx, t.db, key, limit)
}

func (t *throttle) fail(ctx context.Context, db bun.IDB, key string, limit int) error {
	return models.CountLoginFailure(ctx, db, key, t.s.Window, limit, t.s.LockFor)
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
	until, err := models.LoginLockedUntil(ctx, t.db, key)
	if err != nil {
		return 0, err
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
