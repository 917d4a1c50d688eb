package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
)

// Store is the provider's state in Postgres; it implements op.Storage.
type Store struct {
	db       *bun.DB
	keys     *Keys
	settings Settings
	loginURL func(authRequestID string) string
	hashes   *auth.HashLimiter // every argon2id check a request causes runs under it
	throttle *throttle
	// signatures checks an access token's signature for a revocation op
	// could not verify (revokeUnverified).
	signatures *verifier
}

var (
	_ op.Storage                        = (*Store)(nil)
	_ op.CanGetPrivateClaimsFromRequest = (*Store)(nil)
)

// hashToken is how refresh tokens and codes are stored: they are long and
// random, so a fast hash is as good as a slow one and keeps lookups cheap.
func hashToken(t string) string {
	h := sha256.Sum256([]byte(t))
	return hex.EncodeToString(h[:])
}

// --- rows --------------------------------------------------------------------

type refreshRow = models.OAuthRefreshToken

type accessRow = models.OAuthAccessToken

// --- the request types op passes around -----------------------------------------

// grant is what a token is issued for: a user of a site, through a client.
type grant struct {
	userID, siteID uuid.UUID
	clientID       string
	scopes         []string
	authTime       time.Time
	audience       []string
	amr            []string
	// client: an integration client's grant (client_credentials), for no
	// person; the token's subject is the client.
	client bool
}

func (g *grant) GetSubject() string {
	if g.client {
		return g.clientID
	}
	return g.userID.String()
}
func (g *grant) GetAudience() []string            { return g.audience }
func (g *grant) GetScopes() []string              { return g.scopes }
func (g *grant) GetAMR() []string                 { return g.amr }
func (g *grant) GetAuthTime() time.Time           { return g.authTime }
func (g *grant) GetClientID() string              { return g.clientID }
func (g *grant) SetCurrentScopes(scopes []string) { g.scopes = scopes }

// --- op.AuthStorage: tokens (its requests are in authrequests.go) ----------------

// CreateAccessToken records an access token and returns its id (the JWT's jti).
func (s *Store) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	g, err := s.grantOf(ctx, req)
	if err != nil {
		return "", time.Time{}, err
	}
	row, err := s.insertAccess(ctx, s.db, g, nil)
	if err != nil {
		return "", time.Time{}, err
	}
	return row.ID.String(), row.ExpiresAt, nil
}

// CreateAccessAndRefreshTokens is op's refresh path; Pressroom's token
// endpoint issues tokens itself (see token.go), so op never reaches it.
func (s *Store) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, oidc.ErrServerError().WithDescription("tokens are issued by /oauth/token")
}

// TokenRequestByRefreshToken: see CreateAccessAndRefreshTokens.
func (s *Store) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, oidc.ErrInvalidGrant().WithDescription("refresh tokens are redeemed at /oauth/token")
}

func (s *Store) TerminateSession(ctx context.Context, userID, clientID string) error {
	uid, err := uuid.Parse(userID)
	if err != nil {
		return nil
	}
	return models.RevokeUserTokens(ctx, s.db, uid, clientID)
}

// RevokeToken revokes an access token, or a refresh token with its whole
// chain, as RFC 7009 asks. op calls it with a refresh token's row id (from
// GetRefreshTokenInfo) or an access token's id, both with the user id, or
// with a refresh token's value and no user. Unknown tokens are not an error
// (200), but a revocation that could not be recorded is: a database error
// is 503 (storeUnavailable), never a success the client would take for a
// logout.
func (s *Store) RevokeToken(ctx context.Context, tokenOrID, userID, clientID string) *oidc.Error {
	var row *refreshRow
	var err error
	if userID == "" {
		row, err = models.RefreshTokenByHash(ctx, s.db, hashToken(tokenOrID), "")
	} else {
		row, err = models.RefreshTokenOfUser(ctx, s.db, tokenOrID, userID)
	}
	switch {
	case err == nil:
		if row.ClientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("the token was issued to another client")
		}
		if err := models.RevokeTokenChain(ctx, s.db, row.ChainID); err != nil {
			return storeUnavailable(ctx, err)
		}
		return nil
	case !models.IsNoRows(err):
		return storeUnavailable(ctx, fmt.Errorf("find refresh token: %w", err))
	case userID == "":
		// Neither a refresh token nor an access token op could verify;
		// op's check may have failed only for want of the signing keys.
		return s.revokeUnverified(ctx, tokenOrID, clientID)
	}
	return s.revokeAccess(ctx, tokenOrID, userID, clientID)
}

