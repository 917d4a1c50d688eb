package benchenv

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/pressroom/pressroom/client"
)

// Client speaks to the API as the bench user, through the API's Go client
// (package client): Base, HTTP and Token are its.
type Client struct{ *client.Client }

func newClient(base string, hc *http.Client) *Client {
	return &Client{&client.Client{Base: base, HTTP: hc}}
}

// signIn gets a token for the user email (password Password) with the
// password grant.
func (c *Client) signIn(ctx context.Context, email string) error {
	tok, err := c.PasswordGrant(ctx, url.Values{"username": {email}, "password": {Password}})
	if err != nil {
		return err
	}
	c.Token = tok.AccessToken
	return nil
}

// Send sends a JSON:API request (body, if not nil, as JSON) with the
// token and returns the status and body of the answer.
func (c *Client) Send(ctx context.Context, method, path string, body any) (int, []byte, error) {
	r, err := c.Client.Send(ctx, method, path, body)
	if err != nil {
		return 0, nil, err
	}
	return r.Status, r.Raw, nil
}

// Call is Send that wants the answer's status to be want; another status
// is an error that quotes the answer.
func (c *Client) Call(ctx context.Context, method, path string, body any, want int) ([]byte, error) {
	status, raw, err := c.Send(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	if status != want {
		return nil, fmt.Errorf("%s %s = %d %.500s", method, path, status, raw)
	}
	return raw, nil
}

// As is the API's client sending with hc, with the token only when auth:
// a load's requests, on the load's own connections.
func (c *Client) As(hc *http.Client, auth bool) *client.Client {
	cc := *c.Client
	cc.HTTP = hc
	if !auth {
		cc.Token = ""
	}
	return &cc
}
