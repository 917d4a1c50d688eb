package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// The OpenAPI 3.1 description (GET /openapi.json) is generated, not
// written: from the routes the app registered (app.GetRoutes), the resource
// types and relationships in jsonapi.Relationships, and the attribute
// structs in attributeTypes. A route of the JSON:API shape
// (/{type}, /{type}/{id}, /{type}/{id}/{relationship},
// /{type}/{id}/relationships/{relationship}) is described from its type
// alone; anything else needs a line in specialRoutes, and New fails until it
// has one, so an endpoint cannot ship undescribed. See docs/architecture.md
// "Adding a resource".

// attributeTypes are the structs each resource type's attributes are
// rendered from; the description reflects their JSON fields. A type not
// listed (the content kinds, whose attributes are built per kind) is
// described as an object of any attributes.
var attributeTypes = map[string]any{
	"sites":              siteAttributes{},
	"users":              userAttributes{},
	"themes":             themeAttributes{},
	"layouts":            layoutAttributes{},
	"theme-assets":       themeAssetAttributes{},
	"drafts":             draftAttributes{},
	"hyperlinks":         hyperlinkAttributes{},
	"revisions":          revisionAttributes{},
	"versions":           versionAttributes{},
	"upload-signatures":  signatureAttributes{},
	"asset-uploads":      uploadAttributes{},
	"assets":             assetAttributes{},
	"asset-images":       imageAttributes{},
	"publish-plans":      planAttributes{},
	"webhooks":           webhookAttributes{},
	"webhook-deliveries": deliveryAttributes{},
}

// requestAttributeTypes are the structs create and update requests are
// decoded into (decodeCreate, decodePatch). Fields of interface type are
// there only to refuse read-only attributes, so they are not described as
// accepted. A type not listed takes an object of any attributes (the
// content kinds check theirs per kind).
var requestAttributeTypes = map[string]any{
	"themes":            themeRequest{},
	"layouts":           layoutRequest{},
	"theme-assets":      themeAssetRequest{},
	"upload-signatures": signatureRequest{},
	"asset-uploads":     uploadRequest{},
	"revisions":         revisionRequest{},
	"publish-plans":     revisionRequest{}, // the body of POST /revisions (readPublishRequest)
	"webhooks":          webhookRequest{},
}

// opKind is how an operation answers.
type opKind int

const (
	opOne           opKind = iota // one resource of typ (status 200 or the one given)
	opMany                        // a collection of typ
	opNoContent                   // 204, no body
	opLinkage                     // the linkage of typ's relationship rel
	opJSON                        // plain JSON (not JSON:API)
	opHTML                        // an HTML page
	opOneOrAccepted               // 201 with the resource, or 202 while it is being made
	opRelated                     // the resources of a relationship (related), or null
	opScript                      // a JavaScript file
)

// special describes an endpoint that is not of the plain JSON:API shape.
type special struct {
	summary    string
	kind       opKind
	typ        string // resource type answered (opOne, opMany, opLinkage)
	rel        string // relationship (opLinkage)
	status     int    // success status (0: 200)
	public     bool   // no token needed
	body       string // request body: a resource type (JSON:API), "form" (OAuth form), "" none
	query      bool   // takes the JSON:API query parameters (include, fields…)
	nullable   bool   // opOne: data may be null
	idempotent bool   // takes Idempotency-Key
	// related is the relationship a related-resource endpoint answers
	// (GET /{type}/{id}/{relationship}): its resources, or null.
	related *jsonapi.Linkage
}

