package oauth

// The browser part of the code flow. /oauth/authorize validates the request
// (with op's validators), stores it bound to the browser that sent it, and
// redirects to the login form; the login POST hands out the code. op's own
// authorize endpoint and its callback are not served: the callback gave a
// code to anyone who knew a request id.
//
// The binding: /oauth/authorize gives the browser a random nonce in an
// HttpOnly, SameSite=Lax cookie (kept if it already has one, so two tabs can
// sign in at once) and stores its SHA-256 with the request. The login form,
// the login POST and so the code are only for a browser presenting that
// cookie, and the form carries a token derived from the nonce (CSRF). A
// sign-in link sent to someone else is useless to them and to its sender.

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/auth"
)

// DefaultScope is the scope of an authorization request that names none
// (the specification's flow sends no scope).
const DefaultScope = oidc.ScopeOpenID

const (
	// bindingCookie names the cookie over plain http (local development).
	bindingCookie = "pressroom-oauth"
	// secureBindingCookie is its name over https: browsers accept a
	// __Host- cookie only with Secure, Path=/ and no Domain, so no other
	// host (a site's subdomain) can plant or overwrite it.
	secureBindingCookie = "__Host-pressroom-oauth"
	// nonceBytes is the binding nonce's entropy.
	nonceBytes = 32
	// maxAuthorizeQuery bounds the query string /oauth/authorize parses.
	maxAuthorizeQuery = 8 << 10
	// maxStateBytes bounds the state and nonce a request stores: a client
	// needs a few dozen bytes (a random value, or a key to its session).
	maxStateBytes = 1024
)

func (p *Provider) secureCookie() bool { return strings.HasPrefix(p.settings.Issuer, "https://") }

func (p *Provider) bindingCookieName() string {
	if p.secureCookie() {
		return secureBindingCookie
	}
	return bindingCookie
}

// browserNonce is the binding nonce the request's browser presents, or "".
func (p *Provider) browserNonce(c *fiber.Ctx) string {
	n := c.Cookies(p.bindingCookieName())
	if b, err := base64.RawURLEncoding.DecodeString(n); err != nil || len(b) != nonceBytes {
		return ""
	}
	return n
}

// bindBrowser returns the browser's nonce, making one when it has none, and
// (re)sets the cookie to outlive every request it is about to bind.
func (p *Provider) bindBrowser(c *fiber.Ctx) (string, error) {
	n := p.browserNonce(c)
	if n == "" {
		var err error
		if n, err = auth.RandomSecret(nonceBytes); err != nil {
			return "", err
		}
	}
	c.Cookie(&fiber.Cookie{Name: p.bindingCookieName(), Value: n, Path: "/", MaxAge: int(authRequestLifetime.Seconds()),
		Secure: p.secureCookie(), HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode})
	return n, nil
}

// boundTo reports whether nonce is the one req was bound to.
func boundTo(req *authRequest, nonce string) bool {
	return nonce != "" && req.row.BrowserHash != "" &&
		subtle.ConstantTimeCompare([]byte(hashToken(nonce)), []byte(req.row.BrowserHash)) == 1
}

