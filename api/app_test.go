package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/api/intake"
	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/testsupport"
)

func TestMain(m *testing.M) { os.Exit(testsupport.Main(m)) }

// offlineApp is the app with no dependencies behind it: enough for
// everything but /readyz, which the readiness tests cover with real ones.
func offlineApp(t *testing.T) *fiber.App {
	t.Helper()
	cfg := testsupport.Defaults()
	cfg.BodyLimit = 4096
	app := mustApp(t, api.Deps{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	// A JSON:API write endpoint for the decoding tests; the resource
	// endpoints of later features use the same jsonapi.Decode, on the body
	// their route read with intake.ReadBody (after the token check).
	app.Post("/test-widgets", intake.ReadBody(cfg.BodyLimit), func(c *fiber.Ctx) error {
		body, err := intake.Body(c)
		if err != nil {
			return err
		}
		var doc jsonapi.RequestDocument[struct {
			Title string `json:"title"`
			Count int    `json:"count"`
		}]
		if err := jsonapi.Decode(body, &doc); err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, jsonapi.MediaType)
		return c.Status(http.StatusCreated).JSON(jsonapi.Document{Data: &jsonapi.Resource{Type: doc.Data.Type, ID: "1", Attributes: doc.Data.Attributes}})
	})
	app.Get("/test-panic", func(c *fiber.Ctx) error {
		panic("pq: password authentication failed; SELECT secret_hash FROM oauth_clients")
	})
	return app
}

func mustApp(t *testing.T, d api.Deps) *fiber.App {
	t.Helper()
	app, err := api.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, app *fiber.App, method, path, body string, headers map[string]string) response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// errorOf checks that r answers status with a JSON:API error document of one
// error, of code unless code is empty, and returns that error.
func errorOf(t *testing.T, r response, status int, code string) jsonapi.Error {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != jsonapi.MediaType {
		t.Errorf("Content-Type = %q, want %q", ct, jsonapi.MediaType)
	}
	testsupport.ValidateJSONAPI(t, r.body)
	var doc struct{ Errors []jsonapi.Error }
	if err := json.Unmarshal(r.body, &doc); err != nil || len(doc.Errors) != 1 {
		t.Fatalf("want one error object, got %s (%v)", r.body, err)
	}
	e := doc.Errors[0]
	if e.Status == "" || e.Code == "" || e.Title == "" {
		t.Errorf("error object lacks status, code or title: %s", r.body)
	}
	if code != "" && e.Code != code {
		t.Errorf("code = %q, want %q", e.Code, code)
	}
	return e
}

func pointer(e jsonapi.Error) string {
	if e.Source == nil || e.Source.Pointer == nil {
		return "(none)"
	}
	return *e.Source.Pointer
}

const mt = jsonapi.MediaType

func TestContentNegotiation(t *testing.T) {
	t.Parallel()
	app := offlineApp(t)
	body := `{"data":{"type":"widgets","attributes":{"title":"a"}}}`
	cases := []struct {
		name        string
		contentType string
		accept      string
		wantStatus  int
		wantSource  string // header named in source.header
	}{
		{"plain JSON:API", mt, mt, 201, ""},
		{"no Accept admits anything", mt, "", 201, ""},
		{"wildcard Accept", mt, "*/*", 201, ""},
		{"application wildcard", mt, "application/*", 201, ""},
		{"profile parameter is allowed", mt + `; profile="https://example.com/p"`, mt, 201, ""},
		{"charset parameter is 415", mt + "; charset=utf-8", mt, 415, "Content-Type"},
		{"unknown parameter is 415", mt + "; version=1", mt, 415, "Content-Type"},
		{"ext parameter is 415 (no extensions supported)", mt + `; ext="https://jsonapi.org/ext/atomic"`, mt, 415, "Content-Type"},
		{"plain JSON body is 415", "application/json", mt, 415, "Content-Type"},
		{"missing Content-Type is 415", "", mt, 415, "Content-Type"},
		{"HTML only Accept is 406", mt, "text/html", 406, "Accept"},
		{"Accept with only ext instances is 406", mt, mt + `; ext="https://jsonapi.org/ext/atomic"`, 406, "Accept"},
		{"Accept with only charset instances is 406", mt, mt + "; charset=utf-8", 406, "Accept"},
		{"one plain instance among modified ones is fine", mt, mt + "; charset=utf-8, " + mt, 201, ""},
		{"q=0 refuses the media type", mt, mt + ";q=0", 406, "Accept"},
		{"415 is checked before 406", mt + "; charset=utf-8", "text/html", 415, "Content-Type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{}
			if tc.contentType != "" {
				h["Content-Type"] = tc.contentType
			}
			if tc.accept != "" {
				h["Accept"] = tc.accept
			}
			r := do(t, app, http.MethodPost, "/test-widgets", body, h)
			if r.status == 201 && tc.wantStatus == 201 {
				testsupport.ValidateJSONAPI(t, r.body)
				return
			}
			e := errorOf(t, r, tc.wantStatus, "")
			if e.Source == nil || e.Source.Header != tc.wantSource {
				t.Errorf("source = %+v, want header %q", e.Source, tc.wantSource)
			}
		})
	}
}

