package testsupport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// OpenAPI is a loaded description (GET /openapi.json) that responses are
// checked against with kin-openapi.
type OpenAPI struct {
	once   sync.Once
	router routers.Router
	err    error
}

// descriptions caches loaded descriptions by content: every e2e system
// serves the same one but for its servers URL, which LoadOpenAPI drops so
// requests match by path alone, and the first system's parse serves all.
var descriptions sync.Map // [32]byte → *OpenAPI

// LoadOpenAPI parses and validates (as OpenAPI 3.1, with kin-openapi) the
// description raw, as GET /openapi.json serves it.
func LoadOpenAPI(raw []byte) (*OpenAPI, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("testsupport: /openapi.json is not JSON: %w", err)
	}
	delete(m, "servers")
	norm, _ := json.Marshal(m)
	v, _ := descriptions.LoadOrStore(sha256.Sum256(norm), &OpenAPI{})
	o := v.(*OpenAPI)
	o.once.Do(func() { o.router, o.err = route(norm) })
	return o, o.err
}

func route(raw []byte) (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("testsupport: load the OpenAPI description: %w", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("testsupport: the description is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("testsupport: the OpenAPI description is not valid: %w", err)
	}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("testsupport: route the OpenAPI description: %w", err)
	}
	return r, nil
}

// Check checks one response with kin-openapi's response validation
// (openapi3filter.ValidateResponse): the request must match a described
// operation, and the status, headers and body must be ones it describes.
// It returns why not, or nil.
func (o *OpenAPI) Check(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := o.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("%s %s is not described in /openapi.json: %w", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s → %d does not match /openapi.json: %w\n%s", req.Method, req.URL.Path, status, err, indent(body))
	}
	return nil
}

// CheckRequest checks a request the API accepted (answered 2xx) with
// kin-openapi's request validation (openapi3filter.ValidateRequest): its
// query parameters and its body (body, as sent) must be ones the operation
// describes. So an attribute the API accepts that the description lacks
// (attributes are additionalProperties: false) fails here, as Check fails
// one it returns. Security is not checked (the API did that).
func (o *OpenAPI) CheckRequest(req *http.Request, body []byte) error {
	route, params, err := o.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("%s %s is not described in /openapi.json: %w", req.Method, req.URL.Path, err)
	}
	r := req.Clone(context.Background())
	r.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s was accepted but does not match /openapi.json: %w\n%s", req.Method, req.URL, err, indent(body))
	}
	return nil
}
