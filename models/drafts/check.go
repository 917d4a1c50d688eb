package drafts

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pressroom/pressroom/models"
)

// CheckAttributes judges the attributes of a drafted state of an item of
// kind k (a create's defaults and sent values, or an update's state with
// the change laid over it) by its fields' declarations, in their order:
// the first broken one is a models.ErrInvalid at the attribute, code
// "invalid_<column>", with the field's Rule or the broken constraint's
// sentence. References are the cross-record rules' (Engine.Check).
//
// A localized field's values in other locales than the base (flat keys
// "title@de") are judged by the same rules, each at the attribute with
// meta.locale naming the locale; null there clears the value and keeps
// them. The base value of a localized field may be null while another
// locale has one (a record created in that locale: docs/locales.md).
func CheckAttributes(k *Kind, state Row) error {
	for _, f := range k.Fields {
		if f.IsRef() {
			continue
		}
		if f.Localized && state[f.Column] == nil && hasLocaleValue(k, f, state) {
			continue
		}
		if broken := f.broken(state); broken != "" {
			if f.Rule != "" {
				broken = f.Rule
			}
			return models.Invalid(f.Name, f.Code(), broken)
		}
	}
	return checkLocaleValues(k, state)
}

// checkLocaleValues is CheckAttributes of state's values in other locales
// than the base, in the order of their keys.
func checkLocaleValues(k *Kind, state Row) error {
	var keys []string
	for key, v := range state {
		if v != nil && isLocaleKey(k, key) {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	for _, key := range keys {
		c, tag := SplitKey(key)
		f, _ := k.fieldByColumn(c)
		in := maps.Clone(state)
		in[c] = state[key]
		if broken := f.broken(in); broken != "" {
			if f.Rule != "" {
				broken = f.Rule
			}
			err := models.Invalid(f.Name, f.Code(), broken)
			err.Meta = map[string]any{"locale": tag}
			return err
		}
	}
	return nil
}

// hasLocaleValue tells whether state holds a value of f in a locale other
// than the base.
func hasLocaleValue(k *Kind, f Field, state Row) bool {
	for key, v := range state {
		if c, _ := SplitKey(key); v != nil && c == f.Column && isLocaleKey(k, key) {
			return true
		}
	}
	return false
}

// broken is the sentence saying which of f's constraints the state's
// value breaks ("" when it keeps them all). Only strings have
// constraints; a null NullString keeps them (a String cannot be null: the
// decoder refuses it, and a missing one is "").
func (f Field) broken(state Row) string {
	v, present := state[f.Column]
	if f.Type != String && f.Type != NullString {
		return ""
	}
	if f.Type == NullString && v == nil {
		return ""
	}
	s := str(v)
	n := utf8.RuneCountInString(strings.TrimSpace(s))
	switch {
	case f.RequiredOnCreate && (!present || v == nil):
		return f.lengthRule()
	case len(f.Enum) > 0 && !slices.Contains(f.Enum, s):
		return fmt.Sprintf("%s must be one of %s.", f.Name, strings.Join(f.Enum, ", "))
	case f.Pattern != nil && !f.Pattern.MatchString(s):
		return f.Name + " must match " + f.Pattern.String() + "."
	case (f.MinLen > 0 && n < f.MinLen) || (f.MaxLen > 0 && n > f.MaxLen):
		return f.lengthRule()
	case f.MaxBytes > 0 && len(s) > f.MaxBytes:
		return fmt.Sprintf("%s must be at most %d bytes.", f.Name, f.MaxBytes)
	case f.Format == "uri" && !httpURL(s):
		return f.Name + " must be an absolute http(s) URL."
	case f.Holds != nil && !f.Holds(state):
		return f.Name + " breaks a rule of its record."
	}
	return ""
}

// lengthRule says f's length bounds: "title must be 1 to 200 characters."
func (f Field) lengthRule() string {
	switch {
	case f.MinLen > 0 && f.MaxLen > 0:
		return fmt.Sprintf("%s must be %d to %d characters.", f.Name, f.MinLen, f.MaxLen)
	case f.MaxLen > 0:
		return fmt.Sprintf("%s must be at most %d characters.", f.Name, f.MaxLen)
	}
	return f.Name + " is required."
}

// httpURL tells whether s is an absolute http or https URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// str is v as a string, or "" when it is not one.
func str(v any) string { s, _ := v.(string); return s }
