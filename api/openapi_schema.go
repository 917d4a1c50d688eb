package api

import (
	"reflect"
	"slices"
	"strings"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models/drafts"
)

// The JSON schemas of the OpenAPI description (openapi.go): JSON:API's
// document members, and each resource type's resource object, attributes
// and request documents, reflected from the structs the API renders and
// decodes.

// ref points at the component schema name.
func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// schemaName is a resource type's component name: "content-blocks" → "ContentBlocks".
func schemaName(typ string) string {
	var b strings.Builder
	for _, part := range strings.Split(typ, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func (b *specBuilder) commonSchemas() {
	s := b.schemas
	s["Links"] = map[string]any{"type": "object", "additionalProperties": map[string]any{
		"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "null"}, map[string]any{"type": "object"}}}}
	s["Meta"] = map[string]any{"type": "object"}
	s["JSONAPI"] = map[string]any{"type": "object", "properties": map[string]any{"version": map[string]any{"type": "string"}}}
	s["Error"] = map[string]any{"type": "object", "properties": map[string]any{
		"id": map[string]any{"type": "string"}, "status": map[string]any{"type": "string"}, "code": map[string]any{"type": "string"},
		"title": map[string]any{"type": "string"}, "detail": map[string]any{"type": "string"},
		"source": map[string]any{"type": "object", "properties": map[string]any{
			"pointer": map[string]any{"type": "string"}, "parameter": map[string]any{"type": "string"}, "header": map[string]any{"type": "string"}}},
		"meta": ref("Meta"), "links": ref("Links")}}
	s["ErrorDocument"] = map[string]any{"type": "object", "required": []any{"errors"}, "properties": map[string]any{
		"errors": map[string]any{"type": "array", "minItems": 1, "items": ref("Error")}, "meta": ref("Meta"), "jsonapi": ref("JSONAPI"), "links": ref("Links")}}
	var types []string
	for typ := range jsonapi.Relationships {
		types = append(types, typ)
	}
	slices.Sort(types)
	var anyOf []any
	for _, typ := range types {
		b.resourceSchemas(typ)
		anyOf = append(anyOf, ref(schemaName(typ)))
	}
	s["Resource"] = map[string]any{"oneOf": anyOf, "description": "Any resource object (included)."}
	s["Identifier"] = map[string]any{"type": "object", "required": []any{"type", "id"}, "properties": map[string]any{
		"type": map[string]any{"type": "string"}, "id": map[string]any{"type": "string"}, "meta": ref("Meta")}}
	// A request's relationship: linkage of one or many identifiers, or null.
	s["RelationshipData"] = map[string]any{"type": "object", "required": []any{"data"}, "properties": map[string]any{
		"data": map[string]any{"anyOf": []any{map[string]any{"type": "null"}, ref("Identifier"),
			map[string]any{"type": "array", "items": ref("Identifier")}}}}}
}

// identifierOf is an identifier of one of types.
func identifierOf(types []string) map[string]any {
	enum := make([]any, len(types))
	for i, t := range types {
		enum[i] = t
	}
	return map[string]any{"type": "object", "required": []any{"type", "id"}, "properties": map[string]any{
		"type": map[string]any{"enum": enum}, "id": map[string]any{"type": "string"}, "meta": ref("Meta")}}
}

// linkageSchema is a relationship's data: null or one identifier, or an array.
func linkageSchema(l jsonapi.Linkage) map[string]any {
	if l.ToMany {
		return map[string]any{"type": "array", "items": identifierOf(l.Types)}
	}
	return map[string]any{"oneOf": []any{map[string]any{"type": "null"}, identifierOf(l.Types)}}
}

// resourceSchemas adds, for typ: its resource object, attributes, and the
// single, collection and create/update request documents.
func (b *specBuilder) resourceSchemas(typ string) {
	name := schemaName(typ)
	rels := map[string]any{}
	var relNames []string
	for rel := range jsonapi.Relationships[typ] {
		relNames = append(relNames, rel)
	}
	slices.Sort(relNames)
	// Every relationship carries its linkage, and its links but on a
	// publish plan (which is not kept: nothing to link to); a to-many one
	// its first page, with meta.count (and links.next when there is more).
	required := []any{"data", "links"}
	if typ == "publish-plans" {
		required = []any{"data"}
	}
	for _, rel := range relNames {
		l := jsonapi.Relationships[typ][rel]
		meta := ref("Meta")
		if l.ToMany {
			meta = map[string]any{"type": "object", "properties": map[string]any{
				"count": map[string]any{"type": "integer", "minimum": 0, "description": "How many records the relationship has in all"}}}
		}
		rels[rel] = map[string]any{"type": "object", "required": required, "properties": map[string]any{
			"data": linkageSchema(l), "links": ref("Links"), "meta": meta}}
	}
	attrs := map[string]any{"type": "object"}
	if v, ok := attributeTypes[typ]; ok {
		attrs = structSchema(reflect.TypeOf(v))
	}
	b.schemas[name+"Attributes"] = attrs
	b.schemas[name] = map[string]any{"type": "object", "required": []any{"type", "id"}, "additionalProperties": false,
		"properties": map[string]any{
			"type":          map[string]any{"const": typ},
			"id":            map[string]any{"type": "string"},
			"attributes":    ref(name + "Attributes"),
			"relationships": map[string]any{"type": "object", "properties": rels, "additionalProperties": false},
			"links":         ref("Links"),
			"meta":          ref("Meta"),
		}}
	top := func(data any) map[string]any {
		return map[string]any{"type": "object", "required": []any{"data"}, "properties": map[string]any{
			"data": data, "included": map[string]any{"type": "array", "items": ref("Resource")},
			"links": ref("Links"), "meta": ref("Meta"), "jsonapi": ref("JSONAPI")}}
	}
	b.schemas[name+"Document"] = top(ref(name))
	b.schemas[name+"CollectionDocument"] = top(map[string]any{"type": "array", "items": ref(name)})
	b.schemas[name+"OrNullDocument"] = top(map[string]any{"oneOf": []any{map[string]any{"type": "null"}, ref(name)}})
	// Requests: the attributes the decoder takes, relationships as linkage.
	reqAttrs := map[string]any{"type": "object"}
	if v, ok := requestAttributeTypes[typ]; ok {
		reqAttrs = structSchema(reflect.TypeOf(v))
		props := reqAttrs["properties"].(map[string]any)
		for name, t := range jsonapi.Members(reflect.TypeOf(v)) {
			if t.Kind() == reflect.Interface {
				delete(props, name)
			}
		}
	}
	b.schemas[name+"RequestAttributes"] = reqAttrs
	if k, ok := drafts.KindOf(typ); ok {
		b.kindAttributeSchemas(k) // typed from the kind's declarations
		return
	}
	b.schemas[name+"Request"] = map[string]any{"type": "object", "required": []any{"data"}, "properties": map[string]any{
		"data": map[string]any{"type": "object", "required": []any{"type"}, "properties": map[string]any{
			"type":          map[string]any{"const": typ},
			"id":            map[string]any{"type": "string"},
			"attributes":    ref(name + "RequestAttributes"),
			"relationships": map[string]any{"type": "object", "additionalProperties": ref("RelationshipData")},
			"meta":          ref("Meta"),
		}}, "meta": ref("Meta")}}
}

// structSchema describes the JSON a struct marshals to. Attributes are
// never required: sparse fieldsets (fields[TYPE]) leave any of them out.
func structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	for name, ft := range jsonapi.Members(t) {
		props[name] = typeSchema(ft)
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

func typeSchema(t reflect.Type) map[string]any {
	if t == rawJSON {
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := typeSchema(t.Elem())
		if typ, ok := s["type"].(string); ok {
			s["type"] = []any{typ, "null"}
			return s
		}
		return map[string]any{"oneOf": []any{map[string]any{"type": "null"}, s}}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": []any{"array", "null"}, "items": typeSchema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": []any{"object", "null"}, "additionalProperties": typeSchema(t.Elem())}
	case reflect.Struct:
		if t.PkgPath() == "time" {
			return map[string]any{"type": "string", "format": "date-time"}
		}
		s := structSchema(t)
		// Structs from outside this package may marshal themselves; only the
		// field types are checked for them.
		if t.PkgPath() != reflect.TypeOf(specBuilder{}).PkgPath() {
			delete(s, "additionalProperties")
		}
		return s
	}
	return map[string]any{} // interfaces: any JSON
}

func jsonapiContent(schema map[string]any) map[string]any {
	return map[string]any{jsonapi.MediaType: map[string]any{"schema": schema}}
}
