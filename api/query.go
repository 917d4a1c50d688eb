package api

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// Pagination defaults (DESIGN.md §2).
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// page is a requested page of a collection: by number, or by cursor
// (after or before a record; number stays 1, unused). On GET /search a
// cursor is a hit's place in the ranking, hit (nil: from the start or the
// end), and after or before holds its id.
type page struct {
	number, size  int
	after, before *uuid.UUID
	hit           *models.SearchCursor
}

// cursor tells whether the page is asked by cursor.
func (p page) cursor() bool { return p.after != nil || p.before != nil }

func (p page) offset() int { return (p.number - 1) * p.size }

// QuerySpec says which JSON:API query parameters an endpoint understands.
// Anything else is 400 with source.parameter, as DESIGN.md §2 asks.
type QuerySpec struct {
	// Includes are the include paths the endpoint can satisfy.
	Includes []string
	// Fields are the resource types whose sparse fieldsets may be asked for.
	Fields []string
	// Collection endpoints accept page, sort and filter.
	Collection bool
	// Sorts maps a sort key (an attribute name) to its SQL column.
	Sorts map[string]string
	// DefaultSort names the order used without sort (and as a tie-breaker).
	DefaultSort models.Order
	// Filters maps filter[name] to a SQL column compared for equality.
	Filters map[string]string
	// Operators are the list's operator filters (filters.go), of the
	// records of the type Type.
	Operators map[string]FilterField
	Type      string
	// Search names the type whose records filter[q] searches (models.Search;
	// "" takes no filter[q]).
	Search string
	// BoolFilters are the Filters whose value is true or false (400
	// invalid_filter otherwise: a boolean column compared as text would
	// match nothing and answer an empty list).
	BoolFilters map[string]bool
	// NoneFilters are the filters whose value "none" asks for no value
	// (NULL): filter[release]=none, the drafts in no release.
	NoneFilters map[string]bool
	// Extra are endpoint-specific parameters (e.g. nothing, or "include" handled elsewhere).
	Extra []string
}

// Query is a parsed, validated query string.
type Query struct {
	Values  url.Values
	Include map[string]bool
	// Fields maps a type to the members to keep; a type absent keeps all.
	Fields  map[string]map[string]bool
	Page    page
	sort    []sortKey
	filters map[string]string
	// ops are the operator filters, read by parseFilter.
	ops []models.ColumnValue
	// siteID scopes a cursor's row.
	siteID uuid.UUID
	// userParam is filter[user] as sent (scopeLastUser).
	userParam string
	// search is filter[q], set up for the caller's site and view.
	search *models.Search
	spec   QuerySpec
}

type sortKey struct {
	column string
	desc   bool
}

var bracketed = regexp.MustCompile(`^(fields|filter|page)\[([a-z0-9_-]+)\]$`)

