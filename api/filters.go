package api

import (
	"encoding/base64"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// The operator filters (docs/api-conventions.md): filter[name]=value is
// equality, filter[name][op]=value another operator. Each list's table of
// them (FilterField) says which attributes take which operators and what
// type their values have; parseFilter is the one place that reads them.

// filterType is the type of a filter's values.
type filterType int

const (
	filterText filterType = iota // any text (bounded)
	filterTime                   // an RFC 3339 time
	filterID                     // a record's id (a uuid)
	filterUser                   // a user's id: who last changed the record
)

// FilterField is one attribute of a list's filter table.
type FilterField struct {
	// Column is the SQL column (empty for filterUser).
	Column string
	Type   filterType
	// Ops are the operators taken (models.OpEq is filter[name] itself).
	Ops []models.FilterOp
	// Null lets filter[name]=null ask for records without a value.
	Null bool
	// Values, when set, are the only values the text may take.
	Values []string
}

// The operator sets.
var (
	textOps  = []models.FilterOp{models.OpEq, models.OpContains, models.OpPrefix, models.OpIn}
	enumOps  = []models.FilterOp{models.OpEq, models.OpIn}
	timeOps  = []models.FilterOp{models.OpGt, models.OpGte, models.OpLt, models.OpLte}
	equalOps = []models.FilterOp{models.OpEq}
)

// maxFilterLength bounds a filter's value (runes); maxFilterValues an in list.
const (
	maxFilterLength = 500
	maxFilterValues = 100
)

// filterTables are the operator filters of the lists that take them.
func filterTable(typ string) map[string]FilterField {
	text := func(col string) FilterField { return FilterField{Column: col, Type: filterText, Ops: textOps} }
	ref := func(col string, null bool) FilterField {
		return FilterField{Column: col, Type: filterID, Ops: equalOps, Null: null}
	}
	t := map[string]FilterField{
		"created-at": {Column: "created_at", Type: filterTime, Ops: timeOps},
		"updated-at": {Column: "updated_at", Type: filterTime, Ops: timeOps},
		"user":       {Type: filterUser, Ops: equalOps},
	}
	add := func(fs map[string]FilterField) map[string]FilterField {
		for k, v := range fs {
			t[k] = v
		}
		return t
	}
	switch typ {
	case "pages":
		return add(map[string]FilterField{"title": text("title"), "path": text("path"), "slug": text("slug"),
			"page-type":    {Column: "page_type", Type: filterText, Ops: enumOps, Values: []string{"home", "page", "not_found", "error", "search"}},
			"parent":       ref("parent_id", true),
			"layout":       ref("layout_id", true),
			"published-at": {Column: "published_at", Type: filterTime, Ops: timeOps}})
	case "contents":
		return add(map[string]FilterField{"title": text("title"), "page": ref("page_id", false),
			"published-at": {Column: "published_at", Type: filterTime, Ops: timeOps}})
	case "content-blocks":
		return add(map[string]FilterField{"var-name": text("var_name"), "content": ref("content_id", false),
			"asset":        ref("asset_id", true),
			"data-type":    {Column: "data_type", Type: filterText, Ops: enumOps, Values: []string{"text", "html", "image", "link", "markdown"}},
			"published-at": {Column: "published_at", Type: filterTime, Ops: timeOps}})
	case "assets":
		return add(map[string]FilterField{"title": text("title"), "content-type": text("content_type"),
			"asset-type": {Column: "asset_type", Type: filterText, Ops: enumOps}, "sub-type": {Column: "sub_type", Type: filterText, Ops: enumOps}})
	}
	return nil
}

// operatorFilter is filter[name][op].
var operatorFilter = regexp.MustCompile(`^filter\[([a-z0-9_-]+)\]\[([a-z]+)\]$`)

// parseFilter reads the filter param (filter[name] or filter[name][op])
// of the list's table: known is false for a name the table does not have.
func parseFilter(param, name string, op models.FilterOp, v string, typ string, table map[string]FilterField) (f models.ColumnValue, known bool, err error) {
	field, ok := table[name]
	if !ok {
		return f, false, nil
	}
	bad := func(format string, a ...any) error {
		return jsonapi.BadRequest("invalid_filter", fmt.Sprintf("%s: "+format, append([]any{param}, a...)...)).AtParameter(param)
	}
	if !slices.Contains(field.Ops, op) {
		return f, true, bad("the filter %s does not take the operator %s; it takes %s.", name, op, opNames(field.Ops))
	}
	if utf8.RuneCountInString(v) > maxFilterLength {
		return f, true, bad("the value must be at most %d characters.", maxFilterLength)
	}
	f = models.ColumnValue{Column: field.Column, Value: v, Op: op}
	switch {
	case field.Null && v == "null":
		f.None = true
	case field.Type == filterTime:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return f, true, bad("the value must be an RFC 3339 time (2026-01-31T12:00:00Z).")
		}
		f.Arg = t
	case field.Type == filterID || field.Type == filterUser:
		id, err := uuid.Parse(v)
		if err != nil {
			return f, true, bad("the value must be an id (a UUID)%s.", map[bool]string{true: " or null", false: ""}[field.Null])
		}
		f.Arg = id
		if field.Type == filterUser {
			f.LastUser = typ
		}
	case op == models.OpIn:
		vs := strings.Split(v, ",")
		if len(vs) > maxFilterValues {
			return f, true, bad("at most %d comma-separated values.", maxFilterValues)
		}
		for _, x := range vs {
			if len(field.Values) > 0 && !slices.Contains(field.Values, x) {
				return f, true, bad("%q is not one of %s.", x, strings.Join(field.Values, ", "))
			}
		}
		f.Arg = vs
	case len(field.Values) > 0 && !slices.Contains(field.Values, v):
		return f, true, bad("%q is not one of %s.", v, strings.Join(field.Values, ", "))
	case op == models.OpEq:
		f.Arg = v
	case v == "":
		return f, true, bad("the value must not be empty.")
	}
	return f, true, nil
}

