package api

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/intake"
	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
)

// The password setup page of a user an admin created (POST /memberships,
// docs/auth.md "Managing the team"): GET /password-setup?token=… shows a
// form, POST /password-setup sets the password. The link works once,
// within models.PasswordSetupLifetime; only its token's hash is stored.
//
// CSRF: the GET gives the browser a random nonce in an HttpOnly,
// SameSite=Strict cookie, and the form carries an HMAC of the token under
// it; the POST needs both to match, so another site cannot submit the
// form in the browser's name.

const (
	passwordSetupPath = "/password-setup"
	setupCookie       = "pressroom-setup"
	// minPassword and auth.MaxPasswordBytes bound a password set here.
	minPassword = 8
	// maxSetupForm bounds the form a POST may send.
	maxSetupForm = 8 << 10
)

var setupPages = template.Must(template.New("setup").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Pressroom</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem}
label{display:block;margin-top:1rem;font-weight:600}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem}.error{color:#a00;border-left:4px solid #a00;padding-left:.5rem}</style>
</head><body><main><h1>{{.Title}}</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if .Token}}<p>Choose the password of {{.Email}} (at least 8 characters).</p>
<form method="post" action="/password-setup">
<input type="hidden" name="token" value="{{.Token}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<input type="hidden" name="username" value="{{.Email}}" autocomplete="username">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="8" maxlength="1024" required>
<button type="submit">Set password</button>
</form>{{else if .Done}}<p>The password of {{.Email}} is set: sign in with it.</p>{{end}}
</main></body></html>`))

type setupPage struct {
	Title, Email, Token, CSRF, Error string
	Done                             bool
}

func renderSetup(c *fiber.Ctx, status int, d setupPage) error {
	var buf bytes.Buffer
	if err := setupPages.Execute(&buf, d); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/html; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Referrer-Policy", "no-referrer") // the URL holds the token
	c.Set("X-Frame-Options", "DENY")
	c.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	return c.Status(status).Send(buf.Bytes())
}

// setupGone is the page of a link that is unknown, used or expired.
func setupGone(c *fiber.Ctx) error {
	return renderSetup(c, http.StatusGone, setupPage{Title: "This link does not work",
		Error: "The password setup link is unknown, already used or expired (links work once, for 72 hours). Ask an admin of the site for a new one."})
}

// setupCSRF is the form's CSRF token: an HMAC of the setup token under
// the browser's nonce.
func setupCSRF(nonce, token string) string {
	m := hmac.New(sha256.New, []byte(nonce))
	m.Write([]byte("pressroom password setup\x00" + token))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

type passwordSetupHandler struct {
	db     *bun.DB
	secure bool // the public URL is https: the cookie is Secure
	// hashes bounds the argon2id hashing the page does at once: one
	// password at a time (setups are rare), each waiting at most the
	// sign-in's hash wait, then 503.
	hashes *auth.HashLimiter
}

// form serves GET /password-setup?token=…
func (h passwordSetupHandler) form(c *fiber.Ctx) error {
	token := c.Query("token")
	if token == "" || len(token) > 100 {
		return setupGone(c)
	}
	_, email, err := models.PendingPasswordSetup(c.UserContext(), h.db, token)
	if errors.Is(err, models.ErrSetupGone) {
		return setupGone(c)
	}
	if err != nil {
		return err
	}
	nonce := c.Cookies(setupCookie)
	if len(nonce) != 43 {
		if nonce, err = auth.RandomSecret(32); err != nil {
			return err
		}
	}
	c.Cookie(&fiber.Cookie{Name: setupCookie, Value: nonce, Path: passwordSetupPath, MaxAge: 3600,
		Secure: h.secure, HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode})
	return renderSetup(c, http.StatusOK, setupPage{Title: "Set your password", Email: email, Token: token, CSRF: setupCSRF(nonce, token)})
}

// set serves POST /password-setup: checks the CSRF token and the
// password's length, then spends the link and sets the password in one
// transaction (a link used meanwhile is refused there).
func (h passwordSetupHandler) set(c *fiber.Ctx) error {
	token, password := c.FormValue("token"), c.FormValue("password")
	if token == "" || len(token) > 100 {
		return setupGone(c)
	}
	nonce := c.Cookies(setupCookie)
	if nonce == "" || !hmac.Equal([]byte(setupCSRF(nonce, token)), []byte(c.FormValue("csrf"))) {
		return renderSetup(c, http.StatusForbidden, setupPage{Title: "Open the link again",
			Error: "This form was not sent from the page the link opened (or cookies are off). Open the link again."})
	}
	_, email, err := models.PendingPasswordSetup(c.UserContext(), h.db, token)
	if errors.Is(err, models.ErrSetupGone) {
		return setupGone(c)
	}
	if err != nil {
		return err
	}
	if len(password) < minPassword || len(password) > auth.MaxPasswordBytes {
		return renderSetup(c, http.StatusUnprocessableEntity, setupPage{Title: "Set your password", Email: email, Token: token,
			CSRF: setupCSRF(nonce, token), Error: "The password must be 8 to 1024 bytes long."})
	}
	hash, err := h.hashes.HashPassword(c.UserContext(), password)
	if errors.Is(err, auth.ErrBusy) {
		c.Set(fiber.HeaderRetryAfter, "5")
		return renderSetup(c, http.StatusServiceUnavailable, setupPage{Title: "Try again shortly",
			Error: "The server is busy; send the form again in a few seconds."})
	}
	if err != nil {
		return err
	}
	err = runTx(c.UserContext(), h.db, func(ctx context.Context, tx bun.Tx) error {
		return models.UsePasswordSetup(ctx, tx, token, hash)
	})
	if errors.Is(err, models.ErrSetupGone) {
		return setupGone(c)
	}
	if err != nil {
		return err
	}
	return renderSetup(c, http.StatusOK, setupPage{Title: "Password set", Email: email, Done: true})
}

// registerPasswordSetup registers the public setup page (no token: the
// link is the credential).
func registerPasswordSetup(r routes) {
	h := passwordSetupHandler{db: r.deps.DB, secure: strings.HasPrefix(r.links.base, "https://"),
		hashes: auth.NewHashLimiter(0, cmp.Or(r.deps.Config.OAuth.HashWait, 5*time.Second))}
	r.app.Get(passwordSetupPath, h.form)
	r.app.Post(passwordSetupPath, intake.ReadBody(maxSetupForm), h.set)
}
