package api

import (
	"fmt"

	"github.com/pressroom/pressroom/models/drafts"
)

// The schemas of the content kinds (pages, contents, content-blocks),
// whose attributes are not a struct but the kind's field declarations
// (drafts.Kind): the same declarations the decoder (changeOf), the checker
// (drafts.CheckAttributes) and the renderer (contentHandler.resource) use,
// so the description cannot drift from them.

// kindAttributeSchemas adds, for the kind k, the schemas resourceSchemas
// makes from structs for other types: the attributes a resource carries
// (its fields, the derived ones and the timestamps, read-only), the ones
// a request may send (the fields), and a create request naming what a
// create must send.
func (b *specBuilder) kindAttributeSchemas(k *drafts.Kind) {
	name := schemaName(k.Type)
	props, writable := map[string]any{}, map[string]any{}
	var required []any
	for _, f := range k.Fields {
		if f.IsRef() {
			continue
		}
		props[f.Name], writable[f.Name] = fieldSchema(f), fieldSchema(f)
		if f.Localized {
			props[f.Name] = readLocalized(props[f.Name].(map[string]any))
		}
		if f.RequiredOnCreate {
			required = append(required, f.Name)
		}
	}
	for _, f := range k.Derived {
		s := fieldSchema(f)
		s["readOnly"] = true
		props[f.Name] = s
	}
	for _, ts := range timestampAttributes {
		s := map[string]any{"type": "string", "format": "date-time", "readOnly": true, "description": timestampDescriptions[ts.name]}
		if ts.name == "published-at" || ts.name == "trashed-at" {
			s["type"] = []any{"string", "null"}
		}
		props[ts.name] = s
	}
	// Attributes are never required in a resource: sparse fieldsets
	// (fields[TYPE]) leave any of them out.
	b.schemas[name+"Attributes"] = map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	b.schemas[name+"RequestAttributes"] = map[string]any{"type": "object", "properties": writable, "additionalProperties": false}
	create := map[string]any{"type": "object", "properties": writable, "additionalProperties": false}
	if len(required) > 0 {
		create["required"] = required
	}
	b.schemas[name+"CreateRequestAttributes"] = create
	b.schemas[name+"Meta"] = kindMetaSchema(k)
	if r, ok := b.schemas[name].(map[string]any); ok {
		r["properties"].(map[string]any)["meta"] = ref(name + "Meta")
	}
	b.schemas[name+"Request"] = kindRequest(k, name+"RequestAttributes", false)
	b.schemas[name+"CreateRequest"] = kindRequest(k, name+"CreateRequestAttributes", true)
}

// readLocalized is s, the schema of a localized field (nullable and
// described as such by fieldSchema), as a resource shows it: the value in
// the request's locale or along its fallbacks (docs/locales.md).
func readLocalized(s map[string]any) map[string]any {
	s["description"] = fmt.Sprintf("%s A read shows the value in the request's locale, or along its fallbacks (then named in meta.fallbacks); null when no locale of the chain has one.", s["description"])
	return s
}

// kindMetaSchema is the meta of a resource of kind k: its version, the
// locales its localized values fell back to (meta.fallbacks, content.go)
// and, for pages, the page's path in every locale (meta.alternates).
func kindMetaSchema(k *drafts.Kind) map[string]any {
	var localized []any
	for _, f := range k.LocalizedFields() {
		localized = append(localized, f.Name)
	}
	props := map[string]any{
		"version": map[string]any{"type": "integer", "description": "The record's version, as its ETag: If-Match or meta.version on a write."},
		"fallbacks": map[string]any{"type": "object", "propertyNames": map[string]any{"enum": localized},
			"additionalProperties": map[string]any{"type": "string", "description": "A BCP 47 tag of the site."},
			"description":          "On a site with several locales: each localized attribute whose value is not the request's locale's own, mapped to the locale it came from along the locale's fallbacks (fr-CA → fr → en: {\"title\": \"fr\"}). Absent when every value is the locale's own; a value null in every locale of the chain is null and not named.",
			"example":              map[string]any{localized[0].(string): "fr"}},
	}
	if k == drafts.Pages {
		props["alternates"] = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"},
			"description": "On a site with several locales: every locale of the site mapped to the page's path in it (for hreflang links); live paths on a live read, drafted ones with include=draft or a preview. Absent on a site with one locale.",
			"example":     map[string]any{"en": "/about-us", "de": "/ueber-uns", "fr": "/a-propos", "fr-CA": "/a-propos"}}
	}
	return map[string]any{"type": "object", "properties": props}
}

