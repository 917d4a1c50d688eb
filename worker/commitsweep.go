package worker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/pressroom/pressroom/activities"
)

// commitSweeper runs the commit sweep (activities.CommitSweep) at start and
// every commitSweepEvery: it starts the workflows of upload attempts and
// revisions that committed without their start (an API that died between
// the commit and the start; docs/architecture.md, "From a commit to a
// workflow"). Every worker runs one; their sweeps skip each other's rows.
type commitSweeper struct {
	sweep unstartedStarter
	every time.Duration
	log   *slog.Logger

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// unstartedStarter is what the commit sweep runs: activities.CommitSweep.
type unstartedStarter interface {
	StartUnstarted(ctx context.Context) (int, error)
}

var _ unstartedStarter = (*activities.CommitSweep)(nil)

// commitSweepEvery is how often the commit sweep runs: with StartGrace, a
// crash between a commit and its start costs well under a minute.
const commitSweepEvery = 30 * time.Second

func (s *commitSweeper) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.every)
		defer t.Stop()
		for {
			s.run(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

func (s *commitSweeper) stop() {
	s.once.Do(func() {
		if s.cancel != nil {
			s.cancel()
			<-s.done
		}
	})
}

// run sweeps once; a failure is logged, and the next run tries again.
func (s *commitSweeper) run(ctx context.Context) {
	n, err := s.sweep.StartUnstarted(ctx)
	log := s.log
	if log == nil {
		log = slog.Default()
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("commit sweep: starting workflows failed; the next sweep retries", "started", n, "error", err)
	} else if n > 0 {
		log.Info("commit sweep: started the workflows of committed work a crash left unstarted", "started", n)
	}
}
