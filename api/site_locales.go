package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// localeChange is the locale part of a PATCH /site (docs/locales.md):
// locales, locale-fallbacks and require-default-locale as sent, judged
// all at once (422 with a pointer each: invalid_locales, invalid_locale,
// duplicate_locale, locale_fallback_cycle, too_many_fallbacks), and
// meta.force (a boolean: remove locales with content anyway).
func localeChange(c *fiber.Ctx, sent map[string]bool, attrs siteUpdate, meta map[string]any) (models.SiteChange, error) {
	var change models.SiteChange
	var errs models.Errors
	if sent["locales"] {
		if attrs.Locales == nil || len(*attrs.Locales) < 1 || len(*attrs.Locales) > models.MaxLocales {
			return change, jsonapi.Unprocessable("invalid_locales", fmt.Sprintf("locales must list 1 to %d BCP 47 language tags.", models.MaxLocales)).AtPointer("/data/attributes/locales")
		}
		errs = append(errs, checkLocaleList(*attrs.Locales)...)
		change.Locales = attrs.Locales
	}
	if sent["locale-fallbacks"] {
		fallbacks := map[string]string{}
		if attrs.LocaleFallbacks != nil {
			fallbacks = *attrs.LocaleFallbacks
		}
		order := oauth.PrincipalOf(c).Locales.Locales
		if change.Locales != nil {
			order = *change.Locales
		}
		for _, fe := range models.CheckFallbacks(order, fallbacks) {
			at := "locale-fallbacks"
			if fe.Key != "" {
				at += "/" + fe.Key // tags hold no ~ or /: nothing to escape (RFC 6901)
			}
			errs = append(errs, &models.Error{Kind: models.ErrInvalid, Code: fe.Code, At: models.Attr(at), Detail: fe.Detail})
		}
		change.Fallbacks = &fallbacks
	}
	if sent["require-default-locale"] {
		if attrs.RequireDefaultLocale == nil {
			errs = append(errs, models.Invalid("require-default-locale", "invalid_require_default_locale", "require-default-locale is true or false."))
		}
		change.RequireDefault = attrs.RequireDefaultLocale
	}
	if len(errs) > 0 {
		return change, errs
	}
	if f, ok := meta["force"]; ok {
		force, isBool := f.(bool)
		if !isBool {
			return change, jsonapi.Unprocessable("invalid_force", "meta.force must be true or false.").AtPointer("/meta/force")
		}
		change.Force = force
	}
	return change, nil
}

// checkLocaleList judges a site's locales: each a canonical BCP 47 tag
// (invalid_locale, the detail naming the canonical spelling), none twice
// (duplicate_locale at the second).
func checkLocaleList(locales []string) models.Errors {
	var errs models.Errors
	seen := map[string]bool{}
	for i, tag := range locales {
		at := "locales/" + strconv.Itoa(i)
		canonical, err := models.CanonicalTag(tag)
		switch {
		case err != nil || canonical != tag:
			errs = append(errs, models.Invalid(at, "invalid_locale", models.TagRule(tag)))
		case seen[strings.ToLower(canonical)]:
			errs = append(errs, models.Invalid(at, "duplicate_locale", fmt.Sprintf("%s is listed twice.", tag)))
		}
		seen[strings.ToLower(canonical)] = true
	}
	return errs
}

// localePathsOf re-derives the site's per-locale paths after change moved
// its locales or fallbacks, in its transaction: a live page that would
// share a path with another in some locale is 409 path_taken at the
// attribute sent (locale-fallbacks, or locales), meta naming the locale,
// the path and both pages.
func localePathsOf(ctx context.Context, tx bun.Tx, siteID uuid.UUID, change models.SiteChange) error {
	err := drafts.RefreshSiteLocalePaths(ctx, tx, siteID)
	var pe *drafts.PublishError
	if !errors.As(err, &pe) || pe.Code != drafts.PathTaken {
		return err
	}
	at := "locales"
	if change.Fallbacks != nil {
		at = "locale-fallbacks"
	}
	return &models.Error{Kind: models.ErrConflict, Code: drafts.PathTaken, At: models.Attr(at), Meta: pe.Meta,
		Detail: fmt.Sprintf("Two live pages would have the path %v in locale %v.", pe.Meta["path"], pe.Meta["locale"])}
}

// fallbacksOf is the site's locale-fallbacks as rendered: {} rather than null.
func fallbacksOf(s *models.ThemedSite) map[string]string {
	if s.LocaleFallbacks == nil {
		return map[string]string{}
	}
	return s.LocaleFallbacks
}
