package models

import (
	"context"
	"fmt"
	"html"
	"slices"
	"strings"
	"unicode"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Full-text search (issue 32, docs/search.md). The searchable text of every
// page, content, content block and asset, and the drafted values of every
// pending draft, is a tsvector in search_documents, kept by triggers in the
// writes' own transactions (migration 20261129040000_search). A search is
// a tsquery over it in the text search configuration pressroom.

// Bounds of filter[q].
const (
	MaxSearchLength = 256 // characters of filter[q]
	MaxSearchTerms  = 8   // words of filter[q]; more is refused
	maxTermLength   = 64  // a longer word is cut
	minPrefixLength = 3   // shorter words match whole only: "a:*" would read most of the index
)

// The types search_documents holds, as their JSON:API types.
var SearchTypes = []string{"pages", "contents", "content-blocks", "assets"}

// Search is a search of one site: Terms is the tsquery text (SearchTerms),
// Drafted searches the drafted view (include=draft: a record's pending
// draft's values where it has one, unpublished creates included); without
// it only live records' values. Type "" searches every type.
type Search struct {
	SiteID  uuid.UUID
	Type    string
	Terms   string
	Drafted bool
	// Chain is the request's locale and its fallbacks (drafts.Locale.Chain)
	// and Base the site's base locale: a search in a locale matches each
	// chain locale's documents in that locale's configuration, and a
	// record only by the first chain locale it has values in (the values
	// a reader is shown). No Chain, or the base locale alone, searches the
	// base documents only, as a site with one locale always does.
	Chain []string
	Base  string
}

// searchLocale is one locale a search matches documents of: its documents'
// locale ("" for the base), the configuration its words are parsed in,
// and the earlier locales of the chain (a record with values in one of
// those is matched there, not here).
type searchLocale struct {
	doc     string
	config  string
	earlier []string
}

// locales are the locales s matches, in the chain's order, the base
// locale last (where a read falls back to the records' own columns).
func (s Search) locales() []searchLocale {
	var out []searchLocale
	var earlier []string
	for _, tag := range s.Chain {
		if tag == s.Base || tag == "" {
			break // every record has a base document: a read falls back no further
		}
		if slices.Contains(earlier, tag) {
			continue
		}
		out = append(out, searchLocale{doc: tag, config: SearchConfigOf(tag), earlier: slices.Clone(earlier)})
		earlier = append(earlier, tag)
	}
	return append(out, searchLocale{doc: "", config: baseSearchConfig, earlier: earlier})
}

// baseSearchConfig is the configuration of the base documents
// (PRESSROOM_SEARCH_LANGUAGE's stemmer, ConfigureSearch).
const baseSearchConfig = "pressroom"

// searchConfigs maps a BCP 47 primary language subtag to the text search
// configuration of its documents (migration 20261203050000_locales_search
// makes every one of them: a copy of the language's snowball stemmer with
// unaccent, or of pressroom_simple where the server has no such stemmer).
// pressroom_locale_config is the same table in SQL;
// TestSearchConfigOfAgreesWithSQL compares them.
var searchConfigs = map[string]string{
	"ar": "pressroom_arabic", "hy": "pressroom_armenian", "eu": "pressroom_basque", "ca": "pressroom_catalan",
	"da": "pressroom_danish", "nl": "pressroom_dutch", "en": "pressroom_english", "fi": "pressroom_finnish",
	"fr": "pressroom_french", "de": "pressroom_german", "el": "pressroom_greek", "hi": "pressroom_hindi",
	"hu": "pressroom_hungarian", "id": "pressroom_indonesian", "in": "pressroom_indonesian", "ga": "pressroom_irish",
	"it": "pressroom_italian", "lt": "pressroom_lithuanian", "ne": "pressroom_nepali", "no": "pressroom_norwegian",
	"nb": "pressroom_norwegian", "nn": "pressroom_norwegian", "pt": "pressroom_portuguese", "ro": "pressroom_romanian",
	"mo": "pressroom_romanian", "ru": "pressroom_russian", "sr": "pressroom_serbian", "es": "pressroom_spanish",
	"sv": "pressroom_swedish", "ta": "pressroom_tamil", "tr": "pressroom_turkish", "yi": "pressroom_yiddish",
	"ji": "pressroom_yiddish",
}

// SearchConfigOf is the text search configuration of locale tag's
// documents: its language's (by the primary subtag), pressroom_simple
// (no stemming, accents folded) for a language PostgreSQL has no stemmer
// for (ja, zh, ko, pl, …). Always a name of the fixed table, whatever tag
// is: SQL may name it as a literal.
func SearchConfigOf(tag string) string {
	primary, _, _ := strings.Cut(tag, "-")
	if c, ok := searchConfigs[strings.ToLower(primary)]; ok {
		return c
	}
	return "pressroom_simple"
}

// SearchConfigs are every configuration SearchConfigOf may answer.
func SearchConfigs() []string {
	out := []string{"pressroom_simple"}
	for _, c := range searchConfigs {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// SearchTerms turns the words of filter[q] into to_tsquery text: each word
// (letters and digits; anything else separates words) is a term, all terms
// must match, and each of at least minPrefixLength characters matches as a
// prefix too ("photog" finds "photography"). The words are stemmed and
// unaccented by the configuration when the query is parsed. ok is false
// when the text holds no word, or more than MaxSearchTerms.
func SearchTerms(q string) (terms string, ok bool) {
	words := strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) })
	if len(words) == 0 || len(words) > MaxSearchTerms {
		return "", false
	}
	parts := make([]string, len(words))
	for i, w := range words {
		if r := []rune(w); len(r) > maxTermLength {
			w = string(r[:maxTermLength])
		}
		// Quoted: to_tsquery reads a quoted term as text to parse, never as
		// an operator; the words hold no quote or backslash.
		parts[i] = "'" + w + "'"
		if len([]rune(w)) >= minPrefixLength {
			parts[i] += ":*"
		}
	}
	return strings.Join(parts, " & "), true
}

