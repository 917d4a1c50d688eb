package api

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// Examples of the OpenAPI description are made from its schemas (so they
// follow every change of an attribute): each response's and each JSON:API
// request's, a value of each member by its name (exampleStrings), format,
// enum or type. TestOpenAPIExamplesValidate validates every one with
// kin-openapi.

// exampleID is the id every example uses.
const exampleID = "0b6f6c8e-3f7e-4a53-9a0d-7d1c1b3c2a10"

// exampleStrings are example values of string members, by member name.
var exampleStrings = map[string]any{
	"id": exampleID, "title": "Spring issue", "description": "Our spring look.", "name": "Editor",
	"path": "images/logo.png", "file-name": "cover.png", "filename": "cover.png", "content-type": "image/png",
	"key": "6a0c…/cover.png", "slug": "spring", "subdomain-slug": "demo", "comments": "Spring issue",
	"content": "<main>{{ content }}</main>", "href": "/spring", "user-agent": "Mozilla/5.0",
	"asset-type": "image", "sub-type": "png", "fingerprint": "9f86d081884c7d65", "secret": "whsec_…",
	"error-message": nil, "code": "invalid_title", "detail": "title must be 1 to 200 characters.",
	"status": "422", "pointer": "/data/attributes/title", "version": "1.1",
}

// exampleFormats are example values of strings by format.
var exampleFormats = map[string]any{
	"date-time": "2026-03-01T09:30:00.000Z", "uuid": exampleID, "uri": "https://cdn.pressroom.test/assets/cover.png",
	"email": "editor@demo.test",
}

// exampleRelationships are the relationships a create example sends, by type.
var exampleRelationships = map[string][]string{
	"layouts": {"theme"}, "theme-assets": {"theme", "asset"}, "revisions": {"drafts"}, "publish-plans": {"drafts"},
	"pages": {"layout"}, "contents": {"page"}, "content-blocks": {"content"},
}

// exampleSkipped are members an example leaves out: optional document
// members, and request attributes only some requests send.
var exampleSkipped = map[string]bool{"included": true, "meta": true, "jsonapi": true, "source": true,
	"rotate-secret": true, "force": true, "publish-at": true}

// addExamples gives every response content of op that has a schema and no
// example one made from its schema.
func (b *specBuilder) addExamples(op map[string]any) {
	for _, r := range op["responses"].(map[string]any) {
		content, _ := r.(map[string]any)["content"].(map[string]any)
		for _, mt := range content {
			mt := mt.(map[string]any)
			if _, has := mt["example"]; has || mt["schema"] == nil {
				continue
			}
			mt["example"] = b.exampleOf("", mt["schema"].(map[string]any), 0)
		}
	}
}

// requestExample is a JSON:API request body of typ made from schema, with
// the relationships a create of typ sends.
func (b *specBuilder) requestExample(typ, schema string, create bool) any {
	doc := b.exampleOf("", ref(schema), 0).(map[string]any)
	data := doc["data"].(map[string]any)
	if !create {
		data["id"] = exampleID
	}
	rels := map[string]any{}
	for _, name := range exampleRelationships[typ] {
		l := jsonapi.Relationships[typ][name]
		ident := map[string]any{"type": l.Types[0], "id": exampleID}
		if l.ToMany {
			rels[name] = map[string]any{"data": []any{ident}}
		} else {
			rels[name] = map[string]any{"data": ident}
		}
	}
	if create && len(rels) > 0 {
		data["relationships"] = rels
	} else {
		delete(data, "relationships")
	}
	return doc
}

// exampleOf is a value schema admits; name is the member it is for.
func (b *specBuilder) exampleOf(name string, s map[string]any, depth int) any {
	if r, ok := s["$ref"].(string); ok {
		if r == "#/components/schemas/Links" {
			return map[string]any{"self": "http://localhost:8080/" + exampleID}
		}
		return b.exampleOf(name, b.schemas[strings.TrimPrefix(r, "#/components/schemas/")].(map[string]any), depth)
	}
	if v, ok := s["example"]; ok {
		return v
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if enum := nonNull(s["enum"]); len(enum) > 0 {
		return enum[0]
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if opts, ok := s[k].([]any); ok {
			for _, o := range opts {
				if o.(map[string]any)["type"] != "null" {
					return b.exampleOf(name, o.(map[string]any), depth+1)
				}
			}
		}
	}
	return b.exampleOfType(name, s, depth)
}

func (b *specBuilder) exampleOfType(name string, s map[string]any, depth int) any {
	typ, _ := s["type"].(string)
	if types, ok := s["type"].([]any); ok {
		typ = types[0].(string)
	}
	switch typ {
	case "string":
		if v, ok := exampleFormats[str(s["format"])]; ok {
			return v
		}
		if v, ok := exampleStrings[name]; ok && v != nil {
			return v
		}
		return "…"
	case "integer", "number":
		if m, ok := s["minimum"]; ok {
			return m
		}
		return 1
	case "boolean":
		return true
	case "array":
		if items, ok := s["items"].(map[string]any); ok && depth < 8 {
			return []any{b.exampleOf(name, items, depth+1)}
		}
		return []any{}
	case "object":
		return b.exampleObject(s, depth)
	}
	return nil
}

func (b *specBuilder) exampleObject(s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	required, _ := s["required"].([]any)
	for name, p := range props {
		if depth > 8 || exampleSkipped[name] && !slices.Contains(required, any(name)) {
			continue
		}
		out[name] = b.exampleOf(name, p.(map[string]any), depth+1)
	}
	return out
}

func nonNull(v any) []any {
	var out []any
	switch vs := v.(type) {
	case []any:
		for _, x := range vs {
			if x != nil {
				out = append(out, x)
			}
		}
	case []string:
		for _, x := range vs {
			out = append(out, x)
		}
	}
	return out
}

var componentRef = regexp.MustCompile(`#/components/(schemas|parameters|responses)/([A-Za-z0-9_.-]+)`)

// prune drops the components no operation refers to, directly or through
// other components.
func (b *specBuilder) prune(doc map[string]any) {
	components := doc["components"].(map[string]any)
	used := map[string]bool{}
	var visit func(v any)
	visit = func(v any) {
		raw, _ := json.Marshal(v)
		for _, m := range componentRef.FindAllStringSubmatch(string(raw), -1) {
			key := m[1] + "/" + m[2]
			if used[key] {
				continue
			}
			used[key] = true
			visit(components[m[1]].(map[string]any)[m[2]])
		}
	}
	visit(doc["paths"])
	for _, kind := range []string{"schemas", "parameters", "responses"} {
		for name := range components[kind].(map[string]any) {
			if !used[kind+"/"+name] {
				delete(components[kind].(map[string]any), name)
			}
		}
	}
}
