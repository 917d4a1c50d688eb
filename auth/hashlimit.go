package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// ErrBusy means a password check could not get hashing memory within the
// limiter's wait: the caller should answer 503 with Retry-After.
var ErrBusy = errors.New("auth: too many password checks in progress")

// HashLimiter bounds the memory that argon2id checks may hold at once, process
// wide. Every check weighs the memory its hash names (64 MiB for ours) against
// a budget; checks that do not fit wait in arrival order (FIFO,
// x/sync/semaphore), for at most Wait, and then fail with ErrBusy rather
// than queue without end. A queue longer than the budget could serve within
// Wait is refused at once.
type HashLimiter struct {
	sem     *semaphore.Weighted
	budget  int64
	wait    time.Duration
	waiting atomic.Int64
	maxWait int64 // waiters beyond this are refused without queueing
}

// NewHashLimiter returns a limiter for budget bytes of hashing memory; a
// check waits at most wait for its share.
func NewHashLimiter(budget int64, wait time.Duration) *HashLimiter {
	if budget < argonMemory*1024 {
		budget = argonMemory * 1024 // at least one check at a time
	}
	slots := budget / (argonMemory * 1024)
	return &HashLimiter{sem: semaphore.NewWeighted(budget), budget: budget, wait: wait, maxWait: 64 * slots}
}

// Wait is how long a check may wait; it is also the Retry-After to give.
func (l *HashLimiter) Wait() time.Duration { return l.wait }

// Do runs fn holding cost bytes of the budget (clamped to the budget, so an
// oversized hash runs alone rather than never). It returns ErrBusy when the
// share is not free within the wait, or ctx's error when ctx ends first.
func (l *HashLimiter) Do(ctx context.Context, cost int64, fn func()) error {
	cost = min(max(cost, 1), l.budget)
	if !l.sem.TryAcquire(cost) {
		if l.waiting.Add(1) > l.maxWait {
			l.waiting.Add(-1)
			return ErrBusy
		}
		wctx, cancel := context.WithTimeout(ctx, l.wait)
		err := l.sem.Acquire(wctx, cost)
		cancel()
		l.waiting.Add(-1)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return ErrBusy
		}
	}
	defer l.sem.Release(cost)
	fn()
	return nil
}

// CheckPassword is CheckPassword under the limiter: ErrMismatch, ErrBusy, or
// nil when the password matches.
func (l *HashLimiter) CheckPassword(ctx context.Context, hash, password string) error {
	var err error
	if lerr := l.Do(ctx, hashMemory(hash), func() { err = CheckPassword(hash, password) }); lerr != nil {
		return lerr
	}
	return err
}

// HashPassword is HashPassword under the limiter (ErrBusy when it cannot
// get its share in time).
func (l *HashLimiter) HashPassword(ctx context.Context, password string) (string, error) {
	var hash string
	var err error
	if lerr := l.Do(ctx, argonMemory*1024, func() { hash, err = HashPassword(password) }); lerr != nil {
		return "", lerr
	}
	return hash, err
}

// hashMemory is the memory in bytes an argon2id check of hash allocates
// (its m parameter, in KiB); unknown formats weigh as much as ours.
func hashMemory(hash string) int64 {
	parts := strings.Split(hash, "$")
	var m, t uint32
	var p uint8
	if len(parts) == 6 {
		if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err == nil && m > 0 {
			return int64(m) * 1024
		}
	}
	return argonMemory * 1024
}