// hits is the SQL of the search's matching records: item_type, hit_id,
// rank (ts_rank: a title match, weight A, above a body match, weight D),
// and the document that matched: its locale (hit_locale, "" the base) and
// whether it holds a draft's values (hit_drafted). In the drafted view a
// record with a pending draft of a locale is matched in that locale by
// the draft's document, any other by its own. With ids, only those
// records (Highlights).
//
// Each type is read through its own index (search_documents_<type>_idx,
// partial on item_type, over the words alone: migration
// 20261202020000_search_by_type), so the type is a literal of its
// branch, and every type and locale of the chain is one branch of a UNION
// ALL, its words parsed in its locale's configuration (a literal of
// SearchConfigOf's table). The site, the locale, the live and drafted
// flags are checked on the rows the words found. A record matches in the
// first locale of the chain it has values in: the live view tests the
// document's covered (the locales its record has values in, kept by the
// row trigger), the drafted view, whose record may mix drafted and row
// documents, looks the earlier locales' documents up by the key. Assets
// have base documents only.
func (s Search) hits(ids []uuid.UUID) (string, []any) {
	types := SearchTypes
	if s.Type != "" {
		types = []string{s.Type}
	}
	var parts []string
	var args []any
	for _, t := range types {
		for _, l := range s.locales() {
			if l.doc != "" && t == "assets" {
				continue
			}
			q := `SELECT sd.item_type, sd.item_id AS hit_id, ts_rank(sd.search, query) AS rank, sd.locale AS hit_locale, sd.drafted AS hit_drafted
  FROM search_documents sd, to_tsquery('` + l.config + `', ?) query
  WHERE sd.item_type = ? AND sd.search @@ query AND sd.site_id = ? AND sd.locale = ?`
			args = append(args, s.Terms, t, s.SiteID, l.doc)
			switch {
			case !s.Drafted:
				q += ` AND NOT sd.drafted AND sd.live`
				if len(l.earlier) > 0 {
					q += ` AND NOT sd.covered && ?::text[]`
					args = append(args, pgdialect.Array(l.earlier))
				}
			default:
				q += ` AND (sd.drafted OR NOT EXISTS (SELECT 1 FROM search_documents x
    WHERE x.item_type = sd.item_type AND x.item_id = sd.item_id AND x.locale = sd.locale AND x.drafted))`
				if len(l.earlier) > 0 {
					q += ` AND NOT EXISTS (SELECT 1 FROM search_documents x
    WHERE x.item_type = sd.item_type AND x.item_id = sd.item_id AND x.locale = ANY (?::text[]))`
					args = append(args, pgdialect.Array(l.earlier))
				}
			}
			if ids != nil {
				q += ` AND sd.item_id IN (?)`
				args = append(args, bun.In(ids))
			}
			parts = append(parts, q)
		}
	}
	return strings.Join(parts, "\nUNION ALL\n"), args
}

