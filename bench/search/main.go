// Command search benchmarks full-text search (issue 32, docs/search.md)
// against the real stack: Postgres, Temporal and the API in this process.
//
//	go run ./bench/search [-pages 100000] [-concurrency 16] [-duration 10s] [-patches 800] [-db name] [-only regexp]
//
// It seeds one site with -pages published pages, a content per page and
// three blocks per content (text drawn by Zipf's law from a vocabulary of
// 50,000 words, the searched words at the ranks English gives them: see
// vocabulary; titles of 3 to 8 words, bodies of 40 to 120 words in HTML
// paragraphs), straight into the tables (the search triggers index them
// as any write would), then measures:
//
//   - GET /pages?filter[q]= and GET /search?filter[q]= of one word, of
//     three words, a prefix and a common word (each line says how many
//     records match), at -concurrency connections for
//     -duration each: p50, p99 (target p99 < 30 ms at 16 connections);
//   - the index's added cost on a PATCH: -patches PATCH /pages/:id that
//     change the title, back to back, with the search triggers enabled
//     and disabled (ALTER TABLE … DISABLE TRIGGER) in alternating blocks,
//     mean and p50 of each and the difference (target < 10 %).
//
// Run it at full size only on a quiet machine; a smoke run: -pages 5000
// -duration 2s.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/bench/internal/benchenv"
	"github.com/pressroom/pressroom/models"
)

type options struct {
	pages, concurrency, patches int
	duration                    time.Duration
	db, only                    string
}

func main() {
	var o options
	flag.IntVar(&o.pages, "pages", 100000, "pages to seed (each with a content and three blocks)")
	flag.IntVar(&o.concurrency, "concurrency", 16, "connections of each search load")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of each search load")
	flag.IntVar(&o.patches, "patches", 800, "PATCHes of the write measurement (a fifth more to warm up; 0: none)")
	flag.StringVar(&o.db, "db", "", "database to seed once and keep: a later run with the same name reuses its pages (compare builds on one seed)")
	flag.StringVar(&o.only, "only", "", "measure only the queries whose name matches this regular expression (\"search\")")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, o options) error {
	only, err := regexp.Compile(o.only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	env, err := benchenv.New("pressroom-bench-search-", false)
	if err != nil {
		return err
	}
	defer env.Close()
	env.Database = o.db
	if err := env.Up(ctx); err != nil {
		return err
	}
	c, err := env.User(ctx)
	if err != nil {
		return err
	}
	fmt.Println("pressroom search benchmark")
	fmt.Printf("machine:  %s, GOMAXPROCS %d; services: %s\n", benchenv.Machine(), runtime.GOMAXPROCS(0), env.Where)
	fmt.Printf("load average at start: %s\n", benchenv.LoadAvg())
	var siteID uuid.UUID
	if err := env.DB.NewRaw("SELECT id FROM sites WHERE subdomain_slug = 'bench'").Scan(ctx, &siteID); err != nil {
		return err
	}
	ids, err := seeded(ctx, env, siteID, o.pages)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.concurrency}, Timeout: time.Minute}
	for _, s := range []struct{ name, path string }{
		{"pages, one word", "/pages?filter[q]=" + url.QueryEscape("photography")},
		{"pages, three words", "/pages?filter[q]=" + url.QueryEscape("garden light morning")},
		{"pages, prefix", "/pages?filter[q]=" + url.QueryEscape("photog")},
		{"search, one word", "/search?filter[q]=" + url.QueryEscape("photography")},
		{"search, three words", "/search?filter[q]=" + url.QueryEscape("garden light morning")},
		{"pages, common word", "/pages?filter[q]=page"},
		{"search, common word", "/search?filter[q]=page"},
	} {
		if !only.MatchString(s.name) {
			continue
		}
		total, err := matches(ctx, c, s.path)
		if err != nil {
			return err
		}
		r := load(ctx, hc, c, s.path, o.concurrency, o.duration)
		fmt.Printf("GET %-22s %6d hits at %2d connections %6d req  p50 %7s  p99 %7s  errors %d %s  %s\n", s.name, total, o.concurrency, len(r.lats),
			benchenv.Percentile(r.lats, 50).Round(10*time.Microsecond), benchenv.Percentile(r.lats, 99).Round(10*time.Microsecond),
			r.errors, r.firstErr, verdict(benchenv.Percentile(r.lats, 99) < 30*time.Millisecond))
	}
	if o.patches == 0 {
		return nil
	}
	return patchCost(ctx, env, c, ids, o.patches)
}

