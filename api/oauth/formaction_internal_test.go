package oauth

import "testing"

// The login page's form-action admits the origin the form's answer
// redirects to: Chromium applies form-action to that redirect, and with
// 'self' alone it refused to follow the code to a web app on another origin
// or a loopback port (e2e TestBrowserTypeScriptClient hung on the login
// page). Nothing that could end the directive gets into it.
func TestLoginFormActionAdmitsTheRedirectOrigin(t *testing.T) {
	for uri, want := range map[string]string{
		"":                                      "'self'",
		OOBRedirectURI:                          "'self'",
		"http://127.0.0.1:43121/callback":       "'self' http://127.0.0.1:43121",
		"http://[::1]:8000/callback?x=1":        "'self' http://[::1]:8000",
		"https://editor.example.com/cb":         "'self' https://editor.example.com",
		"com.example.app:/oauth":                "'self' com.example.app:",
		"https://evil.example;script-src *":     "'self'",
		"https://a.example, https://b.example/": "'self'",
		"javascript:alert(1)":                   "'self'",
		"data:text/html,x":                      "'self'",
	} {
		if got := formAction(uri); got != want {
			t.Errorf("formAction(%q) = %q, want %q", uri, got, want)
		}
	}
}
