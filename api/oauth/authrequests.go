package oauth

// The sign-in requests of the authorization code flow: what
// /oauth/authorize stores until the user signs in and the code is
// exchanged (op.AuthStorage's request half; tokens are in store.go).

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/models"
)

// authRequestRow is a stored authorization request.
type authRequestRow = models.OAuthAuthRequest

// authRequest adapts a stored authorization request to op.AuthRequest.
type authRequest struct{ row *authRequestRow }

func (a *authRequest) GetID() string          { return a.row.ID.String() }
func (a *authRequest) GetACR() string         { return "" }
func (a *authRequest) GetAMR() []string       { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string  { return []string{a.row.ClientID} }
func (a *authRequest) GetClientID() string    { return a.row.ClientID }
func (a *authRequest) GetNonce() string       { return a.row.Nonce }
func (a *authRequest) GetRedirectURI() string { return a.row.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType {
	return oidc.ResponseType(a.row.ResponseType)
}
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return oidc.ResponseModeQuery }
func (a *authRequest) GetScopes() []string                { return a.row.Scopes }
func (a *authRequest) GetState() string                   { return a.row.State }
func (a *authRequest) Done() bool                         { return a.row.UserID != nil }
func (a *authRequest) GetSubject() string {
	if a.row.UserID == nil {
		return ""
	}
	return a.row.UserID.String()
}
func (a *authRequest) GetAuthTime() time.Time {
	if a.row.AuthTime == nil {
		return time.Time{}
	}
	return *a.row.AuthTime
}
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.row.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.row.CodeChallenge, Method: oidc.CodeChallengeMethod(a.row.CodeChallengeMethod)}
}

// authRequestLifetime bounds the time from /oauth/authorize to the code
// exchange (RFC 6749 recommends codes live at most 10 minutes).
const authRequestLifetime = 10 * time.Minute

// CreateAuthRequest is op's way to store a request; Pressroom's
// /oauth/authorize stores them itself with createAuthRequest, bound to the
// browser, and op never gets to create an unbound one.
func (s *Store) CreateAuthRequest(context.Context, *oidc.AuthRequest, string) (op.AuthRequest, error) {
	return nil, oidc.ErrServerError().WithDescription("authorization requests are created by /oauth/authorize")
}

// createAuthRequest stores a validated authorization request, bound to the
// browser whose nonce hashes to browserHash.
func (s *Store) createAuthRequest(ctx context.Context, r *oidc.AuthRequest, browserHash string) (*authRequest, error) {
	if browserHash == "" {
		return nil, errors.New("save auth request: no browser binding")
	}
	now := time.Now().UTC()
	row := &authRequestRow{
		ID: uuid.New(), ClientID: r.ClientID, RedirectURI: r.RedirectURI, State: r.State, Nonce: r.Nonce,
		Scopes: nonNil(r.Scopes), ResponseType: string(r.ResponseType),
		CodeChallenge: r.CodeChallenge, CodeChallengeMethod: string(r.CodeChallengeMethod),
		BrowserHash: browserHash, CreatedAt: now, ExpiresAt: now.Add(authRequestLifetime),
	}
	if row.CodeChallenge != "" && row.CodeChallengeMethod == "" {
		row.CodeChallengeMethod = string(oidc.CodeChallengeMethodPlain)
	}
	if err := models.SaveAuthRequest(ctx, s.db, row); err != nil {
		return nil, err
	}
	return &authRequest{row}, nil
}

func (s *Store) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	uid, err := uuid.Parse(id)
	if err != nil {
		return nil, oidc.ErrInvalidRequest().WithDescription("unknown authorization request")
	}
	row, err := models.AuthRequestByID(ctx, s.db, uid)
	if err != nil {
		return nil, oidc.ErrInvalidRequest().WithDescription("unknown or expired authorization request")
	}
	return &authRequest{row}, nil
}

func (s *Store) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	row, err := models.AuthRequestByCodeHash(ctx, s.db, hashToken(code))
	if err != nil {
		return nil, oidc.ErrInvalidGrant().WithDescription("the authorization code is invalid, expired or used")
	}
	return &authRequest{row}, nil
}

// errCodeIssued: a request gets one code, ever; a second attempt (a replayed
// login, a second callback) must not replace the code already handed out.
var errCodeIssued = errors.New("a code was already issued for this sign-in; start again from the application")

// SaveAuthCode records the code of a completed request. It never overwrites
// a code: the first one issued is the only one.
func (s *Store) SaveAuthCode(ctx context.Context, id, code string) error {
	uid, err := uuid.Parse(id)
	if err != nil {
		return errCodeIssued
	}
	saved, err := models.SaveAuthCodeHash(ctx, s.db, uid, hashToken(code))
	if err != nil {
		return err
	}
	if !saved {
		return errCodeIssued
	}
	return nil
}

func (s *Store) DeleteAuthRequest(ctx context.Context, id string) error {
	return models.DeleteAuthRequest(ctx, s.db, id)
}

// completeAuthRequest records that user logged in for the request, in the
// browser whose binding nonce hashes to browserHash.
func (s *Store) completeAuthRequest(ctx context.Context, id uuid.UUID, browserHash string, u *models.User) error {
	done, err := models.CompleteAuthRequest(ctx, s.db, id, browserHash, u.ID, u.SiteID)
	if err != nil {
		return err
	}
	if !done {
		return errors.New("the sign-in request has expired or was already used; start again")
	}
	return nil
}