// specialRoutes describe every route that is not /{type}[/{id}[/…]] of a
// type in jsonapi.Relationships, keyed "METHOD /path" as registered.
var specialRoutes = map[string]special{
	"GET /healthz":                          {summary: "Liveness: the process answers", kind: opJSON, public: true},
	"GET /readyz":                           {summary: "Readiness: Postgres, Temporal and both buckets answer (503 naming the failing ones otherwise)", kind: opJSON, public: true},
	"GET /openapi.json":                     {summary: "This OpenAPI 3.1 description", kind: opJSON, public: true},
	"GET /docs":                             {summary: "The API reference, rendered from /openapi.json", kind: opHTML, public: true},
	"GET /docs/redoc.standalone.js":         {summary: "The reference renderer (Redoc), served with the binary", kind: opScript, public: true},
	"GET /asset-types":                      {summary: "The asset types table: which content types are accepted and as what", kind: opJSON},
	"GET /.well-known/openid-configuration": {summary: "OpenID discovery document", kind: opJSON, public: true},
	"GET /oauth/keys":                       {summary: "The token signing keys (JWKS)", kind: opJSON, public: true},
	"POST /oauth/token":                     {summary: "Token endpoint: password, authorization_code and refresh_token grants", kind: opJSON, public: true, body: "form"},
	"POST /oauth/token.json":                {summary: "Token endpoint for the password grant only", kind: opJSON, public: true, body: "form"},
	"POST /oauth/introspect":                {summary: "Token introspection (RFC 7662); client authentication required", kind: opJSON, public: true, body: "form"},
	"POST /oauth/revoke":                    {summary: "Token revocation (RFC 7009); a refresh token revokes its whole chain", kind: opJSON, public: true, body: "form"},
	"GET /oauth/authorize":                  {summary: "Starts the authorization code flow (PKCE; redirect_uri may be urn:ietf:wg:oauth:2.0:oob); redirects to the sign-in form", kind: opHTML, public: true, status: 302},
	"GET /oauth/login":                      {summary: "The sign-in form", kind: opHTML, public: true},
	"POST /oauth/login":                     {summary: "Signs in; hands out the code by redirect, or on a page for the out-of-band redirect", kind: opHTML, public: true, body: "form"},
	"GET /site":                             {summary: "The caller's site", kind: opOne, typ: "sites", query: true},
	"PATCH /site":                           {summary: "Update the caller's site", kind: opOne, typ: "sites", body: "sites", query: true},
	"GET /site/theme":                       {summary: "The site's live theme (data null while it has none)", kind: opOne, typ: "themes", query: true, nullable: true},
	"GET /site/relationships/theme":         {summary: "The site's theme linkage", kind: opLinkage, typ: "sites", rel: "theme"},
	"PATCH /site/relationships/theme":       {summary: "Change the site's live theme", kind: opLinkage, typ: "sites", rel: "theme", body: "linkage"},
	"GET /users/me":                         {summary: "The signed-in user", kind: opOne, typ: "users"},
	"POST /upload-signatures":               {summary: "A signed form for uploading one file straight to storage", kind: opOne, typ: "upload-signatures", body: "upload-signatures"},
	"POST /asset-uploads":                   {summary: "Notify an upload to storage; it joins its site's processing queue (poll the Location; meta.queue-position while it waits)", kind: opOne, typ: "asset-uploads", status: 202, body: "asset-uploads"},
	"POST /revisions":                       {summary: "Publish drafts: 201 when published within the wait, 202 while publishing (poll the Location); with publish-at, 201 scheduled; with relationships.reverts, a rollback of a published revision", kind: opOneOrAccepted, typ: "revisions", body: "revisions", query: true, idempotent: true},
	"DELETE /revisions/:id":                 {summary: "Cancel a scheduled revision (409 once it is publishing, published, failed or cancelled)", kind: opNoContent, typ: "revisions"},
	"POST /publish-plans":                   {summary: "A dry run of POST /revisions with the same attributes and relationships (a publish, scheduled or not, or a rollback with reverts and force): the steps in order, what they pull in, the links they break and, as conflicts (still 200), what would make it answer 409 or 412; changes nothing; an Idempotency-Key is ignored", kind: opOne, typ: "publish-plans", body: "publish-plans", query: true},
	"POST /webhook-deliveries/:id/retry":    {summary: "Redeliver a failed delivery now (422 unless it failed)", kind: opOne, typ: "webhook-deliveries", status: 202},
	"GET /revisions/:id/versions":           {summary: "The versions a revision published", kind: opMany, typ: "versions", query: true},
	"GET /versions/:id":                     {summary: "One published version", kind: opOne, typ: "versions", query: true},
	"DELETE /drafts/:id":                    {summary: "Revert a draft", kind: opNoContent},
}

