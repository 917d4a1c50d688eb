package api

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

// Preview links (issue 29 §3, docs/releases.md "Preview links"): GET and
// POST /preview-links, GET and DELETE /preview-links/:id. Anyone who may
// read the site sees the site's links (never their tokens); authors and
// up (PermEdit) make and revoke them. What a link serves is
// preview_gate.go.

type previewLinkAttributes struct {
	// URL and Token are only in the answer that made the link (201); null
	// ever after: only the token's hash is stored.
	URL        *string `json:"url"`
	Token      *string `json:"token"`
	ExpiresAt  string  `json:"expires-at" oas:"date-time"`
	LastUsedAt *string `json:"last-used-at" oas:"date-time"`
	UsesCount  int64   `json:"uses-count"`
	// Locale is the locale the link shows the release in when a read
	// through it sends no locale-tag; null: the site's default.
	Locale    *string `json:"locale" oas:"nullable"`
	CreatedAt string  `json:"created-at" oas:"date-time"`
}

// previewLinkRequest is what POST /preview-links accepts.
type previewLinkRequest struct {
	ExpiresAt *string `json:"expires-at" oas:"date-time"`
	// Locale: one of the site's locales (docs/locales.md); optional.
	Locale *string `json:"locale" oas:"nullable"`
	// Read-only, accepted only to be refused with a pointer at them.
	URL        any `json:"url"`
	Token      any `json:"token"`
	LastUsedAt any `json:"last-used-at"`
	UsesCount  any `json:"uses-count"`
	readOnlyTimestamps
}

// previewLinkFields are the validated attributes: when the link expires,
// and the locale as sent (judged against the site's in create).
type previewLinkFields struct {
	expiresAt time.Time
	locale    *string
}

func (r previewLinkRequest) validate(sent map[string]bool, _ bool) (f previewLinkFields, err error) {
	if err = checkReadOnly(sent, "url", "token", "last-used-at", "uses-count"); err != nil {
		return f, err
	}
	f.locale = r.Locale
	now := time.Now()
	f.expiresAt = now.Add(models.PreviewLinkDefaultTTL)
	if !sent["expires-at"] {
		return f, nil
	}
	bad := invalidAttr("expires-at", "invalid_expires_at", "expires-at must be an RFC 3339 time in the future, at most 30 days ahead.")
	if r.ExpiresAt == nil {
		return f, bad
	}
	t, perr := time.Parse(time.RFC3339Nano, *r.ExpiresAt)
	if perr != nil || !t.After(now) || t.After(now.Add(models.PreviewLinkMaxTTL)) {
		return f, bad
	}
	f.expiresAt = t
	return f, nil
}

func previewLinkSpec(collection bool) QuerySpec {
	s := QuerySpec{Fields: fieldsOf("preview-links"), Includes: includesOf("preview-links")}
	if collection {
		s.Collection = true
		s.Sorts = map[string]string{"created-at": "created_at"}
		s.DefaultSort = models.OrderNewest
	}
	return s
}

type previewLinksHandler struct {
	db    *bun.DB
	links links
	cat   *catalog
}

// previewURL is the url of the link with token: reads go below it.
func (l links) previewURL(token string) string { return l.base + previewPrefix + token }

// resource renders pl; token is the link's token when this answer made it.
func (h previewLinksHandler) resource(pl *models.PreviewLink, token *string) *jsonapi.Resource {
	p := "/preview-links/" + pl.ID.String()
	a := previewLinkAttributes{ExpiresAt: timestamp(pl.ExpiresAt), UsesCount: pl.UsesCount, CreatedAt: timestamp(pl.CreatedAt), Locale: pl.Locale}
	if pl.LastUsedAt != nil {
		s := timestamp(*pl.LastUsedAt)
		a.LastUsedAt = &s
	}
	if token != nil {
		u := h.links.previewURL(*token)
		a.URL, a.Token = &u, token
	}
	release := pl.ReleaseID.String()
	var user *string
	if pl.UserID != nil {
		s := pl.UserID.String()
		user = &s
	}
	return &jsonapi.Resource{Type: "preview-links", ID: pl.ID.String(), Links: h.links.self(p), Attributes: a,
		Relationships: map[string]*jsonapi.Relationship{
			"release": h.links.relationship(p, "release", jsonapi.ToOne("releases", &release)),
			"user":    h.links.relationship(p, "user", jsonapi.ToOne("users", user)),
		}}
}

