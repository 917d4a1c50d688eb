package oauth

import (
	"bytes"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/auth"
)

// The login form and the out-of-band code page: plain, accessible HTML
// (labels, autocomplete hints, one heading, no script).
var pages = template.Must(template.New("pages").Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Pressroom</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem}
label{display:block;margin-top:1rem;font-weight:600}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem}.error{color:#a00;border-left:4px solid #a00;padding-left:.5rem}
code{display:block;font-size:1.1rem;padding:1rem;background:#f3f3f3;word-break:break-all}</style></head><body><main>{{end}}

{{define "login"}}{{template "head" .}}
<h1>Sign in to Pressroom</h1>
<p>{{.ClientName}} asks to act on your behalf.</p>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/oauth/login">
<input type="hidden" name="id" value="{{.ID}}">
<input type="hidden" name="token" value="{{.Token}}">
<label for="username">E-mail address</label>
<input id="username" name="username" type="email" autocomplete="username" required value="{{.Username}}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form></main></body></html>{{end}}

{{define "code"}}{{template "head" .}}
<h1>Your authorization code</h1>
<p>Copy this code into {{.ClientName}}. It works once, within ten minutes.</p>
<code id="code" aria-label="authorization code">{{.Code}}</code>
</main></body></html>{{end}}

{{define "problem"}}{{template "head" .}}
<h1>This sign-in link does not work</h1>
<p role="alert">{{.Error}}</p>
</main></body></html>{{end}}
`))

type pageData struct {
	Title, ClientName, ID, Token, Username, Error, Code string
	// RedirectURI is where the login form's answer redirects (the
	// request's redirect URI): the page's form-action admits its origin.
	RedirectURI string
}

func render(c *fiber.Ctx, status int, name string, d pageData) error {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, d); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/html; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Frame-Options", "DENY") // no clickjacking of the password form
	c.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action "+formAction(d.RedirectURI)+"; frame-ancestors 'none'")
	return c.Status(status).Send(buf.Bytes())
}

// cspHost is what formAction accepts as the host of a CSP source: no
// spaces, semicolons or commas that would end the directive.
var cspHost = regexp.MustCompile(`^[A-Za-z0-9.\-]+(:[0-9]+)?$|^\[[0-9A-Fa-f:.]+\](:[0-9]+)?$`)

// formAction is the login page's CSP form-action: 'self', and the origin of
// the redirect URI the form's POST answers with a 302. Browsers apply
// form-action to the redirects after a form submission too (CSP Level 3),
// so with 'self' alone Chromium refuses to follow the code's redirect to a
// client on another origin (a loopback port, a web app). An http(s) URI
// adds its scheme://host[:port]; another scheme (a native app's private
// scheme) adds the scheme, unless it is one that runs or reads content
// (javascript:, data:, …); anything else adds nothing.
func formAction(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if redirectURI == "" || redirectURI == OOBRedirectURI || err != nil {
		return "'self'"
	}
	switch {
	case (u.Scheme == "http" || u.Scheme == "https") && cspHost.MatchString(u.Host):
		return "'self' " + u.Scheme + "://" + u.Host
	case u.Scheme != "http" && u.Scheme != "https" && cspScheme.MatchString(u.Scheme) && !unsafeSchemes[u.Scheme]:
		return "'self' " + u.Scheme + ":"
	}
	return "'self'"
}

var cspScheme = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

// unsafeSchemes never enter form-action, registered or not.
var unsafeSchemes = map[string]bool{"javascript": true, "data": true, "blob": true, "file": true, "filesystem": true}

// loginForm shows the form for an authorization request this browser started.
func (p *Provider) loginForm(c *fiber.Ctx) error {
	req, cl, nonce, err := p.pendingRequest(c, c.Query("id"))
	if err != nil {
		return loginProblem(c, err)
	}
	id := req.GetID()
	return render(c, http.StatusOK, "login", pageData{Title: "Sign in", ClientName: cl.row.Name, ID: id, Token: formToken(nonce, id),
		RedirectURI: req.row.RedirectURI})
}

// login checks the credentials, completes the request, and hands over the
// code, once: by redirect to the client, or shown on a page for the
// out-of-band URI. This is the only place a code is issued (op's callback is
// not served), and only to the browser the request is bound to.
func (p *Provider) login(c *fiber.Ctx) error {
	id := c.FormValue("id")
	for _, v := range []string{id, c.FormValue("username"), c.FormValue("password")} {
		if strings.ContainsRune(v, 0) { // PostgreSQL text cannot hold it
			return render(c, http.StatusBadRequest, "problem", pageData{Title: "Sign-in problem", Error: "The form must not contain the NUL character."})
		}
	}
	req, cl, nonce, err := p.pendingRequest(c, id)
	if err != nil {
		return loginProblem(c, err)
	}
	// Before the password is looked at: a forged post costs no attempt.
	if !validFormToken(nonce, id, c.FormValue("token")) {
		return render(c, http.StatusForbidden, "problem", pageData{Title: "Sign-in problem",
			Error: "The sign-in form was not sent from this sign-in page; start again from the application."})
	}
	username := c.FormValue("username")
	u, err := p.checkLogin(withSignInAudit(c.UserContext(), c, "password", c.FormValue("site")), username, c.FormValue("password"), c.IP())
	if err != nil {
		var te *tokenError
		if !errors.As(err, &te) {
			return err
		}
		if te.retryAfter > 0 {
			c.Set(fiber.HeaderRetryAfter, itoa(te.retryAfter))
		}
		msg := "The e-mail address or password is wrong."
		if te.status == http.StatusTooManyRequests {
			msg = "Too many failed attempts. " + te.Description + "."
		} else if te.status == http.StatusServiceUnavailable {
			msg = "The server is busy. Please try again in a few seconds."
		}
		return render(c, te.status, "login", pageData{Title: "Sign in", ClientName: cl.row.Name, ID: id, Token: formToken(nonce, id),
			Username: username, Error: msg, RedirectURI: req.row.RedirectURI})
	}
	ctx := c.UserContext()
	if err := p.store.completeAuthRequest(ctx, req.row.ID, hashToken(nonce), u); err != nil {
		return render(c, http.StatusBadRequest, "problem", pageData{Title: "Sign-in problem", Error: err.Error()})
	}
	code, err := auth.RandomSecret(32)
	if err != nil {
		return err
	}
	if err := p.store.SaveAuthCode(ctx, id, code); err != nil {
		if errors.Is(err, errCodeIssued) {
			return render(c, http.StatusBadRequest, "problem", pageData{Title: "Sign-in problem", Error: err.Error()})
		}
		return err
	}
	if req.row.RedirectURI == OOBRedirectURI {
		return render(c, http.StatusOK, "code", pageData{Title: "Authorization code", ClientName: cl.row.Name, Code: code})
	}
	to, err := op.AuthResponseURL(req.row.RedirectURI, req.GetResponseType(), req.GetResponseMode(),
		&op.CodeResponseType{Code: code, State: req.row.State}, p.op.Encoder())
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(to, http.StatusFound)
}

// loginError is why a sign-in page cannot be shown or used, in words for
// the person at the browser.
type loginError struct {
	status int
	msg    string
}

func (e *loginError) Error() string { return e.msg }

func loginProblem(c *fiber.Ctx, err error) error {
	var le *loginError
	if !errors.As(err, &le) {
		return err
	}
	return render(c, le.status, "problem", pageData{Title: "Sign-in problem", Error: le.msg})
}

// pendingRequest loads an authorization request still waiting for a login,
// started by this browser; it returns the browser's binding nonce too.
func (p *Provider) pendingRequest(c *fiber.Ctx, id string) (*authRequest, *client, string, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, nil, "", &loginError{http.StatusBadRequest, "the sign-in link is incomplete; start again from the application"}
	}
	r, err := p.store.AuthRequestByID(c.UserContext(), id)
	if err != nil {
		return nil, nil, "", &loginError{http.StatusBadRequest, "the sign-in link has expired; start again from the application"}
	}
	req := r.(*authRequest)
	nonce := p.browserNonce(c)
	if !boundTo(req, nonce) {
		return nil, nil, "", &loginError{http.StatusForbidden, "this sign-in was started in another browser, or took too long; " +
			"start again from the application in this browser"}
	}
	if req.Done() {
		return nil, nil, "", &loginError{http.StatusBadRequest, "this sign-in was already completed; start again from the application"}
	}
	oc, err := p.store.GetClientByClientID(c.UserContext(), req.row.ClientID)
	if err != nil {
		return nil, nil, "", &loginError{http.StatusBadRequest, "the application is no longer registered"}
	}
	cl := oc.(*client)
	if !cl.row.Confidential && req.row.CodeChallenge == "" {
		return nil, nil, "", &loginError{http.StatusBadRequest, "this application must use PKCE (code_challenge); it cannot sign in without it"}
	}
	return req, cl, nonce, nil
}

func itoa(d time.Duration) string { return strconv.Itoa(int(d.Seconds() + 0.999)) }
