package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/pressroom/pressroom/api/intake"
	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
)

// TokenResponse is the body of a successful token response (RFC 6749 §5.1,
// in the spec's exact shape).
type TokenResponse struct {
	TokenType    string `json:"token_type"`
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token,omitempty"` // none for client_credentials (RFC 6749 §4.4.3)
	ExpiresIn    int64  `json:"expires_in"`
	Scope        string `json:"scope,omitempty"`
}

// tokenError is an error response (RFC 6749 §5.2).
type tokenError struct {
	status      int
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
	retryAfter  time.Duration
	basicAuth   bool // the client tried HTTP Basic: WWW-Authenticate must answer in kind
}

func (e *tokenError) Error() string { return e.Code + ": " + e.Description }

func invalidRequest(d string) *tokenError {
	return &tokenError{status: 400, Code: "invalid_request", Description: d}
}
func invalidGrant(d string) *tokenError {
	return &tokenError{status: 400, Code: "invalid_grant", Description: d}
}
func invalidClient(basic bool) *tokenError {
	return &tokenError{status: 401, Code: "invalid_client", Description: "client authentication failed", basicAuth: basic}
}

// grantUnread is a failure to read the code or refresh token a client
// presented, other than its absence: the grant may well be good.
type grantUnread struct{ err error }

func (e *grantUnread) Error() string { return "read the grant: " + e.err.Error() }
func (e *grantUnread) Unwrap() error { return e.err }

// grantLookup maps the error of reading a presented code or refresh token,
// for both grants: only "no such row" is the client's invalid_grant. A
// client discards its refresh token on invalid_grant (RFC 6749 §5.2), so
// answering it for a database error would sign the user out; anything else
// is 503 with Retry-After (writeTokenError), and the token stays usable.
func grantLookup(err error, invalid *tokenError) error {
	if models.IsNoRows(err) {
		return invalid
	}
	return &grantUnread{err}
}

// maxTokenRequest bounds a token request body; real ones are a few hundred bytes.
const maxTokenRequest = 16 << 10

// tokenEndpoint handles POST /oauth/token (every grant) and, with
// passwordOnly, POST /oauth/token.json (the password grant only).
func (p *Provider) tokenEndpoint(passwordOnly bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		// Every answer, success or error, is uncacheable (RFC 6749 §5.1).
		c.Set(fiber.HeaderCacheControl, "no-store")
		c.Set(fiber.HeaderPragma, "no-cache")
		resp, err := p.token(c, passwordOnly)
		if err != nil {
			return p.writeTokenError(c, err)
		}
		body, err := json.Marshal(resp)
		if err != nil {
			return p.writeTokenError(c, err)
		}
		c.Set(fiber.HeaderContentType, "application/json;charset=UTF-8")
		return c.Status(fiber.StatusOK).Send(body)
	}
}

func (p *Provider) writeTokenError(c *fiber.Ctx, err error) error {
	var te *tokenError
	switch {
	case errors.Is(c.UserContext().Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		// The request's deadline passed, mostly waiting for a database
		// connection: busy, not broken (RFC 6749 §5.2 has no such code; §4.1.2.1's fits).
		te = &tokenError{status: 503, Code: "temporarily_unavailable", Description: "the server is too busy to answer in time; try again shortly", retryAfter: time.Second}
	case models.IsUnavailable(err):
		// The database is down or restarting: the same answer, with a
		// longer wait (e2e/replicas TestPostgresRestartUnderLoad).
		te = &tokenError{status: 503, Code: "temporarily_unavailable", Description: "the server cannot reach its database; try again shortly", retryAfter: 5 * time.Second}
	case errors.As(err, new(*grantUnread)):
		// Any other failure to read the code or refresh token (a lock
		// timeout, a cancelled query): still not the client's fault.
		p.log.WarnContext(c.UserContext(), "token endpoint could not read the grant", "error", err)
		te = &tokenError{status: 503, Code: "temporarily_unavailable", Description: "the server could not check the grant; try again shortly", retryAfter: time.Second}
	case !errors.As(err, &te):
		p.log.ErrorContext(c.UserContext(), "token endpoint failed", "error", err)
		te = &tokenError{status: 500, Code: "server_error", Description: "the server could not issue a token; try again"}
	}
	switch {
	case te.status == 401 && te.basicAuth:
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="pressroom", error="invalid_client"`)
	case te.status == 401:
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="pressroom"`)
	case te.retryAfter > 0:
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(te.retryAfter.Seconds()+0.999)))
	}
	body, _ := json.Marshal(te) // two strings
	c.Set(fiber.HeaderContentType, "application/json;charset=UTF-8")
	return c.Status(te.status).Send(body)
}

