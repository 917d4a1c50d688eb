// Package cli is the editor's side of the pressroom command: signing in
// (the authorization-code flow with PKCE in the system browser with a
// loopback redirect, or out of band with a pasted code, or
// PRESSROOM_TOKEN), uploading files and publishing drafts, over the public
// HTTP API only, exactly as any other client does. cmd/pressroom wires it
// to subcommands; the e2e tests call the same entry points against a real
// stack.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pressroom/pressroom/client"
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

// session talks JSON:API to one API with one access token, through the
// API's Go client (package client).
type session struct{ *client.Client }

// newSession is a session with o's API as the signed-in user (token).
func newSession(o Options, token string) *session {
	return &session{&client.Client{Base: o.base(), Token: token, HTTP: o.httpClient(), UserAgent: userAgent, MaxResponse: maxResponse}}
}

// resource is a JSON:API resource object.
type resource = client.Resource

// do sends a JSON:API request (body marshalled when not nil) to path, which
// is relative to the API or an absolute link the API gave, and reads the
// JSON:API answer. An API that cannot be reached is explained (unreachable).
func (c *session) do(ctx context.Context, method, path string, body any, headers ...string) (*client.Response, error) {
	r, err := c.Call(ctx, method, path, body, headers...)
	var transport *url.Error
	if errors.As(err, &transport) {
		return nil, unreachable(c.Base, err)
	}
	return r, err
}

// statusErr is the answer r to method path as the error a command ends with.
func statusErr(r *client.Response, method, path string) error {
	return (*StatusError)(r.Err(method, path))
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