// parseQuery reads the query string against spec.
func parseQuery(c *fiber.Ctx, spec QuerySpec) (*Query, error) {
	if probed(c, spec) { // New describing the route (openapi_query.go)
		return nil, errQueryProbe
	}
	values, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return nil, jsonapi.BadRequest("invalid_query", "The query string is malformed.")
	}
	q := &Query{Values: values, Include: map[string]bool{}, Fields: map[string]map[string]bool{},
		Page: page{number: 1, size: defaultPageSize}, filters: map[string]string{}, spec: spec}
	for name, vs := range values {
		if len(vs) > 1 {
			return nil, jsonapi.BadRequest("repeated_parameter", fmt.Sprintf("The query parameter %q is given more than once.", name)).AtParameter(name)
		}
		v := vs[0]
		if err := checkCharacters(name, v); err != nil {
			return nil, err
		}
		m := bracketed.FindStringSubmatch(name)
		switch {
		case name == "include" && len(spec.Includes) > 0:
			if err := q.parseInclude(v); err != nil {
				return nil, err
			}
		case name == "sort" && spec.Collection && len(spec.Sorts) > 0:
			if err := q.parseSort(v); err != nil {
				return nil, err
			}
		case m != nil && m[1] == "fields" && contains(spec.Fields, m[2]):
			q.Fields[m[2]] = fieldSet(v)
		case name == "filter[q]" && spec.Collection && spec.Search != "":
			if err := q.parseSearch(siteOf(c), v); err != nil {
				return nil, err
			}
		case m != nil && m[1] == "filter" && spec.Collection && spec.Filters[m[2]] != "":
			if spec.BoolFilters[m[2]] && v != "true" && v != "false" {
				return nil, jsonapi.BadRequest("invalid_filter", name+" must be true or false.").AtParameter(name)
			}
			q.filters[m[2]] = v
		case contains(spec.Extra, name):
			// The endpoint's own parameter (filter[trashed], as-of, wait…),
			// read by its handler; before the operator filters, whose table
			// would refuse a filter it does not know.
		case spec.Collection && len(spec.Operators) > 0 && strings.HasPrefix(name, "filter["):
			if err := q.parseOperator(name, v); err != nil {
				return nil, err
			}
		case m != nil && m[1] == "page" && spec.Collection:
			if err := q.parsePage(name, m[2], v); err != nil {
				return nil, err
			}
		case name == previewParam && (c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead), name == localeParam:
			// A release's preview (preview.go), the locale (locale.go):
			// checked and applied around the handler.
		default:
			return nil, jsonapi.BadRequest("unknown_parameter", fmt.Sprintf("The query parameter %q is not supported here.", name)).AtParameter(name)
		}
	}
	if q.Include["draft"] && values.Has(previewParam) {
		return nil, jsonapi.BadRequest("invalid_parameter", "include=draft (every pending draft) cannot be combined with preview-release (one release's drafts).").
			AtParameter(previewParam)
	}
	if err := q.scopeLastUser(c); err != nil {
		return nil, err
	}
	q.scopeLocalePaths(c) // filters.go
	if q.search != nil {
		q.search.Drafted = q.Include["draft"]
		searchIn(q.search, drafts.LocaleOf(c.UserContext()))
	}
	if q.Page.cursor() {
		q.siteID = siteOf(c) // lists are behind RequireToken
	}
	return q, q.checkCursor()
}

// fieldSet is a sparse fieldset's names (fields[type]=a,b).
func fieldSet(v string) map[string]bool {
	set := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			set[f] = true
		}
	}
	return set
}

// checkCharacters refuses a query parameter PostgreSQL text cannot hold:
// NUL, or bytes that are not UTF-8.
func checkCharacters(name, v string) error {
	if strings.ContainsRune(name, 0) || strings.ContainsRune(v, 0) {
		// PostgreSQL text cannot hold U+0000: refused here, not as a 500 there.
		// source.parameter names the parameter exactly as sent (JSON
		// escapes a NUL in it as \u0000), so a client can find it.
		return jsonapi.BadRequest("invalid_character", "Query parameters must not contain the NUL character (U+0000).").AtParameter(name)
	}
	if !utf8.ValidString(name) || !utf8.ValidString(v) {
		// url.ParseQuery decodes %FF without complaint; PostgreSQL
		// refuses the bytes (SQLSTATE 22021), which would be a 500.
		// (JSON writes an invalid byte of source.parameter as U+FFFD.)
		return jsonapi.BadRequest("invalid_character", "Query parameters must be valid UTF-8.").AtParameter(name)
	}
	return nil
}

// parseOperator reads an operator filter of the spec's table (an unknown
// one is an unknown parameter).
func (q *Query) parseOperator(name, v string) error {
	field, op := "", models.OpEq
	if m := operatorFilter.FindStringSubmatch(name); m != nil {
		field, op = m[1], models.FilterOp(m[2])
	} else if m := bracketed.FindStringSubmatch(name); m != nil {
		field = m[2]
	}
	f, known, err := parseFilter(name, field, op, v, q.spec.Type, q.spec.Operators)
	if err != nil {
		return err
	}
	if !known {
		return jsonapi.BadRequest("unknown_parameter", fmt.Sprintf("The query parameter %q is not supported here.", name)).AtParameter(name)
	}
	if f.LastUser != "" {
		q.userParam = name
	}
	q.ops = append(q.ops, f)
	return nil
}

