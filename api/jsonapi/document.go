package jsonapi

import "encoding/json"

// Document is a JSON:API top-level document with primary data.
type Document struct {
	Data     any            `json:"data"`
	Included []*Resource    `json:"included,omitempty"`
	Links    *Links         `json:"links,omitempty"`
	Meta     map[string]any `json:"meta,omitempty"`
	JSONAPI  *Version       `json:"jsonapi,omitempty"`
	// MapLinks, when set, maps every URL of the document's links as
	// Encode writes them (the API's preview reads: api/preview_doc.go).
	MapLinks LinkMap `json:"-"`
}

// LinkMap maps a link's URL as a document is encoded; false leaves the
// link out.
type LinkMap func(url string) (string, bool)

// Version is the top-level jsonapi member.
type Version struct {
	Version string `json:"version"`
}

// V11 announces JSON:API 1.1 in every document.
var V11 = &Version{Version: "1.1"}

// Resource is a resource object.
type Resource struct {
	Type          string                   `json:"type"`
	ID            string                   `json:"id"`
	Attributes    any                      `json:"attributes,omitempty"`
	Relationships map[string]*Relationship `json:"relationships,omitempty"`
	Links         *Links                   `json:"links,omitempty"`
	Meta          map[string]any           `json:"meta,omitempty"`
}

// Identifier is a resource identifier object.
type Identifier struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// Relationship is a relationship object. Data is linkage built by ToOne
// (null or an identifier) or ToMany (an array, [] when empty); a to-many
// is never null. Every relationship the API renders carries its data; a
// long to-many one carries its first page, with links.next and
// meta.count (the whole count).
type Relationship struct {
	Links *Links          `json:"links,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
	Meta  map[string]any  `json:"meta,omitempty"`
}

// Links holds link members; empty ones are left out.
type Links struct {
	Self    string `json:"self,omitempty"`
	Related string `json:"related,omitempty"`
	First   string `json:"first,omitempty"`
	Prev    string `json:"prev,omitempty"`
	Next    string `json:"next,omitempty"`
	Last    string `json:"last,omitempty"`
}

// ToOne builds the linkage of a to-one relationship; a nil id renders as null.
func ToOne(typ string, id *string) json.RawMessage {
	if id == nil {
		return json.RawMessage("null")
	}
	// As json.Marshal(Identifier{...}) writes it, without reflection: every
	// rendered resource builds a few of these.
	b := make([]byte, 0, 24+len(typ)+len(*id))
	b = append(b, `{"type":`...)
	b = appendString(b, typ)
	b = append(b, `,"id":`...)
	b = appendString(b, *id)
	return append(b, '}')
}

// ToMany builds the linkage of a to-many relationship; none renders as [].
func ToMany(typ string, ids []string) json.RawMessage {
	out := make([]Identifier, len(ids))
	for i, id := range ids {
		out[i] = Identifier{Type: typ, ID: id}
	}
	b, _ := json.Marshal(out) // cannot fail: strings only
	return b
}

// AttributeMap returns attributes as a map (structs are round-tripped
// through JSON), so members can be dropped for sparse fieldsets.
func AttributeMap(attrs any) map[string]any {
	if attrs == nil {
		return nil
	}
	if m, ok := attrs.(map[string]any); ok {
		return m
	}
	b, err := json.Marshal(attrs)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}