func (p *Provider) token(c *fiber.Ctx, passwordOnly bool) (*TokenResponse, error) {
	body, err := intake.Read(c, maxTokenRequest)
	switch {
	case errors.Is(err, intake.ErrTooLarge):
		return nil, invalidRequest("the request body is too large")
	case err != nil:
		return nil, invalidRequest("the request body could not be read")
	}
	form, creds, err := parseTokenRequest(c.Get(fiber.HeaderContentType), c.Get(fiber.HeaderAuthorization), body)
	if err != nil {
		return nil, err
	}
	ctx, _ := withClientAuth(c.UserContext(), c.IP())
	ctx = withSignInAudit(ctx, c, form.Get("grant_type"), form.Get("site"))
	switch gt := form.Get("grant_type"); {
	case gt == "password":
		return p.passwordGrant(ctx, c.IP(), creds, form)
	case gt == "":
		return nil, invalidRequest("grant_type is required")
	case passwordOnly:
		return nil, &tokenError{status: 400, Code: "unsupported_grant_type", Description: "this endpoint accepts only the password grant; use /oauth/token"}
	case gt == "authorization_code":
		return p.codeGrant(ctx, creds, form)
	case gt == "refresh_token":
		return p.refreshGrant(ctx, creds, form)
	case gt == "client_credentials":
		return p.clientCredentialsGrant(ctx, creds)
	default:
		return nil, &tokenError{status: 400, Code: "unsupported_grant_type", Description: "grant_type must be password, authorization_code, refresh_token or client_credentials"}
	}
}

// parseTokenRequest reads a token request's form and client credentials
// from its Content-Type, Authorization header and body; errors are
// *tokenError. It touches nothing else, so it can be fuzzed on its own.
func parseTokenRequest(contentType, authorization string, body []byte) (url.Values, credentials, error) {
	if len(body) > maxTokenRequest {
		return nil, credentials{}, invalidRequest("the request body is too large")
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, credentials{}, invalidRequest("send the request as application/x-www-form-urlencoded")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return nil, credentials{}, invalidRequest("the form must be UTF-8")
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, credentials{}, invalidRequest("the form body is malformed")
	}
	for name, values := range form {
		if len(values) > 1 { // RFC 6749 §3.2: parameters must not repeat
			return nil, credentials{}, invalidRequest("the parameter " + name + " is repeated")
		}
		if strings.ContainsRune(name, 0) || strings.ContainsRune(values[0], 0) { // PostgreSQL text cannot hold it
			return nil, credentials{}, invalidRequest("parameters must not contain the NUL character")
		}
	}
	creds, err := clientCredentials(authorization, form)
	if err != nil {
		return nil, credentials{}, err
	}
	return form, creds, nil
}

// credentials are the client id and secret a request carries.
type credentials struct {
	id, secret string
	basic      bool
}

// clientCredentials reads HTTP Basic (with the form-URL-encoding RFC 6749
// §2.3.1 asks for) or client_id/client_secret in the body, never both.
func clientCredentials(header string, form url.Values) (credentials, error) {
	var cr credentials
	if scheme, rest, ok := strings.Cut(header, " "); ok && strings.EqualFold(scheme, "Basic") {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
		if err != nil {
			return cr, invalidClient(true)
		}
		id, secret, ok := strings.Cut(string(raw), ":")
		if !ok {
			return cr, invalidClient(true)
		}
		if cr.id, err = url.QueryUnescape(id); err != nil {
			return cr, invalidClient(true)
		}
		if cr.secret, err = url.QueryUnescape(secret); err != nil {
			return cr, invalidClient(true)
		}
		cr.basic = true
		if form.Has("client_secret") || (form.Has("client_id") && form.Get("client_id") != cr.id) {
			return cr, invalidRequest("send client credentials in the Authorization header or the body, not both")
		}
		return cr, nil
	} else if header != "" {
		return cr, invalidRequest("the Authorization header of a token request must use the Basic scheme")
	}
	cr.id, cr.secret = form.Get("client_id"), form.Get("client_secret")
	if cr.id == "" && cr.secret != "" {
		return cr, invalidRequest("client_secret without client_id")
	}
	return cr, nil
}

// client authenticates the request's client. With no client named, the
// first-party public client stands in (the password and refresh grants of
// in-browser clients, which cannot keep a secret).
func (p *Provider) client(ctx context.Context, cr credentials, allowAnonymous bool) (*models.OAuthClient, error) {
	if cr.id == "" {
		if !allowAnonymous {
			return nil, invalidRequest("client_id is required")
		}
		cr.id = FirstPartyClientID
	}
	row, err := p.store.authenticateClient(ctx, cr.id, cr.secret, false)
	var re *retryError
	switch {
	case errors.Is(err, errInvalidClient):
		return nil, invalidClient(cr.basic)
	case errors.As(err, &re):
		return nil, re.tokenError()
	}
	return row, err
}

