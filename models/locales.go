package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/language"
)

// Locale limits (docs/locales.md): a site lists 1 to MaxLocales tags; a tag
// is at most MaxTagLen characters (BCP 47's longest useful tags are far
// shorter); locale-fallbacks has at most MaxFallbacks entries.
const (
	MaxLocales   = 20
	MaxTagLen    = 35
	MaxFallbacks = 50
)

// SiteLocales is a site's locale settings as a request needs them: read
// with the token's statement (roles.go, siteclients.go, previewlinks.go),
// so validating a request's locale-tag costs no query.
type SiteLocales struct {
	// Locales is the ordered list; Locales[0] is the default locale (of a
	// request without locale-tag, and the last fallback of every chain).
	Locales []string
	// Base is the locale whose values are the rows' own columns.
	Base string
	// Chains maps each locale to where its values come from, in order:
	// itself, its fallbacks that are site locales, the default (ChainsOf).
	Chains map[string][]string
}

// SingleLocale is the settings of a site with one locale, tag (every site
// before it adds a second).
func SingleLocale(tag string) SiteLocales {
	return SiteLocales{Locales: []string{tag}, Base: tag, Chains: map[string][]string{tag: {tag}}}
}

// Default is the default locale ("" for the zero settings).
func (s SiteLocales) Default() string {
	if len(s.Locales) == 0 {
		return ""
	}
	return s.Locales[0]
}

// Find returns the site's spelling of tag, compared case-insensitively
// (BCP 47 tags are), and whether the site has it.
func (s SiteLocales) Find(tag string) (string, bool) {
	for _, l := range s.Locales {
		if strings.EqualFold(l, tag) {
			return l, true
		}
	}
	return "", false
}

// Chain is tag's chain (ChainsOf); a tag the chains miss (settings read
// before chains existed) falls back to [tag, default].
func (s SiteLocales) Chain(tag string) []string {
	if c, ok := s.Chains[tag]; ok {
		return c
	}
	if tag == s.Default() {
		return []string{tag}
	}
	return []string{tag, s.Default()}
}

// ErrMalformedTag is what CanonicalTag answers a tag that is no BCP 47
// language tag Pressroom accepts.
var ErrMalformedTag = errors.New("not a BCP 47 language tag")

// CanonicalTag parses s as a BCP 47 language tag and returns its canonical
// spelling ("en-us" → "en-US", "zh-hant" → "zh-Hant"). It refuses, with
// ErrMalformedTag, anything longer than MaxTagLen, not well-formed, the
// undetermined language "und", and tags with extensions or private use
// ("de-u-co-phonebk", "x-pig"): a site's locales are languages, scripts,
// regions and variants.
func CanonicalTag(s string) (string, error) {
	if s == "" || len(s) > MaxTagLen {
		return "", ErrMalformedTag
	}
	for _, c := range s { // language.Parse also takes "en_US"
		if !(c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "", ErrMalformedTag
		}
	}
	t, err := language.Parse(s)
	if err != nil {
		return "", ErrMalformedTag
	}
	if len(t.Extensions()) > 0 {
		return "", ErrMalformedTag
	}
	if b, _, _ := t.Raw(); b.String() == "und" {
		return "", ErrMalformedTag
	}
	return t.String(), nil
}

// FallbackError is a locale-fallbacks entry CheckFallbacks refuses: at Key,
// Code (invalid_locale, locale_fallback_cycle), Detail says why.
type FallbackError struct {
	Key, Code, Detail string
}

func (e *FallbackError) Error() string { return e.Key + ": " + e.Detail }

