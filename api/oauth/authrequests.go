package oauth

// The sign-in requests of the authorization code flow: what
// /oauth/authorize stores until the user signs in and the code is
// exchanged (op.AuthStorage's request half; tokens are in store.go).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/models"
)

// authRequestRow is a stored authorization request: its client and
// PKCE challenge, then who signed in and the hash of the code issued.
type authRequestRow struct {
	bun.BaseModel `bun:"table:oauth_auth_requests"`

	ID                  uuid.UUID  `bun:"id,pk,type:uuid"`
	ClientID            string     `bun:"client_id,notnull"`
	RedirectURI         string     `bun:"redirect_uri,notnull"`
	State               string     `bun:"state,notnull"`
	Nonce               string     `bun:"nonce,notnull"`
	Scopes              []string   `bun:"scopes,array,notnull"`
	ResponseType        string     `bun:"response_type,notnull"`
	CodeChallenge       string     `bun:"code_challenge,notnull"`
	CodeChallengeMethod string     `bun:"code_challenge_method,notnull"`
	UserID              *uuid.UUID `bun:"user_id,type:uuid"`
	SiteID              *uuid.UUID `bun:"site_id,type:uuid"`
	AuthTime            *time.Time `bun:"auth_time"`
	CodeHash            *string    `bun:"code_hash"`
	BrowserHash         string     `bun:"browser_hash,notnull"` // hashToken of the binding cookie's nonce
	CreatedAt           time.Time  `bun:"created_at,notnull"`
	ExpiresAt           time.Time  `bun:"expires_at,notnull"`
}

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
	if _, err := s.db.NewInsert().Model(row).Exec(ctx); err != nil {
		return nil, fmt.Errorf("save auth request: %w", err)
	}
	return &authRequest{row}, nil
}

func (s *Store) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	uid, err := uuid.Parse(id)
	if err != nil {
		return nil, oidc.ErrInvalidRequest().WithDescription("unknown authorization request")
	}
	row := new(authRequestRow)
	if err := s.db.NewSelect().Model(row).Where("id = ? AND expires_at > now()", uid).Scan(ctx); err != nil {
		return nil, oidc.ErrInvalidRequest().WithDescription("unknown or expired authorization request")
	}
	return &authRequest{row}, nil
}

func (s *Store) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	row := new(authRequestRow)
	if err := s.db.NewSelect().Model(row).Where("code_hash = ? AND expires_at > now()", hashToken(code)).Scan(ctx); err != nil {
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
	res, err := s.db.NewUpdate().Model((*authRequestRow)(nil)).Set("code_hash = ?", hashToken(code)).
		Where("id = ? AND code_hash IS NULL AND user_id IS NOT NULL AND expires_at > now()", uid).Exec(ctx)
	if err != nil {
		return fmt.Errorf("save auth code: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errCodeIssued
	}
	return nil
}

func (s *Store) DeleteAuthRequest(ctx context.Context, id string) error {
	_, err := s.db.NewDelete().Model((*authRequestRow)(nil)).Where("id = ?", id).Exec(ctx)
	return err
}

// completeAuthRequest records that user logged in for the request, in the
// browser whose binding nonce hashes to browserHash.
func (s *Store) completeAuthRequest(ctx context.Context, id uuid.UUID, browserHash string, u *models.User) error {
	res, err := s.db.NewUpdate().Model((*authRequestRow)(nil)).
		Set("user_id = ?, site_id = ?, auth_time = now()", u.ID, u.SiteID).
		Where("id = ? AND expires_at > now() AND user_id IS NULL AND browser_hash = ? AND browser_hash <> ''", id, browserHash).Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errors.New("the sign-in request has expired or was already used; start again")
	}
	return nil
}