// scopeLocalePaths makes filter[path] of pages, in a request whose
// locale is not the site's base, compare the pages' paths in that locale
// (page_locale_paths), as the path attribute shows them: GET
// /pages?locale-tag=de&filter[path]=/ueber-uns.
func (q *Query) scopeLocalePaths(c *fiber.Ctx) {
	l := drafts.LocaleOf(c.UserContext())
	if q.spec.Type != "pages" || l.IsBase() {
		return
	}
	for i, f := range q.ops {
		if f.Column == "path" {
			q.ops[i].Locale, q.ops[i].SiteID = l.Tag, siteOf(c)
		}
	}
}

func opNames(ops []models.FilterOp) string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = string(op)
		if op == models.OpEq {
			out[i] = "equality"
		}
	}
	return strings.Join(out, ", ")
}

// cursorOf is the page[after]/page[before] cursor of a record id (opaque:
// clients follow links, never build one).
func cursorOf(id string) string { return base64.RawURLEncoding.EncodeToString([]byte("r:" + id)) }

// parseCursor reads a cursorOf; an empty one is uuid.Nil, the list's
// start (page[after]) or end (page[before]).
func parseCursor(param, s string) (uuid.UUID, error) {
	if s == "" {
		return uuid.Nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	id, perr := uuid.Parse(strings.TrimPrefix(string(raw), "r:"))
	if err != nil || perr != nil || !strings.HasPrefix(string(raw), "r:") {
		return uuid.Nil, jsonapi.BadRequest("invalid_page", param+" must be a cursor from this list's links (next or prev).").AtParameter(param)
	}
	return id, nil
}

// searchCursorOf is GET /search's page[after]/page[before] cursor of a
// hit: its rank (a real, written exactly), type and id (opaque, as
// cursorOf).
func searchCursorOf(h models.SearchHit) string {
	rank := strconv.FormatFloat(float64(float32(h.Rank)), 'g', -1, 32)
	return base64.RawURLEncoding.EncodeToString([]byte("s:" + rank + ":" + h.Type + ":" + h.ID.String()))
}

// parseSearchCursor reads a searchCursorOf; an empty one is nil, the
// ranking's start (page[after]) or end (page[before]).
func parseSearchCursor(param, s string) (*models.SearchCursor, error) {
	if s == "" {
		return nil, nil
	}
	bad := jsonapi.BadRequest("invalid_page", param+" must be a cursor from this search's links (next or prev).").AtParameter(param)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	parts := strings.Split(string(raw), ":")
	if err != nil || len(parts) != 4 || parts[0] != "s" || !slices.Contains(models.SearchTypes, parts[2]) {
		return nil, bad
	}
	rank, err := strconv.ParseFloat(parts[1], 32)
	id, ierr := uuid.Parse(parts[3])
	if err != nil || ierr != nil || math.IsNaN(rank) || math.IsInf(rank, 0) {
		return nil, bad
	}
	return &models.SearchCursor{Rank: float32(rank), Type: parts[2], ID: id}, nil
}
