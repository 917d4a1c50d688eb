package oauth

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/coalesce"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/readcache"
)

// Principal is who a verified access token speaks for. Every handler scopes
// its queries by SiteID.
type Principal struct {
	// UserID is the person the token acts for: uuid.Nil for an
	// integration client's token (Client), which acts as the client.
	UserID   uuid.UUID
	SiteID   uuid.UUID
	ClientID string
	TokenID  uuid.UUID
	// Role and PathPrefix are the user's membership of the site as it is
	// now: read with the token's row on every request, so a role change
	// holds on the next request on every replica.
	Role       models.Role
	PathPrefix *string
	// Client is true for an integration client's token (the
	// client_credentials grant): it acts as ClientID with the client's
	// role, for no person. Usage is its rate limit, this request counted.
	Client bool
	Usage  *models.ClientTokenUse
	// Locales are the site's locales and their chains, read with the
	// token (docs/locales.md): api/locale.go judges locale-tag by them.
	Locales models.SiteLocales
	// synced is true when the token's lookup came from the read cache
	// after its Sync (CacheSynced).
	synced bool
}

// CacheSynced tells that this request already waited for the read
// cache's Sync (its token lookup was kept): the request's later lookups
// use readcache.Cache.Synced, no second round trip (docs/caching.md).
func (p *Principal) CacheSynced() bool { return p.synced }

// Can tells whether the principal's role holds permission p.
func (p *Principal) Can(perm models.Permission) bool { return p.Role.Can(perm) }

// Sectioned tells whether the principal's rights over pages are narrowed
// to a section (an author or editor with a path prefix).
func (p *Principal) Sectioned() bool { return p.PathPrefix != nil && p.Role != models.RoleAdmin }

type principalKey struct{}

// PrincipalOf returns the request's principal. Routes behind RequireToken
// always have one; it panics otherwise, because a handler that reaches for
// the site without authentication is a programming error that must not
// silently read another site's data.
func PrincipalOf(c *fiber.Ctx) *Principal {
	p, ok := c.Locals(principalKey{}).(*Principal)
	if !ok {
		panic("oauth.PrincipalOf on a route without RequireToken")
	}
	return p
}

// PrincipalIfAny returns the request's principal, if it has one.
func PrincipalIfAny(c *fiber.Ctx) (*Principal, bool) {
	p, ok := c.Locals(principalKey{}).(*Principal)
	return p, ok
}

// WithPrincipal is for tests of handlers that need a principal without a token.
func WithPrincipal(c *fiber.Ctx, p *Principal) { c.Locals(principalKey{}, p) }

// RequireToken admits a request only with a valid bearer token: signature by
// a published key, issuer, audience, expiry, and a token record that is
// neither revoked nor of a deleted user.
func (p *Provider) RequireToken(c *fiber.Ctx) error {
	raw, ok := bearer(c.Get(fiber.HeaderAuthorization))
	if !ok {
		return unauthorized("A bearer access token is required: send Authorization: Bearer <token>.")
	}
	pr, err := p.verifier.verify(c.UserContext(), raw)
	if err != nil {
		var ie invalidToken
		if errors.As(err, &ie) {
			return unauthorized(ie.reason)
		}
		var rl rateLimited
		if errors.As(err, &rl) {
			return rl.answer(c)
		}
		return err
	}
	if pr.Usage != nil {
		setRateLimit(c, pr.Usage)
	}
	c.Locals(principalKey{}, pr)
	return c.Next()
}

// Verify checks an access token outside a request (benchmarks, tools).
func (p *Provider) Verify(ctx context.Context, raw string) (*Principal, error) {
	return p.verifier.verify(ctx, raw)
}

func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

func unauthorized(detail string) *jsonapi.Error {
	return jsonapi.NewError(fiber.StatusUnauthorized, "invalid_token", detail).
		WithHeader(fiber.HeaderWWWAuthenticate, `Bearer realm="pressroom", error="invalid_token"`)
}

type invalidToken struct{ reason string }

func (e invalidToken) Error() string { return e.reason }

type verifier struct {
	keys     *Keys
	db       *bun.DB
	issuer   string
	audience string
	// verified caches claims whose signature was already checked: RSA
	// verification is the costly part of a request, and a token's signature
	// never changes. Expiry, and revocation (a database lookup), are still
	// checked on every request.
	verified claimCache
	// lookups shares revocation lookups among concurrent requests.
	lookups coalesce.Group[member]
	// reads keeps live tokens' lookups (nil: none kept).
	reads *readcache.Cache
}

// claimCache is a bounded map of token hash to verified claims.
type claimCache struct {
	mu sync.Mutex
	m  map[[32]byte]*verifiedToken
}