// apply keeps a list's rows (of the table whose column id is unqualified)
// that match, most relevant first.
func (s Search) apply(sel *bun.SelectQuery, ranked bool) *bun.SelectQuery {
	q, args := s.hits(nil)
	sel = sel.Join("JOIN ("+q+") AS search_hits ON search_hits.hit_id = id", args...)
	if ranked {
		sel = sel.OrderExpr("search_hits.rank DESC")
	}
	return sel
}

// SearchHit is one record a search found, with its rank and highlight.
type SearchHit struct {
	Type string    `bun:"item_type"`
	ID   uuid.UUID `bun:"hit_id,type:uuid"`
	Rank float64   `bun:"rank"`
	// Locale is the locale of the values that matched ("" the base; set
	// by Highlights).
	Locale    string `bun:"hit_locale"`
	Highlight string `bun:"-"`
}

// SearchCursor is a place in a search's order (rank descending, then
// type and id): a hit's rank as ts_rank computed it (a real), its type and
// id. A cursor page of GET /search starts after, or before, one.
type SearchCursor struct {
	Rank float32
	Type string
	ID   uuid.UUID
}

// SearchKeyset is a cursor page of SearchAll: the hits after (Before:
// before) At, or with At nil from the start (the end).
type SearchKeyset struct {
	At     *SearchCursor
	Before bool
}

// SearchAll is one page of every type's hits, most relevant first, and how
// many there are in all: by offset, or (keyset set) by cursor, when it
// reads limit+1 hits and the total is the hits read (the last tells that
// another page follows; the caller drops it), nearest the cursor first.
// Every match is ranked either way (the order is the rank's); a page by
// offset counts them in the same scan (count(*) OVER ()), a cursor page
// counts nothing and skips no offset's rows.
//
// It runs without parallel workers (SET LOCAL in its own transaction):
// the four branches' scans take about a millisecond together, and the
// planner, costing the UNION ALL of the four, chose a Parallel Append
// whose two workers took 20 ms to start (EXPLAIN ANALYZE at 100,000
// pages, load average 22).
func SearchAll(ctx context.Context, db bun.IDB, s Search, limit, offset int, keyset *SearchKeyset) ([]SearchHit, int64, error) {
	var hits []SearchHit
	var total int64
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL max_parallel_workers_per_gather = 0"); err != nil {
			return fmt.Errorf("search: %w", err)
		}
		var err error
		hits, total, err = searchAll(ctx, tx, s, limit, offset, keyset)
		return err
	})
	return hits, total, err
}

// searchAll is SearchAll in its transaction.
func searchAll(ctx context.Context, db bun.IDB, s Search, limit, offset int, keyset *SearchKeyset) ([]SearchHit, int64, error) {
	q, args := s.hits(nil)
	var hits []SearchHit
	sel := db.NewSelect().TableExpr("("+q+") AS h", args...).ColumnExpr("h.item_type, h.hit_id, h.rank")
	if keyset == nil {
		return searchPage(ctx, db, sel, q, args, limit, offset)
	}
	// Rank descending, type and id ascending: mixed directions, so the
	// rank is compared on its own and the tie by a row comparison.
	after, order := "h.rank < ?0::real OR h.rank = ?0::real AND (h.item_type, h.hit_id) > (?1, ?2)", "h.rank DESC, h.item_type, h.hit_id"
	if keyset.Before {
		after, order = "h.rank > ?0::real OR h.rank = ?0::real AND (h.item_type, h.hit_id) < (?1, ?2)", "h.rank, h.item_type DESC, h.hit_id DESC"
	}
	if at := keyset.At; at != nil {
		sel = sel.Where("("+after+")", at.Rank, at.Type, at.ID)
	}
	if err := sel.OrderExpr(order).Limit(int64(limit+1)).Scan(ctx, &hits); err != nil && !IsNoRows(err) {
		return nil, 0, fmt.Errorf("search: %w", err)
	}
	return hits, int64(len(hits)), nil
}