// seeded returns the site's pages: those a kept database (-db) holds
// already when there are n, else n seeded now and analysed.
func seeded(ctx context.Context, env *benchenv.Env, siteID uuid.UUID, n int) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	if err := env.DB.NewRaw("SELECT id FROM pages WHERE site_id = ? ORDER BY path", siteID).Scan(ctx, &ids); err != nil && !models.IsNoRows(err) {
		return nil, err
	}
	if len(ids) == n {
		fmt.Printf("reusing the %d pages of database %s\n", n, env.Database)
		return ids, nil
	}
	if len(ids) > 0 {
		return nil, fmt.Errorf("database %s holds %d pages, not %d: drop it or name another", env.Database, len(ids), n)
	}
	t0 := time.Now()
	ids, err := seed(ctx, env, siteID, n)
	if err != nil {
		return nil, err
	}
	fmt.Printf("seeded %d pages, %d contents, %d blocks in %s\n", n, n, 3*n, time.Since(t0).Round(time.Millisecond))
	if _, err := env.DB.ExecContext(ctx, "VACUUM ANALYZE search_documents, pages, contents, content_blocks"); err != nil {
		return nil, err
	}
	return ids, nil
}

// The seeded text is drawn from a vocabulary of vocabularySize words by
// Zipf's law (exponent zipfExponent, the shape of English word counts):
// the function words first, then the real content words of contentWords
// at ranks spread evenly on a log scale from 50 to 20,000, and made-up
// words (syllables) in every other place. The words the benchmark
// searches for are pinned at about the ranks English corpora give them,
// so they are as rare in the seeded text as in real prose: "photography"
// about 12 times per million words (COCA: about 15), "garden" 35, "morning"
// 60, "light" 150. A word list of a few hundred words, the first version
// of this text, put every word in nearly every block, so any one-word
// search matched (and ranked) most of the 400,000 documents: not what
// an editor's search meets. "page" (rank 100, about 700 per million,
// in some 5 % of the blocks) is measured as the common-word case.
const (
	vocabularySize = 50000
	zipfExponent   = 1.1
)

var functionWords = strings.Fields(`the and of to in a is for with on our we this that you it by from at as`)

var contentWords = strings.Fields(`site coffee café kitchen travel city river mountain
story guide tips season winter summer spring autumn recipe bread market street house design studio
colour color paper print camera lens portrait landscape evening night music festival school library
museum history walk bicycle train station harbour island forest field flower tree bird window door
table chair book letter friend family team project plan report news event workshop course lesson
price offer shop order delivery contact about service support question answer help policy privacy
career job office meeting launch update release version feature product customer review
photographer élan naïve résumé façade crème brûlée jalapeño piñata über`)

// pinnedRanks are the searched words' ranks.
var pinnedRanks = map[string]int{"page": 100, "light": 400, "morning": 900, "garden": 1500, "photography": 4000}

// vocabulary is the seeded text's words, most frequent first.
var vocabulary = makeVocabulary()

func makeVocabulary() []string {
	v := make([]string, vocabularySize)
	copy(v, functionWords)
	for w, rank := range pinnedRanks {
		v[rank] = w
	}
	for i, w := range contentWords {
		rank := int(50 * math.Pow(20000.0/50, float64(i)/float64(len(contentWords)-1)))
		for v[rank] != "" {
			rank++
		}
		v[rank] = w
	}
	syllables := strings.Fields("ka lo mi ne su ta ri po ve da gu ha ze bo fi ru sa te lu mo")
	for i := range v {
		if v[i] == "" {
			// A made-up word of three or four syllables, one per rank.
			n := i
			var b strings.Builder
			for range 3 + i%2 {
				b.WriteString(syllables[n%len(syllables)])
				n /= len(syllables)
			}
			b.WriteString("x") // never an English word or stem
			v[i] = b.String()
		}
	}
	return v
}

// text is n words of the vocabulary drawn by Zipf's law.
func text(z *rand.Zipf, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[z.Uint64()])
	}
	return b.String()
}

// newText is a seeded source of text.
func newText(seed uint64) (*rand.Rand, *rand.Zipf) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	return r, rand.NewZipf(r, zipfExponent, 1, vocabularySize-1)
}