// revokeUnverified revokes raw if it is an access token signed by one of
// the provider's keys, which op could not verify (its key lookup hides a
// database error): a token that is not one is done with (RFC 7009), but
// keys that cannot be read mean nothing is known, so 503.
func (s *Store) revokeUnverified(ctx context.Context, raw, clientID string) *oidc.Error {
	if s.signatures == nil {
		return nil
	}
	claims, err := s.signatures.checkSignature(ctx, raw)
	var invalid invalidToken
	switch {
	case errors.As(err, &invalid):
		return nil
	case err != nil:
		return storeUnavailable(ctx, err)
	}
	return s.revokeAccess(ctx, claims.ID, claims.Subject, clientID)
}

// revokeAccess revokes the access token id of user, issued to clientID.
func (s *Store) revokeAccess(ctx context.Context, id, userID, clientID string) *oidc.Error {
	if err := models.RevokeAccessToken(ctx, s.db, id, userID, clientID); err != nil {
		return storeUnavailable(ctx, err)
	}
	return nil
}

// GetRefreshTokenInfo finds a refresh token for op's revocation. Only a
// token that is not there is ErrInvalidRefreshToken (op then tries it as an
// access token, and RevokeToken answers 200 for one that is neither); a
// failed lookup is 503, or the revocation would report success for a token
// it never revoked.
func (s *Store) GetRefreshTokenInfo(ctx context.Context, clientID, token string) (string, string, error) {
	row, err := models.RefreshTokenByHash(ctx, s.db, hashToken(token), clientID)
	switch {
	case models.IsNoRows(err):
		return "", "", op.ErrInvalidRefreshToken
	case err != nil:
		return "", "", storeUnavailable(ctx, fmt.Errorf("find refresh token: %w", err))
	}
	return row.UserID.String(), row.ID.String(), nil
}

func (s *Store) SigningKey(ctx context.Context) (op.SigningKey, error) {
	k, err := s.keys.Active(ctx)
	if err != nil {
		return nil, err
	}
	return signingKey{k}, nil
}

func (s *Store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *Store) KeySet(ctx context.Context) ([]op.Key, error) {
	if _, err := s.keys.Active(ctx); err != nil { // so a fresh install publishes a key
		return nil, err
	}
	keys, err := s.keys.Published(ctx, false)
	if err != nil {
		return nil, err
	}
	out := make([]op.Key, len(keys))
	for i, k := range keys {
		out[i] = publicKey{k}
	}
	return out, nil
}

// --- op.OPStorage --------------------------------------------------------------

func (s *Store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	row := new(models.OAuthClient)
	switch err := models.FindOAuthClient(ctx, s.db, id, row); {
	case models.IsNoRows(err):
		return nil, oidc.ErrInvalidClient().WithDescription("unknown client")
	case err != nil:
		return nil, storeUnavailable(ctx, fmt.Errorf("find client: %w", err))
	}
	return &client{row: row, loginURL: s.loginURL}, nil
}

// AuthorizeClientIDSecret checks a confidential client's secret. A public
// client has no secret and cannot authenticate this way.
func (s *Store) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	_, err := s.authenticateClient(ctx, id, secret, true)
	return opClientError(ctx, err)
}

var (
	errInvalidClient = errors.New("client authentication failed")
	errInactive      = errors.New("token is not active")
)

func (s *Store) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil // deprecated by op; SetUserinfoFromToken does the work
}

func (s *Store) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, tokenID, subject, _ string) error {
	u, err := s.activeUser(ctx, tokenID, subject)
	if err != nil {
		return err
	}
	info.Subject = u.ID.String()
	info.Email = u.Email
	info.Name = u.Name
	return nil
}