// searchPage is SearchAll's page by offset: its hits and, in the same
// statement, how many match (a page past the last hit counts them apart).
func searchPage(ctx context.Context, db bun.IDB, sel *bun.SelectQuery, q string, args []any, limit, offset int) ([]SearchHit, int64, error) {
	var rows []struct {
		SearchHit
		Total int64 `bun:"total"`
	}
	err := sel.ColumnExpr("count(*) OVER () AS total").OrderExpr("h.rank DESC, h.item_type, h.hit_id").
		Limit(int64(limit)).Offset(int64(offset)).Scan(ctx, &rows)
	if err != nil && !IsNoRows(err) {
		return nil, 0, fmt.Errorf("search: %w", err)
	}
	hits := make([]SearchHit, len(rows))
	for i, r := range rows {
		hits[i] = r.SearchHit
	}
	if len(rows) > 0 {
		return hits, rows[0].Total, nil
	}
	var total int64
	if offset > 0 {
		if err := db.NewRaw("SELECT count(*) FROM ("+q+") AS h", args...).Scan(ctx, &total); err != nil {
			return nil, 0, fmt.Errorf("search count: %w", err)
		}
	}
	return hits, total, nil
}

// The text each type's highlight is cut from, over its row t (and in the
// drafted view its draft d): col names a column, read from the draft's
// drafted values when the record has one.
var searchDocs = map[string]struct {
	table string
	doc   func(col func(string) string) string
}{
	"pages": {"pages", func(col func(string) string) string {
		return "concat_ws(' — ', " + col("title") + ", " + col("path") + ", " + col("keywords") + ", " + col("description") + ")"
	}},
	"contents":       {"contents", func(col func(string) string) string { return col("title") }},
	"content-blocks": {"content_blocks", func(col func(string) string) string { return "pressroom_html_text(" + col("body") + ")" }},
	"assets": {"assets", func(col func(string) string) string {
		return "concat_ws(' — ', t.title, (SELECT i.file_name FROM asset_images i WHERE i.asset_id = t.id))"
	}},
}

// Marks ts_headline puts around matches: private-use characters, taken out
// of the text first, so the text can be escaped whole and the marks then
// turned into <mark> elements.
const (
	markStart = "\ue000"
	markStop  = "\ue001"
)

// Highlights ranks the site's records ids of the search's type and cuts
// their highlights: the fragments of their text that match, every match
// in <mark>…</mark> and everything else HTML-escaped. The text is the
// values of the locale the record matched in (hits' hit_locale), in the
// drafted view the draft's where the matching document was drafted, cut
// in that locale's configuration.
func Highlights(ctx context.Context, db bun.IDB, s Search, ids []uuid.UUID) (map[uuid.UUID]SearchHit, error) {
	out := make(map[uuid.UUID]SearchHit, len(ids))
	d, ok := searchDocs[s.Type]
	if !ok || len(ids) == 0 {
		return out, nil
	}
	hq, hargs := s.hits(ids)
	// The configuration of the matching document's locale: a literal of
	// SearchConfigOf's table per chain locale, the tags as arguments.
	cfg, cargs := "CASE h.hit_locale", []any{}
	for _, l := range s.locales() {
		if l.doc != "" {
			cfg += " WHEN ? THEN '" + l.config + "'::regconfig"
			cargs = append(cargs, l.doc)
		}
	}
	cfg += " ELSE '" + baseSearchConfig + "'::regconfig END"
	if len(cargs) == 0 {
		cfg = "'" + baseSearchConfig + "'::regconfig"
	}
	col, join := highlightColumns(s)
	q := `SELECT h.item_type, h.hit_id, h.rank, h.hit_locale,
  ts_headline(` + cfg + `, translate(` + d.doc(col) + `, E'\uE000\uE001', ''), to_tsquery(` + cfg + `, ?),
    'StartSel=' || chr(57344) || ', StopSel=' || chr(57345) || ', MaxFragments=3, MaxWords=20, MinWords=6') AS headline
FROM (` + hq + `) h JOIN ` + d.table + ` t ON t.id = h.hit_id AND t.site_id = ? ` + join
	args := append(append(append(slices.Clone(cargs), cargs...), s.Terms), hargs...)
	args = append(args, s.SiteID)
	var rows []struct {
		SearchHit
		Headline string `bun:"headline"`
	}
	if err := db.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !IsNoRows(err) {
		return nil, fmt.Errorf("search highlights: %w", err)
	}
	for _, r := range rows {
		h := r.SearchHit
		h.Highlight = markHighlight(r.Headline)
		out[h.ID] = h
	}
	return out, nil
}