// verifiedToken is a token whose signature was checked: its claims, and
// what the claims name, parsed once (a token's claims never change).
type verifiedToken struct {
	claims *accessClaims
	// ids are the principal's ids; malformed, when not empty, is why the
	// claims name none (answered only once the claims are otherwise valid).
	ids       Principal
	malformed string
}

// newVerifiedToken parses what claims name.
func newVerifiedToken(claims *accessClaims) *verifiedToken {
	t := &verifiedToken{claims: claims, ids: Principal{ClientID: claims.ClientID}}
	var err error
	// An integration client's token names the client as its subject
	// (client_credentials, RFC 9068 §2.2); a person's names the user.
	t.ids.Client = claims.Subject != "" && claims.Subject == claims.ClientID
	if t.ids.TokenID, err = uuid.Parse(claims.ID); err != nil {
		t.malformed = "The access token is malformed."
	} else if t.ids.UserID, err = parseSubject(claims.Subject, t.ids.Client); err != nil {
		t.malformed = "The access token is malformed."
	} else if t.ids.SiteID, err = uuid.Parse(claims.SiteID); err != nil {
		t.malformed = "The access token names no site."
	}
	return t
}

// claimCacheSize bounds memory: about 400 bytes an entry.
const claimCacheSize = 50000

func (c *claimCache) get(k [32]byte) *verifiedToken {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *claimCache) put(k [32]byte, v *verifiedToken) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= claimCacheSize {
		c.m = make(map[[32]byte]*verifiedToken) // full: start over rather than grow
	}
	c.m[k] = v
}

// leeway tolerates small clock differences between replicas.
const leeway = 5 * time.Second

type accessClaims struct {
	jwt.Claims
	SiteID   string `json:"site_id"`
	ClientID string `json:"client_id"`
}

func (v *verifier) verify(ctx context.Context, raw string) (*Principal, error) {
	if len(raw) > 8192 {
		return nil, invalidToken{"The access token is malformed."}
	}
	key := tokenKey(raw)
	tok := v.verified.get(key)
	if tok == nil {
		claims, err := v.checkSignature(ctx, raw)
		if err != nil {
			return nil, err
		}
		tok = newVerifiedToken(claims)
		v.verified.put(key, tok)
	}
	err := tok.claims.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, AnyAudience: jwt.Audience{v.audience}, Time: time.Now()}, leeway)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return nil, invalidToken{"The access token has expired; get a new one with the refresh token."}
	case errors.Is(err, jwt.ErrInvalidAudience):
		return nil, invalidToken{"The access token is not meant for this API."}
	case err != nil:
		return nil, invalidToken{"The access token is not valid: " + err.Error() + "."}
	}
	if tok.malformed != "" {
		return nil, invalidToken{tok.malformed}
	}
	pr := new(Principal)
	*pr = tok.ids
	if pr.Client {
		return v.verifyClient(ctx, pr)
	}
	// One indexed lookup: revoked tokens and tokens of deleted users (whose
	// rows cascade away) stop working at once, not at expiry. Concurrent
	// requests with the same token share a lookup, but only one that starts
	// after they arrived (package coalesce), so "at once" still holds.
	// A prepared statement (models.AccessTokenMember), which every
	// authenticated request ran; now kept by the process's read cache
	// until a change to tokens or memberships is notified (member,
	// docs/caching.md).
	// Keyed by the token's hash: one token names one (token, user, site).
	// The same statement reads the user's membership of the site
	// (models.AccessTokenMember): a role change holds on the next request,
	// and a removed member's token stops working.
	m, err := v.member(ctx, key, pr)
	if err != nil {
		return nil, fmt.Errorf("look up access token: %w", err)
	}
	if !m.live {
		return nil, invalidToken{"The access token has been revoked."}
	}
	pr.Role, pr.PathPrefix, pr.Locales = m.role, m.prefix, m.locales
	return pr, nil
}

// member is the token's lookup: kept by v.reads (a hit answers only once
// every change to tokens and memberships committed before this request
// has dropped the kept lookups: readcache.Cache.Get), else read, shared
// with concurrent requests of the same token.
func (v *verifier) member(ctx context.Context, key [32]byte, pr *Principal) (member, error) {
	k := string(key[:])
	r, ok, synced := v.reads.Get(ctx, readcache.AuthSite, k)
	pr.synced = synced
	if ok {
		return decodeMember(r.Body)
	}
	fill := v.reads.Begin(readcache.AuthSite)
	m, err, _ := v.lookups.Do(k, func() (member, error) {
		role, prefix, locales, live, err := models.AccessTokenMember(ctx, v.db, pr.TokenID, pr.UserID, pr.SiteID)
		return member{role: role, prefix: prefix, locales: locales, live: live}, err
	})
	if err != nil || !m.live {
		fill.End() // a revoked token is looked up again: it stays revoked
		return m, err
	}
	body, err := m.encode()
	if err != nil {
		fill.End()
		return m, err
	}
	fill.Store(k, readcache.Response{Body: body})
	return m, nil
}

