package api

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// localeParam is the query parameter every route takes (docs/locales.md):
// the locale the request reads and writes in, one of the site's locales;
// without it, the site's default locale. JSON:API 1.1 reserves
// all-lowercase names such as "locale", hence the hyphen.
const localeParam = "locale-tag"

// localeWrap serves h in the locale locale-tag names, judged against the
// site's locales that came with the token (oauth.Principal.Locales, so it
// costs no query): 400 invalid_locale for a tag that is no BCP 47 language
// tag, 400 unknown_locale for one the site does not have, both at
// source.parameter locale-tag. The response says the locale in
// Content-Language. The handler finds the locale with drafts.LocaleOf; a
// site with one locale, asked in it, carries none (the zero Locale is the
// base locale, so single-locale requests cost no allocation).
func localeWrap(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		l, err := requestLocale(c)
		if err != nil {
			return err
		}
		if l.Tag != "" {
			c.Set(fiber.HeaderContentLanguage, l.Tag)
		}
		// A site with several locales always carries one, even asked in
		// its base locale: the engine then loads and locks locale drafts
		// (drafts.LoadMany, LockForWrite), which a site with one locale
		// has none of.
		if len(l.Chain) > 1 || l.Tag != l.Base || severalSiteLocales(c) {
			c.SetUserContext(drafts.WithLocale(c.UserContext(), l))
		}
		// A site with several locales: pages' paths in each (locale_paths.go).
		if p, ok := oauth.PrincipalIfAny(c); ok && len(p.Locales.Locales) > 1 {
			c.SetUserContext(drafts.WithSiteLocales(c.UserContext(), p.Locales))
		}
		return h(c)
	}
}

// severalSiteLocales tells whether c's site has more than one locale.
func severalSiteLocales(c *fiber.Ctx) bool {
	p, ok := oauth.PrincipalIfAny(c)
	return ok && len(p.Locales.Locales) > 1
}

// requestLocale is the locale c asks for: locale-tag's, or the default.
func requestLocale(c *fiber.Ctx) (drafts.Locale, error) {
	var site models.SiteLocales
	if p, ok := oauth.PrincipalIfAny(c); ok {
		site = p.Locales
	}
	args := c.Request().URI().QueryArgs()
	tag := site.Default()
	if args.Has(localeParam) {
		if vs := args.PeekMulti(localeParam); len(vs) > 1 {
			return drafts.Locale{}, jsonapi.BadRequest("repeated_parameter", fmt.Sprintf("The query parameter %q is given more than once.", localeParam)).AtParameter(localeParam)
		}
		raw := string(args.Peek(localeParam))
		// One of the site's tags, in any case, is well-formed and
		// canonical in the site's spelling: no parse on a localized read.
		var ok bool
		if tag, ok = site.Find(raw); ok {
			return drafts.Locale{Tag: tag, Base: site.Base, Default: site.Default(), Chain: site.Chain(tag)}, nil
		}
		canonical, err := models.CanonicalTag(raw)
		if err != nil {
			return drafts.Locale{}, jsonapi.BadRequest("invalid_locale", "locale-tag must be a BCP 47 language tag such as de or fr-CA.").AtParameter(localeParam)
		}
		if tag, ok = site.Find(canonical); !ok {
			e := jsonapi.BadRequest("unknown_locale", fmt.Sprintf("This site has no locale %s; its locales are %s.", canonical, strings.Join(site.Locales, ", "))).AtParameter(localeParam)
			e.Meta = map[string]any{"locales": site.Locales}
			return drafts.Locale{}, e
		}
	}
	if tag == "" { // no principal, or one made without the site's locales (tests)
		return drafts.Locale{}, nil
	}
	return drafts.Locale{Tag: tag, Base: site.Base, Default: site.Default(), Chain: site.Chain(tag)}, nil
}
