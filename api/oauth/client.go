package oauth

import (
	"net/url"
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
// op refuses non-http redirect URIs (the out-of-band URN, which every
// client may use) for web clients. op's native rules are lenient (any
// port, and "localhost", for any loopback URI registered), so /oauth/authorize
// first applies Pressroom's own, redirectAllowed; op's check then only
// ever sees a URI that passed it. Confidentiality is Pressroom's own
// business too: the token endpoint demands a confidential client's secret
// and a public client's PKCE verifier.
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeNative }

// redirectAllowed reports whether uri may receive this client's codes: one
// of its redirect URIs exactly, or, for a public client only, a loopback
// URI registered as http://127.0.0.1 or http://[::1] with another port:
// RFC 8252 §7.3 lets a native app listen on whatever port it gets. The
// leniency is not for "localhost" (a name the hosts file or DNS may point
// elsewhere, RFC 8252 §8.3), not across the two addresses, and never for a
// confidential (web) client, whose URIs are fixed.
func (c *client) redirectAllowed(uri string) bool {
	registered := c.RedirectURIs()
	if slices.Contains(registered, uri) {
		return true
	}
	if c.row.Confidential {
		return false
	}
	u, ok := loopbackRedirect(uri)
	if !ok {
		return false
	}
	for _, r := range registered {
		if ru, ok := loopbackRedirect(r); ok && ru.Hostname() == u.Hostname() &&
			ru.EscapedPath() == u.EscapedPath() && ru.RawQuery == u.RawQuery {
			return true
		}
	}
	return false
}

// loopbackRedirect parses uri as an RFC 8252 loopback redirect URI: http
// to the IP literal 127.0.0.1 or ::1, no user info, no fragment.
func loopbackRedirect(uri string) (*url.URL, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" || u.Opaque != "" || u.User != nil || u.Fragment != "" ||
		(u.Hostname() != "127.0.0.1" && u.Hostname() != "::1") {
		return nil, false
	}
	return u, true
}

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
