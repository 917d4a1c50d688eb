package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/bench/internal/benchenv"
)

// The reads in a locale (-gets-only -locale de; docs/plans/locales.md §4
// part 5, docs/locales.md "Reading in a locale"): is a localized read
// within 10 % of today's read? Records are pages with a title, slug and
// description in the locale and in a third one, and content blocks whose
// bodies are 4 KB in every locale (all locales' bodies are one jsonb value,
// read whole: risk R1 of the plan).
//
//  1. On the site with one locale (today): rounds of GET /pages/:id and
//     GET /content-blocks/:id over the records.
//  2. The site gets three locales (en, the locale, and fr, or de when the
//     locale is fr); then rounds alternating GET /pages/:id (the default
//     locale), GET /pages/:id?locale-tag=<locale>, and the same of
//     /content-blocks/:id, back to back, so both see the same machine.
//
// Each load runs -duration after a 1 s warm-up at -concurrency
// connections. The values of the other locales are written into the rows'
// translations by SQL before the site lists those locales (PATCH /site
// then derives their paths), as a publish in those locales leaves them:
// the reads, not the writes, are measured.

// localeTarget is one load of the locale reads.
type localeTarget struct {
	name  string
	paths []string
	runs  []loadResult
}

func localeReads(ctx context.Context, c *apiClient, db *bun.DB, o options) error {
	other := "fr"
	if o.locale == "fr" {
		other = "de"
	}
	fmt.Printf("\npreparing reads in a locale: %d live pages, %d live content blocks of 4 KB bodies\n", o.records, o.records)
	pages, blocks, err := c.localeRecords(ctx, o.records)
	if err != nil {
		return err
	}
	if err := seedTranslations(ctx, db, pages, blocks, o.locale, other); err != nil {
		return err
	}
	tr := &http.Transport{MaxIdleConns: 4 * o.concurrency, MaxIdleConnsPerHost: 4 * o.concurrency, IdleConnTimeout: time.Minute, DisableCompression: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	paths := func(typ string, ids []string, query string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = "/" + typ + "/" + id + query
		}
		return out
	}
	tag := "?locale-tag=" + o.locale
	single := []*localeTarget{
		{name: "GET /pages/:id, one locale", paths: paths("pages", pages, "")},
		{name: "GET /content-blocks/:id, one locale", paths: paths("content-blocks", blocks, "")},
	}
	if err := localeRounds(ctx, hc, c, db, o, single); err != nil {
		return err
	}
	if _, err := c.call(ctx, http.MethodPatch, "/site", map[string]any{"data": map[string]any{"type": "sites",
		"attributes": map[string]any{"locales": []string{"en", o.locale, other}}}}, 200); err != nil {
		return fmt.Errorf("PATCH /site locales: %w", err)
	}
	several := []*localeTarget{
		{name: "GET /pages/:id, three locales", paths: paths("pages", pages, "")},
		{name: "GET /pages/:id" + tag, paths: paths("pages", pages, tag)},
		{name: "GET /content-blocks/:id, three", paths: paths("content-blocks", blocks, "")},
		{name: "GET /content-blocks/:id" + tag, paths: paths("content-blocks", blocks, tag)},
	}
	if err := checkLocalized(ctx, hc, c, several[1].paths[0], "Seite "); err != nil {
		return err
	}
	if err := checkLocalized(ctx, hc, c, several[3].paths[0], "Absatz "); err != nil {
		return err
	}
	if err := localeRounds(ctx, hc, c, db, o, several); err != nil {
		return err
	}
	fmt.Printf("  (load average after the loads: %s)\n", benchenv.LoadAvg())
	fmt.Println("  target: a localized read's median rate ≥ 90 % of today's (plan §4 part 5):")
	for _, cmp := range []struct {
		what      string
		localized *localeTarget
		today     *localeTarget
	}{
		{"pages, in " + o.locale + " / the default locale of the three", several[1], several[0]},
		{"pages, in " + o.locale + " / the site with one locale", several[1], single[0]},
		{"blocks, in " + o.locale + " / the default locale of the three", several[3], several[2]},
		{"blocks, in " + o.locale + " / the site with one locale", several[3], single[1]},
	} {
		ratio := medianRate(cmp.localized.runs) / medianRate(cmp.today.runs)
		fmt.Printf("    %-52s %.2f: %s\n", cmp.what, ratio, verdict(ratio >= 0.9))
	}
	fmt.Println("  (the one-locale rounds ran before the site got its locales, not alternated with the others)")
	return nil
}