func (h previewLinksHandler) rows(token *string) rowRenderer[models.PreviewLink] {
	return rowRenderer[models.PreviewLink]{cat: h.cat, render: renderEach(func(pl *models.PreviewLink) *jsonapi.Resource {
		return h.resource(pl, token)
	})}
}

func (h previewLinksHandler) load(c *fiber.Ctx) (*models.PreviewLink, error) {
	return loadByID(c, h.db, "preview link", models.FindPreviewLink)
}

// create serves POST /preview-links: the answer shows the url and the
// token, once.
func (h previewLinksHandler) create(c *fiber.Ctx) error {
	req, err := readCreate[previewLinkRequest, previewLinkFields](c, previewLinkSpec(false), "preview-links", relNames{writable: []string{"release"}, readOnly: []string{"user"}})
	if err != nil {
		return err
	}
	release, err := readRequiredToOne(req.data.Relationships, "release", "releases", "release", "release the link shows")
	if err != nil {
		return err
	}
	pr := oauth.PrincipalOf(c)
	locale, err := linkLocale(pr.Locales, req.fields.locale)
	if err != nil {
		return err
	}
	var pl *models.PreviewLink
	var token string
	if err := runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		pl, token, err = models.CreatePreviewLink(ctx, tx, pr.SiteID, release, models.Person(pr.UserID), req.fields.expiresAt, locale)
		return err
	}); err != nil {
		return err
	}
	return h.rows(&token).respondOne(c, req.q, fiber.StatusCreated, pl)
}

// linkLocale judges a link's locale as sent: one of the site's
// (case-insensitively; the site's spelling is kept), or nil. 422
// invalid_locale or unknown_locale at /data/attributes/locale otherwise.
func linkLocale(site models.SiteLocales, sent *string) (*string, error) {
	if sent == nil {
		return nil, nil
	}
	canonical, err := models.CanonicalTag(*sent)
	if err != nil {
		return nil, invalidAttr("locale", "invalid_locale", "locale must be a BCP 47 language tag such as de or fr-CA.")
	}
	tag, ok := site.Find(canonical)
	if !ok {
		e := invalidAttr("locale", "unknown_locale", fmt.Sprintf("This site has no locale %s; its locales are %s.", canonical, strings.Join(site.Locales, ", ")))
		e.Meta = map[string]any{"locales": site.Locales}
		return nil, e
	}
	return &tag, nil
}

// registerPreviewLinkRoutes registers /preview-links.
func registerPreviewLinkRoutes(r routes) {
	h := previewLinksHandler{db: r.deps.DB, links: r.links, cat: r.cat}
	r.get("/preview-links", models.PermRead, h.rows(nil).list(previewLinkSpec(true), r.links, "/preview-links", r.deps.DB, models.ListPreviewLinks))
	r.post("/preview-links", models.PermEdit, h.create)
	r.get("/preview-links/:id", models.PermRead, h.rows(nil).get(previewLinkSpec(false), h.load))
	// DELETE revokes: the link stops working at once, on every replica
	// (each request through a link reads its row).
	r.delete("/preview-links/:id", models.PermEdit, deleteRow(h.db, "preview link", models.RevokePreviewLink))
	r.cat.add(&resourceType{typ: "preview-links", what: "preview link",
		fetch: fetchRows(h.db, models.PreviewLinksByIDs, renderEach(func(pl *models.PreviewLink) *jsonapi.Resource { return h.resource(pl, nil) }))})
}
