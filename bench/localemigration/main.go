// Command localemigration measures what the locales migrations cost a
// running site (issue 33: "no downtime beyond the migration's own locks,
// measured on 10,000 pages"), against the real Postgres:
//
//	go run ./dev/cmd/devstack exec -- go run ./bench/localemigration [-pages 10000] [-writers 4]
//
// It migrates a fresh database, seeds one site with -pages published
// pages, two contents per page and three blocks per content (straight into
// the tables: the triggers index them as any write would), takes the schema
// back to just before the first locales migration (every later migration's
// down, newest first, then its own, as models' TestLocalesMigrationKeepsValues
// does), and then, while -writers connections update random pages' titles
// and read random pages back to back, applies every migration from the
// locales one on again, in order, each in a transaction as the migrator
// runs it. It prints, per migration, how long it took and the slowest
// write and read that overlapped it, against the writers' p50 and p99
// before any migration ran: a write that waited on the migration's locks
// shows as a slow one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/bench/internal/benchenv"
)

// firstLocales is the first locales migration: it and everything after it
// are measured.
const firstLocales = "20261202010000_locales"

type options struct {
	pages, writers int
	baseline       time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.pages, "pages", 10000, "published pages to seed (each with two contents of three blocks)")
	flag.IntVar(&o.writers, "writers", 4, "connections writing and reading pages while the migrations run")
	flag.DurationVar(&o.baseline, "baseline", 3*time.Second, "how long the writers run before the first migration (their p50 and p99)")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, o options) error {
	env, err := benchenv.New("pressroom-bench-localemigration-", false)
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.Up(ctx); err != nil {
		return err
	}
	fmt.Println("pressroom locales migration benchmark")
	fmt.Printf("machine: %s; services: %s\nload average at start: %s\n", benchenv.Machine(), env.Where, benchenv.LoadAvg())
	if _, err := env.User(ctx); err != nil { // the site "bench"
		return err
	}
	var siteID uuid.UUID
	if err := env.DB.NewRaw("SELECT id FROM sites WHERE subdomain_slug = 'bench'").Scan(ctx, &siteID); err != nil {
		return err
	}
	t0 := time.Now()
	ids, err := seed(ctx, env, siteID, o.pages)
	if err != nil {
		return err
	}
	fmt.Printf("seeded %d pages, %d contents, %d blocks in %s\n", o.pages, 2*o.pages, 6*o.pages, time.Since(t0).Round(time.Millisecond))
	files, err := measured(env.Root)
	if err != nil {
		return err
	}
	for i := len(files) - 1; i >= 0; i-- { // back to before the locales migration
		if err := apply(ctx, env, files[i], "down"); err != nil {
			return err
		}
	}
	if _, err := env.DB.ExecContext(ctx, "VACUUM ANALYZE pages, contents, content_blocks, search_documents"); err != nil {
		return err
	}
	w := startWriters(ctx, env, ids, o.writers)
	time.Sleep(o.baseline)
	base := w.window(time.Time{}, time.Now())
	fmt.Printf("before the migrations, %d writers: %d writes, p50 %s, p99 %s, max %s; %d reads, max %s\n",
		o.writers, len(base.writes), pct(base.writes, 50), pct(base.writes, 99), pct(base.writes, 100), len(base.reads), pct(base.reads, 100))
	fmt.Printf("%-48s %10s %8s %12s %12s %7s\n", "migration (up)", "took", "writes", "slowest write", "slowest read", "failed")
	for _, f := range files {
		start := time.Now()
		if err := apply(ctx, env, f, "up"); err != nil {
			w.stop()
			return err
		}
		end := time.Now()
		time.Sleep(200 * time.Millisecond) // a write that waited returns after the commit
		s := w.window(start, end)
		fmt.Printf("%-48s %10s %8d %12s %12s %7d\n", filepath.Base(f), end.Sub(start).Round(100*time.Microsecond), len(s.writes), pct(s.writes, 100), pct(s.reads, 100), s.failed)
		if s.firstErr != "" {
			fmt.Printf("  first failure: %s\n", s.firstErr)
		}
	}
	w.stop()
	fmt.Printf("load average at end: %s\n", benchenv.LoadAvg())
	return nil
}