// SetIntrospectionFromToken answers introspection: active only while the
// token is unrevoked, unexpired and its user exists.
func (s *Store) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	if subject != "" && subject == clientID { // an integration client's (client_credentials)
		return s.clientIntrospection(ctx, resp, tokenID, subject)
	}
	row, err := models.ActiveAccessToken(ctx, s.db, tokenID, subject)
	if err != nil {
		// op answers {"active":false} when this returns an error, and
		// active:true when it does not: an unknown, revoked or expired
		// token, or one of a deleted user, must be an error here.
		return errInactive
	}
	resp.Active = true
	resp.Subject = subject
	resp.ClientID = row.ClientID
	resp.TokenType = "bearer"
	resp.Expiration = oidc.FromTime(row.ExpiresAt)
	resp.IssuedAt = oidc.FromTime(row.CreatedAt)
	resp.Claims = map[string]any{"site_id": row.SiteID.String()}
	return nil
}

// clientIntrospection answers introspection of an integration client's
// token: active while the token is live and the client exists; its scope
// is the permissions of the client's role (docs/auth.md, "Integration
// tokens").
func (s *Store) clientIntrospection(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, clientID string) error {
	row, sc, err := models.ActiveClientAccessToken(ctx, s.db, tokenID, clientID)
	if err != nil {
		return errInactive
	}
	perms := models.PermissionsOf(sc.Role)
	scope := make([]string, len(perms))
	for i, p := range perms {
		scope[i] = string(p)
	}
	resp.Active = true
	resp.Subject = clientID
	resp.ClientID = clientID
	resp.Scope = scope
	resp.TokenType = "bearer"
	resp.Expiration = oidc.FromTime(row.ExpiresAt)
	resp.IssuedAt = oidc.FromTime(row.CreatedAt)
	resp.Claims = map[string]any{"site_id": row.SiteID.String(), "role": string(sc.Role)}
	return nil
}

func (s *Store) GetPrivateClaimsFromScopes(ctx context.Context, userID, _ string, _ []string) (map[string]any, error) {
	siteID, err := models.SiteOfUser(ctx, s.db, userID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"site_id": siteID.String()}, nil
}

// GetPrivateClaimsFromRequest puts the user's site into every access token.
func (s *Store) GetPrivateClaimsFromRequest(ctx context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	if g, ok := req.(*grant); ok {
		return map[string]any{"site_id": g.siteID.String()}, nil
	}
	return s.GetPrivateClaimsFromScopes(ctx, req.GetSubject(), "", nil)
}

func (s *Store) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("JWT client assertions are not supported")
}

func (s *Store) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("the JWT profile grant is not supported")
}

func (s *Store) Health(ctx context.Context) error { return s.db.PingContext(ctx) }

// --- helpers -----------------------------------------------------------------

func (s *Store) grantOf(ctx context.Context, req op.TokenRequest) (*grant, error) {
	switch r := req.(type) {
	case *grant:
		return r, nil
	case *authRequest:
		if r.row.UserID == nil || r.row.SiteID == nil {
			return nil, oidc.ErrInvalidGrant().WithDescription("the sign-in was not completed")
		}
		return &grant{userID: *r.row.UserID, siteID: *r.row.SiteID, clientID: r.row.ClientID, scopes: r.row.Scopes,
			authTime: r.GetAuthTime(), audience: s.audience(r.row.ClientID), amr: []string{"pwd"}}, nil
	}
	return nil, fmt.Errorf("unsupported token request %T", req)
}

// audience names who may accept the token: this API, and the client.
func (s *Store) audience(clientID string) []string {
	return []string{s.settings.Audience, clientID}
}

func (s *Store) insertAccess(ctx context.Context, db bun.IDB, g *grant, chain *uuid.UUID) (*accessRow, error) {
	now := time.Now().UTC()
	row := &accessRow{ID: uuid.New(), ChainID: chain, SiteID: g.siteID, UserID: g.userID, ClientID: g.clientID,
		CreatedAt: now, ExpiresAt: now.Add(s.settings.AccessTokenTTL)}
	if err := models.RecordAccessToken(ctx, db, row); err != nil {
		return nil, err
	}
	return row, nil
}

func (s *Store) activeUser(ctx context.Context, tokenID, subject string) (*models.User, error) {
	u, err := models.UserOfActiveToken(ctx, s.db, tokenID, subject)
	if err != nil {
		return nil, oidc.ErrAccessDenied().WithDescription("the token is not active")
	}
	return u, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
