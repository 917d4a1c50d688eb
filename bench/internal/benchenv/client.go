package benchenv

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

// Client speaks to the API as the bench user.
type Client struct {
	Base  string // the API's base URL
	HTTP  *http.Client
	Token string // the bench user's access token
}

// signIn gets a token for the user email (password Password) with the
// password grant.
func (c *Client) signIn(ctx context.Context, email string) error {
	form := url.Values{"grant_type": {"password"}, "username": {email}, "password": {Password}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		return fmt.Errorf("password grant: %d %v", resp.StatusCode, err)
	}
	c.Token = tok.AccessToken
	return nil
}

// Send sends a JSON:API request (body, if not nil, as JSON) with the
// token and returns the status and body of the answer.
func (c *Client) Send(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, c.Base+path, r)
	req.Header.Set("Accept", "application/vnd.api+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.api+json")
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
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
