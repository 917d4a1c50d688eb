package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/readcache"
)

// cachedReads answers GET /<kind>/:id of a live record, or of a record in
// a release's preview (preview-release), from the process's read cache
// (package readcache, docs/caching.md), and fills it from the handler's
// answer. Only reads whose answer is the record's document and nothing
// else: no include (which reads other tables), no include=draft, no as-of,
// no preview link's reads (whose links differ; the route's cache does not
// wrap them), no parameter the cache does not know (a future one bypasses
// it until it is named here); fields[...] and preview-release are part of
// the key, the URL as sent. The answer does not depend on the principal
// beyond the route's permission, which require checked before this runs
// (as for sharedReads). A preview's answer is kept only when its set is
// self-contained (drafts.PreviewSetOf): it then depends on the site's rows
// and drafts and the release's row, whose every change notifies the site
// (migrations 20261202050000 and 20261203060000); any other set may be
// served kept for a moment after a live row changed (previewTTL).
// A document in a locale (locale-tag, docs/locales.md) is its own entry:
// the key names the locale read, as resolved by localeWrap (which runs
// before the cache), beside the URL (which names it only when sent), so no
// read is answered in another locale's document; a change of the site's
// locales drops the site's entries (migration 20261202060000).
type cachedReads struct{ cache *readcache.Cache }

func (r cachedReads) wrap(h fiber.Handler) fiber.Handler {
	if r.cache == nil {
		return h
	}
	return func(c *fiber.Ctx) error {
		if !liveDocumentRead(c) {
			return h(c)
		}
		// A copy: Fiber's strings point into the request's buffer, which
		// the next request on the connection reuses.
		siteID, key := siteOf(c), cacheKey(c)
		var res readcache.Response
		var ok bool
		if oauth.PrincipalOf(c).CacheSynced() {
			res, ok = r.cache.Synced(siteID, key) // the token's Get waited
		} else {
			res, ok, _ = r.cache.Get(c.UserContext(), siteID, key)
		}
		if ok {
			c.Status(res.Status)
			c.Set(fiber.HeaderContentType, res.ContentType)
			c.Set(fiber.HeaderETag, res.ETag)
			return c.Send(res.Body)
		}
		// Begun before the handler reads: a change notified from now on
		// keeps this answer out of the cache.
		fill := r.cache.Begin(siteID)
		stored := false
		defer func() {
			if !stored {
				fill.End() // also after a panic: the site's fill count stays true
			}
		}()
		err := h(c)
		resp := c.Response()
		if err != nil || resp.StatusCode() != fiber.StatusOK {
			return err
		}
		if previewed, selfContained := drafts.PreviewSetOf(c.UserContext()); previewed && !selfContained {
			return nil // fill.End, deferred
		}
		stored = true
		fill.Store(key, readcache.Response{
			Status:      fiber.StatusOK,
			ContentType: string(resp.Header.ContentType()),
			ETag:        string(resp.Header.Peek(fiber.HeaderETag)),
			Body:        append([]byte(nil), resp.Body()...),
		})
		return nil
	}
}

// cacheKey is c's entry in the read cache: its URL as sent, and on a site
// with several locales the locale read (none on a site with one: the
// key is the URL, as before locales existed).
func cacheKey(c *fiber.Ctx) string {
	if tag := drafts.LocaleOf(c.UserContext()).Tag; tag != "" {
		return tag + " " + c.OriginalURL()
	}
	return strings.Clone(c.OriginalURL())
}

// liveDocumentRead tells whether c reads the document of one record, live
// or in a release's preview, with nothing but sparse fieldsets and a
// locale: what the cache may answer.
func liveDocumentRead(c *fiber.Ctx) bool {
	if c.Method() != fiber.MethodGet || drafts.PreviewIdentity(c.UserContext()) != "" || docLinks(c) != nil {
		return false
	}
	ok := true
	c.Request().URI().QueryArgs().VisitAll(func(k, _ []byte) {
		if !strings.HasPrefix(string(k), "fields[") && string(k) != previewParam && string(k) != localeParam {
			ok = false
		}
	})
	return ok
}