func (p *Provider) passwordGrant(ctx context.Context, ip string, cr credentials, form url.Values) (*TokenResponse, error) {
	username, password := strings.TrimSpace(form.Get("username")), form.Get("password")
	if username == "" || password == "" {
		return nil, invalidRequest("username and password are required")
	}
	cl, err := p.client(ctx, cr, true)
	if err != nil {
		return nil, err
	}
	u, err := p.checkLogin(ctx, username, password, ip)
	if err != nil {
		return nil, err
	}
	site, err := siteFor(ctx, p.store.db, u.ID, form.Get("site"))
	if err != nil {
		return nil, err
	}
	g := &grant{userID: u.ID, siteID: site, clientID: cl.ID, scopes: scopes(form), authTime: time.Now().UTC(),
		audience: p.store.audience(cl.ID), amr: []string{"pwd"}}
	sk, err := p.store.SigningKey(ctx)
	if err != nil {
		return nil, err
	}
	// In a transaction: the tokens and the sign-in's audit event commit
	// together.
	var resp *TokenResponse
	err = p.store.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		resp, err = p.issue(ctx, tx, sk, cl, g, nil)
		return err
	})
	return resp, err
}

// checkLogin verifies a username and password under the failure throttle.
// The login form uses it too.
//
// The user is looked up first, so the throttle counts per user, not per
// spelling of the name (see userKey). The throttle reserves a place before
// the password is checked and turns it into a failure only if the check
// fails: correct passwords never count against anyone, and parallel
// guesses cannot outnumber the failures still allowed.
func (p *Provider) checkLogin(ctx context.Context, username, password, ip string) (*models.User, error) {
	u, err := models.UserByEmail(ctx, p.store.db, username)
	if err != nil && !models.IsNoRows(err) {
		return nil, err
	}
	if err != nil {
		u = nil
	}
	res, wait, err := p.throttle.Attempt(ctx, userKey(u, username), ip, p.store.hashes.Wait())
	switch {
	case errors.Is(err, errAttemptBusy):
		return nil, p.store.busy().tokenError()
	case err != nil:
		return nil, err
	case wait > 0:
		return nil, &tokenError{status: 429, Code: "slow_down", retryAfter: wait,
			Description: fmt.Sprintf("too many failed sign-in attempts; try again in %d seconds", int(wait.Seconds()+0.999))}
	}
	// The throttle's bookkeeping must finish even if the client goes away.
	bg := context.WithoutCancel(ctx)
	hash := dummyHash // an unknown user costs the same work as a wrong password, under the same bound
	if u != nil {
		hash = u.PasswordHash
	}
	err = p.store.hashes.CheckPassword(ctx, hash, password)
	switch {
	case errors.Is(err, auth.ErrBusy) || isContextError(err): // not checked: nothing to count
		if cerr := p.throttle.Cancel(bg, res); cerr != nil {
			return nil, cerr
		}
		if isContextError(err) {
			return nil, err
		}
		return nil, p.store.busy().tokenError()
	case err != nil || u == nil:
		failedSignIn(ctx, p.store.db, u, ip)
		if ferr := p.throttle.Fail(bg, res); ferr != nil {
			return nil, ferr
		}
		return nil, invalidGrant("the username or password is wrong")
	}
	if err := p.throttle.Succeed(bg, res); err != nil {
		return nil, err
	}
	return u, nil
}

func (p *Provider) codeGrant(ctx context.Context, cr credentials, form url.Values) (*TokenResponse, error) {
	code, redirect := form.Get("code"), form.Get("redirect_uri")
	if code == "" || redirect == "" {
		return nil, invalidRequest("code and redirect_uri are required")
	}
	cl, err := p.client(ctx, cr, false)
	if err != nil {
		return nil, err
	}
	// The signing key is fetched before the transaction: fetching it may
	// query (or rotate) through the pool, and a transaction waiting for a
	// second connection can starve the pool.
	sk, err := p.store.SigningKey(ctx)
	if err != nil {
		return nil, err
	}
	var resp *TokenResponse
	err = p.store.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		row, err := models.LockAuthCode(ctx, tx, hashToken(code))
		if err != nil {
			return grantLookup(err, invalidGrant("the authorization code is invalid, expired or already used"))
		}
		// Spent on success; a failed exchange rolls back and leaves it usable until it expires.
		if err := models.SpendAuthCode(ctx, tx, row); err != nil {
			return err
		}
		switch {
		case row.ExpiresAt.Before(time.Now()):
			return invalidGrant("the authorization code has expired")
		case row.ClientID != cl.ID:
			return invalidGrant("the authorization code was issued to another client")
		case row.RedirectURI != redirect:
			return invalidGrant("redirect_uri does not match the authorization request")
		case row.UserID == nil:
			return invalidGrant("the sign-in was not completed")
		case row.CodeChallenge == "" && !cl.Confidential:
			return invalidGrant("public clients must use PKCE")
		case row.CodeChallenge != "" && !oidc.VerifyCodeChallenge((&authRequest{row}).GetCodeChallenge(), form.Get("code_verifier")):
			return invalidGrant("code_verifier does not match the code_challenge")
		}
		g, err := p.store.grantOf(ctx, &authRequest{row})
		if err != nil {
			return err
		}
		// In the transaction: a second connection from the pool while
		// holding this one could starve it.
		if g.siteID, err = siteFor(ctx, tx, g.userID, form.Get("site")); err != nil {
			return err
		}
		resp, err = p.issue(ctx, tx, sk, cl, g, nil)
		return err
	})
	return resp, err
}