func TestBadDocumentsGet400WithPointer(t *testing.T) {
	t.Parallel()
	app := offlineApp(t)
	cases := []struct {
		name, body, code, pointer string
	}{
		{"not JSON", `{"data":`, "malformed_document", ""},
		{"syntax error", `{"data" "x"}`, "malformed_document", ""},
		{"trailing data", `{"data":{"type":"widgets"}} {}`, "malformed_document", ""},
		{"empty body", ` `, "malformed_document", ""},
		{"no data", `{"meta":{}}`, "malformed_document", "/data"},
		{"null data", `{"data":null}`, "malformed_document", "/data"},
		{"no type", `{"data":{"attributes":{"title":"x"}}}`, "malformed_document", "/data/type"},
		{"wrong attribute type", `{"data":{"type":"widgets","attributes":{"title":5}}}`, "invalid_member", "/data/attributes/title"},
		{"wrong nested type", `{"data":{"type":"widgets","attributes":{"count":"many"}}}`, "invalid_member", "/data/attributes/count"},
		{"data not an object", `{"data":[1]}`, "invalid_member", "/data"},
		{"unknown attribute", `{"data":{"type":"widgets","attributes":{"colour":"red"}}}`, "unknown_member", "/data/attributes/colour"},
		{"attributes not an object", `{"data":{"type":"widgets","attributes":[]}}`, "invalid_member", "/data/attributes"},
		{"attribute in another case", `{"data":{"type":"widgets","attributes":{"Title":"x"}}}`, "unknown_member", "/data/attributes/Title"},
		{"unknown top-level member", `{"data":{"type":"widgets"},"extra":1}`, "unknown_member", "/extra"},
		{"unknown member of data", `{"data":{"type":"widgets","lid":"1"}}`, "unknown_member", "/data/lid"},
		{"pointer escapes / and ~", `{"data":{"type":"widgets","attributes":{"a/b~c":1}}}`, "unknown_member", "/data/attributes/a~1b~0c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, app, http.MethodPost, "/test-widgets", tc.body, map[string]string{"Content-Type": mt})
			e := errorOf(t, r, 400, "")
			if e.Code != tc.code || pointer(e) != tc.pointer {
				t.Errorf("code %q pointer %q, want %q %q (detail: %s)", e.Code, pointer(e), tc.code, tc.pointer, e.Detail)
			}
			if e.Detail == "" {
				t.Error("a 400 must say what is wrong in detail")
			}
		})
	}
}

func TestOversizedBodyIs413(t *testing.T) {
	t.Parallel()
	// Over a real socket: the route reads the body (intake.ReadBody, after
	// the checks before it) and refuses it past the limit.
	app := offlineApp(t) // body limit 4096
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() { _ = app.Shutdown() })
	big := `{"data":{"type":"widgets","attributes":{"title":"` + strings.Repeat("x", 5000) + `"}}}`
	resp, err := http.Post("http://"+ln.Addr().String()+"/test-widgets", mt, strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: b}
	errorOf(t, r, 413, "body_too_large")
}

func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	app := offlineApp(t)
	errorOf(t, do(t, app, http.MethodGet, "/no-such-thing", "", map[string]string{"Accept": mt}), 404, "not_found")
	errorOf(t, do(t, app, http.MethodDelete, "/asset-types", "", nil), 405, "")
}

