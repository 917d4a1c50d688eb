package oauth

import (
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/models"
)

// OOBRedirectURI is the out-of-band redirect: the code is shown on a page
// for the user to copy into a desktop or command-line client.
const OOBRedirectURI = "urn:ietf:wg:oauth:2.0:oob"

// FirstPartyClientID is the public client the password grant uses when a
// request names none (the migration creates it).
const FirstPartyClientID = "pressroom"

// client adapts a stored OAuth client to op.Client.
type client struct {
	row      *models.OAuthClient
	loginURL func(authRequestID string) string
}

var _ op.Client = (*client)(nil)

func (c *client) GetID() string { return c.row.ID }

// RedirectURIs always admits the out-of-band URI.
func (c *client) RedirectURIs() []string {
	if slices.Contains(c.row.RedirectURIs, OOBRedirectURI) {
		return c.row.RedirectURIs
	}
	return append(slices.Clone(c.row.RedirectURIs), OOBRedirectURI)
}
func (c *client) PostLogoutRedirectURIs() []string { return nil }

// ApplicationType is "native" for every client as far as op is concerned:
// op refuses non-http redirect URIs (the out-of-band URN) for web clients.
// Confidentiality is Pressroom's own business: the token endpoint demands a
// confidential client's secret and a public client's PKCE verifier.
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeNative }

func (c *client) AuthMethod() oidc.AuthMethod {
	if c.row.Confidential {
		return oidc.AuthMethodBasic
	}
	return oidc.AuthMethodNone
}
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken, grantPassword}
}

// defaultScopes are granted to an authorization request that asks for no
// scope: DefaultScope, for every client.
func (c *client) defaultScopes() oidc.SpaceDelimitedArray {
	return oidc.SpaceDelimitedArray{DefaultScope}
}

func (c *client) LoginURL(id string) string            { return c.loginURL(id) }
func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *client) IDTokenLifetime() time.Duration       { return time.Hour }
func (c *client) DevMode() bool                        { return true } // allows http and loopback redirect URIs
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) IsScopeAllowed(string) bool           { return true }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

const grantPassword oidc.GrantType = "password"
