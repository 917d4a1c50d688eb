package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"golang.org/x/oauth2"

	"github.com/pressroom/pressroom/api/oauth"
)

// TestBrowserSignIn signs in the way an editor does: the browser opens
// /oauth/authorize (authorization code, out-of-band, PKCE), a person types
// into the login form, and copies the code shown on the page. The code is
// exchanged like a command-line client does, and the token works.
func TestBrowserSignIn(t *testing.T) {
	t.Parallel()
	ctx := browser(t) // first: without Chromium the test skips before starting a system
	s := start(t)

	verifier := oauth2.GenerateVerifier()
	authURL := s.URL + "/oauth/authorize?" + url.Values{
		"client_id": {oauth.FirstPartyClientID}, "redirect_uri": {oauth.OOBRedirectURI}, "response_type": {"code"},
		"scope": {"openid"}, "state": {"browser-test"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"},
	}.Encode()
	run(t, ctx, "open the authorize URL", chromedp.Navigate(authURL), chromedp.WaitVisible(chromedp.ID("username")))

	checkFormAccessibility(t, ctx)

	// A wrong password: the page says so where a screen reader announces it,
	// and keeps the e-mail address typed.
	run(t, ctx, "sign in with a wrong password",
		chromedp.SendKeys(chromedp.ID("username"), "editor@demo.test"),
		chromedp.SendKeys(chromedp.ID("password"), "not the password"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[role=alert]`)))
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[role=alert]`)))
	if err != nil || !strings.Contains(msg, "e-mail address or password is wrong") {
		t.Fatalf("wrong-password message = %q, %v", msg, err)
	}
	if kept := eval[string](t, ctx, `document.getElementById("username").value`); kept != "editor@demo.test" {
		t.Errorf("the form forgot the e-mail address: %q", kept)
	}

	run(t, ctx, "sign in with the right password",
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("code")))
	code, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("code")))
	code = strings.TrimSpace(code)
	if err != nil || code == "" {
		t.Fatalf("code on the page = %q, %v", code, err)
	}

	resp, err := s.http.PostForm(s.URL+"/oauth/token", url.Values{
		"grant_type": {"authorization_code"}, "client_id": {oauth.FirstPartyClientID},
		"redirect_uri": {oauth.OOBRedirectURI}, "code": {code}, "code_verifier": {verifier}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		Access  string `json:"access_token"`
		Refresh string `json:"refresh_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != 200 || tok.Access == "" || tok.Refresh == "" {
		t.Fatalf("code exchange = %d %+v %v", resp.StatusCode, tok, err)
	}
	me := s.call(t, tok.Access, http.MethodGet, "/users/me", nil)
	if me.Status != 200 || me.resource(t).Attributes["email"] != "editor@demo.test" {
		t.Fatalf("GET /users/me with the browser's token = %d %s", me.Status, me.Raw)
	}
}

// checkFormAccessibility checks the login form as a keyboard and screen
// reader user meets it: every visible control has an accessible name (a
// label, aria-label or aria-labelledby), and Tab goes e-mail → password →
// the submit button, in that order.
func checkFormAccessibility(t *testing.T, ctx context.Context) {
	t.Helper()
	unlabelled := eval[[]string](t, ctx, `
		[...document.querySelectorAll("input, select, textarea, button")]
			.filter(el => el.type !== "hidden")
			.filter(el => {
				const label = el.labels && [...el.labels].some(l => l.textContent.trim() !== "");
				const aria = (el.getAttribute("aria-label") || "").trim() !== "";
				const by = (el.getAttribute("aria-labelledby") || "").split(/\s+/).some(id => {
					const ref = id && document.getElementById(id);
					return ref && ref.textContent.trim() !== "";
				});
				const text = el.tagName === "BUTTON" && el.textContent.trim() !== "";
				return !(label || aria || by || text);
			})
			.map(el => el.outerHTML)`)
	if len(unlabelled) > 0 {
		t.Errorf("controls without an accessible name: %v", unlabelled)
	}
	if lang := eval[string](t, ctx, `document.documentElement.lang`); lang == "" {
		t.Errorf("the page declares no language (html lang)")
	}
	// Focus order: from the top of the page, Tab three times.
	_ = eval[bool](t, ctx, `document.activeElement && document.activeElement.blur(), true`)
	var order []string
	for range 3 {
		run(t, ctx, "press Tab", chromedp.KeyEvent(kb.Tab))
		order = append(order, eval[string](t, ctx, `(() => { const e = document.activeElement; return e ? (e.id || e.tagName.toLowerCase() + "[type=" + e.type + "]") : "" })()`))
	}
	if want := []string{"username", "password", "button[type=submit]"}; strings.Join(order, " → ") != strings.Join(want, " → ") {
		t.Errorf("Tab order = %s, want %s", strings.Join(order, " → "), strings.Join(want, " → "))
	}
}
