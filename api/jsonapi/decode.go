package jsonapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// RequestDocument is the top level of a create or update request.
type RequestDocument[A any] struct {
	Data    *RequestResource[A] `json:"data"`
	Meta    map[string]any      `json:"meta,omitempty"`
	JSONAPI *Version            `json:"jsonapi,omitempty"`
}

// RequestResource is the resource object a client sends. Attributes decode
// into A; relationships stay raw until the handler knows what it expects.
type RequestResource[A any] struct {
	Type          string                         `json:"type"`
	ID            string                         `json:"id,omitempty"`
	RawAttributes json.RawMessage                `json:"attributes,omitempty"`
	Relationships map[string]RequestRelationship `json:"relationships,omitempty"`
	Meta          map[string]any                 `json:"meta,omitempty"`
	// Attributes is RawAttributes decoded strictly into A by Decode.
	Attributes A `json:"-"`
	// Sent lists the attribute names the client sent, so a PATCH can
	// change only those and never null what was left out.
	Sent map[string]bool `json:"-"`
}

// RequestRelationship is a relationship as a client sends it.
type RequestRelationship struct {
	Data json.RawMessage `json:"data"`
}

// ToOne decodes a to-one linkage: nil for null, an error for anything else
// that is not {type,id}.
func (r RequestRelationship) ToOne() (*Identifier, error) {
	if len(r.Data) == 0 {
		return nil, errors.New("relationship has no data member")
	}
	if bytes.Equal(bytes.TrimSpace(r.Data), []byte("null")) {
		return nil, nil
	}
	var id Identifier
	if err := strictUnmarshal(r.Data, &id); err != nil || id.Type == "" || id.ID == "" {
		return nil, errors.New("relationship data must be null or {\"type\",\"id\"}")
	}
	return &id, nil
}

// ToMany decodes a to-many linkage.
func (r RequestRelationship) ToMany() ([]Identifier, error) {
	var ids []Identifier
	if err := strictUnmarshal(r.Data, &ids); err != nil || ids == nil {
		return nil, errors.New("relationship data must be an array of {\"type\",\"id\"}")
	}
	for _, id := range ids {
		if id.Type == "" || id.ID == "" {
			return nil, errors.New("every relationship member needs type and id")
		}
	}
	return ids, nil
}

// Decode reads a request document from body into doc. Every failure is a
// 400 *Error whose source.pointer says where the document went wrong: ""
// for the whole document (not JSON at all), or the member path.
func Decode[A any](body []byte, doc *RequestDocument[A]) *Error {
	if len(bytes.TrimSpace(body)) == 0 {
		return BadRequest("malformed_document", "The request body is empty; a JSON:API document with a data member is required.").AtPointer("")
	}
	if bad := unknownMember(body, reflect.TypeFor[RequestDocument[A]](), ""); bad != nil {
		return bad
	}
	if err := strictUnmarshal(body, doc); err != nil {
		return decodeError(err, "")
	}
	if pointer, found := findNUL(body); found {
		// PostgreSQL text cannot hold U+0000: refused here, not as a 500 there.
		return Unprocessable("invalid_character", "Strings in the document must not contain the NUL character (U+0000).").AtPointer(pointer)
	}
	if doc.Data == nil {
		return BadRequest("malformed_document", "The document has no data member, or data is null.").AtPointer("/data")
	}
	if doc.Data.Type == "" {
		return BadRequest("malformed_document", "data.type is required.").AtPointer("/data/type")
	}
	// Attributes are decoded on their own so that errors inside them carry
	// an exact pointer, unknown names included.
	raw := doc.Data.RawAttributes
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		doc.Data.Sent = map[string]bool{}
		return nil
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(raw, &sent); err != nil {
		return BadRequest("invalid_member", "data.attributes must be a JSON object.").AtPointer("/data/attributes")
	}
	if bad := unknownMember(raw, reflect.TypeFor[A](), "/data/attributes"); bad != nil {
		return bad
	}
	doc.Data.Sent = make(map[string]bool, len(sent))
	for name := range sent {
		doc.Data.Sent[name] = true
	}
	if err := strictUnmarshal(raw, &doc.Data.Attributes); err != nil {
		return decodeError(err, "/data/attributes")
	}
	return nil
}

// findNUL tells where in a JSON document (already known to be valid) a
// string, member names included, holds U+0000, as a JSON pointer.
func findNUL(body []byte) (string, bool) {
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return "", false // the only way valid JSON carries a NUL
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	return nulIn(v, "")
}

func nulIn(v any, at string) (string, bool) {
	switch v := v.(type) {
	case string:
		return at, strings.ContainsRune(v, 0)
	case []any:
		for i, x := range v {
			if p, ok := nulIn(x, fmt.Sprintf("%s/%d", at, i)); ok {
				return p, true
			}
		}
	case map[string]any:
		for k, x := range v {
			p := at + "/" + strings.NewReplacer("~", "~0", "/", "~1", "\x00", "").Replace(k)
			if strings.ContainsRune(k, 0) {
				return p, true
			}
			if p, ok := nulIn(x, p); ok {
				return p, true
			}
		}
	}
	return "", false
}