// encode is a live member as the cache keeps it, three parts split by 0
// bytes (none of them holds one: prefixes with NUL are refused before
// Postgres, tags are ASCII, JSON escapes it): the role; "1" and the path
// prefix, or "0" for none; the site's locales, as its one tag when it has
// one (every site today, no JSON to decode on a hit), else as JSON.
func (m member) encode() ([]byte, error) {
	b := append([]byte(m.role), 0)
	if m.prefix != nil {
		b = append(append(b, '1'), *m.prefix...)
	} else {
		b = append(b, '0')
	}
	b = append(b, 0)
	if len(m.locales.Locales) == 1 && m.locales.Base == m.locales.Locales[0] {
		return append(b, m.locales.Base...), nil
	}
	js, err := json.Marshal(m.locales)
	if err != nil {
		return nil, fmt.Errorf("encode token lookup: %w", err)
	}
	return append(b, js...), nil
}

func decodeMember(b []byte) (member, error) {
	parts := strings.SplitN(string(b), "\x00", 3)
	if len(parts) != 3 || parts[1] == "" {
		return member{}, errors.New("decode token lookup: malformed entry")
	}
	m := member{role: models.Role(parts[0]), live: true}
	if parts[1][0] == '1' {
		prefix := parts[1][1:]
		m.prefix = &prefix
	}
	if strings.HasPrefix(parts[2], "{") {
		if err := json.Unmarshal([]byte(parts[2]), &m.locales); err != nil {
			return member{}, fmt.Errorf("decode token lookup: %w", err)
		}
	} else {
		m.locales = models.SingleLocale(parts[2])
	}
	return m, nil
}

// member is what one token lookup reads: whether the token is live, and
// the membership it acts under.
type member struct {
	role    models.Role
	prefix  *string
	locales models.SiteLocales
	live    bool
}

// tokenKey is raw's SHA-256, without copying a token of the usual size
// (under 1 KB) to the heap: []byte(raw) escapes into the hash, and that copy
// was most of the bytes the token check allocated per request.
func tokenKey(raw string) [32]byte {
	var buf [2048]byte
	if len(raw) > len(buf) {
		return sha256.Sum256([]byte(raw))
	}
	return sha256.Sum256(buf[:copy(buf[:], raw)])
}

// checkSignature parses a JWT and verifies its signature with a published key.
func (v *verifier) checkSignature(ctx context.Context, raw string) (*accessClaims, error) {
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil || len(tok.Headers) != 1 {
		return nil, invalidToken{"The access token is malformed."}
	}
	pub, err := v.key(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return nil, err
	}
	claims := new(accessClaims)
	if pub == nil || tok.Claims(pub, claims) != nil {
		return nil, invalidToken{"The access token's signature is not valid."}
	}
	return claims, nil
}

// key finds the public key a token names, reloading the key list once when
// it is unknown (a key another replica just made).
func (v *verifier) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	for _, reload := range []bool{false, true} {
		if reload && !v.keys.mayReload() {
			// Reloaded within the last 5 s: fetch just this key.
			k, err := v.keys.lookup(ctx, kid)
			if err != nil || k == nil {
				return nil, err
			}
			return &k.private.PublicKey, nil
		}
		keys, err := v.keys.Published(ctx, reload)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if k.id == kid {
				return &k.private.PublicKey, nil
			}
		}
	}
	return nil, nil
}

// verifyClient checks an integration client's token and counts the
// request against the client's rate limit, in one statement
// (models.UseClientToken): never shared among concurrent requests, as a
// person's lookup is, since each request must count. A deleted client's
// tokens are gone with it: its next request is 401.
func (v *verifier) verifyClient(ctx context.Context, pr *Principal) (*Principal, error) {
	u, err := models.UseClientToken(ctx, v.db, pr.TokenID, pr.ClientID, pr.SiteID)
	if err != nil {
		return nil, fmt.Errorf("look up client access token: %w", err)
	}
	if !u.Live {
		return nil, invalidToken{"The access token has been revoked."}
	}
	if u.Used > u.Limit {
		return nil, rateLimited{u: u}
	}
	pr.Role, pr.Usage, pr.Locales = u.Role, &u, u.Locales
	return pr, nil
}

// parseSubject is the user a person's token names; a client's names none.
func parseSubject(sub string, client bool) (uuid.UUID, error) {
	if client {
		return uuid.Nil, nil
	}
	return uuid.Parse(sub)
}
