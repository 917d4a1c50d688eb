// Package client is the Go client of the Pressroom API: it builds
// JSON:API requests with a bearer token, reads the answers (documents,
// resources, error objects) and posts OAuth forms. The pressroom
// command's editor side (cli/), the benchmarks (bench/) and the replica
// tests (e2e/replicas) all speak to the API through it, so a request is
// built and an answer read in one place.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// MediaType is JSON:API's media type, which every request with a body
// sends and every request accepts.
const MediaType = "application/vnd.api+json"

// DefaultMaxResponse bounds an answer the client reads when
// Client.MaxResponse is 0.
const DefaultMaxResponse = 16 << 20

// Client talks to one API with one access token. Its zero HTTP is
// http.DefaultClient.
type Client struct {
	// Base is the API's base URL ("https://api.example.com"); a trailing
	// slash is ignored.
	Base string
	// Token is the bearer token sent with every JSON:API request; none
	// when empty.
	Token string
	HTTP  *http.Client
	// UserAgent is sent when not empty.
	UserAgent string
	// MaxResponse bounds the answer read; DefaultMaxResponse when 0.
	MaxResponse int64
}

// Response is an answer: its status, headers and body, and the body read
// as a JSON:API document when it is one (Doc stays empty otherwise; see
// Document).
type Response struct {
	Status int
	Header http.Header
	Raw    []byte
	Doc    Document
	// docErr is why Raw is not a JSON:API document (nil when empty or one).
	docErr error
}

// Document is a JSON:API document as a client reads it: data and included
// are left raw for the caller to decode into what it expects.
type Document struct {
	Data     json.RawMessage `json:"data"`
	Included json.RawMessage `json:"included"`
	Errors   []ErrorObject   `json:"errors"`
	Meta     map[string]any  `json:"meta"`
	Links    struct {
		Next *string `json:"next"`
	} `json:"links"`
}

// ErrorObject is one of a document's errors.
type ErrorObject struct {
	Status string `json:"status"`
	Code   string `json:"code"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Source *struct {
		Pointer   string `json:"pointer,omitempty"`
		Parameter string `json:"parameter,omitempty"`
	} `json:"source,omitempty"`
}

// Resource is a JSON:API resource object; relationships are left raw.
type Resource struct {
	Type          string                     `json:"type"`
	ID            string                     `json:"id"`
	Attributes    map[string]any             `json:"attributes"`
	Relationships map[string]json.RawMessage `json:"relationships"`
	Meta          map[string]any             `json:"meta,omitempty"`
}

// Data wraps a resource object as a request document's primary data:
// {"data": {"type": typ, "id": id, "attributes": attributes}} (id and
// attributes left out when empty).
func Data(typ, id string, attributes map[string]any) map[string]any {
	d := map[string]any{"type": typ}
	if id != "" {
		d["id"] = id
	}
	if attributes != nil {
		d["attributes"] = attributes
	}
	return map[string]any{"data": d}
}

// URL is path as a request names it: relative to Base, or an absolute
// link the API gave, as is.
func (c *Client) URL(path string) string {
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		return path
	}
	return strings.TrimRight(c.Base, "/") + path
}

// NewRequest builds a JSON:API request: body, when not nil, marshalled as
// the document; the token, Accept and the user agent set; headers are
// name, value pairs added last.
func (c *Client) NewRequest(ctx context.Context, method, path string, body any, headers ...string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL(path), rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", MediaType)
	if body != nil {
		req.Header.Set("Content-Type", MediaType)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req, nil
}

// Send sends a JSON:API request (NewRequest) and reads the answer,
// whatever its status or body: the error is only one of the transport
// (or of reading the body). Response.Document tells whether the body was
// a JSON:API document.
func (c *Client) Send(ctx context.Context, method, path string, body any, headers ...string) (*Response, error) {
	req, err := c.NewRequest(ctx, method, path, body, headers...)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

// Call is Send that also wants the answer to be a JSON:API document (or
// empty): a body that is not one is an error naming the request.
func (c *Client) Call(ctx context.Context, method, path string, body any, headers ...string) (*Response, error) {
	r, err := c.Send(ctx, method, path, body, headers...)
	if err != nil {
		return nil, err
	}
	if r.docErr != nil {
		return nil, fmt.Errorf("%s %s: %d, not a JSON:API answer: %.200s", method, path, r.Status, r.Raw)
	}
	return r, nil
}

// PostForm posts an OAuth form (application/x-www-form-urlencoded) to
// path, without the token.
func (c *Client) PostForm(ctx context.Context, path string, form url.Values) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL(path), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	return c.Do(req)
}

// Do sends req with the client's HTTP client and reads the answer (at
// most MaxResponse bytes), decoding it as a JSON:API document when it is
// one.
func (c *Client) Do(req *http.Request) (*Response, error) {
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	limit := c.MaxResponse
	if limit == 0 {
		limit = DefaultMaxResponse
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if err != nil {
		return r, fmt.Errorf("%s %s: read the answer: %w", req.Method, req.URL.Path, err)
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		r.docErr = json.Unmarshal(raw, &r.Doc)
	}
	return r, nil
}

// Document is the answer's JSON:API document, or why the body is not one.
func (r *Response) Document() (*Document, error) {
	if r.docErr != nil {
		return nil, r.docErr
	}
	return &r.Doc, nil
}

// Resource is the document's primary data as one resource object.
func (r *Response) Resource() (Resource, error) {
	var res Resource
	if err := json.Unmarshal(r.Doc.Data, &res); err != nil || res.ID == "" {
		return res, fmt.Errorf("the answer holds no resource: %.200s", r.Doc.Data)
	}
	return res, nil
}

// Err is the answer as an *Error of the request method path: its status,
// the first error object's code and detail (its title when it has no
// detail) and the request id the API logged it under.
func (r *Response) Err(method, path string) *Error {
	e := &Error{Method: method, Path: path, Status: r.Status, RequestID: r.Header.Get("X-Request-Id")}
	if len(r.Doc.Errors) > 0 {
		e.Code = r.Doc.Errors[0].Code
		e.Detail = r.Doc.Errors[0].Detail
		if e.Detail == "" {
			e.Detail = r.Doc.Errors[0].Title
		}
	}
	return e
}

func (r *Response) String() string { return fmt.Sprintf("%d %.400s", r.Status, r.Raw) }

// Error is an answer a caller did not want: the request, the status, and
// what the API said (api/errors.go's code and the detail).
type Error struct {
	Method, Path string
	Status       int
	Code, Detail string
	// RequestID is the answer's X-Request-Id, which the API's log has.
	RequestID string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s %s: %d", e.Method, e.Path, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// TokenResponse is the token endpoint's answer (RFC 6749 §5.1).
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// PasswordGrant asks /oauth/token for tokens with the password grant;
// form holds username and password (and a client's id, when one is
// needed). An answer without an access token is an error quoting it.
func (c *Client) PasswordGrant(ctx context.Context, form url.Values) (*TokenResponse, error) {
	f := url.Values{"grant_type": {"password"}}
	for k, v := range form {
		f[k] = v
	}
	r, err := c.PostForm(ctx, "/oauth/token", f)
	if err != nil {
		return nil, err
	}
	var tok TokenResponse
	if err := json.Unmarshal(r.Raw, &tok); err != nil || tok.AccessToken == "" {
		return nil, fmt.Errorf("password grant: %s", r)
	}
	return &tok, nil
}