// strictUnmarshal decodes exactly one JSON value, refusing unknown members
// and trailing data.
func strictUnmarshal(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errTrailing
	}
	return nil
}

var errTrailing = errors.New("trailing data after the JSON document")

// decodeError explains a decoding failure; prefix is the pointer of the
// value that was being decoded.
func decodeError(err error, prefix string) *Error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return BadRequest("malformed_document", fmt.Sprintf("The body is not valid JSON (at byte %d): %s.", syntax.Offset, syntax.Error())).AtPointer("")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return BadRequest("malformed_document", "The body ends before the JSON document does.").AtPointer("")
	case errors.Is(err, errTrailing):
		return BadRequest("malformed_document", "The body has data after the JSON document.").AtPointer("")
	case errors.As(err, &typ):
		pointer := prefix
		for name := range strings.SplitSeq(typ.Field, ".") {
			if name != "" {
				pointer += "/" + escapePointer(name)
			}
		}
		return BadRequest("invalid_member", fmt.Sprintf("%s must be a JSON %s, not %s.", pointer, jsonKind(typ.Type.Kind().String()), typ.Value)).AtPointer(pointer)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		if unquoted, err := strconv.Unquote(name); err == nil {
			name = unquoted
		}
		pointer := prefix + "/" + escapePointer(name)
		if prefix == "" {
			pointer = "" // the standard decoder does not say where in the document
		}
		return BadRequest("unknown_member", fmt.Sprintf("The member %q is not recognised here.", name)).AtPointer(pointer)
	default:
		return BadRequest("malformed_document", "The body could not be read as a JSON:API document.").AtPointer("")
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	default:
		return "number"
	}
}

// escapePointer escapes a member name as one JSON Pointer reference token
// (RFC 6901 §3: "~" as "~0", "/" as "~1").
func escapePointer(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// unknownMember walks body as a value of type t and returns a 400 pointing
// at the first object member t does not declare under exactly that name
// (at any depth), or nil. encoding/json would match names case-insensitively
// ("Title" filling title while Sent says "Title" was sent) and does not say
// where an unknown member is. A body that is not JSON gives nil: the
// decoder explains that.
func unknownMember(body []byte, t reflect.Type, prefix string) *Error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // a number out of float64's range is still JSON
	var bad *string
	if !walkMembers(dec, t, prefix, 0, &bad) || bad == nil {
		return nil
	}
	name := (*bad)[strings.LastIndexByte(*bad, '/')+1:]
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	return BadRequest("unknown_member", fmt.Sprintf("The member %q is not recognised here.", name)).AtPointer(*bad)
}

// maxDepth is encoding/json's own nesting limit.
const maxDepth = 10000

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// walkMembers reads one value from dec as t (nil: anything) would decode it,
// setting *bad to the pointer of the first undeclared member. It returns
// false if the value is not JSON or nests too deep.
func walkMembers(dec *json.Decoder, t reflect.Type, at string, depth int, bad **string) bool {
	if depth > maxDepth {
		return false
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		// Any members (any, json.RawMessage): skip the value in one scan.
		var skip json.RawMessage
		return dec.Decode(&skip) == nil
	}
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	switch tok {
	case json.Delim('{'):
		var members map[string]reflect.Type
		var elem reflect.Type
		if t.Kind() == reflect.Struct {
			members = Members(t)
		} else if t.Kind() == reflect.Map {
			elem = t.Elem()
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return false
			}
			name, _ := k.(string)
			ptr := at + "/" + escapePointer(name)
			next := elem
			if members != nil {
				var ok bool
				if next, ok = members[name]; !ok && *bad == nil {
					*bad = &ptr
				}
			}
			if !walkMembers(dec, next, ptr, depth+1, bad) {
				return false
			}
		}
	case json.Delim('['):
		var elem reflect.Type
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if !walkMembers(dec, elem, at+"/"+strconv.Itoa(i), depth+1, bad) {
				return false
			}
		}
	default:
		return true
	}
	_, err = dec.Token() // the closing delimiter
	return err == nil
}

// Members maps the member names a struct decodes from and encodes to
// (embedded structs' included, as encoding/json flattens them) to their
// types; the OpenAPI description reflects attributes through it too.
func Members(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for name, f := range MemberFields(t) {
		out[name] = f.Type
	}
	return out
}

// MemberFields is Members with each member's struct field (its tags too:
// the OpenAPI description reads its `oas` tag).
func MemberFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, mf := range MemberFields(ft) {
					if _, ok := out[n]; !ok {
						out[n] = mf
					}
				}
				continue
			}
		}
		if !f.IsExported() || name == "-" && tag == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}
