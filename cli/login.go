package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// withHTTP makes x/oauth2 use hc for its token requests.
func withHTTP(ctx context.Context, hc *http.Client) context.Context {
	if hc == nil {
		return ctx
	}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

// Login signs in with the out-of-band authorization-code flow and PKCE,
// as a desktop client does: it prints the authorize URL, the user signs in
// in a browser and copies the code the page shows, Login reads it from
// stdin, exchanges it (with the PKCE verifier) at the token endpoint and
// stores the tokens for o.API.
func Login(ctx context.Context, o Options, clientID string) error {
	if err := o.validate(); err != nil {
		return err
	}
	if clientID == "" {
		clientID = ClientID
	}
	dir, err := o.configDir()
	if err != nil {
		return err
	}
	conf := oauthConfig(o.API, clientID)
	verifier := oauth2.GenerateVerifier()
	state := randomString()
	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
	fmt.Fprintf(o.Stderr, "Open this address in a browser, sign in, and paste the code it shows:\n\n  %s\n\ncode: ", authURL)
	code, err := readLine(o.Stdin)
	if err != nil {
		return fmt.Errorf("read the code: %w", err)
	}
	if code == "" {
		return fmt.Errorf("no code given")
	}
	tok, err := conf.Exchange(withHTTP(ctx, o.httpClient()), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return fmt.Errorf("exchange the code at %s: %w", conf.Endpoint.TokenURL, err)
	}
	if tok.RefreshToken == "" {
		return fmt.Errorf("the token endpoint gave no refresh token")
	}
	store := Store{Dir: dir}
	if err := store.Save(o.API, credentialsFromToken(clientID, tok)); err != nil {
		return err
	}
	fmt.Fprintf(o.Stderr, "signed in to %s (sign-in stored in %s)\n", o.API, store.path())
	return nil
}

// Logout forgets the stored sign-in for o.API. (The refresh token stays
// valid on the server until it expires: revoking needs client
// authentication the public client does not have.)
func Logout(o Options) error {
	dir, err := o.configDir()
	if err != nil {
		return err
	}
	if err := (Store{Dir: dir}).Forget(o.API); err != nil {
		return err
	}
	fmt.Fprintf(o.Stderr, "signed out of %s\n", o.API)
	return nil
}

// connect returns a client for o.API with an access token: PRESSROOM_TOKEN
// when set, otherwise the stored sign-in (refreshed and rotated as needed).
func connect(ctx context.Context, o Options) (*client, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	hc := o.httpClient()
	if t := strings.TrimSpace(o.Getenv("PRESSROOM_TOKEN")); t != "" {
		return &client{base: o.API, token: t, http: hc}, nil
	}
	dir, err := o.configDir()
	if err != nil {
		return nil, err
	}
	tok, err := Store{Dir: dir}.Token(ctx, o.API, hc, time.Now)
	if err != nil {
		return nil, err
	}
	return &client{base: o.API, token: tok, http: hc}, nil
}

func readLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

func randomString() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}
