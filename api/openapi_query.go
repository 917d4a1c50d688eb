package api

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

// The query parameters an operation is described with are the QuerySpec
// its handler parses with: New probes every route's handler once, with a
// request that carries queryProbe, and parseQuery hands the probe its spec
// instead of parsing (errQueryProbe). A handler answers the probe before
// anything else it does: parseQuery comes first in every handler that
// takes a query (readCreate, readPatch, serveOne, the catalog's readers),
// and one that takes none records nothing (no parameters described). A
// handler that reads its record first (idParam, loadByID) is given the nil
// id and an empty record while probed, so it goes on to its query.
// Public routes (OAuth, health, docs) take no JSON:API query and are not
// probed.

// queryProbe records the spec parseQuery was called with.
type queryProbe struct {
	spec QuerySpec
	seen bool
}

type queryProbeKey struct{}

var errQueryProbe = errors.New("api: query probe")

// probing tells whether c is a probe: idParam answers the nil id and
// loadByID an empty record, so a handler that reads its record before its
// query reaches the query.
func probing(c *fiber.Ctx) bool {
	_, ok := c.Locals(queryProbeKey{}).(*queryProbe)
	return ok
}

// probed hands c's probe, if it has one, the spec.
func probed(c *fiber.Ctx, spec QuerySpec) bool {
	p, ok := c.Locals(queryProbeKey{}).(*queryProbe)
	if ok {
		p.spec, p.seen = spec, true
	}
	return ok
}

// probeQuerySpecs is the QuerySpec of every route whose handler parses a
// query, keyed "METHOD /path" as registered.
func probeQuerySpecs(app *fiber.App) map[string]QuerySpec {
	out := map[string]QuerySpec{}
	for _, r := range app.GetRoutes(true) {
		if r.Method == fiber.MethodHead || specialRoutes[r.Method+" "+r.Path].public {
			continue // OAuth, health, docs: no JSON:API query, and handlers not to run
		}
		for _, h := range r.Handlers {
			if spec, ok := probeQuery(app, h); ok {
				out[r.Method+" "+r.Path] = spec
				break
			}
		}
	}
	return out
}

