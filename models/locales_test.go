package models_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/models"
)

func TestCanonicalTag(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"en": "en", "EN": "en", "en-us": "en-US", "fr-CA": "fr-CA",
		"zh-hant-tw": "zh-Hant-TW", "iw": "he", "de-1996": "de-1996"} {
		if got, err := models.CanonicalTag(in); err != nil || got != want {
			t.Errorf("CanonicalTag(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "und", "x-pig", "de-x-foo", "de-u-co-phonebk", "not a tag", "e", "en_US",
		"de-" + strings.Repeat("a", 40), "12"} {
		if got, err := models.CanonicalTag(bad); !errors.Is(err, models.ErrMalformedTag) {
			t.Errorf("CanonicalTag(%q) = %q, %v; want ErrMalformedTag", bad, got, err)
		}
	}
}

func TestCheckFallbacks(t *testing.T) {
	t.Parallel()
	locales := []string{"en", "de", "fr", "fr-CA"}
	type want struct{ key, code string }
	for name, c := range map[string]struct {
		fallbacks map[string]string
		want      []want
	}{
		"none":       {nil, nil},
		"chain":      {map[string]string{"fr-CA": "fr", "fr": "en"}, nil},
		"self":       {map[string]string{"de": "de"}, []want{{"de", "locale_fallback_cycle"}}},
		"cycle of 2": {map[string]string{"fr-CA": "fr", "fr": "fr-CA"}, []want{{"fr", "locale_fallback_cycle"}}},
		"cycle of 3": {map[string]string{"de": "fr", "fr": "fr-CA", "fr-CA": "de"}, []want{{"de", "locale_fallback_cycle"}}},
		// A tag leading into a cycle is not on it: the cycle is reported once.
		"into a cycle": {map[string]string{"en": "de", "de": "fr", "fr": "de"}, []want{{"de", "locale_fallback_cycle"}}},
		// Not site locales: chains may pass through them (fr-CA → pt → en).
		"unknown tags":  {map[string]string{"fr-CA": "pt", "pt": "en"}, nil},
		"unknown cycle": {map[string]string{"pt": "es", "es": "pt"}, []want{{"es", "locale_fallback_cycle"}}},
		"malformed":     {map[string]string{"fr-CA": "not a tag", "de-de": "en"}, []want{{"fr-CA", "invalid_locale"}, {"de-de", "invalid_locale"}}},
	} {
		got := models.CheckFallbacks(locales, c.fallbacks)
		var g []want
		for _, e := range got {
			g = append(g, want{e.Key, e.Code})
		}
		if !slices.Equal(g, c.want) {
			t.Errorf("%s: CheckFallbacks = %v, want %v", name, g, c.want)
		}
	}
	got := models.CheckFallbacks(locales, map[string]string{"fr-CA": "fr", "fr": "fr-CA"})
	if len(got) != 1 || got[0].Detail != "locale-fallbacks must not go round in a circle: fr → fr-CA → fr." {
		t.Errorf("cycle detail: %+v", got)
	}
}

func TestChainsOf(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		locales   []string
		fallbacks map[string]string
		want      map[string][]string
	}{
		"one":   {[]string{"en"}, nil, map[string][]string{"en": {"en"}}},
		"plain": {[]string{"en", "de"}, nil, map[string][]string{"en": {"en"}, "de": {"de", "en"}}},
		"issue": {[]string{"en", "de", "fr", "fr-CA"}, map[string]string{"fr-CA": "fr", "fr": "en"},
			map[string][]string{"en": {"en"}, "de": {"de", "en"}, "fr": {"fr", "en"}, "fr-CA": {"fr-CA", "fr", "en"}}},
		// fr is no site locale: it contributes nothing, but the walk goes through it.
		"through a tag the site lacks": {[]string{"en", "de", "fr-CA"}, map[string]string{"fr-CA": "fr", "fr": "de"},
			map[string][]string{"en": {"en"}, "de": {"de", "en"}, "fr-CA": {"fr-CA", "de", "en"}}},
		"default falls back": {[]string{"de", "en"}, map[string]string{"de": "en"},
			map[string][]string{"de": {"de", "en"}, "en": {"en", "de"}}},
	} {
		got := models.ChainsOf(c.locales, c.fallbacks)
		if len(got) != len(c.want) {
			t.Errorf("%s: ChainsOf = %v, want %v", name, got, c.want)
		}
		for l, w := range c.want {
			if !slices.Equal(got[l], w) {
				t.Errorf("%s: chain of %s = %v, want %v", name, l, got[l], w)
			}
		}
	}
	s := models.SingleLocale("en")
	if s.Default() != "en" || !slices.Equal(s.Chain("en"), []string{"en"}) {
		t.Errorf("SingleLocale: %+v", s)
	}
	if tag, ok := (models.SiteLocales{Locales: []string{"en", "fr-CA"}}).Find("FR-ca"); !ok || tag != "fr-CA" {
		t.Errorf("Find: %q %v", tag, ok)
	}
}
