package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/client"
)

// fakeAPI answers as the API does: a page, a JSON:API error, a proxy's
// plain-text 502, and the token endpoint; it records the last request.
func fakeAPI(t *testing.T, last **http.Request, lastBody *string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*last, *lastBody = r, string(b)
		switch r.URL.Path {
		case "/pages/1":
			w.Header().Set("Content-Type", client.MediaType)
			_, _ = io.WriteString(w, `{"data":{"type":"pages","id":"1","attributes":{"title":"Home"},"relationships":{"draft":{"data":null}}}}`)
		case "/pages/2":
			w.Header().Set("Content-Type", client.MediaType)
			w.Header().Set("X-Request-Id", "req-2")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"errors":[{"status":"404","code":"not_found","title":"Not found","detail":"No page with that id."}]}`)
		case "/pages/3":
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "Bad Gateway")
		case "/oauth/token":
			if r.PostForm.Get("grant_type") != "password" && !strings.Contains(string(b), "grant_type=password") {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			_, _ = io.WriteString(w, `{"access_token":"at","token_type":"bearer","expires_in":900,"refresh_token":"rt"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClientSendsJSONAPIRequests(t *testing.T) {
	var last *http.Request
	var body string
	srv := fakeAPI(t, &last, &body)
	c := &client.Client{Base: srv.URL + "/", Token: "tok", UserAgent: "test-agent"}
	ctx := context.Background()

	r, err := c.Call(ctx, http.MethodPatch, "/pages/1", client.Data("pages", "1", map[string]any{"title": "Home"}), "If-Match", `"3"`)
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range map[string]string{"Accept": client.MediaType, "Content-Type": client.MediaType,
		"Authorization": "Bearer tok", "User-Agent": "test-agent", "If-Match": `"3"`} {
		if got := last.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	var sent map[string]map[string]any
	if err := json.Unmarshal([]byte(body), &sent); err != nil || sent["data"]["type"] != "pages" || sent["data"]["id"] != "1" {
		t.Errorf("body = %s (%v)", body, err)
	}
	res, err := r.Resource()
	if err != nil || res.ID != "1" || res.Attributes["title"] != "Home" || res.Relationships["draft"] == nil {
		t.Errorf("resource = %+v, %v", res, err)
	}

	// A GET has no body and no Content-Type; an absolute link is used as is.
	if _, err := c.Call(ctx, http.MethodGet, srv.URL+"/pages/1", nil); err != nil {
		t.Fatal(err)
	}
	if last.Header.Get("Content-Type") != "" || last.URL.Path != "/pages/1" {
		t.Errorf("GET sent Content-Type %q to %s", last.Header.Get("Content-Type"), last.URL)
	}
}

func TestClientReadsErrors(t *testing.T) {
	var last *http.Request
	var body string
	srv := fakeAPI(t, &last, &body)
	c := &client.Client{Base: srv.URL}
	ctx := context.Background()

	r, err := c.Call(ctx, http.MethodGet, "/pages/2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if last.Header.Get("Authorization") != "" {
		t.Errorf("sent a token it does not have: %q", last.Header.Get("Authorization"))
	}
	e := r.Err(http.MethodGet, "/pages/2")
	want := client.Error{Method: "GET", Path: "/pages/2", Status: 404, Code: "not_found", Detail: "No page with that id.", RequestID: "req-2"}
	if *e != want {
		t.Errorf("Err = %+v, want %+v", *e, want)
	}
	if e.Error() != "GET /pages/2: 404 not_found: No page with that id." {
		t.Errorf("Error() = %q", e.Error())
	}
	var target *client.Error
	if !errors.As(error(e), &target) {
		t.Error("errors.As does not find the *client.Error")
	}

	// A proxy's plain answer: Send reads it, Call refuses it.
	sent, err := c.Send(ctx, http.MethodGet, "/pages/3", nil)
	if err != nil || sent.Status != http.StatusBadGateway || string(sent.Raw) != "Bad Gateway" {
		t.Errorf("Send = %v, %v", sent, err)
	}
	if _, err := sent.Document(); err == nil {
		t.Error("a plain-text body read as a JSON:API document")
	}
	if _, err := c.Call(ctx, http.MethodGet, "/pages/3", nil); err == nil || !strings.Contains(err.Error(), "not a JSON:API answer") {
		t.Errorf("Call of a plain-text answer: %v", err)
	}

	// A transport failure is the *url.Error the CLI explains.
	dead := &client.Client{Base: "http://127.0.0.1:1"}
	var ue *url.Error
	if _, err := dead.Send(ctx, http.MethodGet, "/site", nil); !errors.As(err, &ue) {
		t.Errorf("unreachable API: %v", err)
	}
}

func TestClientPasswordGrant(t *testing.T) {
	var last *http.Request
	var body string
	srv := fakeAPI(t, &last, &body)
	c := &client.Client{Base: srv.URL, Token: "old"}
	tok, err := c.PasswordGrant(context.Background(), url.Values{"username": {"e@x.test"}, "password": {"pw"}})
	if err != nil || tok.AccessToken != "at" || tok.RefreshToken != "rt" {
		t.Fatalf("PasswordGrant = %+v, %v", tok, err)
	}
	form, _ := url.ParseQuery(body)
	if last.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || form.Get("grant_type") != "password" ||
		form.Get("username") != "e@x.test" || last.Header.Get("Authorization") != "" {
		t.Errorf("token request: %s %v", body, last.Header)
	}
}