// CheckFallbacks judges a site's locale-fallbacks against its locales (in
// site order), all problems at once, ordered by key (site locales first,
// in site order, then the rest alphabetically):
//   - every key and every target must be a canonical BCP 47 tag
//     (invalid_locale). A tag need not be a site locale: a chain may pass
//     through tags the site does not publish in (fr-CA → fr → en on a site
//     without fr); such tags contribute no values.
//   - the graph must be acyclic (locale_fallback_cycle, reported once per
//     cycle at its first key, detail "fr-CA → fr → fr-CA"; a tag falling
//     back to itself is a cycle of one).
func CheckFallbacks(locales []string, fallbacks map[string]string) []*FallbackError {
	var out []*FallbackError
	if len(fallbacks) > MaxFallbacks {
		return []*FallbackError{{Code: "too_many_fallbacks", Detail: fmt.Sprintf("locale-fallbacks has at most %d entries.", MaxFallbacks)}}
	}
	keys := fallbackKeys(locales, fallbacks)
	for _, k := range keys {
		for _, tag := range []string{k, fallbacks[k]} {
			if c, err := CanonicalTag(tag); err != nil || c != tag {
				out = append(out, &FallbackError{Key: k, Code: "invalid_locale", Detail: tagRule(tag, c)})
				break
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	reported := map[string]bool{}
	for _, k := range keys {
		if reported[k] {
			continue
		}
		path := []string{k}
		for next, ok := fallbacks[k], true; ok; next, ok = fallbacks[next] {
			if i := slices.Index(path, next); i >= 0 {
				if cycle := path[i:]; !reported[next] {
					out = append(out, cycleError(keys, cycle))
					for _, c := range cycle {
						reported[c] = true
					}
				}
				break
			}
			path = append(path, next)
		}
	}
	return out
}

// cycleError reports cycle (each member once, in fallback order) at its
// first member in keys' order, the detail starting there.
func cycleError(keys, cycle []string) *FallbackError {
	first := 0
	for j, c := range cycle {
		if slices.Index(keys, c) < slices.Index(keys, cycle[first]) {
			first = j
		}
	}
	round := append(append(slices.Clone(cycle[first:]), cycle[:first]...), cycle[first])
	return &FallbackError{Key: cycle[first], Code: "locale_fallback_cycle",
		Detail: "locale-fallbacks must not go round in a circle: " + strings.Join(round, " → ") + "."}
}

// tagRule is the detail for a tag that is not canonical BCP 47: the
// canonical spelling when there is one.
func tagRule(tag, canonical string) string {
	if canonical != "" {
		return fmt.Sprintf("%q is spelled %q in canonical BCP 47.", tag, canonical)
	}
	return fmt.Sprintf("%q is not a BCP 47 language tag such as de or fr-CA.", tag)
}

// TagRule is the detail for a site locale that is not canonical BCP 47.
func TagRule(tag string) string {
	c, _ := CanonicalTag(tag)
	return tagRule(tag, c)
}

// fallbackKeys orders the keys of fallbacks: site locales in site order,
// then the others alphabetically.
func fallbackKeys(locales []string, fallbacks map[string]string) []string {
	var keys, rest []string
	for _, l := range locales {
		if _, ok := fallbacks[l]; ok {
			keys = append(keys, l)
		}
	}
	for k := range fallbacks {
		if !slices.Contains(locales, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(keys, rest...)
}

// ChainsOf derives every site locale's chain from acyclic fallbacks
// (CheckFallbacks): the tag, then each fallback in turn that is a site
// locale (others contribute nothing and are skipped, but the walk goes on
// through them), then the default locale, each once.
func ChainsOf(locales []string, fallbacks map[string]string) map[string][]string {
	out := make(map[string][]string, len(locales))
	if len(locales) == 0 {
		return out
	}
	def := locales[0]
	for _, l := range locales {
		chain := []string{l}
		seen := map[string]bool{l: true}
		for next, ok := fallbacks[l], true; ok && !seen[next]; next, ok = fallbacks[next] {
			seen[next] = true
			if slices.Contains(locales, next) {
				chain = append(chain, next)
			}
		}
		if !slices.Contains(chain, def) {
			chain = append(chain, def)
		}
		out[l] = chain
	}
	return out
}

// localeColumnsSQL reads a site's locales (the sites row aliased s) with
// the token statements: the list as one space-separated string (tags hold
// no spaces) and the chains only for a site with several locales, so a
// single-locale site's request decodes no JSON.
const localeColumnsSQL = `array_to_string(s.locales, ' '), s.base_locale, CASE WHEN cardinality(s.locales) > 1 THEN s.locale_chains END`

// localeColumns are the values localeColumnsSQL reads.
type localeColumns struct {
	list, base string
	chains     []byte
}

func (c localeColumns) parse() (SiteLocales, error) {
	s := SiteLocales{Locales: strings.Fields(c.list), Base: c.base}
	if len(s.Locales) == 1 {
		s.Chains = map[string][]string{s.Locales[0]: {s.Locales[0]}}
		return s, nil
	}
	if err := json.Unmarshal(c.chains, &s.Chains); err != nil {
		return SiteLocales{}, fmt.Errorf("locale chains: %w", err)
	}
	return s, nil
}