// seed inserts the pages, contents and blocks, published, in batches.
func seed(ctx context.Context, env *benchenv.Env, siteID uuid.UUID, n int) ([]uuid.UUID, error) {
	r, z := newText(1)
	var all []uuid.UUID
	const batch = 1000
	t0 := time.Now()
	for start := 0; start < n; start += batch {
		if start > 0 && start%20000 == 0 {
			fmt.Printf("  seeded %d pages in %s\n", start, time.Since(t0).Round(time.Second)) // the full size takes minutes
		}
		m := min(batch, n-start)
		var pages, contents, blocks []uuid.UUID
		var slugs, titles, descs, ctitles, bodies []string
		var blockContents []uuid.UUID
		for i := range m {
			p, ct := uuid.New(), uuid.New()
			pages, contents = append(pages, p), append(contents, ct)
			slugs = append(slugs, fmt.Sprintf("p-%d", start+i))
			titles = append(titles, text(z, 3+r.IntN(6)))
			descs = append(descs, text(z, 10+r.IntN(20)))
			ctitles = append(ctitles, text(z, 2+r.IntN(4)))
			for range 3 {
				blocks, blockContents = append(blocks, uuid.New()), append(blockContents, ct)
				bodies = append(bodies, "<p>"+text(z, 20+r.IntN(40))+"</p><p>"+text(z, 20+r.IntN(40))+" &amp; more</p>")
			}
		}
		all = append(all, pages...)
		enc := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		_, err := env.DB.ExecContext(ctx, `
INSERT INTO pages (id, site_id, page_type, slug, path, title, description, published_at)
SELECT p.id, ?, 'page', p.slug, '/' || p.slug, p.title, p.descr, now()
FROM jsonb_to_recordset(?::jsonb) AS p(id uuid, slug text, title text, descr text)`, siteID, enc(zipPages(pages, slugs, titles, descs)))
		if err != nil {
			return nil, fmt.Errorf("seed pages: %w", err)
		}
		_, err = env.DB.ExecContext(ctx, `
INSERT INTO contents (id, site_id, page_id, title, published_at)
SELECT c.id, ?, c.page_id, c.title, now() FROM jsonb_to_recordset(?::jsonb) AS c(id uuid, page_id uuid, title text)`,
			siteID, enc(zipContents(contents, pages, ctitles)))
		if err != nil {
			return nil, fmt.Errorf("seed contents: %w", err)
		}
		_, err = env.DB.ExecContext(ctx, `
INSERT INTO content_blocks (id, site_id, content_id, var_name, data_type, body, published_at)
SELECT b.id, ?, b.content_id, 'body', 'html', b.body, now() FROM jsonb_to_recordset(?::jsonb) AS b(id uuid, content_id uuid, body text)`,
			siteID, enc(zipBlocks(blocks, blockContents, bodies)))
		if err != nil {
			return nil, fmt.Errorf("seed blocks: %w", err)
		}
	}
	return all, nil
}

func zipPages(ids []uuid.UUID, slugs, titles, descs []string) []map[string]any {
	out := make([]map[string]any, len(ids))
	for i := range ids {
		out[i] = map[string]any{"id": ids[i], "slug": slugs[i], "title": titles[i], "descr": descs[i]}
	}
	return out
}

func zipContents(ids, pages []uuid.UUID, titles []string) []map[string]any {
	out := make([]map[string]any, len(ids))
	for i := range ids {
		out[i] = map[string]any{"id": ids[i], "page_id": pages[i], "title": titles[i]}
	}
	return out
}

func zipBlocks(ids, contents []uuid.UUID, bodies []string) []map[string]any {
	out := make([]map[string]any, len(ids))
	for i := range ids {
		out[i] = map[string]any{"id": ids[i], "content_id": contents[i], "body": bodies[i]}
	}
	return out
}

type loadResult struct {
	lats     []time.Duration
	errors   int
	firstErr string
}

