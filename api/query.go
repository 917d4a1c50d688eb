package api

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// Pagination defaults (DESIGN.md §2).
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// page is a requested page of a collection.
type page struct{ number, size int }

func (p page) offset() int { return (p.number - 1) * p.size }

// queryParams checks a request's query string against the parameters an
// endpoint understands: anything else is 400, as JSON:API asks.
func queryParams(c *fiber.Ctx, allowed ...string) (url.Values, error) {
	q, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return nil, jsonapi.BadRequest("invalid_query", "The query string is malformed.")
	}
	for name, values := range q {
		ok := false
		for _, a := range allowed {
			if name == a {
				ok = true
			}
		}
		if !ok {
			return nil, jsonapi.BadRequest("unknown_parameter", fmt.Sprintf("The query parameter %q is not supported here.", name)).AtParameter(name)
		}
		if len(values) > 1 {
			return nil, jsonapi.BadRequest("repeated_parameter", fmt.Sprintf("The query parameter %q is given more than once.", name)).AtParameter(name)
		}
	}
	return q, nil
}

// pageOf reads page[number] and page[size].
func pageOf(q url.Values) (page, error) {
	p := page{number: 1, size: defaultPageSize}
	for name, dst := range map[string]*int{"page[number]": &p.number, "page[size]": &p.size} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || (name == "page[size]" && n > maxPageSize) || n > 1_000_000 {
			return p, jsonapi.BadRequest("invalid_page", fmt.Sprintf("%s must be a whole number from 1 to %d.", name, map[bool]int{true: maxPageSize, false: 1_000_000}[name == "page[size]"])).AtParameter(name)
		}
		*dst = n
	}
	return p, nil
}

// pageLinks builds first/prev/next/last links for a collection at path.
func (l links) page(path string, p page, total int) *jsonapi.Links {
	last := max(1, (total+p.size-1)/p.size)
	at := func(n int) string {
		return fmt.Sprintf("%s%s?page%%5Bnumber%%5D=%d&page%%5Bsize%%5D=%d", l.base, path, n, p.size)
	}
	out := &jsonapi.Links{Self: at(p.number), First: at(1), Last: at(last)}
	if p.number > 1 {
		out.Prev = at(min(p.number-1, last))
	}
	if p.number < last {
		out.Next = at(p.number + 1)
	}
	return out
}

// includes parses include against the paths an endpoint supports.
func includes(q url.Values, supported ...string) (map[string]bool, error) {
	out := map[string]bool{}
	raw := q.Get("include")
	if !q.Has("include") {
		return out, nil
	}
	for _, path := range strings.Split(raw, ",") {
		ok := false
		for _, s := range supported {
			if path == s {
				ok = true
			}
		}
		if !ok {
			return nil, jsonapi.BadRequest("unknown_include", fmt.Sprintf("Cannot include %q here.", path)).AtParameter("include")
		}
		out[path] = true
	}
	return out, nil
}
