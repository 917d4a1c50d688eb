package jsonapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Encode writes d as json.Marshal(d) would (the same members, in the same
// order, the same escaping; TestEncodeMatchesReflection pins it), but
// without reflection for what a document is made of: resources whose
// attributes are maps of strings, numbers, booleans and nulls, their
// relationships and links. Rendering every read's document by reflection
// (sorting its maps, compacting each linkage) was the largest part of the
// API's CPU per read after the database round trip. Anything else (struct
// attributes, nested values) still goes through encoding/json.
//
// With included set, the included member is written even when empty, as
// JSON:API asks when the request named include.
func (d Document) Encode(included bool) ([]byte, error) {
	var out []byte
	err := d.EncodeTo(included, func(b []byte) { out = slices.Clone(b) })
	return out, err
}

// EncodeTo is Encode into a pooled buffer, which it hands to write (when
// encoding succeeds) and reuses once write returns: write copies what it
// needs (a response's body buffer does), so a read allocates no document.
func (d Document) EncodeTo(included bool, write func([]byte)) error {
	buf := bufPool.Get().(*[]byte)
	b, err := d.appendTo((*buf)[:0], included)
	if err == nil {
		write(b)
	}
	if cap(b) <= maxPooledBuffer {
		*buf = b[:0]
		bufPool.Put(buf)
	}
	return err
}

// maxPooledBuffer keeps the buffer of a huge document (a long list) out of
// the pool, where it would hold its memory for the next small one.
const maxPooledBuffer = 256 << 10

func (d Document) appendTo(b []byte, included bool) ([]byte, error) {
	var err error
	b = append(b, `{"data":`...)
	if b, err = appendData(b, d.Data, d.MapLinks); err != nil {
		return nil, err
	}
	if included || len(d.Included) > 0 {
		b = append(b, `,"included":`...)
		if d.Included == nil && !included {
			b = append(b, "null"...)
		} else if b, err = appendResources(b, d.Included, d.MapLinks); err != nil {
			return nil, err
		}
	}
	if b, err = appendLinksMeta(b, d.Links, d.Meta, d.MapLinks); err != nil {
		return nil, err
	}
	if d.JSONAPI != nil {
		b = append(b, `,"jsonapi":{"version":`...)
		b = appendString(b, d.JSONAPI.Version)
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// bufPool holds the buffers EncodeTo writes into.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func appendData(b []byte, data any, m LinkMap) ([]byte, error) {
	switch x := data.(type) {
	case *Resource:
		return x.appendJSON(b, m)
	case []*Resource:
		if x == nil {
			return append(b, "null"...), nil
		}
		return appendResources(b, x, m)
	}
	return appendValue(b, data)
}

func appendResources(b []byte, rs []*Resource, m LinkMap) ([]byte, error) {
	b = append(b, '[')
	var err error
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = r.appendJSON(b, m); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

func (r *Resource) appendJSON(b []byte, m LinkMap) ([]byte, error) {
	if r == nil {
		return append(b, "null"...), nil
	}
	var err error
	b = append(b, `{"type":`...)
	b = appendString(b, r.Type)
	b = append(b, `,"id":`...)
	b = appendString(b, r.ID)
	if r.Attributes != nil {
		b = append(b, `,"attributes":`...)
		if m, ok := r.Attributes.(map[string]any); ok {
			b, err = appendMap(b, m)
		} else {
			b, err = appendValue(b, r.Attributes)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(r.Relationships) > 0 {
		b = append(b, `,"relationships":{`...)
		for i, k := range sortedKeys(r.Relationships) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, err = r.Relationships[k].appendJSON(b, m); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	if b, err = appendLinksMeta(b, r.Links, r.Meta, m); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendLinksMeta writes the links and meta members a document and a
// resource both end with, each left out when empty (omitempty).
func appendLinksMeta(b []byte, links *Links, meta map[string]any, m LinkMap) ([]byte, error) {
	if links != nil {
		mark := len(b)
		b = append(b, `,"links":`...)
		if b = links.appendJSON(b, m); m != nil && bytes.HasSuffix(b, []byte(`:{}`)) {
			b = b[:mark] // every link refused: no links member
		}
	}
	if len(meta) > 0 {
		b = append(b, `,"meta":`...)
		return appendMap(b, meta)
	}
	return b, nil
}

func (rel *Relationship) appendJSON(b []byte, m LinkMap) ([]byte, error) {
	if rel == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '{')
	first := true
	if rel.Links != nil {
		mark := len(b)
		b = append(b, `"links":`...)
		if b = rel.Links.appendJSON(b, m); m != nil && bytes.HasSuffix(b, []byte(`:{}`)) {
			b = b[:mark] // every link refused: no links member
		} else {
			first = false
		}
	}
	if len(rel.Data) > 0 {
		if !first {
			b = append(b, ',')
		}
		b = append(b, `"data":`...)
		// encoding/json checks a json.RawMessage and writes it compact and
		// HTML-safe; what ToOne and ToMany build is both already.
		if !json.Valid(rel.Data) {
			return nil, fmt.Errorf("jsonapi: relationship data is not JSON: %.100q", rel.Data)
		}
		if plain(rel.Data) {
			b = append(b, rel.Data...)
		} else {
			var out, safe bytes.Buffer
			_ = json.Compact(&out, rel.Data) // valid, checked above
			json.HTMLEscape(&safe, out.Bytes())
			b = append(b, safe.Bytes()...)
		}
		first = false
	}
	if len(rel.Meta) > 0 {
		if !first {
			b = append(b, ',')
		}
		b = append(b, `"meta":`...)
		var err error
		if b, err = appendMap(b, rel.Meta); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// plain tells whether JSON text has nothing that compacting or HTML
// escaping would change: printable ASCII without spaces or <, >, &.
func plain(raw []byte) bool {
	for _, c := range raw {
		if c <= ' ' || c >= utf8.RuneSelf || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// appendJSON writes the links, each URL as m maps it (m nil: as they
// are); a URL m refuses is left out.
func (l *Links) appendJSON(b []byte, m LinkMap) []byte {
	b = append(b, '{')
	first := true
	for _, x := range [...]struct{ name, v string }{{`"self":`, l.Self}, {`"related":`, l.Related}, {`"first":`, l.First},
		{`"prev":`, l.Prev}, {`"next":`, l.Next}, {`"last":`, l.Last}} {
		if x.v == "" {
			continue
		}
		v := x.v
		if m != nil {
			var ok bool
			if v, ok = m(v); !ok {
				continue
			}
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, x.name...)
		b = appendString(b, v)
	}
	return append(b, '}')
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // encoding/json's order for string keys
	return keys
}

// appendMap writes m with its keys sorted, as encoding/json does.
func appendMap(b []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '{')
	var err error
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		if b, err = appendValue(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendValue writes the scalar values of a row directly, anything else
// with encoding/json.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case float64:
		// Whole numbers print as integers in encoding/json too; others
		// (and the non-finite, which it refuses) go to it.
		if x == math.Trunc(x) && math.Abs(x) < 1e15 && !(x == 0 && math.Signbit(x)) {
			return strconv.AppendInt(b, int64(x), 10), nil
		}
	case *string:
		if x == nil {
			return append(b, "null"...), nil
		}
		return appendString(b, *x), nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// appendString writes s as a JSON string: as is between quotes when it
// holds only printable ASCII that encoding/json leaves alone, else as
// encoding/json writes it (escapes, HTML-safe, invalid UTF-8 replaced).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s) // a string cannot fail
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
