package api

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// invalidAttr is a 422 at the attribute name.
func invalidAttr(name, code, detail string) *jsonapi.Error {
	return jsonapi.Unprocessable(code, detail).AtPointer("/data/attributes/" + name)
}

// titleAttr validates a required title: 1 to 200 characters once control
// characters and surrounding space are removed.
func titleAttr(v *string, sent bool, required bool) (string, error) {
	if !sent && !required {
		return "", nil
	}
	if v == nil {
		return "", invalidAttr("title", "invalid_title", "title is required: 1 to 200 characters.")
	}
	t := strings.TrimSpace(cleanText(*v))
	if t == "" || utf8.RuneCountInString(t) > maxTitle {
		return "", invalidAttr("title", "invalid_title", "title must be 1 to 200 characters.")
	}
	return t, nil
}

// descriptionAttr validates a description: null, or up to 2000 characters.
// Line breaks and tabs are kept; other control characters are dropped.
func descriptionAttr(v *string) (*string, error) {
	if v == nil {
		return nil, nil
	}
	d := strings.TrimSpace(cleanProse(*v))
	if utf8.RuneCountInString(d) > maxDescription {
		return nil, invalidAttr("description", "invalid_description", "description must be at most 2000 characters, or null.")
	}
	return &d, nil
}

// cleanProse is cleanText for multi-line text: it keeps \n and \t.
func cleanProse(s string) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\r\n", "\n"), "")
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// str is v as a string, or "" when it is not one.
func str(v any) string { s, _ := v.(string); return s }
