package models

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ReadsChannel is the NOTIFY channel of changes to live records: the
// triggers of migration 20261202050000 send a site's id on it for every
// statement that changes a page, content or content block of the site, and
// Postgres delivers it only once the change commits (docs/caching.md).
const ReadsChannel = "pressroom_reads"

// ReadListener LISTENs on ReadsChannel on a connection of its own and
// answers Sync: a round trip on that connection, which returns only after
// every notification of a transaction committed before it started has
// been handed to Notified. Concurrent Syncs share one round trip, but only
// one that starts after they were called.
type ReadListener struct {
	URL string
	// Notified gets each notification's payload (a site id), in commit
	// order, on the listener's goroutine.
	Notified func(payload string)
	// Live is told true once the connection listens, false when it is
	// lost: notifications may have been missed between the two.
	Live func(live bool)

	mu    sync.Mutex
	live  bool
	round *syncRound // the next round trip, not sent yet
	wake  chan struct{}
}

// syncRound is one round trip on the listening connection and the Syncs
// waiting for it.
type syncRound struct {
	done chan struct{}
	err  error
}

// ErrNotListening is Sync's answer while the listener has no connection.
var ErrNotListening = errors.New("read listener: not listening")

// syncTimeout bounds one round trip; idleSync is how often the connection
// is read without a Sync (so notifications do not pile up in its socket).
const (
	syncTimeout = 5 * time.Second
	idleSync    = time.Second
)

// Sync returns nil once every notification committed before it was called
// has been handed to Notified, or an error (ErrNotListening, the
// connection's, ctx's).
func (l *ReadListener) Sync(ctx context.Context) error {
	l.mu.Lock()
	if !l.live {
		l.mu.Unlock()
		return ErrNotListening
	}
	if l.round == nil {
		l.round = &syncRound{done: make(chan struct{})}
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
	r := l.round
	l.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run listens until ctx ends, connecting again a second after a loss.
func (l *ReadListener) Run(ctx context.Context) {
	l.mu.Lock()
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
	}
	l.mu.Unlock()
	for ctx.Err() == nil {
		err := l.listen(ctx)
		l.setLive(false, err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// setLive records whether the connection listens; on a loss it fails the
// round waiting to be sent (no one else will send it) and tells Live.
func (l *ReadListener) setLive(live bool, err error) {
	l.mu.Lock()
	l.live = live
	r := l.round
	if !live {
		l.round = nil
	}
	l.mu.Unlock()
	if !live && r != nil {
		r.err = errors.Join(ErrNotListening, err)
		close(r.done)
	}
	if l.Live != nil {
		l.Live(live)
	}
}

func (l *ReadListener) listen(ctx context.Context) error {
	cfg, err := pgx.ParseConfig(l.URL)
	if err != nil {
		return err
	}
	// Called while a round trip reads its answer: Postgres sends the
	// notifications it holds before the answer's ReadyForQuery.
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		if l.Notified != nil {
			l.Notified(n.Payload)
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+ReadsChannel); err != nil {
		return err
	}
	// Live only now: what committed before LISTEN was never heard, and
	// Live(true) makes the cache drop what it filled before.
	l.setLive(true, nil)
	tick := time.NewTicker(idleSync)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.wake:
		case <-tick.C:
		}
		l.mu.Lock()
		r := l.round
		l.round = nil // who comes now waits for the next round trip
		l.mu.Unlock()
		err := roundTrip(ctx, conn)
		if r != nil {
			r.err = err
			close(r.done)
		}
		if err != nil {
			return err
		}
	}
}

// roundTrip sends an empty query and reads its answer: a listening
// backend sends every notification committed before the query arrived
// ahead of the answer's ReadyForQuery (an idle backend is signalled at
// the notifying commit, before that commit returns to its client).
func roundTrip(ctx context.Context, conn *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	_, err := conn.PgConn().Exec(ctx, ";").ReadAll()
	return err
}