// localeRounds runs o.rounds rounds of targets, each target once a round
// in order, and prints each round and the median.
func localeRounds(ctx context.Context, hc *http.Client, c *apiClient, db *bun.DB, o options, targets []*localeTarget) error {
	fmt.Printf("\n%d rounds of %d loads: %d keep-alive connections, %s each after a 1 s warm-up (load generator in this process, %d CPUs):\n",
		o.rounds, len(targets), o.concurrency, o.duration, runtime.NumCPU())
	for round := range o.rounds {
		for _, tg := range targets {
			r, err := measure(ctx, hc, c, db, tg.paths, true, o, fmt.Sprintf("locale-%d-%d", round, len(tg.runs)))
			if err != nil {
				return err
			}
			tg.runs = append(tg.runs, r)
			slices.Sort(r.lats)
			perReq := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(max(1, r.requests)) }
			fmt.Printf("  round %d %-40s %8.0f req/s   p50 %s   p99 %s   errors %d   CPU/request %.0f µs here, %.0f µs Postgres\n",
				round+1, tg.name, r.rate(), msf(benchenv.Percentile(r.lats, 50)), msf(benchenv.Percentile(r.lats, 99)), r.errors,
				perReq(r.cpu), perReq(r.pgCPU))
			if r.errors > 0 {
				fmt.Printf("    first error: %s\n", r.firstErr)
			}
		}
	}
	for _, tg := range targets {
		fmt.Printf("  median  %-40s %8.0f req/s\n", tg.name, medianRate(tg.runs))
	}
	return nil
}

// medianRate is the median of runs' rates.
func medianRate(runs []loadResult) float64 {
	rates := make([]float64, len(runs))
	for i, r := range runs {
		rates[i] = r.rate()
	}
	slices.Sort(rates)
	if n := len(rates); n%2 == 0 {
		return (rates[n/2-1] + rates[n/2]) / 2
	}
	return rates[len(rates)/2]
}

// checkLocalized fails unless path answers 200 with want in its body and
// meta.fallbacks absent (the record has the locale's own values).
func checkLocalized(ctx context.Context, hc *http.Client, c *apiClient, path, want string) error {
	st, body, err := c.raw(ctx, hc, path, true)
	if err != nil || st != 200 || !strings.Contains(string(body), want) || strings.Contains(string(body), `"fallbacks"`) {
		return fmt.Errorf("GET %s = %d %v, want its own %q and no meta.fallbacks: %.300s", path, st, err, want, body)
	}
	fmt.Printf("  (%s answers %d bytes)\n", path, len(body))
	return nil
}

// localeRecords creates and publishes n pages, and n blocks of 4 KB
// bodies (10 to a content, one content to a page of their own).
func (c *apiClient) localeRecords(ctx context.Context, n int) (pages, blocks []string, err error) {
	pages, drafts, err := c.createPages(ctx, n, "locale", 4)
	if err != nil {
		return nil, nil, err
	}
	const perContent = 10
	blocks, blockDrafts, err := c.createBlocks(ctx, n/perContent, perContent, "Blocks", func(i, b int) string {
		return body4K("Paragraph", i*perContent+b)
	})
	if err != nil {
		return nil, nil, err
	}
	for _, ds := range [][]string{drafts, blockDrafts} {
		if err := c.publishAll(ctx, ds); err != nil {
			return nil, nil, err
		}
	}
	return pages, blocks, nil
}

// publishAll publishes drafts in one revision and waits until it is
// published.
func (c *apiClient) publishAll(ctx context.Context, drafts []string) error {
	rev, _, err := c.postRevision(ctx, drafts)
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Minute); rev.Attributes["status"] == "publishing" && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		if rev, err = c.get(ctx, "/revisions/"+rev.ID); err != nil {
			return err
		}
	}
	if rev.Attributes["status"] != "published" {
		return fmt.Errorf("revision of %d drafts: %v", len(drafts), rev.Attributes)
	}
	return nil
}

// body4K is a markdown body of 4,096 bytes: words, the record's number.
func body4K(word string, i int) string {
	var b strings.Builder
	for b.Len() < 4096 {
		fmt.Fprintf(&b, "%s %d: some text that reads like a page would, in a paragraph of its own. ", word, i)
	}
	return b.String()[:4096]
}

// seedTranslations writes the values of locales tag and other into the
// records' translations ("title@de", ...; docs/locales.md, Storage):
// pages' title, slug and description in both, blocks' 4 KB body in both.
func seedTranslations(ctx context.Context, db *bun.DB, pages, blocks []string, tag, other string) error {
	if _, err := db.NewRaw(`UPDATE pages SET translations = translations || jsonb_build_object(
			?::text, 'Seite ' || title, ?::text, slug || '-' || ?::text, ?::text, 'Eine Beschreibung der Seite',
			?::text, 'Page ' || title, ?::text, slug || '-' || ?::text)
		WHERE id IN (?)`,
		"title@"+tag, "slug@"+tag, tag, "description@"+tag, "title@"+other, "slug@"+other, other, bun.In(pages)).Exec(ctx); err != nil {
		return fmt.Errorf("seeding pages' translations: %w", err)
	}
	for i, id := range blocks {
		if _, err := db.NewRaw(`UPDATE content_blocks SET translations = translations || jsonb_build_object(?::text, ?::text, ?::text, ?::text) WHERE id = ?`,
			"body@"+tag, body4K("Absatz", i), "body@"+other, body4K("Paragraphe", i), id).Exec(ctx); err != nil {
			return fmt.Errorf("seeding blocks' translations: %w", err)
		}
	}
	return nil
}