// scopeLastUser scopes filter[user] (who last changed a record) to the
// caller's site and, under a preview, to the preview's drafts: another
// draft's author must not match a record the preview shows live. A
// preview link refuses it: links hide who made what (docs/releases.md,
// "Preview links").
func (q *Query) scopeLastUser(c *fiber.Ctx) error {
	for i, f := range q.ops {
		if f.LastUser == "" {
			continue
		}
		if _, viaLink := previewReleaseOf(c); viaLink {
			return jsonapi.BadRequest("invalid_filter", q.userParam+": a preview link does not tell who changed what.").AtParameter(q.userParam)
		}
		q.ops[i].SiteID = siteOf(c)
		q.ops[i].Drafts = drafts.DraftSetOf(c.UserContext())
	}
	return nil
}

// parsePage reads page[number], page[size] and (on a list with a fixed
// order) the cursors page[after] and page[before].
func (q *Query) parsePage(name, key, v string) error {
	switch key {
	case "number", "size":
		n, err := strconv.Atoi(v)
		limit := 1_000_000
		if key == "size" {
			limit = maxPageSize
		}
		if err != nil || n < 1 || n > limit {
			return jsonapi.BadRequest("invalid_page", fmt.Sprintf("%s must be a whole number from 1 to %d.", name, limit)).AtParameter(name)
		}
		if key == "size" {
			q.Page.size = n
		} else {
			q.Page.number = n
		}
		return nil
	case "after", "before":
		if q.spec.Search == searchEveryType {
			hit, err := parseSearchCursor(name, v)
			id := uuid.Nil
			if hit != nil {
				id = hit.ID
			}
			q.Page.hit = hit
			if key == "after" {
				q.Page.after = &id
			} else {
				q.Page.before = &id
			}
			return err
		}
		if q.spec.cursors() {
			id, err := parseCursor(name, v)
			if key == "after" {
				q.Page.after = &id
			} else {
				q.Page.before = &id
			}
			return err
		}
	}
	return jsonapi.BadRequest("unknown_parameter", fmt.Sprintf("The query parameter %q is not supported here.", name)).AtParameter(name)
}

// window is the page asked as a to-many relationship's (models.Window):
// by number, or by cursor (a record of the relationship).
func (q *Query) window() models.Window {
	w := models.Window{Offset: q.Page.offset(), Limit: q.Page.size}
	switch {
	case q.Page.after != nil:
		w = models.Window{Limit: q.Page.size, Keyset: &models.Keyset{ID: *q.Page.after}}
	case q.Page.before != nil:
		w = models.Window{Limit: q.Page.size, Keyset: &models.Keyset{ID: *q.Page.before, Before: true}}
	}
	return w
}

// cursors tells whether the spec's list pages by record cursor too: every
// list does, in its fixed order, as do a to-many relationship's pages (in
// the relationship's order, Query.window) and the trash (its deletions'
// order, trash.go). GET /search pages by its own cursor, a hit's rank,
// type and id (parseSearchCursor).
func (s QuerySpec) cursors() bool {
	return s.Collection && s.Search != searchEveryType
}

// checkCursor refuses what a cursor page cannot be combined with.
func (q *Query) checkCursor() error {
	if !q.Page.cursor() {
		return nil
	}
	param := "page[after]"
	if q.Page.after == nil {
		param = "page[before]"
	}
	switch {
	case q.Page.after != nil && q.Page.before != nil:
		return jsonapi.BadRequest("invalid_page", "page[after] and page[before] cannot be combined.").AtParameter("page[before]")
	case q.Values.Has("page[number]"):
		return jsonapi.BadRequest("invalid_page", "page[number] cannot be combined with "+param+": page by number or by cursor.").AtParameter("page[number]")
	case q.search != nil && q.spec.Search != searchEveryType:
		return jsonapi.BadRequest("invalid_page", "A search (filter[q]) of one type's list is ranked by relevance: page it by page[number], or by cursor on GET /search, not "+param+".").AtParameter(param)
	}
	return nil
}

// parseSearch reads filter[q] of a list that takes it: the words to
// search the site's records of the spec's type (every type for /search).
func (q *Query) parseSearch(siteID uuid.UUID, v string) error {
	terms, err := searchTerms(v)
	if err != nil {
		return err
	}
	q.search = &models.Search{SiteID: siteID, Type: q.spec.Search, Terms: terms}
	if q.spec.Search == searchEveryType {
		q.search.Type = ""
	}
	return nil
}

