package api

import (
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
)

// siteOf is the caller's site: every record a request reads or writes is scoped by it.
func siteOf(c *fiber.Ctx) uuid.UUID { return oauth.PrincipalOf(c).SiteID }

// timestamp renders a time the way the spec asks: ISO 8601, UTC, milliseconds.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// timestamps are the created-at and updated-at attributes of a resource.
type timestamps struct {
	CreatedAt string `json:"created-at" oas:"date-time"`
	UpdatedAt string `json:"updated-at" oas:"date-time"`
}

func timestampsOf(created, updated time.Time) timestamps {
	return timestamps{CreatedAt: timestamp(created), UpdatedAt: timestamp(updated)}
}

// readOnlyTimestamps are those attributes in a request: the decoder accepts
// them only for checkReadOnly to refuse them with a 422 that points at them.
type readOnlyTimestamps struct {
	CreatedAt any `json:"created-at"`
	UpdatedAt any `json:"updated-at"`
}

// optionalTimestamp is timestamp for a time that may be unset (null).
func optionalTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}

// optionalID is the linkage id of an optional to-one relationship (nil
// when it names nothing).
func optionalID(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

// links builds absolute URLs from the configured public base URL.
type links struct {
	base string
	// query ends the URLs of a record's own links ("?include=draft" for a
	// record that is not live, rendered drafted: its plain URLs read the
	// live view, which does not have it).
	query string
}

// drafted is l for the links of a record only the drafted view has.
func (l links) drafted() links { return links{base: l.base, query: "?include=draft"} }

// previewed is l for the links of a record only a release's preview has
// (one the release creates): they read through the same preview.
func (l links) previewed(release uuid.UUID) links {
	return links{base: l.base, query: "?" + previewParam + "=" + release.String()}
}

func (l links) self(path string) *jsonapi.Links { return &jsonapi.Links{Self: l.base + path + l.query} }

// relationship builds a relationship object with its self and related links.
func (l links) relationship(resourcePath, name string, data []byte) *jsonapi.Relationship {
	// One allocation for the relationship and its links, and one for both
	// URLs (the related one is the tail of the joined text): every rendered
	// resource builds several of these.
	both := l.base + resourcePath + "/relationships/" + name + l.query + l.base + resourcePath + "/" + name + l.query
	self := len(l.base) + len(resourcePath) + len("/relationships/") + len(name) + len(l.query)
	rel := new(struct {
		rel   jsonapi.Relationship
		links jsonapi.Links
	})
	rel.links = jsonapi.Links{Self: both[:self], Related: both[self:]}
	rel.rel = jsonapi.Relationship{Links: &rel.links, Data: data}
	return &rel.rel
}

// respond writes a JSON:API document.
func respond(c *fiber.Ctx, status int, doc jsonapi.Document) error {
	return writeDocument(c, status, doc, false)
}

// writeDocument writes doc, announcing JSON:API 1.1, with its included
// member present (possibly empty) when included is set. jsonapi's Encode
// writes it (what encoding/json would, without reflection: every read ends
// here).
func writeDocument(c *fiber.Ctx, status int, doc jsonapi.Document, included bool) error {
	doc.JSONAPI = jsonapi.V11
	doc.MapLinks = docLinks(c)
	// Encoded into a pooled buffer and copied into the response's own
	// (pooled) body buffer: no per-request copy of the document.
	if err := doc.EncodeTo(included, c.Response().SetBody); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, jsonapi.MediaType)
	c.Status(status)
	return nil
}

// cleanText neutralises free text that is stored and echoed: invalid UTF-8
// and control characters (NUL, newlines, escapes) are dropped, so they can
// reach neither the database (which refuses NUL) nor logs and headers.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// cursorLink is path's link with the query values and the cursor param
// (page[after] or page[before]) set to cursor ("": as asked; "-": no
// cursor, the first page).
func cursorLink(l links, path string, values url.Values, param, cursor string) string {
	v := url.Values{}
	for k, vs := range values {
		v[k] = vs
	}
	if cursor != "" {
		v.Del("page[after]")
		v.Del("page[before]")
	}
	if cursor != "" && cursor != "-" {
		v.Set(param, cursor)
	}
	if len(v) == 0 {
		return l.base + path
	}
	return l.base + path + "?" + v.Encode()
}
