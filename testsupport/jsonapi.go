package testsupport

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// The JSON:API 1.1 schema, copied unchanged from shared/vendor/jsonapi-1.1
// (CC0) so tests do not depend on files outside the checkout.
//
//go:embed testdata/jsonapi-1.1/*.json
var schemaFiles embed.FS

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// ValidateJSONAPI fails the test unless body is a JSON:API 1.1 response
// document whose relationships have the arity Pressroom declares for them
// (jsonapi.Relationships). Every API test checks its responses through it.
func ValidateJSONAPI(t testing.TB, body []byte) {
	t.Helper()
	if err := CheckJSONAPI(body); err != nil {
		t.Fatal(err)
	}
}

// CheckJSONAPI is ValidateJSONAPI for code that has no *testing.T at hand
// (goroutines sending concurrent requests): the reason body is not a valid
// response document, or nil.
func CheckJSONAPI(body []byte) error {
	schemaOnce.Do(func() { schema, schemaErr = compileSchema() })
	if schemaErr != nil {
		return fmt.Errorf("testsupport: compile JSON:API schema: %w", schemaErr)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("response is not JSON: %w\n%s", err, body)
	}
	if err := schema.Validate(doc); err != nil {
		return fmt.Errorf("response is not a valid JSON:API 1.1 document: %w\n%s", err, indent(body))
	}
	if err := checkLinkage(body); err != nil {
		return fmt.Errorf("response breaks the declared relationships (api/jsonapi/schema.go): %w\n%s", err, indent(body))
	}
	return nil
}

// checkLinkage checks every relationship of every resource object in a
// document (primary data and included) against jsonapi.Relationships: a
// to-many relationship's data is an array (never null), a to-one's is null
// or one identifier, identifiers have a declared type, every relationship
// has data, and no resource carries a relationship its type does not
// declare. The linkage document of
// a relationship endpoint (links.self .../relationships/<name>) is checked
// against the relationship it names.
func checkLinkage(body []byte) error {
	var doc struct {
		Data     json.RawMessage   `json:"data"`
		Included []json.RawMessage `json:"included"`
		Links    struct {
			Self string `json:"self"`
		} `json:"links"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return err
	}
	if doc.Data == nil {
		return nil // an error or meta document
	}
	resources := doc.Included
	if typ, name, ok := relationshipEndpoint(doc.Links.Self); ok {
		l, ok := jsonapi.Relationships[typ][name]
		if !ok {
			return fmt.Errorf("the relationship endpoint %s names %s.%s, which is not declared", doc.Links.Self, typ, name)
		}
		if err := checkData(l, doc.Data, "data ("+typ+"."+name+")"); err != nil {
			return err
		}
	} else {
		switch d := bytes.TrimSpace(doc.Data); {
		case len(d) > 0 && d[0] == '[':
			var many []json.RawMessage
			if err := json.Unmarshal(d, &many); err != nil {
				return err
			}
			resources = append(many, resources...)
		case len(d) > 0 && d[0] == '{':
			resources = append([]json.RawMessage{d}, resources...)
		}
	}
	for _, raw := range resources {
		if err := checkResource(raw); err != nil {
			return err
		}
	}
	return nil
}

func checkResource(raw json.RawMessage) error {
	var r struct {
		Type          string `json:"type"`
		ID            string `json:"id"`
		Relationships map[string]struct {
			Data json.RawMessage `json:"data"`
		} `json:"relationships"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	declared, known := jsonapi.Relationships[r.Type]
	if !known {
		if len(r.Relationships) > 0 {
			return fmt.Errorf("%s %s has relationships, but its type is not declared in jsonapi.Relationships", r.Type, r.ID)
		}
		return nil
	}
	for name, rel := range r.Relationships {
		l, ok := declared[name]
		if !ok {
			return fmt.Errorf("%s %s carries the relationship %q, which its type does not declare", r.Type, r.ID, name)
		}
		if rel.Data == nil {
			// DESIGN.md §2: every relationship object carries its linkage
			// (a long to-many one its first page, with links.next and
			// meta.count).
			return fmt.Errorf("%s %s relationships.%s has no data: every relationship carries its linkage", r.Type, r.ID, name)
		}
		if err := checkData(l, rel.Data, fmt.Sprintf("%s %s relationships.%s.data", r.Type, r.ID, name)); err != nil {
			return err
		}
	}
	return nil
}

// checkData checks one relationship's linkage against its declaration.
func checkData(l jsonapi.Linkage, data json.RawMessage, where string) error {
	d := bytes.TrimSpace(data)
	var idents []jsonapi.Identifier
	switch {
	case bytes.Equal(d, []byte("null")):
		if l.ToMany {
			return fmt.Errorf("%s is null, but the relationship is to-many: its linkage is an array ([] when empty)", where)
		}
		return nil
	case len(d) > 0 && d[0] == '[':
		if !l.ToMany {
			return fmt.Errorf("%s is an array, but the relationship is to-one: null or one identifier", where)
		}
		if err := json.Unmarshal(d, &idents); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	default:
		if l.ToMany {
			return fmt.Errorf("%s is one identifier, but the relationship is to-many: an array", where)
		}
		var id jsonapi.Identifier
		if err := json.Unmarshal(d, &id); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		idents = append(idents, id)
	}
	for _, id := range idents {
		if !slices.Contains(l.Types, id.Type) {
			return fmt.Errorf("%s names a %q, but the relationship holds only %v", where, id.Type, l.Types)
		}
	}
	return nil
}

// relationshipEndpoint reads the resource type and relationship name from
// the self link of a relationship endpoint (/<type>/<id>/relationships/<name>,
// or /site/relationships/<name> for the caller's site).
func relationshipEndpoint(self string) (typ, name string, ok bool) {
	u, err := url.Parse(self)
	if err != nil {
		return "", "", false
	}
	before, name, found := strings.Cut(u.Path, "/relationships/")
	if !found || name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	segs := strings.Split(strings.Trim(before, "/"), "/")
	switch {
	case len(segs) == 1 && segs[0] == "site":
		return "sites", name, true
	case len(segs) >= 2:
		return segs[len(segs)-2], name, true
	}
	return "", "", false
}

func compileSchema() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, name := range []string{"schema.json", "schema_create_resource.json", "schema_update_resource.json", "schema_update_relationship.json"} {
		b, err := schemaFiles.ReadFile("testdata/jsonapi-1.1/" + name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if id == "" {
			id = "file:///" + name
		}
		if err := c.AddResource(id, doc); err != nil {
			return nil, err
		}
	}
	return c.Compile("https://jsonapi.org/schemas/spec/v1.1/draft")
}

func indent(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}