// searchTerms reads filter[q]: words, bounded (models.SearchTerms).
func searchTerms(v string) (string, error) {
	if utf8.RuneCountInString(v) > models.MaxSearchLength {
		return "", jsonapi.BadRequest("invalid_filter", fmt.Sprintf("filter[q] must be at most %d characters.", models.MaxSearchLength)).AtParameter("filter[q]")
	}
	terms, ok := models.SearchTerms(v)
	if !ok {
		return "", jsonapi.BadRequest("invalid_filter", fmt.Sprintf("filter[q] must hold from 1 to %d words.", models.MaxSearchTerms)).AtParameter("filter[q]")
	}
	return terms, nil
}

// Drafted tells whether the read shows a drafted view: include=draft (every
// pending draft) or preview-release (one release's, preview.go).
func (q *Query) Drafted() bool { return q.Include["draft"] || q.Values.Has(previewParam) }

func (q *Query) parseInclude(v string) error {
	for _, path := range strings.Split(v, ",") {
		if !contains(q.spec.Includes, path) {
			return jsonapi.BadRequest("unknown_include", fmt.Sprintf("Cannot include %q here; supported: %s.", path, strings.Join(q.spec.Includes, ", "))).AtParameter("include")
		}
		q.Include[path] = true
		// An included path includes its prefixes (theme-assets.asset includes theme-assets).
		for i := strings.IndexByte(path, '.'); i >= 0; i = strings.IndexByte(path[i+1:], '.') + i + 1 {
			q.Include[path[:i]] = true
			if strings.IndexByte(path[i+1:], '.') < 0 {
				break
			}
		}
	}
	return nil
}

func (q *Query) parseSort(v string) error {
	for _, key := range strings.Split(v, ",") {
		desc := strings.HasPrefix(key, "-")
		col, ok := q.spec.Sorts[strings.TrimPrefix(key, "-")]
		if !ok {
			return jsonapi.BadRequest("unknown_sort", fmt.Sprintf("Cannot sort by %q here.", key)).AtParameter("sort")
		}
		q.sort = append(q.sort, sortKey{column: col, desc: desc})
	}
	return nil
}

// Apply adds the filters, the order and the page to a collection query.
// It is a models.Page: models.ListQuery writes the SQL.
func (q *Query) Apply(sel *bun.SelectQuery) *bun.SelectQuery {
	l := q.listPage()
	l.DefaultSort, l.Search, l.Drafted, l.Filters = q.spec.DefaultSort, q.search, q.Drafted(), slices.Clone(q.ops)
	for name, v := range q.filters {
		l.Filters = append(l.Filters, models.ColumnValue{Column: q.spec.Filters[name], Value: v, None: q.spec.NoneFilters[name] && v == "none"})
	}
	for _, s := range q.sort {
		l.Sort = append(l.Sort, models.SortColumn{Column: s.column, Desc: s.desc})
	}
	return l.Apply(sel)
}

// listPage is the page asked of a list, by number (Limit, Offset) or by
// cursor (Keyset: a row of the list's table, of the caller's site).
func (q *Query) listPage() models.ListQuery {
	l := models.ListQuery{Limit: q.Page.size}
	switch {
	case q.Page.after != nil:
		l.Keyset = &models.Keyset{ID: *q.Page.after, SiteID: q.siteID}
	case q.Page.before != nil:
		l.Keyset = &models.Keyset{ID: *q.Page.before, SiteID: q.siteID, Before: true}
	default:
		l.Offset = q.Page.offset()
	}
	return l
}

// Sparse applies fields[type] to a resource: attributes and relationships
// not asked for are dropped.
func (q *Query) Sparse(r *jsonapi.Resource) *jsonapi.Resource {
	if r == nil {
		return nil
	}
	keep, ok := q.Fields[r.Type]
	if !ok {
		return r
	}
	out := *r
	if attrs := jsonapi.AttributeMap(r.Attributes); attrs != nil {
		for k := range attrs {
			if !keep[k] {
				delete(attrs, k)
			}
		}
		out.Attributes = attrs
	}
	if fb, ok := r.Meta[fallbacksMeta].(map[string]any); ok {
		out.Meta = sparseFallbacks(r.Meta, fb, keep)
	}
	if r.Relationships != nil {
		rels := map[string]*jsonapi.Relationship{}
		for k, v := range r.Relationships {
			if keep[k] {
				rels[k] = v
			}
		}
		out.Relationships = rels
	}
	return &out
}

