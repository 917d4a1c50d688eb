package cli

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
)

// LoopbackRedirectPath is where the browser brings the code back:
// http://127.0.0.1:<port>/callback, the port the CLI got. The client
// registers http://127.0.0.1/callback; a public client may use any port
// on a loopback URI it registered (RFC 8252 §7.3, docs/auth.md).
const LoopbackRedirectPath = "/callback"

// callbackResult is what the browser brought back: a code, or the
// authorization server's error.
type callbackResult struct {
	code string
	err  error
	// reply takes the outcome of the exchange, shown on the page.
	reply chan error
}

// callbackHandler serves the one callback a sign-in expects.
type callbackHandler struct {
	state   string
	results chan callbackResult
	taken   atomic.Bool
}

var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} · Pressroom</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 36em; margin: 4em auto">
<h1>{{.Title}}</h1><p>{{.Text}}</p></body></html>
`))

func showPage(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = callbackPage.Execute(w, struct{ Title, Text string }{title, text})
}

// ServeHTTP takes the redirect of the sign-in: the state must be the one
// this sign-in sent (anything else on the port is another page's doing),
// and only the first good one counts.
func (h *callbackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != LoopbackRedirectPath || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(h.state)) != 1 {
		showPage(w, http.StatusBadRequest, "Not this sign-in",
			"This address does not answer the sign-in `pressroom login` is waiting for. Start again from the terminal.")
		return
	}
	res := callbackResult{code: q.Get("code"), reply: make(chan error, 1)}
	if e := q.Get("error"); e != "" {
		res.err = fmt.Errorf("the sign-in was refused: %s %s", e, q.Get("error_description"))
	} else if res.code == "" {
		res.err = errors.New("the browser came back without a code")
	}
	if !h.taken.CompareAndSwap(false, true) {
		showPage(w, http.StatusConflict, "Already done", "This sign-in has already been completed. You can close this tab.")
		return
	}
	h.results <- res // buffered: the first and only one
	if res.err != nil {
		res.reply <- res.err
	}
	select {
	case err := <-res.reply:
		if err != nil {
			showPage(w, http.StatusBadRequest, "Sign-in failed", err.Error()+" Go back to the terminal for details.")
			return
		}
		showPage(w, http.StatusOK, "Signed in", "Pressroom is signed in. You can close this tab and go back to the terminal.")
	case <-r.Context().Done():
	}
}

// loopbackLogin signs in with the system browser: it listens on
// 127.0.0.1 on a port of the system's choosing, opens the authorize URL
// with that redirect URI, and waits (up to timeout) for the browser to
// come back with the code, which it exchanges with the PKCE verifier. An
// error wrapping errNoBrowser means the browser could not be opened, and
// nothing else happened: the caller may fall back to the pasted code.
func loopbackLogin(ctx context.Context, o Options, conf *oauth2.Config, open Opener, timeout time.Duration, site string) (*oauth2.Token, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("%w: listen on 127.0.0.1 for the browser's answer: %v", errNoBrowser, err)
	}
	c := *conf
	c.RedirectURL = fmt.Sprintf("http://%s%s", ln.Addr(), LoopbackRedirectPath)
	verifier, state := oauth2.GenerateVerifier(), randomString()
	h := &callbackHandler{state: state, results: make(chan callbackResult, 1)}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: time.Minute, MaxHeaderBytes: 64 << 10}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	defer func() {
		// Lets the page of the exchange be written, then stops.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
	}()

	authURL := c.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
	fmt.Fprintf(o.Stderr, "Opening the browser to sign in to %s…\n", o.shownAPI())
	opened := make(chan error, 1)
	go func() { opened <- open(authURL) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	// The address is shown once the browser is up, or while it takes its
	// time, not before: when no browser opens, the pasted-code sign-in
	// follows with an address of its own, and this one would only mislead.
	hint := time.After(2 * time.Second)
	showAddress := func() {
		fmt.Fprintf(o.Stderr, "Waiting for the sign-in in the browser. If none opened, open this address on this computer:\n\n  %s\n\n", authURL)
		hint = nil
	}
	for {
		select {
		case err := <-opened:
			if err != nil {
				if !errors.Is(err, errNoBrowser) {
					err = fmt.Errorf("%w: %v", errNoBrowser, err)
				}
				return nil, err
			}
			opened = nil // the browser is up: wait for it to come back
			if hint != nil {
				showAddress()
			}
		case <-hint:
			showAddress()
		case res := <-h.results:
			if res.err != nil {
				return nil, res.err
			}
			tok, err := c.Exchange(withHTTP(ctx, o.httpClient()), res.code, exchangeOptions(verifier, site)...)
			if err != nil {
				err = exchangeError(c.Endpoint.TokenURL, err)
			}
			res.reply <- err
			return tok, err
		case <-timer.C:
			return nil, fmt.Errorf("no sign-in came back from the browser within %s. Run `pressroom login` again, or "+
				"`pressroom login --no-browser` to paste a code instead. (If the browser showed an error about the "+
				"redirect URI, the OAuth client lacks http://127.0.0.1%s: see docs/auth.md.)", timeout, LoopbackRedirectPath)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
