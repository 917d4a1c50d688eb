package api

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Check is one dependency probe of GET /readyz.
type Check struct {
	Name  string
	Probe func(ctx context.Context) error
}

// CheckResult is one probe's outcome as /readyz reports it. Error says
// only that the check failed or timed out: /readyz answers anyone, and a
// driver's message names the database user, host and port or a bucket.
// The probe's own error is kept in detail, for the log.
type CheckResult struct {
	Status     string  `json:"status"`
	DurationMS float64 `json:"duration_ms"`
	Error      string  `json:"error,omitempty"`
	detail     error
}

// What a failed check says in the body of /readyz.
const (
	checkFailed   = "failed (the server log has the detail)"
	checkTimedOut = "no answer within the readiness timeout"
)

// Readiness is the body of GET /readyz.
type Readiness struct {
	Status string                 `json:"status"`
	Checks map[string]CheckResult `json:"checks"`
}

// healthz answers liveness: the process is up and serving. It touches no
// dependency, so a database outage never gets the API restarted in a loop.
func healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// readyz runs every check at once, each under timeout, and answers 200 when
// all pass and 503 naming the failures otherwise; why each failed goes to
// the log, with the request id.
func readyz(checks []Check, timeout time.Duration, log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) error {
		r := RunChecks(c.UserContext(), checks, timeout)
		c.Set(fiber.HeaderCacheControl, "no-store")
		if r.Status != "ok" {
			for name, res := range r.Checks {
				if res.detail != nil {
					log.Warn("readiness check failed", "check", name, "request_id", requestID(c), "error", res.detail)
				}
			}
			return c.Status(fiber.StatusServiceUnavailable).JSON(r)
		}
		return c.JSON(r)
	}
}

// RunChecks runs checks concurrently and gathers their results.
func RunChecks(ctx context.Context, checks []Check, timeout time.Duration) Readiness {
	r := Readiness{Status: "ok", Checks: make(map[string]CheckResult, len(checks))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, ch := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := time.Now()
			err := runProbe(cctx, ch.Probe)
			res := CheckResult{Status: "ok", DurationMS: float64(time.Since(start).Microseconds()) / 1000}
			if err != nil {
				res.Status, res.Error, res.detail = "error", checkFailed, err
				if errors.Is(cctx.Err(), context.DeadlineExceeded) {
					res.Error = checkTimedOut
				}
			}
			mu.Lock()
			defer mu.Unlock()
			r.Checks[ch.Name] = res
			if err != nil {
				r.Status = "unavailable"
			}
		})
	}
	wg.Wait()
	return r
}

// runProbe returns when the probe does or the context ends, whichever is
// first, so a client library that ignores its context cannot hang /readyz.
func runProbe(ctx context.Context, probe func(context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- probe(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
