package testsupport

import (
	"bytes"
	"embed"
	"encoding/json"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
// document. Every API test checks its responses through it.
func ValidateJSONAPI(t testing.TB, body []byte) {
	t.Helper()
	schemaOnce.Do(func() { schema, schemaErr = compileSchema() })
	if schemaErr != nil {
		t.Fatalf("testsupport: compile JSON:API schema: %v", schemaErr)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, body)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("response is not a valid JSON:API 1.1 document: %v\n%s", err, indent(body))
	}
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
