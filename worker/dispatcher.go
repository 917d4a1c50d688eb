package worker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/models"
)

// dispatcher starts the workflows of new webhook deliveries right after
// their events commit: it LISTENs on models.DeliveryChannel, which
// RecordEvent NOTIFYs in the event's transaction (so only a commit wakes
// it), and runs a dispatch at start and every fallbackEvery over every
// site, and on notifications over the sites they name (their payload). What it misses while down (a crash between a
// commit and the start), its next start and the scheduled sweep pick up.
type dispatcher struct {
	activities  *activities.Webhooks
	databaseURL string
	log         *slog.Logger

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// fallbackEvery is how often the dispatcher looks without a notification.
const fallbackEvery = 30 * time.Second

func (d *dispatcher) start() {
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel, d.done = cancel, make(chan struct{})
	go func() {
		defer close(d.done)
		d.run(ctx)
	}()
}

func (d *dispatcher) stop() {
	d.once.Do(func() {
		if d.cancel != nil {
			d.cancel()
			<-d.done
		}
	})
}

func (d *dispatcher) logger() *slog.Logger {
	if d.log == nil {
		return slog.Default()
	}
	return d.log
}

// run listens and dispatches until ctx ends, reconnecting after errors.
func (d *dispatcher) run(ctx context.Context) {
	for ctx.Err() == nil {
		err := d.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		d.logger().Warn("webhook dispatcher: reconnecting", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (d *dispatcher) listen(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, d.databaseURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+models.DeliveryChannel); err != nil {
		return err
	}
	var sites []uuid.UUID // nil: every site (at start, and every fallbackEvery)
	for {
		d.dispatch(ctx, sites)
		wait, cancel := context.WithTimeout(ctx, fallbackEvery)
		n, err := conn.WaitForNotification(wait)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && wait.Err() == nil {
			return err // the connection broke, not the timeout
		}
		sites = nil
		if err == nil {
			// A burst of commits is one dispatch: take the notifications
			// already queued (or arriving within coalesceFor) with it.
			burst := newSiteSet()
			burst.add(n.Payload)
			for {
				drain, cancel := context.WithTimeout(ctx, coalesceFor)
				n, err := conn.WaitForNotification(drain)
				cancel()
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					if drain.Err() == nil {
						return err
					}
					break
				}
				burst.add(n.Payload)
			}
			sites = burst.list()
		}
	}
}

// maxBurstSites bounds the sites one dispatch names; a burst of more
// looks at every site instead, as does a notification without a site (a
// process older than per-site dispatch).
const maxBurstSites = 1000

// siteSet gathers the sites a burst of notifications named.
type siteSet struct {
	ids map[uuid.UUID]bool
	all bool
}

func newSiteSet() *siteSet { return &siteSet{ids: map[uuid.UUID]bool{}} }

func (s *siteSet) add(payload string) {
	id, err := uuid.Parse(payload)
	if err != nil || len(s.ids) >= maxBurstSites {
		s.all = true
		return
	}
	s.ids[id] = true
}

// list is the sites to dispatch: nil for every site.
func (s *siteSet) list() []uuid.UUID {
	if s.all {
		return nil
	}
	out := make([]uuid.UUID, 0, len(s.ids))
	for id := range s.ids {
		out = append(out, id)
	}
	return out
}

// coalesceFor is how long the dispatcher gathers notifications into one
// dispatch.
const coalesceFor = 20 * time.Millisecond

// dispatch starts the heads of the sites' webhook queues (sites nil: of
// every site).
func (d *dispatcher) dispatch(ctx context.Context, sites []uuid.UUID) {
	n, err := d.activities.DispatchWebhookDeliveries(ctx, sites)
	if err != nil && ctx.Err() == nil {
		d.logger().Warn("webhook dispatcher: starting deliveries failed; the next dispatch or sweep retries", "started", n, "error", err)
	}
}