// servedRoutes are the method and path pairs the app answers, without the
// HEAD twin Fiber adds to every GET and without the 405 answers oauth's
// serve registers with app.All for the methods a path does not serve. Fiber
// merges a second registration of a method and path into the first route,
// so on a path with every method registered the served methods are the ones
// with more than the one 405 handler.
func servedRoutes(routes []fiber.Route) [][2]string {
	handlers := map[[2]string]int{}
	methods := map[string]int{}
	for _, r := range routes {
		k := [2]string{r.Method, r.Path}
		if _, seen := handlers[k]; !seen {
			methods[r.Path]++
		}
		handlers[k] += len(r.Handlers)
	}
	var out [][2]string
	for k, n := range handlers {
		method, path := k[0], k[1]
		allMethods := methods[path] >= len(fiber.DefaultMethods)
		if method == fiber.MethodHead || allMethods && n < 2 {
			continue
		}
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][1] != out[j][1] {
			return out[i][1] < out[j][1]
		}
		return out[i][0] < out[j][0]
	})
	return out
}

// buildOpenAPI describes routes. It fails on a route it cannot describe.
func buildOpenAPI(routes []fiber.Route, publicURL string) ([]byte, error) {
	b := specBuilder{paths: map[string]map[string]any{}, schemas: map[string]any{}}
	b.commonSchemas()
	var errs []string
	for _, r := range servedRoutes(routes) {
		if err := b.describe(r[0], r[1]); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapi: %s", strings.Join(errs, "; "))
	}
	doc := map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"info": map[string]any{
			"title":   "Pressroom API",
			"version": "1.0.0",
			"description": "Content-site editing API: JSON:API 1.1 documents (application/vnd.api+json) " +
				"behind OAuth 2.0 bearer tokens. Generated from the server's own routes and resource definitions.",
		},
		"servers":    []any{map[string]any{"url": publicURL}},
		"security":   []any{map[string]any{"bearer": []any{}}},
		"paths":      b.paths,
		"components": map[string]any{"schemas": b.schemas, "securitySchemes": securitySchemes, "parameters": parameters},
	}
	return json.Marshal(doc)
}

var securitySchemes = map[string]any{
	"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
		"description": "An access token from POST /oauth/token (password grant, or the authorization code flow with PKCE)."},
}

var parameters = map[string]any{
	"id":      map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string", "format": "uuid"}},
	"include": map[string]any{"name": "include", "in": "query", "description": "Comma-separated relationship paths to include", "schema": map[string]any{"type": "string"}},
	"fields":  map[string]any{"name": "fields", "in": "query", "style": "deepObject", "explode": true, "description": "Sparse fieldsets: fields[TYPE]=a,b", "schema": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}},
	"filter":  map[string]any{"name": "filter", "in": "query", "style": "deepObject", "explode": true, "description": "Filters: filter[NAME]=value", "schema": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}},
	"sort":    map[string]any{"name": "sort", "in": "query", "description": "Comma-separated sort keys, - for descending", "schema": map[string]any{"type": "string"}},
	"page":    map[string]any{"name": "page", "in": "query", "style": "deepObject", "explode": true, "description": "page[number] and page[size]", "schema": map[string]any{"type": "object", "properties": map[string]any{"number": map[string]any{"type": "integer", "minimum": 1}, "size": map[string]any{"type": "integer", "minimum": 1}}}},
	"ifMatch": map[string]any{"name": "If-Match", "in": "header", "description": "The ETag last read; a stale one is 412", "schema": map[string]any{"type": "string"}},
	"idemKey": map[string]any{"name": "Idempotency-Key", "in": "header", "description": "Makes a retried create return the first answer", "schema": map[string]any{"type": "string", "maxLength": 200}},
}

type specBuilder struct {
	paths   map[string]map[string]any
	schemas map[string]any
}

var rawJSON = reflect.TypeOf(json.RawMessage(nil))

