package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
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

// LoginOptions tune Login.
type LoginOptions struct {
	// ClientID is the OAuth client; ClientID (the built-in public client)
	// when empty.
	ClientID string
	// NoBrowser skips the browser: Login prints the address and reads the
	// code the page shows from Stdin (the out-of-band flow).
	NoBrowser bool
	// Open opens the browser; SystemOpener(o.Getenv) when nil.
	Open Opener
	// Timeout bounds the wait for the browser; 5 minutes when 0.
	Timeout time.Duration
	// Site is the subdomain-slug of the site to sign in to: required of a
	// user of several sites, who is asked to name one.
	Site string
}

// Login signs in with the authorization-code flow and PKCE (S256), as a
// native app does (RFC 8252): it opens the system browser on the
// authorize page with a loopback redirect (loopbackLogin) and exchanges
// the code the browser brings back. When no browser can be opened, or
// with NoBrowser, it prints the address instead, and the page shows a
// code to paste (urn:ietf:wg:oauth:2.0:oob). The tokens are stored for
// o.API, and Login says who signed in, to which site, at which API.
func Login(ctx context.Context, o Options, lo LoginOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	if lo.ClientID == "" {
		lo.ClientID = ClientID
	}
	if lo.Timeout <= 0 {
		lo.Timeout = 5 * time.Minute
	}
	dir, err := o.configDir()
	if err != nil {
		return err
	}
	conf := oauthConfig(o.base(), lo.ClientID)
	var tok *oauth2.Token
	if !lo.NoBrowser {
		open := lo.Open
		if open == nil {
			open = SystemOpener(o.Getenv)
		}
		tok, err = loopbackLogin(ctx, o, conf, open, lo.Timeout, lo.Site)
		if errors.Is(err, errNoBrowser) {
			fmt.Fprintf(o.Stderr, "Could not open a browser: %s. Sign in with a code instead.\n\n", strings.TrimPrefix(err.Error(), errNoBrowser.Error()+": "))
			tok, err = nil, nil
		}
		if err != nil {
			return err
		}
	}
	if tok == nil {
		if tok, err = pastedCodeLogin(ctx, o, conf, lo.Site); err != nil {
			return err
		}
	}
	if tok.RefreshToken == "" {
		return fmt.Errorf("the token endpoint gave no refresh token")
	}
	store := Store{Dir: dir}
	if err := store.Save(o.API, credentialsFromToken(lo.ClientID, tok)); err != nil {
		return err
	}
	c := newSession(o, tok.AccessToken)
	who, err := c.whoami(ctx)
	if err != nil {
		// Signed in all the same: the sign-in is stored and works.
		fmt.Fprintf(o.Stderr, "signed in at %s, but could not read who you are: %v\n", o.shownAPI(), err)
		return nil
	}
	fmt.Fprintf(o.Stderr, "signed in as %s to %s at %s\n", who, who.site, o.shownAPI())
	return nil
}

// pastedCodeLogin is the out-of-band flow: the address to open anywhere,
// and the code its page shows, read from Stdin.
func pastedCodeLogin(ctx context.Context, o Options, conf *oauth2.Config, site string) (*oauth2.Token, error) {
	c := *conf
	c.RedirectURL = OOBRedirectURI
	verifier := oauth2.GenerateVerifier()
	authURL := c.AuthCodeURL(randomString(), oauth2.S256ChallengeOption(verifier))
	fmt.Fprintf(o.Stderr, "Open this address in a browser, sign in, and paste the code it shows:\n\n  %s\n\ncode: ", authURL)
	code, err := readLine(o.Stdin)
	if err != nil {
		return nil, fmt.Errorf("read the code: %w", err)
	}
	if code == "" {
		return nil, errors.New("no code given")
	}
	tok, err := c.Exchange(withHTTP(ctx, o.httpClient()), code, exchangeOptions(verifier, site)...)
	if err != nil {
		return nil, exchangeError(c.Endpoint.TokenURL, err)
	}
	return tok, nil
}

// exchangeOptions are the code exchange's parameters: the PKCE verifier,
// and the site to sign in to when one is named.
func exchangeOptions(verifier, site string) []oauth2.AuthCodeOption {
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}
	if site != "" {
		opts = append(opts, oauth2.SetAuthURLParam("site", site))
	}
	return opts
}

// exchangeError says why the code exchange failed, with what to do when
// the user must name a site or named one they do not belong to.
func exchangeError(tokenURL string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode == "invalid_request" && strings.HasPrefix(re.ErrorDescription, "site is required") {
		return fmt.Errorf("you belong to several sites: name one with `pressroom login -site <subdomain-slug>` (%w)", err)
	}
	if errors.As(err, &re) && re.ErrorCode == "invalid_grant" && strings.Contains(re.ErrorDescription, "not a member") {
		return fmt.Errorf("%s: check -site (%w)", re.ErrorDescription, err)
	}
	return fmt.Errorf("exchange the code at %s: %w", tokenURL, err)
}

// identity is who a token signs in as, as the login message names them.
type identity struct {
	id, email, name, role string
	site                  string
}

// String is "<email>", with " (<role>)" when the API names the role.
func (i identity) String() string {
	if i.role != "" {
		return i.email + " (" + i.role + ")"
	}
	return i.email
}

// whoami reads GET /users/me (the user, and in meta.memberships the
// role in each site) and GET /site (the site's slug and id, whose role
// the login message names).
func (c *session) whoami(ctx context.Context) (identity, error) {
	var who identity
	r, err := c.do(ctx, http.MethodGet, "/users/me", nil)
	if err != nil {
		return who, err
	}
	if r.Status != http.StatusOK {
		return who, statusErr(r, http.MethodGet, "/users/me")
	}
	me, err := r.Resource()
	if err != nil {
		return who, err
	}
	who.id = me.ID
	who.email, _ = me.Attributes["email"].(string)
	who.name, _ = me.Attributes["name"].(string)
	site, err := c.get(ctx, "/site")
	if err != nil {
		return who, err
	}
	who.role = roleIn(r.Doc.Meta, site.ID)
	if who.site, _ = site.Attributes["subdomain-slug"].(string); who.site == "" {
		who.site, _ = site.Attributes["title"].(string)
	}
	return who, nil
}

// roleIn is the role meta.memberships of GET /users/me gives in the site
// siteID ("" when none does).
func roleIn(meta map[string]any, siteID string) string {
	ms, _ := meta["memberships"].([]any)
	for _, m := range ms {
		if m, ok := m.(map[string]any); ok && m["site-id"] == siteID {
			role, _ := m["role"].(string)
			return role
		}
	}
	return ""
}

// get reads one resource.
func (c *session) get(ctx context.Context, path string) (resource, error) {
	r, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return resource{}, err
	}
	if r.Status != http.StatusOK {
		return resource{}, statusErr(r, http.MethodGet, path)
	}
	return r.Resource()
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
	fmt.Fprintf(o.Stderr, "signed out of %s\n", o.shownAPI())
	return nil
}

// connect returns a client for o.API with an access token: PRESSROOM_TOKEN
// when set, otherwise the stored sign-in (refreshed and rotated as needed).
func connect(ctx context.Context, o Options) (*session, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	hc := o.httpClient()
	if t := strings.TrimSpace(o.Getenv("PRESSROOM_TOKEN")); t != "" {
		return newSession(o, t), nil
	}
	dir, err := o.configDir()
	if err != nil {
		return nil, err
	}
	tok, err := Store{Dir: dir}.Token(ctx, o.base(), hc, time.Now)
	if err != nil {
		return nil, err
	}
	return newSession(o, tok), nil
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
