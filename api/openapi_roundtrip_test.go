package api

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models/drafts"
)

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*ast.File
	fs := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fs, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, af)
	}
	return out
}

func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// structsIn are the struct type names the tables hold, by type.
func structsIn(tables ...map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, table := range tables {
		for _, v := range table {
			out[reflect.TypeOf(v).Name()] = true
		}
	}
	return out
}

// TestOpenAPIDescribesTheStructsTheAPIUses: the attributes the API renders
// (every jsonapi.Resource literal's Attributes in api/) and those it
// decodes (every decodeCreate, decodePatch, readCreate, readPatch and
// jsonapi.RequestDocument of a struct) are the structs attributeTypes,
// requestAttributeTypes and patchAttributeTypes describe, and those
// tables hold nothing else. The description reflects the structs' members,
// so no attribute is accepted or returned that it lacks, or the other way
// round (on the old code, PATCH /site's siteUpdate and PATCH
// /revisions/:id's revisionPatch were missing).
func TestOpenAPIDescribesTheStructsTheAPIUses(t *testing.T) {
	rendered, decoded := map[string]bool{}, map[string]bool{}
	decoders := map[string]bool{"decodeCreate": true, "decodePatch": true, "readCreate": true, "readPatch": true, "RequestDocument": true}
	for _, f := range parseDir(t, ".") {
		locals := map[string]string{} // a function's variables made from a composite literal: their type
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				locals = map[string]string{}
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					if lit, ok := n.Rhs[min(i, len(n.Rhs)-1)].(*ast.CompositeLit); ok {
						locals[typeName(lhs)] = typeName(lit.Type)
					}
				}
			case *ast.CompositeLit:
				if typeName(n.Type) != "Resource" {
					return true
				}
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok || typeName(kv.Key) != "Attributes" {
						continue
					}
					switch v := kv.Value.(type) {
					case *ast.CompositeLit:
						rendered[typeName(v.Type)] = true
					case *ast.Ident:
						rendered[locals[v.Name]] = true
					}
				}
			case *ast.IndexExpr:
				if decoders[typeName(n.X)] {
					decoded[typeName(n.Index)] = true
				}
			case *ast.IndexListExpr:
				if decoders[typeName(n.X)] {
					decoded[typeName(n.Indices[0])] = true
				}
			}
			return true
		})
	}
	delete(rendered, "") // the content kinds' attributes, declared per kind
	delete(decoded, "")  // map[string]json.RawMessage: the content kinds, declared per kind
	delete(decoded, "A")
	compare := func(what string, used, described map[string]bool) {
		for name := range used {
			if !described[name] {
				t.Errorf("%s %s is not in the description's tables (api/openapi.go)", what, name)
			}
		}
		for name := range described {
			if !used[name] {
				t.Errorf("the description's tables name %s, which the API does not use as %s", name, what)
			}
		}
	}
	compare("the rendered attributes", rendered, structsIn(attributeTypes))
	compare("the decoded attributes", decoded, structsIn(requestAttributeTypes, patchAttributeTypes))
	if len(rendered) < 10 || len(decoded) < 5 {
		t.Errorf("found %d rendered and %d decoded structs: the walk is broken", len(rendered), len(decoded))
	}
}

// errorCodeCalls are the functions that take an error code, and the index
// of their code argument.
var errorCodeCalls = map[string]int{"BadRequest": 0, "Conflict": 0, "Unprocessable": 0, "NewError": 1, "invalidAttr": 1, "relErr": 0, "Invalid": 1}

var codeLiteral = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)

// sourceCodes are the error codes the non-test code of dirs writes: the
// code arguments of errorCodeCalls and the Code fields of error literals.
func sourceCodes(t *testing.T, dirs ...string) map[string]bool {
	out := map[string]bool{}
	lit := func(e ast.Expr) {
		if l, ok := e.(*ast.BasicLit); ok && l.Kind == token.STRING {
			if s, _ := strconv.Unquote(l.Value); codeLiteral.MatchString(s) {
				out[s] = true
			}
		}
	}
	for _, dir := range dirs {
		for _, f := range parseDir(t, dir) {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if i, ok := errorCodeCalls[typeName(n.Fun)]; ok && len(n.Args) > i {
						lit(n.Args[i])
					}
				case *ast.KeyValueExpr:
					if k := typeName(n.Key); k == "Code" || k == "code" {
						lit(n.Value)
					}
				}
				return true
			})
		}
	}
	return out
}

