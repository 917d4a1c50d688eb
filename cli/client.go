// Package cli is the editor's side of the pressroom command: signing in
// (the authorization-code flow with PKCE in the system browser with a
// loopback redirect, or out of band with a pasted code, or
// PRESSROOM_TOKEN), uploading files and publishing drafts, over the public
// HTTP API only, exactly as any other client does. cmd/pressroom wires it
// to subcommands; the e2e tests call the same entry points against a real
// stack.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultAPI is the local stack's API (make dev), as its links name it.
const DefaultAPI = "http://127.0.0.1:8080"

// userAgent is sent on every request and recorded with upload notices.
const userAgent = "pressroom-cli"

// maxResponse bounds a JSON:API document the CLI reads.
const maxResponse = 16 << 20

// Options is what every client command runs with.
type Options struct {
	// API is the API's base URL (--api, else PRESSROOM_API_URL, else DefaultAPI).
	API string
	// Getenv reads PRESSROOM_TOKEN; os.Getenv in main.
	Getenv func(string) string
	Stdin  io.Reader
	// Stdout gets results (asset URLs, the draft list); Stderr progress.
	Stdout, Stderr io.Writer
	// HTTP is the client for every request; a default one when nil.
	HTTP *http.Client
	// ConfigDir holds the stored sign-in; os.UserConfigDir()/pressroom when empty.
	ConfigDir string
	// Terminal says a person is at Stdin and Stderr, so a command may ask
	// (publish --all asks before publishing other people's drafts).
	Terminal bool
}

// APIURL resolves the API base URL from the flag value and the environment.
func APIURL(flagValue string, getenv func(string) string) string {
	u := flagValue
	if u == "" {
		u = getenv("PRESSROOM_API_URL")
	}
	if u == "" {
		u = DefaultAPI
	}
	return strings.TrimRight(u, "/")
}

func (o *Options) httpClient() *http.Client {
	if o.HTTP != nil {
		return o.HTTP
	}
	// No overall timeout: long polls and big uploads; every request has a context.
	return &http.Client{Transport: http.DefaultTransport}
}

func (o *Options) configDir() (string, error) {
	if o.ConfigDir != "" {
		return o.ConfigDir, nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the configuration directory for the stored sign-in: %w", err)
	}
	return filepath.Join(d, "pressroom"), nil
}

func (o *Options) validate() error {
	_, err := NormalizeAPI(o.API)
	return err
}

// shownAPI is the API as messages name it: its normalized URL, the key of
// its stored sign-in.
func (o *Options) shownAPI() string { return apiKey(o.API) }

// base is the API as requests name it: as given, without a trailing slash.
func (o *Options) base() string { return strings.TrimRight(strings.TrimSpace(o.API), "/") }

// client talks JSON:API to one API with one access token.
type client struct {
	base  string
	token string
	http  *http.Client
}

// resource is a JSON:API resource object as the CLI needs it.
type resource struct {
	Type          string                     `json:"type"`
	ID            string                     `json:"id"`
	Attributes    map[string]any             `json:"attributes"`
	Relationships map[string]json.RawMessage `json:"relationships"`
}

// document is a JSON:API response document.
type document struct {
	Data     json.RawMessage `json:"data"`
	Included json.RawMessage `json:"included"`
	Errors   []apiError      `json:"errors"`
	Links    struct {
		Next *string `json:"next"`
	} `json:"links"`
	// Meta is what the CLI reads of a document's meta: GET /users/me's
	// memberships (the caller's role in each site).
	Meta struct {
		Memberships []struct {
			SiteID string `json:"site-id"`
			Role   string `json:"role"`
		} `json:"memberships"`
	} `json:"meta"`
}

type apiError struct {
	Status string `json:"status"`
	Code   string `json:"code"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

// response is an answer with its status and headers.
type response struct {
	status int
	header http.Header
	doc    document
}

func (r *response) err(method, path string) error {
	e := &StatusError{Method: method, Path: path, Status: r.status, RequestID: r.header.Get("X-Request-Id")}
	if len(r.doc.Errors) > 0 {
		e.Code = r.doc.Errors[0].Code
		e.Detail = r.doc.Errors[0].Detail
		if e.Detail == "" {
			e.Detail = r.doc.Errors[0].Title
		}
	}
	return e
}

func (r *response) resource() (resource, error) {
	var res resource
	if err := json.Unmarshal(r.doc.Data, &res); err != nil || res.ID == "" {
		return res, fmt.Errorf("the answer holds no resource: %s", r.doc.Data)
	}
	return res, nil
}

// do sends a JSON:API request (body marshalled when not nil) to path, which
// is relative to the API or an absolute link the API gave.
func (c *client) do(ctx context.Context, method, path string, body any, headers ...string) (*response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := path
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		u = c.base + path
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.api+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.api+json")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("User-Agent", userAgent)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, unreachable(c.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	r := &response{status: resp.StatusCode, header: resp.Header}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &r.doc); err != nil {
			return nil, fmt.Errorf("%s %s: %d, not a JSON:API answer: %.200s", method, path, resp.StatusCode, raw)
		}
	}
	return r, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

var errNotSignedIn = errors.New("not signed in: run `pressroom login` or set PRESSROOM_TOKEN")
