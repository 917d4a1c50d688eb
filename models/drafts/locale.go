package drafts

import (
	"context"
	"strings"
)

// Locale is the locale a request reads and writes in (docs/locales.md):
// Tag, the site's Base locale (whose values are the rows' own columns),
// its Default locale, and Tag's Chain (Tag, its fallbacks that are site
// locales, the default: models.ChainsOf). The zero Locale is the base
// locale of a site that never chose one: every key is a bare column.
//
// Rows are flat (decodeRow lifts a row's translations): the base locale's
// value of a localized field is row[column], another locale's is
// row["column@tag"]. Key is the one place that builds such keys.
type Locale struct {
	Tag, Base, Default string
	Chain              []string
}

type localeKey struct{}

// WithLocale returns ctx carrying l: the request's locale (api/locale.go).
func WithLocale(ctx context.Context, l Locale) context.Context {
	return context.WithValue(ctx, localeKey{}, l)
}

// LocaleOf is the locale ctx carries; the zero Locale (the base) when none.
func LocaleOf(ctx context.Context) Locale {
	l, _ := ctx.Value(localeKey{}).(Locale)
	return l
}

// IsBase tells whether l is its site's base locale (or the zero Locale):
// its values are the rows' own columns.
func (l Locale) IsBase() bool { return l.Tag == "" || l.Tag == l.Base }

// Key is the flat key of field f's value in locale tag: the column for the
// base locale (or a field that is not localized), "column@tag" otherwise.
func (l Locale) Key(f Field, tag string) string {
	if !f.Localized || tag == "" || tag == l.Base {
		return f.Column
	}
	return f.Column + "@" + tag
}

// Keys are the flat keys of kind k's localized fields in locale tag, in
// the kind's order (bare columns for the base locale).
func (l Locale) Keys(k *Kind, tag string) []string {
	var out []string
	for _, f := range k.Fields {
		if f.Localized {
			out = append(out, l.Key(f, tag))
		}
	}
	return out
}

// SplitKey splits a flat key into its column and locale tag ("title@de" →
// "title", "de"; "title" → "title", "").
func SplitKey(key string) (column, tag string) {
	column, tag, _ = strings.Cut(key, "@")
	return column, tag
}

// Split divides a change written in l (keyed by column) into the part the
// shared draft holds (shared fields, and in the base locale every field)
// and the part l's own draft holds (l's localized fields, keyed
// "column@tag"); local is nil in the base locale. Unknown keys stay in
// shared, for CheckAttributes to judge.
func (l Locale) Split(k *Kind, c Change) (shared, local Change) {
	if l.IsBase() {
		return c, nil
	}
	shared = Change{}
	for key, v := range c {
		if f, ok := k.fieldByColumn(key); ok && f.Localized {
			if local == nil {
				local = Change{}
			}
			local[l.Key(f, l.Tag)] = v
			continue
		}
		shared[key] = v
	}
	return shared, local
}

// Pick is field f's value in l from a flat row, walking l's chain: the
// first locale with a value (not null) gives it, and from names that
// locale. A value null in every locale of the chain is null, from l.Tag.
// A field that is not localized, or the zero Locale, reads the column.
func (l Locale) Pick(row Row, f Field) (value any, from string) {
	if !f.Localized || l.Tag == "" {
		return row[f.Column], l.Tag
	}
	chain := l.Chain
	if len(chain) == 0 {
		chain = []string{l.Tag}
	}
	for _, tag := range chain {
		if v := row[l.Key(f, tag)]; v != nil {
			return v, tag
		}
	}
	if l.Base != "" && !containsTag(chain, l.Base) {
		if v := row[f.Column]; v != nil {
			return v, l.Base
		}
	}
	return nil, l.Tag
}

func containsTag(tags []string, tag string) bool {
	for _, t := range tags {
		if t == tag {
			return true
		}
	}
	return false
}