// TestOpenAPIErrorCodesAreTheSources: errorCodes (the codes each operation
// lists, x-error-codes) holds every code the handlers, decoder, query
// parser and error table write, and none they do not; likewise
// oauthErrorCodes for the OAuth token endpoints.
func TestOpenAPIErrorCodesAreTheSources(t *testing.T) {
	got := sourceCodes(t, ".", "jsonapi", "intake", "../models", "../models/drafts")
	for _, row := range domainErrors {
		got[row.code] = true
	}
	got[drafts.PathTaken] = true
	got[drafts.DefaultLocaleRequired] = true
	for _, typ := range []string{"pages", "contents", "content-blocks"} {
		k, _ := drafts.KindOf(typ)
		for _, f := range k.Fields {
			if !f.IsRef() && (f.Enum != nil || f.MinLen > 0 || f.MaxLen > 0 || f.MaxBytes > 0 || f.Pattern != nil || f.Format != "") {
				got[f.Code()] = true // drafts.CheckAttributes writes it
			}
		}
	}
	got["invalid_token"] = true // oauth/verify.go, a JSON:API error of package oauth
	got["rate_limited"] = true  // oauth/ratelimit.go, the other
	check := func(what string, got map[string]bool, table map[string]errorCode) {
		for code := range got {
			if _, ok := table[code]; !ok {
				t.Errorf("%s: the code %q is written but not described", what, code)
			}
		}
		for code := range table {
			if !got[code] {
				t.Errorf("%s: the code %q is described but never written", what, code)
			}
		}
	}
	check("errorCodes", got, errorCodes)
	oauthGot := sourceCodes(t, "oauth")
	delete(oauthGot, "invalid_token")
	delete(oauthGot, "rate_limited")
	check("oauthErrorCodes", oauthGot, oauthErrorCodes)
}

// validator runs a request struct's validate on a create.
type validator func(raw []byte, sent map[string]bool) error

func validates[A attributesOf[F], F any](raw []byte, sent map[string]bool) error {
	var a A
	if err := json.Unmarshal(raw, &a); err != nil {
		return err
	}
	_, err := a.validate(sent, true)
	return err
}

// TestOpenAPIRequiredOnCreateIsTheValidators: for each type whose request
// validates itself, the create example's attributes pass its validate; one
// left out fails it at that attribute exactly when the description lists
// it as required; one sent as null passes exactly when it is nullable.
func TestOpenAPIRequiredOnCreateIsTheValidators(t *testing.T) {
	b := specBuilder{paths: map[string]map[string]any{}, schemas: map[string]any{}, responses: map[string]any{}}
	b.commonSchemas()
	for typ, validate := range map[string]validator{
		"themes": validates[themeRequest, themeFields], "layouts": validates[layoutRequest, layoutFields],
		"theme-assets": validates[themeAssetRequest, string], "webhooks": validates[webhookRequest, webhookFields],
		"oauth-clients": validates[oauthClientRequest, oauthClientFields],
	} {
		schema := b.schemas[schemaName(typ)+"CreateRequestAttributes"].(map[string]any)
		example := b.requestExample(typ, schemaName(typ)+"CreateRequest", true).(map[string]any)
		attrs := example["data"].(map[string]any)["attributes"].(map[string]any)
		attrs["url"] = "https://hooks.pressroom.test/in" // a webhook's url must not be a private address
		run := func(attrs map[string]any) error {
			raw, _ := json.Marshal(attrs)
			sent := map[string]bool{}
			for k := range attrs {
				sent[k] = true
			}
			return validate(raw, sent)
		}
		if err := run(attrs); err != nil {
			t.Errorf("%s: the create example %v fails validate: %v", typ, attrs, err)
			continue
		}
		required, _ := schema["required"].([]any)
		for name, p := range schema["properties"].(map[string]any) {
			without := map[string]any{}
			for k, v := range attrs {
				if k != name {
					without[k] = v
				}
			}
			err := run(without)
			if fails := pointsAt(err, name); fails != slices.Contains(required, any(name)) {
				t.Errorf("%s: without %s, validate = %v; the description says required = %v", typ, name, err, !fails)
			}
			without[name] = nil
			err = run(without)
			types, _ := p.(map[string]any)["type"].([]any)
			if nullable := slices.Contains(types, any("null")); pointsAt(err, name) == nullable {
				t.Errorf("%s: %s null, validate = %v; the description says nullable = %v", typ, name, err, nullable)
			}
		}
	}
}

func pointsAt(err error, name string) bool {
	e, ok := err.(*jsonapi.Error)
	return ok && e.Source != nil && e.Source.Pointer != nil && strings.HasPrefix(*e.Source.Pointer, "/data/attributes/"+name)
}

// TestOpenAPIDocumentsEveryType: every resource type has its words, and
// every table of examples and codes names types and codes that exist.
func TestOpenAPIDocumentsEveryType(t *testing.T) {
	for typ := range jsonapi.Relationships {
		if resourceDocs[typ].doc == "" || resourceDocs[typ].one == "" {
			t.Errorf("resourceDocs has no words for %s", typ)
		}
	}
	for key, codes := range routeErrors {
		for _, c := range codes {
			if _, ok := errorCodes[c]; !ok {
				t.Errorf("routeErrors[%s] names %q, not in errorCodes", key, c)
			}
		}
	}
	for key, sp := range specialRoutes {
		table := errorCodes
		if sp.oauth {
			table = oauthErrorCodes
		}
		for _, c := range sp.errors {
			if _, ok := table[c]; !ok {
				t.Errorf("specialRoutes[%s] names %q, not in its error table", key, c)
			}
		}
	}
}
