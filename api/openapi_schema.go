package api

import (
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/webhooks"
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
	s["OAuthError"] = map[string]any{"type": "object", "required": []any{"error"}, "description": "An OAuth error (RFC 6749 §5.2)", "properties": map[string]any{
		"error": map[string]any{"type": "string"}, "error_description": map[string]any{"type": "string"}}}
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
	// publish plan (which is not kept: nothing to link to) and on a record
	// of the trash (GET /<kind>?filter[trashed]=true: its row is gone, so
	// it has no endpoints); a to-many one its first page, with meta.count
	// (and links.next when there is more).
	required := []any{"data", "links"}
	if _, trashable := jsonapi.Relationships[typ]["trashed-by"]; typ == "publish-plans" || trashable {
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
		attrs = attributesSchema(typ, reflect.TypeOf(v))
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
	for _, create := range []bool{false, true} {
		reqAttrs, schema := map[string]any{"type": "object"}, name+"Request"
		if create {
			schema = name + "CreateRequest"
		}
		if v, ok := requestAttributeTypes[typ]; ok {
			reqAttrs = requestSchema(reflect.TypeOf(v), create)
		}
		if v, ok := patchAttributeTypes[typ]; ok && !create {
			reqAttrs = requestSchema(reflect.TypeOf(v), true)
		}
		b.schemas[schema+"Attributes"] = reqAttrs
		b.schemas[schema] = requestDocument(typ, schema+"Attributes", create)
	}
	if k, ok := drafts.KindOf(typ); ok {
		b.kindAttributeSchemas(k) // typed from the kind's declarations (openapi_kinds.go)
	}
}

// requestDocument is the body of a create (no id) or an update of typ.
func requestDocument(typ, attributes string, create bool) map[string]any {
	data := map[string]any{"type": "object", "required": []any{"type"}, "properties": map[string]any{
		"type":          map[string]any{"const": typ},
		"id":            map[string]any{"type": "string"},
		"attributes":    ref(attributes),
		"relationships": map[string]any{"type": "object", "additionalProperties": ref("RelationshipData")},
		"meta":          ref("Meta"),
	}}
	if create {
		delete(data["properties"].(map[string]any), "id") // ids are made by the server (403 client_id_unsupported)
	}
	return map[string]any{"type": "object", "required": []any{"data"}, "properties": map[string]any{"data": data, "meta": ref("Meta")}}
}

// attributeEnums are the values an attribute tagged `oas:"enum:NAME"`
// takes, from the constants the code uses.
var attributeEnums = map[string][]string{
	"draft-event":     {drafts.EventCreate, drafts.EventUpdate, drafts.EventDelete},
	"revision-status": {drafts.Scheduled, drafts.Publishing, drafts.Published, drafts.Failed, drafts.Cancelled},
	"release-status":  drafts.ReleaseStatuses,
	"review-verdict":  {drafts.VerdictRequested, drafts.VerdictApproved, drafts.VerdictChangesRequested},
	"upload-status":   {models.UploadProcessing, models.UploadFinished, models.UploadError},
	"delivery-status": {models.DeliveryPending, models.DeliverySucceeded, models.DeliveryFailed},
	"webhook-event":   webhooks.Events,
	"role":            roleNames(),
}

// attributePatterns are the patterns a member tagged `oas:"pattern:NAME"`
// matches: the validator's own regular expression, and an example.
var attributePatterns = map[string]struct {
	re      *regexp.Regexp
	example string
}{
	"liquid-file": {fileNamePattern, "page.liquid"},
	"dns-label":   {slugPattern, "demo"},
}

// oasTag is a member's `oas` struct tag: comma-separated facts the JSON
// type does not carry. A format (date-time, uri, uuid, email), enum:NAME
// (attributeEnums), pattern:NAME (attributePatterns), and on request members: required (on create: the
// validator refuses a create without it) and nullable (null is accepted;
// otherwise a request pointer only tells omitted from sent).
type oasTag struct {
	format, enum, pattern string
	required, nullable    bool
}

func parseOASTag(f reflect.StructField) oasTag {
	var t oasTag
	for _, part := range strings.Split(f.Tag.Get("oas"), ",") {
		switch name, arg, _ := strings.Cut(part, ":"); name {
		case "required":
			t.required = true
		case "nullable":
			t.nullable = true
		case "enum":
			t.enum = arg
		case "pattern":
			t.pattern = arg
		case "":
		default:
			t.format = name
		}
	}
	return t
}

// attributesSchema describes the attributes of typ as the API renders
// them. Attributes are never required: sparse fieldsets (fields[TYPE])
// leave any of them out. One a request of typ cannot set (no request
// struct, or a member kept there only to be refused) is readOnly.
// (Content kinds, whose attributes are declared per kind, are not
// described here.)
func attributesSchema(typ string, t reflect.Type) map[string]any {
	s := structSchema(t)
	writable := map[string]bool{}
	for _, table := range []map[string]any{requestAttributeTypes, patchAttributeTypes} {
		if v, ok := table[typ]; ok {
			for name, f := range jsonapi.MemberFields(reflect.TypeOf(v)) {
				writable[name] = writable[name] || f.Type.Kind() != reflect.Interface
			}
		}
	}
	for name, p := range s["properties"].(map[string]any) {
		if !writable[name] {
			p.(map[string]any)["readOnly"] = true
		}
	}
	return s
}

// requestSchema describes the attributes a request decodes into t: members
// of interface type are there only to be refused (read-only) and are left
// out; a pointer is nullable only when tagged so; required lists those a
// create must send (create: the schema of a create's attributes).
func requestSchema(t reflect.Type, create bool) map[string]any {
	props := map[string]any{}
	var required []any
	for _, name := range slices.Sorted(maps.Keys(jsonapi.MemberFields(t))) {
		f := jsonapi.MemberFields(t)[name]
		if f.Type.Kind() == reflect.Interface {
			continue
		}
		tag := parseOASTag(f)
		ft := f.Type
		if ft.Kind() == reflect.Pointer && !tag.nullable {
			ft = ft.Elem()
		}
		p := memberSchema(ft, tag)
		if types, ok := p["type"].([]any); ok && !tag.nullable {
			p["type"] = types[0] // a slice or map: null is refused all the same
		}
		props[name] = p
		if tag.required && create {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// structSchema describes the JSON a struct marshals to.
func structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	for name, f := range jsonapi.MemberFields(t) {
		props[name] = memberSchema(f.Type, parseOASTag(f))
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

// memberSchema is typeSchema with the member's tag applied: the format on
// a string, the enum on a string or on an array's items.
func memberSchema(t reflect.Type, tag oasTag) map[string]any {
	s := typeSchema(t)
	target := s
	if items, ok := s["items"].(map[string]any); ok {
		target = items
	}
	if tag.format != "" {
		target["format"] = tag.format
	}
	if p, ok := attributePatterns[tag.pattern]; ok {
		target["pattern"], target["example"] = p.re.String(), p.example
	}
	if tag.enum != "" {
		var enum []any
		for _, v := range attributeEnums[tag.enum] {
			enum = append(enum, v)
		}
		if nullable, _ := target["type"].([]any); len(nullable) == 2 && nullable[1] == "null" {
			enum = append(enum, nil)
		}
		target["enum"] = enum
	}
	return s
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