// timestampDescriptions say what each timestamp of a content resource is.
var timestampDescriptions = map[string]string{
	"published-at": "When the record was first published (null until then).",
	"trashed-at":   "When the record was drafted for deletion (null otherwise); in the trash (filter[trashed]=true), when its deletion was published.",
	"created-at":   "When the record was created.",
	"updated-at":   "When the record last changed.",
}

// kindRequest is the document a create (create: what it must send
// required) or an update of the kind k sends: the attributes the schema
// attrs names, and the kind's references as to-one relationships (a
// required one never null).
func kindRequest(k *drafts.Kind, attrs string, create bool) map[string]any {
	rels := map[string]any{}
	var required []any
	for _, f := range k.Fields {
		if !f.IsRef() {
			continue
		}
		data := map[string]any{"type": "object", "required": []any{"type", "id"}, "properties": map[string]any{
			"type": map[string]any{"type": "string", "enum": []any{f.RefType}}, "id": map[string]any{"type": "string"}, "meta": ref("Meta")}}
		if f.Type == drafts.NullRef {
			data = map[string]any{"oneOf": []any{map[string]any{"type": "null"}, data}}
		}
		rels[f.Name] = map[string]any{"type": "object", "required": []any{"data"}, "description": f.Description,
			"properties": map[string]any{"data": data, "meta": ref("Meta")}}
		if create && f.RequiredOnCreate {
			required = append(required, f.Name)
		}
	}
	relSchema := map[string]any{"type": "object", "properties": rels, "additionalProperties": false}
	dataRequired := []any{"type"}
	if len(required) > 0 {
		relSchema["required"] = required
		dataRequired = append(dataRequired, "relationships")
	}
	return map[string]any{"type": "object", "required": []any{"data"}, "properties": map[string]any{
		"data": map[string]any{"type": "object", "required": dataRequired, "properties": map[string]any{
			"type":          map[string]any{"const": k.Type},
			"id":            map[string]any{"type": "string"},
			"attributes":    ref(attrs),
			"relationships": relSchema,
			"meta":          ref("Meta"),
		}}, "meta": ref("Meta")}}
}

// fieldSchema describes the values of the field f as its declaration
// constrains them (drafts.Field).
func fieldSchema(f drafts.Field) map[string]any {
	s := map[string]any{"description": f.Description}
	switch f.Type {
	case drafts.Bool:
		s["type"] = "boolean"
	case drafts.Int:
		s["type"], s["format"] = "integer", "int32"
	case drafts.NullString:
		s["type"] = []any{"string", "null"}
	default:
		s["type"] = "string"
	}
	if len(f.Enum) > 0 {
		enum := make([]any, len(f.Enum))
		for i, v := range f.Enum {
			enum[i] = v
		}
		s["enum"] = enum
	}
	if f.MinLen > 0 {
		s["minLength"] = f.MinLen
	}
	// A string has no more characters than bytes: MaxBytes bounds its
	// length too.
	if max := f.MaxLen; max > 0 || f.MaxBytes > 0 {
		if max == 0 || (f.MaxBytes > 0 && f.MaxBytes < max) {
			max = f.MaxBytes
		}
		s["maxLength"] = max
	}
	if f.MinLen > 0 || f.MaxLen > 0 {
		s["description"] = f.Description + " Its length is counted in characters once surrounding space is trimmed."
	}
	if f.MaxBytes > 0 {
		s["description"] = fmt.Sprintf("%s At most %d bytes.", s["description"], f.MaxBytes)
	}
	if f.Pattern != nil {
		s["pattern"] = f.Pattern.String()
	}
	if f.Example != "" {
		s["example"] = f.Example
	}
	if f.Format != "" {
		s["format"] = f.Format
	}
	if f.Rule != "" {
		s["description"] = fmt.Sprintf("%s Rule: %s", s["description"], f.Rule)
	}
	if f.Default != nil {
		s["default"] = f.Default
	}
	if f.Localized {
		// Written in another locale than the base, null clears that
		// locale's value; a record created in another locale has no base
		// title (docs/locales.md).
		s["type"] = []any{s["type"], "null"}
		if t, ok := s["type"].([]any); ok && len(t) == 2 {
			if inner, nested := t[0].([]any); nested {
				s["type"] = inner // a NullString is nullable already
			}
		}
		s["description"] = fmt.Sprintf("%s Localized: one value per site locale (locale-tag); null written in a locale other than the base clears that locale's value.", s["description"])
	}
	return s
}