func TestPanicIs500WithoutInternals(t *testing.T) {
	t.Parallel()
	app := offlineApp(t)
	r := do(t, app, http.MethodGet, "/test-panic", "", map[string]string{"Accept": mt})
	errorOf(t, r, 500, "internal_error")
	for _, leak := range []string{"password", "SELECT", "secret", "goroutine", ".go:"} {
		if strings.Contains(string(r.body), leak) {
			t.Errorf("500 body leaks %q: %s", leak, r.body)
		}
	}
}

func TestRequestIDs(t *testing.T) {
	t.Parallel()
	app := offlineApp(t)
	r := do(t, app, http.MethodGet, "/healthz", "", nil)
	if len(r.header.Get("X-Request-Id")) < 16 {
		t.Errorf("no generated request id: %q", r.header.Get("X-Request-Id"))
	}
	r = do(t, app, http.MethodGet, "/healthz", "", map[string]string{"X-Request-Id": "abc-123"})
	if got := r.header.Get("X-Request-Id"); got != "abc-123" {
		t.Errorf("client request id not kept: %q", got)
	}
	r = do(t, app, http.MethodGet, "/healthz", "", map[string]string{"X-Request-Id": "bad id\twith junk"})
	if got := r.header.Get("X-Request-Id"); got == "" || strings.ContainsAny(got, " \t") {
		t.Errorf("unsafe client request id was kept: %q", got)
	}
}

func TestAssetTypesIsPlainJSONOfTheSpecShape(t *testing.T) {
	t.Parallel()
	// GET /asset-types needs a bearer token like every endpoint of the spec
	// but /oauth/token (TestAssetTypesNeedsAToken).
	app, token, _ := editorApp(t)
	// Plain JSON: no JSON:API negotiation, so an HTML-only Accept still works.
	r := do(t, app, http.MethodGet, "/asset-types", "", map[string]string{"Accept": "text/html", "Authorization": "Bearer " + token})
	if r.status != 200 {
		t.Fatalf("status = %d; %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want plain JSON", ct)
	}
	var got map[string]map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatalf("not a JSON object keyed by asset type: %v", err)
	}
	if len(got) != 1 || got["image"] == nil {
		t.Fatalf("asset types = %v, want exactly image", keys(got))
	}
	image := got["image"]
	for _, k := range []string{"title", "prose_title", "sub_types"} {
		if image[k] == nil {
			t.Errorf("image lacks %q", k)
		}
	}
	if len(image) != 3 {
		t.Errorf("image has members %v, want title, prose_title, sub_types", keys(image))
	}
	var subTypes map[string]map[string]map[string]json.RawMessage
	if err := json.Unmarshal(image["sub_types"], &subTypes); err != nil {
		t.Fatalf("sub_types: %v", err)
	}
	formats := subTypes["asset_image"]
	if len(subTypes) != 1 || len(formats) != 3 {
		t.Fatalf("sub_types = %s", image["sub_types"])
	}
	for _, name := range []string{"jpeg", "png", "gif"} {
		f := formats[name]
		var title string
		var cts, exts []string
		var embeddable *bool
		for k, dst := range map[string]any{"title": &title, "content_types": &cts, "extensions": &exts, "embeddable": &embeddable} {
			if err := json.Unmarshal(f[k], dst); err != nil {
				t.Errorf("%s.%s: %v", name, k, err)
			}
		}
		if len(f) != 4 || title == "" || len(cts) == 0 || len(exts) == 0 || embeddable == nil {
			t.Errorf("format %s = %v", name, f)
		}
		if !strings.HasPrefix(cts[0], "image/") {
			t.Errorf("%s content types %v", name, cts)
		}
	}
}

// TestAssetTypesNeedsAToken: without a bearer token (or with a bad one)
// GET /asset-types is 401 with WWW-Authenticate: Bearer, like every other
// endpoint; the public ones stay public.
func TestAssetTypesNeedsAToken(t *testing.T) {
	t.Parallel()
	app := offlineApp(t)
	for _, h := range []map[string]string{{}, {"Accept": "text/html"}, {"Authorization": "Basic Zm9vOmJhcg=="}} {
		r := do(t, app, http.MethodGet, "/asset-types", "", h)
		errorOf(t, r, 401, "invalid_token")
		if got := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
			t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", got)
		}
		if strings.Contains(string(r.body), "asset_image") {
			t.Errorf("the 401 leaks the table: %s", r.body)
		}
	}
	if r := do(t, app, http.MethodGet, "/healthz", "", nil); r.status != 200 {
		t.Errorf("GET /healthz without a token = %d, want 200 (public)", r.status)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