// errReused carries a refresh reuse out of the transaction, which must
// commit (the chain's revocation) even though the request fails.
var errReused = invalidGrant("the refresh token was already used; every token of this sign-in is now revoked")

func (p *Provider) refreshGrant(ctx context.Context, cr credentials, form url.Values) (*TokenResponse, error) {
	presented := form.Get("refresh_token")
	if presented == "" {
		return nil, invalidRequest("refresh_token is required")
	}
	cl, err := p.client(ctx, cr, true)
	if err != nil {
		return nil, err
	}
	sk, err := p.store.SigningKey(ctx) // before the transaction, as in codeGrant
	if err != nil {
		return nil, err
	}
	var resp *TokenResponse
	reused := false
	err = p.store.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Locked: two uses of one token are serialised, the second waits,
		// then sees it spent.
		row, err := models.LockRefreshToken(ctx, tx, hashToken(presented))
		if err != nil {
			return grantLookup(err, invalidGrant("the refresh token is invalid"))
		}
		now := time.Now()
		switch {
		case row.ClientID != cl.ID:
			return invalidGrant("the refresh token was issued to another client")
		case row.RevokedAt != nil:
			return invalidGrant("the refresh token has been revoked")
		case row.ExpiresAt.Before(now):
			return invalidGrant("the refresh token has expired")
		case row.SpentAt != nil:
			if now.Sub(*row.SpentAt) <= p.settings.RefreshGrace && row.GraceResponse != nil {
				// A retry by a client that lost the response: the same answer,
				// as long as the successor is unused (issue drops the
				// response when the successor is refreshed).
				var err error
				resp, err = openGrace(presented, row.GraceResponse)
				return err
			}
			reused = true
			return models.RevokeTokenChain(ctx, tx, row.ChainID)
		}
		// A member removed from the site signs in no more: no new token
		// for it (the access tokens already out stop at their next request).
		if _, err := models.MembershipOf(ctx, tx, row.SiteID, row.UserID); models.IsNoRows(err) {
			return invalidGrant("you are no longer a member of this site")
		} else if err != nil {
			return err
		}
		g := &grant{userID: row.UserID, siteID: row.SiteID, clientID: row.ClientID, scopes: row.Scopes,
			authTime: row.AuthTime, audience: p.store.audience(row.ClientID), amr: []string{"pwd"}}
		resp, err = p.issue(ctx, tx, sk, cl, g, &spent{row: row, token: presented})
		return err
	})
	if err == nil && reused {
		p.log.WarnContext(ctx, "refresh token reuse: chain revoked", "client_id", cl.ID)
		return nil, errReused
	}
	return resp, err
}

// siteFor is the site a sign-in's token names: the user's membership of
// the site whose subdomain-slug is slug, or with no slug the user's only
// site. A user of several sites must name one (invalid_request naming the
// parameter); a site the user is no member of is invalid_grant, the same
// answer as a site that does not exist.
func siteFor(ctx context.Context, db bun.IDB, userID uuid.UUID, slug string) (uuid.UUID, error) {
	site, ok, several, err := models.MemberSite(ctx, db, userID, strings.TrimSpace(slug))
	switch {
	case err != nil:
		return uuid.Nil, err
	case several:
		return uuid.Nil, invalidRequest("site is required: you belong to several sites; name one by its subdomain-slug")
	case !ok && slug != "":
		return uuid.Nil, invalidGrant("you are not a member of the site " + strconv.Quote(slug))
	case !ok:
		return uuid.Nil, invalidGrant("you are not a member of any site")
	}
	return site, nil
}

func scopes(form url.Values) []string {
	return strings.Fields(form.Get("scope"))
}
