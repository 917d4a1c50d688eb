package jsonapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fuzzAttrs has the shapes the endpoints' attribute types use: pointers
// (omitted vs null), plain values, lists, free-form maps, `any` members
// (read-only ones, refused later) and a nested object.
type fuzzAttrs struct {
	Title    *string        `json:"title"`
	Slug     string         `json:"subdomain-slug"`
	Count    *int           `json:"count"`
	Public   bool           `json:"public"`
	Tags     []string       `json:"tags"`
	Settings map[string]any `json:"settings"`
	Created  any            `json:"created-at"`
	Nested   *struct {
		Name string `json:"name"`
	} `json:"nested"`
}

// FuzzDecode checks the JSON:API request decoder on arbitrary bodies. Every
// body ends in exactly one of two ways:
//   - an *Error with status 400 or 422 and a source.pointer that is "" (the
//     whole document) or a JSON Pointer whose parent (whose whole self, for
//     invalid and unknown members) exists in the body;
//   - a document with data and data.type, whose Sent names are exactly the
//     attribute members sent, each a member A declares under exactly that
//     name, and whose attributes re-encode to a document that decodes to the
//     same value.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"data":{"type":"themes","attributes":{"title":"Spring","created-at":null}}}`,
		`{"data":{"type":"themes","id":"0b7c1b2e-6a7e-4f0e-9a57-0e0c1f5f5d11","attributes":{"title":null}}}`,
		`{"data":{"type":"sites","attributes":{"subdomain-slug":"my-site","count":3,"public":true,"tags":["a","b"]}}}`,
		`{"data":{"type":"content","attributes":{"settings":{"a":[1,2.5,"x",null,{"b":false}]},"nested":{"name":"n"}}},"meta":{"k":"v"},"jsonapi":{"version":"1.1"}}`,
		`{"data":{"type":"layouts","relationships":{"theme":{"data":{"type":"themes","id":"1"}},"assets":{"data":[{"type":"assets","id":"2"}]},"user":{"data":null}}}}`,
		`{"data":{"type":"themes"}}`,
		`{"data":{"type":"themes","attributes":null}}`,
		`{"data":null}`,
		`{}`,
		``,
		`   `,
		`[]`,
		`null`,
		`{"data":{"type":""}}`,
		`{"data":{"type":"themes","attributes":[]}}`,
		`{"data":{"type":"themes","attributes":{"count":"three"}}}`,
		`{"data":{"type":"themes","attributes":{"nested":{"name":1}}}}`,
		`{"data":{"type":"themes","attributes":{"tags":[1]}}}`,
		`{"data":{"type":"themes","attributes":{"bogus":1}}}`,
		`{"data":{"type":"themes","attributes":{"a/b~c":1}}}`,
		`{"data":{"type":"themes","attributes":{"Title":"case"}}}`,
		`{"data":{"type":"themes","attributes":{"title":"a","title":"b"}}}`,
		`{"data":{"type":"themes"},"extra":1}`,
		`{"data":{"type":"themes"}} {"data":{}}`,
		`{"data":{"type":"themes"`,
		`{"data":{"type":"themes","attributes":{"title":"\u00e9\ud83d\ude00"}}}`,
		`{"data":{"type":"themes","attributes":{"count":1e400}}}`,
		"{\"data\":{\"type\":\"themes\",\"attributes\":{\"title\":\"\xff\"}}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDecode[fuzzAttrs](t, body)
		// content.go decodes attributes into a raw map.
		checkDecode[map[string]json.RawMessage](t, body)
	})
}

