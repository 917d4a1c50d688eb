package testsupport

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// StatementLog records, while it is on, the SQL of every statement a test
// database's connections run, seen at the driver (a pgx tracer): bun's
// queries, BEGIN and COMMIT, and the prepared statements that bypass bun.
type StatementLog struct {
	mu   sync.Mutex
	on   bool
	stmt []string
}

// TraceQueryStart implements pgx.QueryTracer.
func (l *StatementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.on {
		l.stmt = append(l.stmt, data.SQL)
	}
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (l *StatementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// During returns the statements run while fn ran.
func (l *StatementLog) During(fn func()) []string {
	l.mu.Lock()
	l.on, l.stmt = true, nil
	l.mu.Unlock()
	fn()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.stmt
}