// describe adds the operation for one route.
func (b *specBuilder) describe(method, path string) error {
	sp, ok := specialRoutes[method+" "+path]
	if !ok {
		var err error
		if sp, err = shapeOf(method, path); err != nil {
			return err
		}
	}
	if sp.typ != "" {
		if _, known := jsonapi.Relationships[sp.typ]; !known {
			return fmt.Errorf("%s %s answers type %q, which jsonapi.Relationships does not declare", method, path, sp.typ)
		}
	}
	op := map[string]any{"summary": sp.summary, "operationId": operationID(method, path)}
	tag := strings.Split(strings.Trim(path, "/"), "/")[0]
	if strings.HasPrefix(path, "/oauth/") || strings.HasPrefix(path, "/.well-known/") {
		tag = "oauth"
	}
	op["tags"] = []any{tag}
	withPermission(op, method, path) // x-permission: what the caller's role needs (api/permissions.go)
	if sp.public {
		op["security"] = []any{}
	}
	var params []any
	if strings.Contains(path, ":id") {
		params = append(params, map[string]any{"$ref": "#/components/parameters/id"})
	}
	if sp.query {
		params = append(params, map[string]any{"$ref": "#/components/parameters/include"}, map[string]any{"$ref": "#/components/parameters/fields"})
		if sp.kind == opMany {
			params = append(params, map[string]any{"$ref": "#/components/parameters/filter"},
				map[string]any{"$ref": "#/components/parameters/sort"}, map[string]any{"$ref": "#/components/parameters/page"})
		}
	}
	if method == fiber.MethodPatch || method == fiber.MethodDelete {
		params = append(params, map[string]any{"$ref": "#/components/parameters/ifMatch"})
	}
	if sp.idempotent {
		params = append(params, map[string]any{"$ref": "#/components/parameters/idemKey"})
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	switch sp.body {
	case "":
	case "form":
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
			"application/x-www-form-urlencoded": map[string]any{"schema": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}}}}
	case "linkage":
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{jsonapi.MediaType: map[string]any{"schema": ref("RelationshipData")}}}
	default:
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{jsonapi.MediaType: map[string]any{"schema": ref(schemaName(sp.body) + "Request")}}}
	}
	op["responses"] = b.responses(sp)
	p := "/" + strings.TrimPrefix(strings.ReplaceAll(path, ":id", "{id}"), "/")
	if b.paths[p] == nil {
		b.paths[p] = map[string]any{}
	}
	b.paths[p][strings.ToLower(method)] = op
	return nil
}

var headerSchemas = map[string]any{
	"ETag":     map[string]any{"description": "The resource's version, for If-Match", "schema": map[string]any{"type": "string"}},
	"Location": map[string]any{"description": "Where the resource is (or will be)", "schema": map[string]any{"type": "string", "format": "uri"}},
}

func (b *specBuilder) responses(sp special) map[string]any {
	errDoc := map[string]any{"description": "A JSON:API error document", "content": jsonapiContent(ref("ErrorDocument"))}
	out := map[string]any{"default": errDoc}
	status := sp.status
	if status == 0 {
		status = 200
	}
	code := fmt.Sprint(status)
	name := schemaName(sp.typ)
	switch sp.kind {
	case opOne:
		doc := name + "Document"
		if sp.nullable {
			doc = name + "OrNullDocument"
		}
		r := map[string]any{"description": "The " + sp.typ + " resource", "content": jsonapiContent(ref(doc)),
			"headers": map[string]any{"ETag": headerSchemas["ETag"]}}
		if status != 200 {
			r["headers"] = map[string]any{"Location": headerSchemas["Location"]}
		}
		out[code] = r
	case opOneOrAccepted:
		out["201"] = map[string]any{"description": "Done", "content": jsonapiContent(ref(name + "Document")), "headers": map[string]any{"Location": headerSchemas["Location"]}}
		out["202"] = map[string]any{"description": "Accepted, still running: poll the Location", "content": jsonapiContent(ref(name + "Document")), "headers": map[string]any{"Location": headerSchemas["Location"]}}
	case opMany:
		out[code] = map[string]any{"description": "A collection of " + sp.typ, "content": jsonapiContent(ref(name + "CollectionDocument"))}
	case opRelated:
		var refs []any
		for _, t := range sp.related.Types {
			refs = append(refs, ref(schemaName(t)))
		}
		one := map[string]any{"oneOf": refs}
		if len(refs) == 1 {
			one = refs[0].(map[string]any)
		}
		data := map[string]any{"type": "array", "items": one}
		if !sp.related.ToMany {
			data = map[string]any{"oneOf": []any{map[string]any{"type": "null"}, one}}
		}
		out[code] = map[string]any{"description": "The related resources", "content": jsonapiContent(map[string]any{
			"type": "object", "required": []any{"data"}, "properties": map[string]any{
				"data": data, "links": ref("Links"), "meta": ref("Meta"), "jsonapi": ref("JSONAPI"),
				"included": map[string]any{"type": "array", "items": ref("Resource")}}})}
	case opNoContent:
		out["204"] = map[string]any{"description": "Done"}
		if _, drafted := jsonapi.Relationships[sp.typ]["draft"]; drafted {
			// A published record is not removed but drafted for deletion.
			out["200"] = map[string]any{"description": "Drafted for deletion: the drafted view, trashed-at set",
				"content": jsonapiContent(ref(name + "Document")), "headers": map[string]any{"ETag": headerSchemas["ETag"]}}
		}
	case opLinkage:
		l := jsonapi.Relationships[sp.typ][sp.rel]
		out[code] = map[string]any{"description": "The " + sp.rel + " linkage", "content": jsonapiContent(map[string]any{
			"type": "object", "required": []any{"data"}, "properties": map[string]any{
				"data": linkageSchema(l), "links": ref("Links"), "meta": ref("Meta"), "jsonapi": ref("JSONAPI"),
				"included": map[string]any{"type": "array", "items": ref("Resource")}}})}
	case opJSON:
		ok := map[string]any{"description": "JSON", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{}}}}
		out[code] = ok
		out["default"] = map[string]any{"description": "An error (OAuth endpoints: RFC 6749 §5.2 JSON; others: JSON:API)",
			"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{}}, jsonapi.MediaType: map[string]any{"schema": ref("ErrorDocument")}}}
	case opScript:
		out[code] = map[string]any{"description": "JavaScript", "content": map[string]any{"text/javascript": map[string]any{"schema": map[string]any{"type": "string"}}}}
	case opHTML:
		out[code] = map[string]any{"description": "An HTML page", "content": map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}}
		if status == 302 || sp.body == "form" {
			out["302"] = map[string]any{"description": "A redirect", "headers": map[string]any{"Location": headerSchemas["Location"]}}
			out["200"] = map[string]any{"description": "An HTML page", "content": map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}}
		}
		out["default"] = map[string]any{"description": "An HTML page saying what is wrong, or an error document",
			"content": map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}, "application/json": map[string]any{"schema": map[string]any{}}, jsonapi.MediaType: map[string]any{"schema": ref("ErrorDocument")}}}
	}
	return out
}