// sparseFallbacks is meta with its fallbacks (meta.fallbacks, content.go)
// narrowed to the attributes a sparse fieldset keeps: a copy, since the
// resource may be rendered again without the fieldset (included twice).
func sparseFallbacks(meta, fb map[string]any, keep map[string]bool) map[string]any {
	out := make(map[string]any, len(meta))
	for k, v := range meta {
		out[k] = v
	}
	kept := map[string]any{}
	for k, v := range fb {
		if keep[k] {
			kept[k] = v
		}
	}
	delete(out, fallbacksMeta)
	if len(kept) > 0 {
		out[fallbacksMeta] = kept
	}
	return out
}

// collection builds first/prev/next/last links for a collection at
// path, keeping the other query parameters; for a page by cursor, of
// the records rs (total: how many follow the cursor), first/prev/next.
func (l links) collection(path string, q *Query, total int64, rs []*jsonapi.Resource) *jsonapi.Links {
	if q.Page.cursor() {
		return l.cursorPage(path, q, total, len(rs), func(i int) string { return cursorOf(rs[i].ID) })
	}
	last := max(1, int((total+int64(q.Page.size)-1)/int64(q.Page.size)))
	at := func(n int) string {
		v := url.Values{}
		for k, vs := range q.Values {
			v[k] = vs
		}
		v.Set("page[number]", strconv.Itoa(n))
		v.Set("page[size]", strconv.Itoa(q.Page.size))
		return l.base + path + "?" + v.Encode()
	}
	out := &jsonapi.Links{Self: at(q.Page.number), First: at(1), Last: at(last)}
	if q.Page.number > 1 {
		out.Prev = at(min(q.Page.number-1, last))
	}
	if q.Page.number < last {
		out.Next = at(q.Page.number + 1)
	}
	return out
}

// cursorPage is collection's links for a page by cursor: first is
// page[after]= (empty: from the start), last page[before]= (from the
// end); there is no total to number pages by. n is the records on the
// page, cursorAt(i) the cursor of the i-th; total the rows the list read
// (one past the page when another follows).
func (l links) cursorPage(path string, q *Query, total int64, n int, cursorAt func(int) string) *jsonapi.Links {
	at := func(param string) string {
		v := url.Values{}
		for k, vs := range q.Values {
			v[k] = vs
		}
		v.Del("page[after]")
		v.Del("page[before]")
		v.Set(param, "")
		return cursorLink(l, path, v, "", "")
	}
	out := &jsonapi.Links{Self: cursorLink(l, path, q.Values, "", ""), First: at("page[after]"), Last: at("page[before]")}
	more := total > int64(q.Page.size)
	after, before := q.Page.after != nil, q.Page.before != nil
	if n > 0 && (after && *q.Page.after != uuid.Nil || before && more) {
		out.Prev = cursorLink(l, path, q.Values, "page[before]", cursorAt(0))
	}
	if n > 0 && (before && *q.Page.before != uuid.Nil || after && more) {
		out.Next = cursorLink(l, path, q.Values, "page[after]", cursorAt(n-1))
	}
	return out
}

// cursorRows is a list's rows as its page shows them. A cursor page read
// one row past the page (models.Keyset) to learn that another follows
// (its total is then the rows read, which links.collection compares with
// page[size]); that row is dropped, and a page[before] page, read nearest
// first, is put back in the list's order.
func cursorRows[T any](q *Query, rows []T) []T {
	if !q.Page.cursor() {
		return rows
	}
	if len(rows) > q.Page.size {
		rows = rows[:q.Page.size]
	}
	if q.Page.before != nil {
		slices.Reverse(rows)
	}
	return rows
}

// listMeta is a list's meta: its total, for a page by number (a page by
// cursor counts only the records past its cursor).
func (q *Query) listMeta(total int64) map[string]any {
	if q.Page.cursor() {
		return nil
	}
	return map[string]any{"total": total}
}

// queryParams accepts only the named parameters (simple endpoints).
func queryParams(c *fiber.Ctx, allowed ...string) (url.Values, error) {
	q, err := parseQuery(c, QuerySpec{Extra: allowed})
	if err != nil {
		return nil, err
	}
	return q.Values, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
