package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
)

// retryError refuses a request for a while: 429 (client authentication of
// the address is locked) or 503 (no hashing memory free in time).
type retryError struct {
	status int
	wait   time.Duration
}

func (e *retryError) Error() string {
	return fmt.Sprintf("%s; retry in %d seconds", http.StatusText(e.status), int(e.wait.Seconds()+0.999))
}

// busy is the answer when a password check cannot get hashing memory in time.
func (s *Store) busy() *retryError {
	return &retryError{status: http.StatusServiceUnavailable, wait: max(s.hashes.Wait(), time.Second)}
}

// tokenError renders e for the token endpoint (RFC 6749 §5.2 body).
func (e *retryError) tokenError() *tokenError {
	if e.status == http.StatusTooManyRequests {
		return &tokenError{status: e.status, Code: "slow_down", retryAfter: e.wait,
			Description: fmt.Sprintf("too many failed client authentications; try again in %d seconds", int(e.wait.Seconds()+0.999))}
	}
	return &tokenError{status: e.status, Code: "temporarily_unavailable", retryAfter: e.wait,
		Description: "the server is busy checking other credentials; try again shortly"}
}

// clientAuthState carries the client's address into op's handlers (whose
// context is not fiber's) and a refusal back out to clientAuthWriter.
type clientAuthState struct {
	addr    string
	refused *retryError
}

type clientAuthKey struct{}

// clientAddrValue is the fiber user value under which Mount hands the
// client address to op's handler.
const clientAddrValue = "pressroom.client_addr"

func withClientAuth(ctx context.Context, addr any) (context.Context, *clientAuthState) {
	st := &clientAuthState{}
	st.addr, _ = addr.(string)
	return context.WithValue(ctx, clientAuthKey{}, st), st
}

func clientAuthOf(ctx context.Context) *clientAuthState {
	st, _ := ctx.Value(clientAuthKey{}).(*clientAuthState)
	if st == nil {
		return &clientAuthState{}
	}
	return st
}

// clientAuthWriter turns op's error answer into 429 or 503 with
// Retry-After when client authentication was refused for a while.
type clientAuthWriter struct {
	http.ResponseWriter
	st *clientAuthState
}

func (w *clientAuthWriter) WriteHeader(code int) {
	if r := w.st.refused; r != nil && code >= 400 {
		code = r.status
		w.Header().Set("Retry-After", strconv.Itoa(int(r.wait.Seconds()+0.999)))
		w.Header().Del("WWW-Authenticate")
	}
	w.ResponseWriter.WriteHeader(code)
}

// dummyClientHash is checked for an unknown client id, so that it costs the
// same as a wrong secret. Nobody's secret.
const dummyClientHash = "$hmac-sha256$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

func clientAddrKey(addr string) string { return "client-addr:" + addr }

// authenticateClient checks a client's credentials. A public client named
// without a secret needs none. Every other case (an unknown id, a
// confidential client, a secret sent to a public one) is client
// authentication: refused with 429 while the address is locked, and a
// failure counts against the address (ThrottleSettings.ClientMaxPerAddress).
func (s *Store) authenticateClient(ctx context.Context, id, secret string, secretRequired bool) (*models.OAuthClient, error) {
	row := new(models.OAuthClient)
	err := models.FindOAuthClient(ctx, s.db, id, row)
	if err != nil && !models.IsNoRows(err) {
		return nil, fmt.Errorf("find client: %w", err)
	}
	found := err == nil
	if found && !row.Confidential && !secretRequired && secret == "" {
		return row, nil
	}
	st := clientAuthOf(ctx)
	key := clientAddrKey(st.addr)
	if st.addr != "" {
		if wait, err := s.throttle.locked(ctx, key); err != nil {
			return nil, err
		} else if wait > 0 {
			return nil, &retryError{status: http.StatusTooManyRequests, wait: wait}
		}
	}
	err = s.checkClientSecret(ctx, found, row, secret)
	if errors.Is(err, errInvalidClient) && st.addr != "" {
		if ferr := s.throttle.failed(context.WithoutCancel(ctx), key, s.throttle.s.ClientMaxPerAddress); ferr != nil {
			return nil, ferr
		}
	}
	if err != nil {
		return nil, err
	}
	return row, nil
}

// checkClientSecret verifies secret against the client's stored hash: an
// HMAC (microseconds), or a legacy argon2id hash (under the hashing limiter),
// which a successful check replaces with the HMAC form.
func (s *Store) checkClientSecret(ctx context.Context, found bool, row *models.OAuthClient, secret string) error {
	key := s.settings.ClientSecretKey
	switch {
	case !found:
		_ = auth.CheckClientSecret(key, dummyClientHash, secret) // the same work as a wrong secret
		return errInvalidClient
	case !row.Confidential || row.SecretHash == nil || secret == "":
		_ = auth.CheckClientSecret(key, dummyClientHash, secret)
		return errInvalidClient
	case !auth.IsLegacyClientSecretHash(*row.SecretHash):
		if auth.CheckClientSecret(key, *row.SecretHash, secret) != nil {
			return errInvalidClient
		}
		return nil
	}
	old := *row.SecretHash
	switch err := s.hashes.CheckPassword(ctx, old, secret); {
	case errors.Is(err, auth.ErrBusy):
		return s.busy()
	case isContextError(err): // the check did not run
		return err
	case err != nil:
		return errInvalidClient
	}
	// Migrate: the secret is right, so store it in the new form. Only if
	// nobody changed it meanwhile; a failure here costs nothing but speed.
	fresh := auth.HashClientSecret(key, secret)
	if err := models.RehashClientSecret(context.WithoutCancel(ctx), s.db, row.ID, old, fresh); err != nil {
		return err
	}
	row.SecretHash = &fresh
	return nil
}

// isContextError: the limiter gave up waiting because the caller's context
// ended, so no check ran (a check that ran reports only a mismatch).
func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// opClientError is what op's handlers get for a refused client
// authentication; clientAuthWriter sets the status and Retry-After. A
// failure to check (the database) is 503, not op's 401 invalid_client.
func opClientError(ctx context.Context, err error) error {
	var re *retryError
	switch {
	case err == nil || errors.Is(err, errInvalidClient):
		return err
	case !errors.As(err, &re):
		return storeUnavailable(ctx, err)
	}
	clientAuthOf(ctx).refused = re
	if re.status == http.StatusTooManyRequests {
		return oidc.ErrSlowDown().WithDescription("%s", re.Error())
	}
	return &oidc.Error{ErrorType: "temporarily_unavailable", Description: re.Error()}
}

// storeUnavailable is what op's handlers (revocation, introspection's
// client authentication) get when the database failed them: nothing is
// known about the client or the token, so neither "invalid" nor "done" may
// be answered. clientAuthWriter turns op's answer into 503 with
// Retry-After, whatever status op chose.
func storeUnavailable(ctx context.Context, err error) *oidc.Error {
	wait := time.Second // a lock timeout, a cancelled query
	if models.IsUnavailable(err) {
		wait = 5 * time.Second // the database is down or restarting
	}
	clientAuthOf(ctx).refused = &retryError{status: http.StatusServiceUnavailable, wait: wait}
	return (&oidc.Error{ErrorType: "temporarily_unavailable", Description: "the server could not read or record the token; try again shortly"}).WithParent(err)
}