// probeQuery runs h with a probe: no token, no body, no path parameters, a
// principal of no site and a context already cancelled, so a handler that
// reaches for anything but its query fails at once (a panic is caught).
func probeQuery(app *fiber.App, h fiber.Handler) (spec QuerySpec, ok bool) {
	c := app.AcquireCtx(&fasthttp.RequestCtx{})
	defer app.ReleaseCtx(c)
	p := &queryProbe{}
	c.Locals(queryProbeKey{}, p)
	oauth.WithPrincipal(c, &oauth.Principal{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.SetUserContext(ctx)
	func() {
		defer func() { _ = recover() }()
		_ = h(c)
	}()
	return p.spec, p.seen
}

// extraParams describe QuerySpec.Extra parameters, by name.
var extraParams = map[string]map[string]any{
	"filter[user]":            {"description": "Only events by this user (a user id).", "schema": map[string]any{"type": "string", "format": "uuid"}},
	"filter[oauth-client]":    {"description": "Only events by this integration client: its oauth-clients id, or its client-id (which still names a deleted client).", "schema": map[string]any{"type": "string", "example": "0b7c5f2e-6f1c-4d55-9b8e-3f4a2d1c0e9b"}},
	"filter[item]":            {"description": "Only events about this record: type:id, such as pages:0b7c….", "schema": map[string]any{"type": "string", "example": "pages:0b7c5f2e-6f1c-4d55-9b8e-3f4a2d1c0e9b"}},
	"filter[action]":          {"description": "Only events of this action, such as pages.update or auth.sign-in-failed.", "schema": map[string]any{"type": "string", "example": "pages.update"}},
	"filter[created-at][gte]": {"description": "Only events at or after this time (RFC 3339).", "schema": map[string]any{"type": "string", "format": "date-time"}},
	"filter[created-at][lt]":  {"description": "Only events before this time (RFC 3339).", "schema": map[string]any{"type": "string", "format": "date-time"}},
	"page[after]":             {"description": "The cursor of the page to answer: links.next of the page before (opaque). Without it, the newest events.", "schema": map[string]any{"type": "string"}},
	"page[size]":              {"description": fmt.Sprintf("Events per page, at most %d.", maxPageSize), "schema": map[string]any{"type": "integer", "minimum": 1, "maximum": maxPageSize, "default": defaultPageSize}},
	"as-of": {"description": "The record as it was live at this point: a version id of the record, or a time (RFC 3339); meta.version-id names the version. 404 when the record did not exist then.",
		"schema": map[string]any{"type": "string", "example": "2026-11-28T07:00:00Z"}},
	"filter[trashed]": {"description": "true: the trash, the records whose deletion a revision published (kept PRESSROOM_TRASH_RETENTION, 30 days by default), the latest deleted first, each as it was just before with trashed-at (when the deletion was published), relationship trashed-by (the revision) and meta.version-id (its delete version: POST /versions/:id/restore on it, or on the version before, drafts it back). Takes only page, include, fields and locale-tag (its localized attributes in that locale, with meta.fallbacks); the records have no links (GET of one is 404). docs/history.md.",
		"schema": map[string]any{"type": "string", "enum": []any{"true", "false"}}},
	"filter[locale]": {"description": "Only the drafts (or versions) of this locale, one of the site's (compared case-insensitively); the base locale's are the shared ones (locale null). 400 unknown_locale for another tag. docs/locales.md.",
		"schema": map[string]any{"type": "string", "example": "de"}},
	"replace-draft": {"description": "true: a pending draft of the record is reverted and replaced by the restore (409 draft_pending otherwise).",
		"schema": map[string]any{"type": "string", "enum": []any{"true", "false"}}},
	"wait": {"description": "Long poll: wait up to this long (a duration such as 5s or 1500ms, or seconds; at most " +
		maxUploadWait.String() + ") for a processing upload to finish before answering.", "schema": map[string]any{"type": "string", "example": "10s"}},
}

// queryParameters describes spec as OpenAPI parameters: include paths,
// fields[TYPE] per type (with the members schemas names), sort keys,
// filter[NAME] and page[number]/page[size] for a collection, and extras.
func (b *specBuilder) queryParameters(spec QuerySpec) []any {
	var out []any
	list := func(name, description string, values []string) {
		items := map[string]any{"type": "string"}
		if len(values) > 0 {
			items["enum"] = values
		}
		out = append(out, map[string]any{"name": name, "in": "query", "description": description, "style": "form", "explode": false,
			"schema": map[string]any{"type": "array", "items": items, "uniqueItems": true}})
	}
	if len(spec.Includes) > 0 {
		list("include", "Related resources to add to `included` (comma-separated relationship paths).", spec.Includes)
	}
	for _, typ := range spec.Fields {
		list("fields["+typ+"]", "Sparse fieldset: only these members of "+typ+" resources (comma-separated).", b.memberNames(typ))
	}
	if !spec.Collection {
		return append(out, b.extraParameters(spec)...)
	}
	if len(spec.Sorts) > 0 {
		var keys []string
		for _, k := range slices.Sorted(mapKeys(spec.Sorts)) {
			keys = append(keys, k, "-"+k)
		}
		list("sort", "Sort keys, comma-separated, most significant first; a leading - sorts descending.", keys)
	}
	if spec.Search != "" {
		out = append(out, map[string]any{"name": "filter[q]", "in": "query",
			"description": fmt.Sprintf("Full-text search (docs/search.md): only records whose text matches every word (by stem, by prefix from %d letters, case- and accent-insensitively), most relevant first unless sort is given; each carries meta.search (rank, and highlight: the matching fragments, matches in <mark>, the rest HTML-escaped). With include=draft the drafted values are searched. With locale-tag, each locale of its chain is matched with its language's stemmer and a record only in the first locale it has values in (docs/locales.md, \"Searching in a locale\"); meta.search.locale names it. 1 to %d words, at most %d characters.", 3, models.MaxSearchTerms, models.MaxSearchLength),
			"schema":      map[string]any{"type": "string", "minLength": 1, "maxLength": models.MaxSearchLength, "example": "photography tips"}})
	}
	for _, name := range slices.Sorted(mapKeys(spec.Filters)) {
		out = append(out, map[string]any{"name": "filter[" + name + "]", "in": "query",
			"description": "Only records whose " + name + " equals this value.", "schema": map[string]any{"type": "string"}})
	}
	out = append(out, operatorParameters(spec.Operators)...)
	if spec.Search == searchEveryType {
		out = append(out,
			map[string]any{"name": "page[after]", "in": "query", "description": "Page by cursor: the hits after this one in the ranking (rank descending, then type and id; a cursor from links.next; opaque). Empty: from the first hit. No meta.total. Not with page[number].",
				"schema": map[string]any{"type": "string"}},
			map[string]any{"name": "page[before]", "in": "query", "description": "Page by cursor: the hits before this one in the ranking (a cursor from links.prev; opaque). Empty: the last page. Not with page[number] or page[after].",
				"schema": map[string]any{"type": "string"}})
	}
	if spec.cursors() {
		out = append(out,
			map[string]any{"name": "page[after]", "in": "query", "description": "Page by cursor: the records after this one, in the list's order (a cursor from links.next; opaque). Empty: from the start. No meta.total. Not with page[number] or filter[q] (a search of one type is paged by number; GET /search takes a cursor).",
				"schema": map[string]any{"type": "string"}},
			map[string]any{"name": "page[before]", "in": "query", "description": "Page by cursor: the records before this one, in the list's order (a cursor from links.prev; opaque). Empty: the last page. Not with page[number], page[after] or filter[q].",
				"schema": map[string]any{"type": "string"}})
	}
	out = append(out,
		map[string]any{"name": "page[number]", "in": "query", "description": "The page to answer, from 1.",
			"schema": map[string]any{"type": "integer", "minimum": 1, "maximum": 1_000_000, "default": 1}},
		map[string]any{"name": "page[size]", "in": "query", "description": fmt.Sprintf("Records per page, at most %d.", maxPageSize),
			"schema": map[string]any{"type": "integer", "minimum": 1, "maximum": maxPageSize, "default": defaultPageSize}})
	return append(out, b.extraParameters(spec)...)
}

// operatorParameters describe a list's operator filters (filters.go): one
// parameter per filter and operator.
func operatorParameters(table map[string]FilterField) []any {
	var out []any
	for _, name := range slices.Sorted(mapKeys(table)) {
		f := table[name]
		for _, op := range f.Ops {
			param, schema := "filter["+name+"]", map[string]any{"type": "string"}
			if op != models.OpEq {
				param += "[" + string(op) + "]"
			}
			what := name
			switch f.Type {
			case filterTime:
				schema["format"] = "date-time"
			case filterID, filterUser:
				schema["format"] = "uuid"
			}
			if f.Type == filterUser {
				what = "last changer (the user of the pending draft with include=draft, else of the last published version; an asset's uploader)"
			}
			if f.Null {
				schema = map[string]any{"anyOf": []any{schema, map[string]any{"type": "string", "enum": []any{"null"}}}}
			}
			if len(f.Values) > 0 && op == models.OpEq {
				schema["enum"] = f.Values
			}
			out = append(out, map[string]any{"name": param, "in": "query", "description": operatorDoc(op, what, f.Null), "schema": schema})
		}
	}
	return out
}

// operatorDoc is the description of filter[what][op].
func operatorDoc(op models.FilterOp, what string, null bool) string {
	s := map[models.FilterOp]string{
		models.OpEq:       "Only records whose " + what + " equals this value.",
		models.OpContains: "Only records whose " + what + " contains this text, case-insensitively (% and _ match themselves).",
		models.OpPrefix:   "Only records whose " + what + " starts with this text (case-sensitive; % and _ match themselves).",
		models.OpIn:       "Only records whose " + what + " is one of these comma-separated values.",
		models.OpGt:       "Only records whose " + what + " is after this time (RFC 3339).",
		models.OpGte:      "Only records whose " + what + " is at or after this time (RFC 3339).",
		models.OpLt:       "Only records whose " + what + " is before this time (RFC 3339).",
		models.OpLte:      "Only records whose " + what + " is at or before this time (RFC 3339).",
	}[op]
	if null {
		s += " null: only records without one."
	}
	return s
}

func (b *specBuilder) extraParameters(spec QuerySpec) []any {
	var out []any
	for _, name := range spec.Extra {
		p := map[string]any{"name": name, "in": "query", "schema": map[string]any{"type": "string"}}
		for k, v := range extraParams[name] {
			p[k] = v
		}
		out = append(out, p)
	}
	return out
}

// memberNames are the attribute and relationship names of typ, as its
// schemas describe them (none known: any name).
func (b *specBuilder) memberNames(typ string) []string {
	var names []string
	if attrs, ok := b.schemas[schemaName(typ)+"Attributes"].(map[string]any); ok {
		if props, ok := attrs["properties"].(map[string]any); ok {
			names = slices.Collect(mapKeys(props))
		}
		if len(names) == 0 {
			return nil
		}
	}
	res, _ := b.schemas[schemaName(typ)].(map[string]any)
	if rels, ok := res["properties"].(map[string]any)["relationships"].(map[string]any); ok {
		for name := range rels["properties"].(map[string]any) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