// highlightColumns is how Highlights reads column c of a hit h over its
// row t: in the base locale the column, in another the translation
// ("c@<tag>"; a page's slug stands for its path, as in the locale's
// document), and where the matching document was drafted, the same key of
// the draft's drafted values (the locale's draft dl, else the shared draft
// d, a create's, which holds every locale's). join joins those drafts.
func highlightColumns(s Search) (col func(string) string, join string) {
	if s.Type == "assets" {
		return func(c string) string { return "t." + c }, ""
	}
	key := func(c string) string {
		lc := c
		if c == "path" {
			lc = "slug"
		}
		return "CASE WHEN h.hit_locale = '' THEN '" + c + "' ELSE '" + lc + "@' || h.hit_locale END"
	}
	live := func(c string) string {
		lc := c
		if c == "path" {
			lc = "slug"
		}
		return "CASE WHEN h.hit_locale = '' THEN t." + c + " ELSE t.translations ->> ('" + lc + "@' || h.hit_locale) END"
	}
	if !s.Drafted {
		return live, ""
	}
	col = func(c string) string {
		return "CASE WHEN h.hit_drafted THEN coalesce(dl.drafted, d.drafted) ->> (" + key(c) + ") ELSE " + live(c) + " END"
	}
	join = `LEFT JOIN drafts d ON h.hit_drafted AND d.item_type = h.item_type AND d.item_id = t.id AND d.locale = '' AND d.event <> 'delete'
  LEFT JOIN drafts dl ON h.hit_drafted AND h.hit_locale <> '' AND dl.item_type = h.item_type AND dl.item_id = t.id AND dl.locale = h.hit_locale`
	return col, join
}

// markHighlight escapes a ts_headline fragment and turns its marks into
// <mark> elements.
func markHighlight(s string) string {
	s = html.EscapeString(s)
	return strings.NewReplacer(markStart, "<mark>", markStop, "</mark>").Replace(s)
}

// ConfigureSearch makes the text search configuration pressroom stem in
// language (a PostgreSQL snowball language, config.SearchLanguages): when
// it stems in another, its word mappings change and every document of
// search_documents is computed again, in one transaction, under a lock
// (two processes starting at once do it once). Nothing happens when the
// language is already the configuration's.
func ConfigureSearch(ctx context.Context, db *bun.DB, language string) error {
	for _, r := range language {
		if r < 'a' || r > 'z' {
			return fmt.Errorf("search language %q: not a language name", language)
		}
	}
	dict := language + "_stem"
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('pressroom.search_language', 0))"); err != nil {
			return fmt.Errorf("lock the search configuration: %w", err)
		}
		var current string
		err := tx.NewRaw(`SELECT d.dictname FROM pg_ts_config_map m JOIN pg_ts_dict d ON d.oid = m.mapdict
  WHERE m.mapcfg = 'pressroom'::regconfig AND m.maptokentype = (SELECT tokid FROM ts_token_type('default') WHERE alias = 'asciiword')
  ORDER BY m.mapseqno DESC LIMIT 1`).Scan(ctx, &current)
		if err != nil {
			return fmt.Errorf("read the search configuration: %w", err)
		}
		if current == dict {
			return nil
		}
		if _, err := tx.ExecContext(ctx, "ALTER TEXT SEARCH CONFIGURATION pressroom ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, ?", bun.Ident(dict)); err != nil {
			return fmt.Errorf("search language %q: %w", language, err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE search_documents sd SET search = v.search FROM (
    SELECT 'pages' AS t, id, false AS drafted, pressroom_page_search(title, path, keywords, description) AS search FROM pages
    UNION ALL SELECT 'contents', id, false, pressroom_title_search(title) FROM contents
    UNION ALL SELECT 'content-blocks', id, false, pressroom_block_search(body) FROM content_blocks
    UNION ALL SELECT 'assets', a.id, false, pressroom_asset_search(a.title, i.file_name) FROM assets a LEFT JOIN asset_images i ON i.asset_id = a.id
    UNION ALL SELECT item_type, item_id, true, pressroom_draft_search(item_type, drafted) FROM drafts WHERE event <> 'delete' AND locale = '') v
  WHERE sd.item_type = v.t AND sd.item_id = v.id AND sd.locale = '' AND sd.drafted = v.drafted`)
		if err != nil {
			return fmt.Errorf("reindex search in %s: %w", language, err)
		}
		return nil
	})
}