// measured are the migrations from the first locales one on, oldest first,
// as paths without ".up.sql"/".down.sql".
func measured(root string) ([]string, error) {
	ups, err := filepath.Glob(filepath.Join(root, "models", "migrations", "*.up.sql"))
	if err != nil {
		return nil, err
	}
	sort.Strings(ups)
	var out []string
	for _, u := range ups {
		if filepath.Base(u) >= firstLocales {
			out = append(out, strings.TrimSuffix(u, ".up.sql"))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no migration from %s on under %s", firstLocales, root)
	}
	return out, nil
}

// apply runs one migration file, in a transaction when its name says .tx
// (as the migrator does).
func apply(ctx context.Context, env *benchenv.Env, base, dir string) error {
	sql, err := os.ReadFile(base + "." + dir + ".sql")
	if err != nil {
		return err
	}
	if !strings.HasSuffix(base, ".tx") {
		_, err = env.DB.ExecContext(ctx, string(sql))
		return wrap(err, base, dir)
	}
	tx, err := env.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	if _, err := tx.ExecContext(ctx, string(sql)); err != nil {
		return wrap(err, base, dir)
	}
	return wrap(tx.Commit(), base, dir)
}

func wrap(err error, base, dir string) error {
	if err != nil {
		return fmt.Errorf("%s %s: %w", filepath.Base(base), dir, err)
	}
	return nil
}

// seed writes n published pages under one root each 100, two contents per
// page and three blocks per content, in one statement per table.
func seed(ctx context.Context, env *benchenv.Env, siteID uuid.UUID, n int) ([]uuid.UUID, error) {
	for _, q := range []string{
		`INSERT INTO pages (id, site_id, page_type, slug, path, title, description, keywords, published_at)
		 SELECT gen_random_uuid(), ?0, 'page', 'p-' || i, '/p-' || i, 'Page ' || i || ' about gardens and light',
		        'A description of page ' || i || ' for the reader', 'garden, light', now()
		   FROM generate_series(1, ?1) i`,
		`INSERT INTO contents (id, site_id, page_id, title, position, published_at)
		 SELECT gen_random_uuid(), ?0, p.id, 'Section ' || k || ' of ' || p.title, k, now()
		   FROM pages p, generate_series(1, 2) k WHERE p.site_id = ?0`,
		`INSERT INTO content_blocks (id, site_id, content_id, var_name, data_type, body, position, published_at)
		 SELECT gen_random_uuid(), ?0, c.id, 'b' || k, 'text', '<p>' || repeat('Words of a paragraph in block ' || k || '. ', 12) || '</p>', k, now()
		   FROM contents c, generate_series(1, 3) k WHERE c.site_id = ?0`,
	} {
		if _, err := env.DB.NewRaw(q, siteID, n).Exec(ctx); err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
	}
	var ids []uuid.UUID
	err := env.DB.NewRaw("SELECT id FROM pages WHERE site_id = ?", siteID).Scan(ctx, &ids)
	return ids, err
}

// writers update random pages' titles and read random pages, each op's
// start and latency kept.
type writers struct {
	mu     sync.Mutex
	writes []op
	reads  []op
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type op struct {
	at, end time.Time
	err     string // "" for a success
}

func startWriters(ctx context.Context, env *benchenv.Env, ids []uuid.UUID, n int) *writers {
	ctx, cancel := context.WithCancel(ctx)
	w := &writers{cancel: cancel}
	for i := range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 7))
			for ctx.Err() == nil {
				id := ids[r.IntN(len(ids))]
				at := time.Now()
				_, err := env.DB.ExecContext(ctx, "UPDATE pages SET title = ?, version = version + 1, updated_at = now() WHERE id = ?", fmt.Sprintf("Title %d", r.IntN(1000)), id)
				w.record(&w.writes, at, err)
				at = time.Now()
				var title string
				err = env.DB.NewRaw("SELECT title FROM pages WHERE id = ?", ids[r.IntN(len(ids))]).Scan(ctx, &title)
				w.record(&w.reads, at, err)
			}
		}()
	}
	return w
}

func (w *writers) record(to *[]op, at time.Time, err error) {
	o := op{at: at, end: time.Now()}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return // the run's end cancels the last ones
		}
		o.err = err.Error()
	}
	w.mu.Lock()
	*to = append(*to, o)
	w.mu.Unlock()
}

func (w *writers) stop() { w.cancel(); w.wg.Wait() }

// span is the latencies of the ops that overlapped a window, and the
// first error of those that failed (a statement a migration broke).
type span struct {
	writes, reads []time.Duration
	failed        int
	firstErr      string
}

// window is the latencies of the ops that overlapped [from, to] (from zero:
// every op that ended by to).
func (w *writers) window(from, to time.Time) span {
	w.mu.Lock()
	defer w.mu.Unlock()
	var sp span
	pick := func(ops []op) []time.Duration {
		var out []time.Duration
		for _, o := range ops {
			if o.end.After(from) && o.at.Before(to) {
				out = append(out, o.end.Sub(o.at))
				if o.err != "" {
					if sp.failed++; sp.firstErr == "" {
						sp.firstErr = o.err
					}
				}
			}
		}
		slices.Sort(out)
		return out
	}
	sp.writes, sp.reads = pick(w.writes), pick(w.reads)
	return sp
}

// pct is the p-th percentile of sorted durations (100: the maximum).
func pct(d []time.Duration, p float64) string {
	if len(d) == 0 {
		return "-"
	}
	return benchenv.Percentile(d, p).Round(10 * time.Microsecond).String()
}