func checkDecode[A any](t *testing.T, body []byte) {
	var doc RequestDocument[A]
	jerr := Decode(body, &doc)
	if jerr != nil {
		checkDecodeError(t, body, jerr)
		return
	}
	d := doc.Data
	if d == nil || d.Type == "" {
		t.Fatalf("Decode(%q) succeeded without data or data.type", body)
	}
	var sent map[string]json.RawMessage
	if len(d.RawAttributes) > 0 && string(bytes.TrimSpace(d.RawAttributes)) != "null" {
		if err := json.Unmarshal(d.RawAttributes, &sent); err != nil {
			t.Fatalf("Decode(%q) succeeded but attributes are not an object: %v", body, err)
		}
	}
	if len(sent) != len(d.Sent) {
		t.Fatalf("Decode(%q): Sent %v does not list the %d attributes sent", body, d.Sent, len(sent))
	}
	names := jsonNames(reflect.TypeFor[A]())
	for name := range sent {
		if !d.Sent[name] {
			t.Fatalf("Decode(%q): Sent %v misses %q", body, d.Sent, name)
		}
		if names != nil && !names[name] {
			t.Fatalf("Decode(%q) accepted attribute %q, which is not a member name of %T", body, name, d.Attributes)
		}
	}
	for name, rel := range d.Relationships {
		if id, err := rel.ToOne(); err == nil && id != nil && (id.Type == "" || id.ID == "") {
			t.Fatalf("relationship %q: ToOne gave %+v", name, id)
		}
		if ids, err := rel.ToMany(); err == nil {
			for _, id := range ids {
				if id.Type == "" || id.ID == "" {
					t.Fatalf("relationship %q: ToMany gave %+v", name, id)
				}
			}
		}
	}
	// Re-encoding: the attributes as the server understood them decode
	// again to the same value, and encoding that gives the same bytes.
	once := reencode(t, d.Type, d.Attributes)
	var again RequestDocument[A]
	if jerr := Decode(once, &again); jerr != nil {
		t.Fatalf("Decode(%q) succeeded, but its re-encoding %s fails: %v", body, once, jerr)
	}
	if _, raw := any(d.Attributes).(map[string]json.RawMessage); !raw && !reflect.DeepEqual(d.Attributes, again.Data.Attributes) {
		t.Fatalf("re-encoding changed the attributes:\nfirst  %#v\nsecond %#v", d.Attributes, again.Data.Attributes)
	}
	if twice := reencode(t, again.Data.Type, again.Data.Attributes); !bytes.Equal(once, twice) {
		t.Fatalf("re-encoding is not stable:\n%s\n%s", once, twice)
	}
}

func reencode[A any](t *testing.T, typ string, attrs A) []byte {
	t.Helper()
	a, err := json.Marshal(attrs)
	if err != nil {
		t.Fatalf("attributes %#v do not encode: %v", attrs, err)
	}
	b, err := json.Marshal(map[string]any{"data": map[string]any{"type": typ, "attributes": json.RawMessage(a)}})
	if err != nil {
		t.Fatalf("document does not encode: %v", err)
	}
	return b
}

func checkDecodeError(t *testing.T, body []byte, e *Error) {
	t.Helper()
	if e.Status != "400" && e.Status != "422" {
		t.Fatalf("Decode(%q): status %s, want 400 or 422: %v", body, e.Status, e)
	}
	if e.Code == "" || e.Detail == "" {
		t.Fatalf("Decode(%q): error without code or detail: %+v", body, e)
	}
	if e.Source == nil || e.Source.Pointer == nil {
		t.Fatalf("Decode(%q): error without source.pointer: %v", body, e)
	}
	p := *e.Source.Pointer
	if p == "" {
		return
	}
	if !strings.HasPrefix(p, "/") {
		t.Fatalf("Decode(%q): source.pointer %q is not a JSON Pointer", body, p)
	}
	present, ok := pointers(body)
	if !ok {
		t.Fatalf("Decode(%q) points at %q inside a body that is not JSON", body, p)
	}
	parent := p[:strings.LastIndexByte(p, '/')]
	if parent != "" && !present[parent] {
		t.Fatalf("Decode(%q): source.pointer %q, but %q is not in the body (%v)", body, p, parent, e)
	}
	if (e.Code == "invalid_member" || e.Code == "unknown_member") && !present[p] {
		t.Fatalf("Decode(%q): source.pointer %q is not in the body (%v)", body, p, e)
	}
}

// pointers returns the JSON Pointer of every value in body (every
// occurrence of a repeated member included), or false if body is not one
// JSON value.
func pointers(body []byte) (map[string]bool, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	out := map[string]bool{}
	var walk func(at string) bool
	walk = func(at string) bool {
		out[at] = true
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false
				}
				if !walk(at + "/" + escapePointer(k.(string))) {
					return false
				}
			}
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if !walk(at + "/" + strconv.Itoa(i)) {
					return false
				}
			}
		default:
			return true
		}
		_, err = dec.Token() // the closing delimiter
		return err == nil
	}
	return out, walk("")
}

// jsonNames returns the member names a struct type decodes, or nil for any
// other type (a map takes every name).
func jsonNames(t reflect.Type) map[string]bool {
	if t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]bool{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		if name != "-" && f.IsExported() {
			out[name] = true
		}
	}
	return out
}