// shapeOf describes a route of the JSON:API shape from its type.
func shapeOf(method, path string) (special, error) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	typ := segs[0]
	fail := fmt.Errorf("%s %s is not of the JSON:API shape /{type}[/:id[/{relationship}|/relationships/{relationship}]]: describe it in specialRoutes (api/openapi.go)", method, path)
	if _, known := jsonapi.Relationships[typ]; !known {
		return special{}, fail
	}
	switch {
	case len(segs) == 1 && method == fiber.MethodGet:
		return special{summary: "List " + typ, kind: opMany, typ: typ, query: true}, nil
	case len(segs) == 1 && method == fiber.MethodPost:
		return special{summary: "Create a " + typ + " resource", kind: opOne, typ: typ, status: 201, body: typ, query: true}, nil
	case len(segs) == 2 && segs[1] == ":id":
		switch method {
		case fiber.MethodGet:
			return special{summary: "One " + typ + " resource", kind: opOne, typ: typ, query: true}, nil
		case fiber.MethodPatch:
			return special{summary: "Update a " + typ + " resource", kind: opOne, typ: typ, body: typ, query: true}, nil
		case fiber.MethodDelete:
			return special{summary: "Delete a " + typ + " resource", kind: opNoContent, typ: typ, query: true}, nil
		}
	case len(segs) == 3 && segs[1] == ":id" && method == fiber.MethodGet:
		l, ok := jsonapi.Relationships[typ][segs[2]]
		if !ok {
			return special{}, fmt.Errorf("%s %s: %s has no relationship %q in jsonapi.Relationships", method, path, typ, segs[2])
		}
		return special{summary: "The " + segs[2] + " of a " + typ + " resource", kind: opRelated, related: &l, query: true}, nil
	case len(segs) == 4 && segs[1] == ":id" && segs[2] == "relationships" && method == fiber.MethodGet:
		if _, ok := jsonapi.Relationships[typ][segs[3]]; !ok {
			return special{}, fmt.Errorf("%s %s: %s has no relationship %q in jsonapi.Relationships", method, path, typ, segs[3])
		}
		return special{summary: "The " + segs[3] + " linkage of a " + typ + " resource", kind: opLinkage, typ: typ, rel: segs[3]}, nil
	}
	return special{}, fail
}

// operationID names an operation for generated clients: "GET /pages/:id"
// → "getPagesId", "GET /pages/:id/relationships/layout" →
// "getPagesIdRelationshipsLayout".
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '.' || r == '-' || r == ':' }) {
		b.WriteString(strings.ToUpper(seg[:1]) + seg[1:])
	}
	return b.String()
}
