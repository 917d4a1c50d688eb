package drafts

import (
	"fmt"
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
func CheckAttributes(k *Kind, state Row) error {
	for _, f := range k.Fields {
		if f.IsRef() {
			continue
		}
		if broken := f.broken(state); broken != "" {
			if f.Rule != "" {
				broken = f.Rule
			}
			return models.Invalid(f.Name, f.Code(), broken)
		}
	}
	return nil
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
