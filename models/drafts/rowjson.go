package drafts

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeRow decodes a to_jsonb row: exactly what json.Unmarshal into a Row
// gives (objects as map[string]any, arrays as []any, numbers as float64),
// and the same error. Every read decodes one per item, and encoding/json's
// reflection over a map type was most of a read's load in the API's CPU
// profile. to_jsonb writes a plain form (no escapes in most strings, short
// numbers); anything the fast path is not sure of, such as an escaped
// string, a malformed document, a number float64 cannot hold, goes to
// json.Unmarshal as a whole, so the two can never disagree.
//
// A row's translations (the values of its site's locales but the base,
// docs/locales.md) are lifted into the row under their flat keys
// ("title@de"), and the translations column itself is dropped: the engine
// sees one flat row, and nestRow puts them back before SQL.
func decodeRow(data []byte) (Row, error) {
	r, err := decodeJSON(data)
	return liftTranslations(r), err
}

// translationsColumn is the jsonb column of a row's non-base locales' values.
const translationsColumn = "translations"

// liftTranslations moves r's translations to flat keys of r.
func liftTranslations(r Row) Row {
	tr, ok := r[translationsColumn]
	if !ok {
		return r
	}
	delete(r, translationsColumn)
	if m, ok := tr.(map[string]any); ok {
		for k, v := range m {
			r[k] = v
		}
	}
	return r
}

// nestRow is r as its table holds it: the flat keys of localized fields
// of kind k ("title@de") nested back into the translations column (always
// set: {} when none), the rest as they are. r is not changed.
func nestRow(k *Kind, r Row) Row {
	out := make(Row, len(r)+1)
	tr := map[string]any{}
	for key, v := range r {
		if c, tag := SplitKey(key); tag != "" {
			if f, ok := k.fieldByColumn(c); ok && f.Localized {
				tr[key] = v
				continue
			}
		}
		out[key] = v
	}
	out[translationsColumn] = tr
	return out
}

// decodeJSON decodes a JSON document into a Row exactly as json.Unmarshal
// does (decodeRow without the lift).
func decodeJSON(data []byte) (Row, error) {
	d := rowDecoder{data: data}
	d.space()
	if d.i < len(d.data) && d.data[d.i] == 'n' && d.literal("null") {
		// json.Unmarshal leaves the map nil for null.
		if d.space(); d.i == len(d.data) {
			return nil, nil
		}
	} else if d.i < len(d.data) && d.data[d.i] == '{' {
		if m, ok := d.object(0); ok {
			if d.space(); d.i == len(d.data) {
				return m, nil
			}
		}
	}
	var r Row
	err := json.Unmarshal(data, &r)
	return r, err
}

// rowDecoder is decodeRow's cursor. Its methods return false to mean "not
// sure": decodeRow then hands the whole document to encoding/json.
type rowDecoder struct {
	data []byte
	i    int
}

// maxDepth keeps the fast path's recursion short; deeper documents (a
// block body, never a row) go to encoding/json, which has its own limit.
const maxDepth = 64

func (d *rowDecoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *rowDecoder) literal(lit string) bool {
	if len(d.data)-d.i < len(lit) || string(d.data[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

func (d *rowDecoder) value(depth int) (any, bool) {
	d.space()
	if d.i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '"':
		return d.str()
	case c == '{':
		m, ok := d.object(depth + 1)
		return map[string]any(m), ok
	case c == '[':
		return d.array(depth + 1)
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, false
}

// object reads {...} at d.i (which holds '{').
func (d *rowDecoder) object(depth int) (map[string]any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	d.i++
	m := make(map[string]any, 24) // a page row has 18 columns
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v
		done, ok := d.separator('}')
		if !ok {
			return nil, false
		}
		if done {
			return m, true
		}
	}
}

// separator reads what follows a member or an element: a comma (more to
// come) or end, the closing bracket (done); anything else is not JSON.
func (d *rowDecoder) separator(end byte) (done, ok bool) {
	d.space()
	if d.i >= len(d.data) {
		return false, false
	}
	switch d.data[d.i] {
	case ',':
		d.i++
		return false, true
	case end:
		d.i++
		return true, true
	}
	return false, false
}

// array reads [...] at d.i (which holds '[').
func (d *rowDecoder) array(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	d.i++
	a := []any{}
	d.space()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		done, ok := d.separator(']')
		if !ok {
			return nil, false
		}
		if done {
			return a, true
		}
	}
}

// str reads a string at d.i (which holds '"'): only one without escapes or
// control characters, in valid UTF-8, which is its bytes as they are.
func (d *rowDecoder) str() (string, bool) {
	start := d.i + 1
	for j := start; j < len(d.data); j++ {
		switch c := d.data[j]; {
		case c == '"':
			s := d.data[start:j]
			if !utf8.Valid(s) {
				return "", false // encoding/json replaces bad bytes with U+FFFD
			}
			d.i = j + 1
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// number reads a number in JSON's grammar (checked here: strconv accepts
// more, such as "inf", hex and underscores) as a float64.
func (d *rowDecoder) number() (any, bool) {
	start, j := d.i, d.i
	digits := func() bool {
		k := j
		for j < len(d.data) && d.data[j] >= '0' && d.data[j] <= '9' {
			j++
		}
		return j > k
	}
	if j < len(d.data) && d.data[j] == '-' {
		j++
	}
	switch {
	case j < len(d.data) && d.data[j] == '0':
		j++
	case !digits():
		return nil, false
	}
	if j < len(d.data) && d.data[j] == '.' {
		j++
		if !digits() {
			return nil, false
		}
	}
	if j < len(d.data) && (d.data[j] == 'e' || d.data[j] == 'E') {
		j++
		if j < len(d.data) && (d.data[j] == '+' || d.data[j] == '-') {
			j++
		}
		if !digits() {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(d.data[start:j]), 64)
	if err != nil {
		return nil, false // out of range: encoding/json's error, not ours
	}
	d.i = j
	return f, true
}