// formToken is the login form's CSRF token: an HMAC of the request id under
// the browser's nonce, so it needs no storage and only that browser has it.
func formToken(nonce, id string) string {
	m := hmac.New(sha256.New, []byte(nonce))
	m.Write([]byte("pressroom login form\x00" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func validFormToken(nonce, id, token string) bool {
	return nonce != "" && hmac.Equal([]byte(formToken(nonce, id)), []byte(token))
}

// authorize is GET /oauth/authorize.
func (p *Provider) authorize(c *fiber.Ctx) error {
	ctx := op.ContextWithIssuer(c.UserContext(), p.settings.Issuer)
	if done, err := p.throttleAuthorize(c); done || err != nil {
		return err
	}
	raw := c.Request().URI().QueryString()
	if len(raw) > maxAuthorizeQuery {
		return p.authorizeProblem(c, "The sign-in request is too long.")
	}
	values, err := url.ParseQuery(string(raw))
	if err != nil {
		return p.authorizeProblem(c, "The sign-in request is malformed.")
	}
	for name, vs := range values {
		if len(vs) > 1 { // RFC 6749 §3.1: parameters must not repeat
			return p.authorizeProblem(c, "The sign-in request repeats the parameter "+name+".")
		}
	}
	req := new(oidc.AuthRequest)
	if err := p.op.Decoder().Decode(req, values); err != nil {
		return p.authorizeProblem(c, "The sign-in request is malformed.")
	}
	if req.ClientID == "" {
		return p.authorizeProblem(c, "The sign-in request names no application (client_id).")
	}
	if req.RedirectURI == "" {
		return p.authorizeProblem(c, "The sign-in request has no redirect_uri.")
	}
	oc, err := p.store.GetClientByClientID(ctx, req.ClientID)
	if err != nil {
		return p.authorizeProblem(c, "The application is not registered.")
	}
	cl := oc.(*client)
	if len(req.Scopes) == 0 {
		req.Scopes = cl.defaultScopes()
	}
	// op compares the redirect URI after one more unescaping; a URI that
	// unescapes to another would pass as the registered one but be
	// redirected to as written. Then Pressroom's own matching, stricter than
	// op's rules for native clients (client.redirectAllowed).
	if u, err := url.QueryUnescape(req.RedirectURI); err != nil || u != req.RedirectURI || !cl.redirectAllowed(req.RedirectURI) {
		return p.authorizeProblem(c, "The redirect_uri is not registered for this application.")
	}
	if _, err := op.ValidateAuthRequestClient(ctx, req, cl, p.op.IDTokenHintVerifier(ctx)); err != nil {
		return p.authorizeError(c, req, err)
	}
	if err := checkPKCEMethod(req); err != nil {
		return p.authorizeError(c, req, err)
	}
	if req.RequestParam != "" {
		return p.authorizeError(c, req, oidc.ErrRequestNotSupported())
	}
	if len(req.State) > maxStateBytes || len(req.Nonce) > maxStateBytes {
		// Checked once the redirect URI is known to be the client's: the
		// error goes back to it (RFC 6749 §4.1.2.1), else on a page.
		return p.authorizeError(c, req, oidc.ErrInvalidRequest().WithDescription("state and nonce must be at most %d bytes", maxStateBytes))
	}
	nonce, err := p.bindBrowser(c)
	if err != nil {
		return err
	}
	ar, err := p.store.createAuthRequest(ctx, req, hashToken(nonce))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(loginPath+"?id="+ar.GetID(), http.StatusFound)
}

// checkPKCEMethod refuses every code challenge method but S256 (RFC 7636
// §4.2). "plain", which is also what a challenge without a method means
// (§4.3), puts the verifier itself in the browser's URL, so whoever reads
// the request can redeem the code: it protects nothing.
func checkPKCEMethod(req *oidc.AuthRequest) error {
	if req.CodeChallenge == "" && req.CodeChallengeMethod == "" {
		return nil
	}
	if req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return oidc.ErrInvalidRequest().WithDescription("PKCE must use code_challenge_method=S256 with a code_challenge; plain is not accepted.")
	}
	return nil
}

// authorizeProblem answers a request that cannot be sent back to the client
// (no trustworthy redirect URI) with a page for the person at the browser.
func (p *Provider) authorizeProblem(c *fiber.Ctx, msg string) error {
	return render(c, http.StatusBadRequest, "problem", pageData{Title: "Sign-in problem", Error: msg})
}

// authorizeError answers a validation error: by redirect to the client's
// (validated) redirect URI as RFC 6749 §4.1.2.1 asks, but as a page when the
// redirect URI may not be used or is the out-of-band URN, which no browser
// can follow.
func (p *Provider) authorizeError(c *fiber.Ctx, req *oidc.AuthRequest, err error) error {
	var e *oidc.Error
	if !errors.As(err, &e) {
		return err
	}
	msg := e.Description
	if msg == "" {
		msg = "The sign-in request was refused (" + string(e.ErrorType) + ")."
	}
	if e.IsRedirectDisabled() || req.RedirectURI == OOBRedirectURI {
		return p.authorizeProblem(c, msg)
	}
	e.State = req.State
	to, uerr := op.AuthResponseURL(req.RedirectURI, req.ResponseType, oidc.ResponseModeQuery, e, p.op.Encoder())
	if uerr != nil {
		return p.authorizeProblem(c, msg)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(to, http.StatusFound)
}