// load sends GET path on concurrency connections for d.
// matches is how many records the search at path matches (meta.total).
func matches(ctx context.Context, c *benchenv.Client, path string) (int64, error) {
	raw, err := c.Call(ctx, http.MethodGet, path, nil, 200)
	if err != nil {
		return 0, err
	}
	var d struct {
		Meta struct {
			Total int64 `json:"total"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return 0, fmt.Errorf("search %s: %w", path, err)
	}
	return d.Meta.Total, nil
}

func load(ctx context.Context, hc *http.Client, c *benchenv.Client, path string, concurrency int, d time.Duration) loadResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var res loadResult
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			var lats []time.Duration
			for ctx.Err() == nil {
				req, _ := c.As(hc, true).NewRequest(context.Background(), http.MethodGet, path, nil)
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				mu.Lock()
				if err != nil {
					res.errors++
					if res.firstErr == "" {
						res.firstErr = err.Error()
					}
				}
				mu.Unlock()
				if err == nil {
					lats = append(lats, time.Since(t0))
				}
			}
			mu.Lock()
			res.lats = append(res.lats, lats...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(res.lats) == 0 {
		res.lats = []time.Duration{0}
	}
	slices.Sort(res.lats) // Percentile reads a sorted list
	return res
}

// patchCost times title PATCHes with the search triggers on and off: a
// warm-up of n/5 first (caches, prepared statements, the pool), then
// patchRounds blocks of n/patchRounds each, alternating on, off, off, on,
// …, so neither side gets the warm-up or the machine's drift. It reports
// the mean and p50 of each side and the added cost of the index: by the
// means, by the p50s, and (the verdict, the least moved by another job's
// burst on a shared machine) the median over adjacent on/off block pairs
// of the pair's p50 difference.
func patchCost(ctx context.Context, env *benchenv.Env, c *benchenv.Client, ids []uuid.UUID, n int) error {
	r, z := newText(3)
	i := 0
	run := func(k int, lats *[]time.Duration) error {
		for range k {
			id := ids[r.IntN(len(ids))].String()
			i++
			body := map[string]any{"data": map[string]any{"type": "pages", "id": id,
				"attributes": map[string]any{"title": text(z, 4) + fmt.Sprintf(" %d", i)}}}
			t0 := time.Now()
			if _, err := c.Call(ctx, http.MethodPatch, "/pages/"+id, body, 200); err != nil {
				return err
			}
			*lats = append(*lats, time.Since(t0))
		}
		return nil
	}
	var warm, on, off []time.Duration
	if err := run(max(n/5, 1), &warm); err != nil {
		return err
	}
	block := max(n/patchRounds, 1)
	var pairs []float64 // each adjacent on/off pair's added cost (%), on p50s
	var first time.Duration
	for round := range patchRounds {
		enabled := round%4 == 0 || round%4 == 3 // on, off, off, on, …
		if err := searchTriggers(ctx, env, enabled); err != nil {
			return err
		}
		var lats []time.Duration
		if err := run(block, &lats); err != nil {
			_ = searchTriggers(ctx, env, true)
			return err
		}
		slices.Sort(lats)
		p50 := benchenv.Percentile(lats, 50)
		if enabled {
			on = append(on, lats...)
		} else {
			off = append(off, lats...)
		}
		if round%2 == 0 {
			first = p50 // the pair's first block: on at rounds 0, 4, …; off at 2, 6, …
			continue
		}
		withIndex, without := first, p50
		if enabled {
			withIndex, without = p50, first
		}
		pairs = append(pairs, float64(withIndex-without)/float64(without)*100)
	}
	if err := searchTriggers(ctx, env, true); err != nil {
		return err
	}
	mean := func(d []time.Duration) time.Duration {
		var s time.Duration
		for _, x := range d {
			s += x
		}
		return s / time.Duration(len(d))
	}
	slices.Sort(on)
	slices.Sort(off)
	slices.Sort(pairs)
	added := float64(mean(on)-mean(off)) / float64(mean(off)) * 100
	addedP50 := float64(benchenv.Percentile(on, 50)-benchenv.Percentile(off, 50)) / float64(benchenv.Percentile(off, 50)) * 100
	medianPair := (pairs[(len(pairs)-1)/2] + pairs[len(pairs)/2]) / 2
	fmt.Printf("PATCH /pages/:id (title), %d on each side in %d alternating blocks: with the index mean %s p50 %s; without mean %s p50 %s\n",
		len(on), patchRounds, mean(on).Round(time.Microsecond), benchenv.Percentile(on, 50).Round(time.Microsecond),
		mean(off).Round(time.Microsecond), benchenv.Percentile(off, 50).Round(time.Microsecond))
	fmt.Printf("patch cost ratio (the index's added cost on a PATCH): %.1f %% of the mean, %.1f %% of the p50, median of the %d adjacent block pairs' p50s %.1f %% (pairs %s)  %s\n",
		added, addedP50, len(pairs), medianPair, percents(pairs), verdict(medianPair < 10))
	fmt.Printf("load average at end: %s\n", benchenv.LoadAvg())
	return nil
}

func percents(xs []float64) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(out, ", ")
}

// patchRounds is how many blocks patchCost alternates between (even).
const patchRounds = 16

// searchTriggers enables or disables the triggers a title PATCH fires:
// the drafted values' (drafts: a new draft, an updated one) and the page
// row's own (whose WHEN clause skips the version bump).
func searchTriggers(ctx context.Context, env *benchenv.Env, on bool) error {
	verb := "DISABLE"
	if on {
		verb = "ENABLE"
	}
	for _, t := range [][2]string{{"drafts", "drafts_search"}, {"drafts", "drafts_search_update"}, {"pages", "pages_search_update"}} {
		if _, err := env.DB.ExecContext(ctx, "ALTER TABLE "+t[0]+" "+verb+" TRIGGER "+t[1]); err != nil {
			return fmt.Errorf("%s trigger %s: %w", verb, t[1], err)
		}
	}
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

func init() { log.SetOutput(os.Stderr) }
