package oauth

// Issuing tokens: an access token and a refresh token for a grant, the
// refresh chain, and the sealed response a refresh keeps for its grace
// period (token.go decides which grant gets them).

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
)

// spent is the refresh token a refresh grant uses up.
type spent struct {
	row   *refreshRow
	token string
}

// issue creates an access token and a refresh token for g in db (a
// transaction when the caller has one). With prev, the new refresh token
// continues prev's chain and prev is spent, keeping the response for the
// grace period. sk signs the access token; callers fetch it before their
// transaction, so issue makes no query outside db.
func (p *Provider) issue(ctx context.Context, db bun.IDB, sk op.SigningKey, cl *models.OAuthClient, g *grant, prev *spent) (*TokenResponse, error) {
	chain := uuid.New()
	if prev != nil {
		chain = prev.row.ChainID
	}
	access, err := p.store.insertAccess(ctx, db, g, &chain)
	if err != nil {
		return nil, err
	}
	refresh, err := auth.RandomSecret(32)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	if err := models.RecordRefreshToken(ctx, db, &refreshRow{
		ID: uuid.New(), ChainID: chain, TokenHash: hashToken(refresh), SiteID: g.siteID, UserID: g.userID, ClientID: g.clientID,
		Scopes: nonNil(g.scopes), AuthTime: g.authTime, CreatedAt: now, ExpiresAt: now.Add(p.settings.RefreshTokenTTL),
	}); err != nil {
		return nil, err
	}
	jwt, err := op.CreateJWT(op.ContextWithIssuer(ctx, p.settings.Issuer), p.settings.Issuer, g, access.ExpiresAt,
		access.ID.String(), &client{row: cl, loginURL: p.store.loginURL}, signedBy{p.store, sk})
	if err != nil {
		return nil, fmt.Errorf("sign access token: %w", err)
	}
	resp := &TokenResponse{TokenType: "bearer", AccessToken: jwt, RefreshToken: refresh,
		ExpiresIn: int64(p.settings.AccessTokenTTL / time.Second), Scope: strings.Join(g.scopes, " ")}
	if prev != nil {
		sealed, err := sealGrace(prev.token, resp)
		if err != nil {
			return nil, err
		}
		// The grace is for a client that lost the response; one that has
		// used its successor did not lose it. From now on the tokens spent
		// before prev are plain reuse.
		if err := models.SpendRefreshToken(ctx, db, prev.row, sealed); err != nil {
			return nil, err
		}
	}
	if a := models.AuditOf(ctx); a != nil { // the sign-in's or refresh's
		a.SetActor(&g.siteID, &g.userID)
		a.SetItem(g.userID.String())
		if err := models.RecordAudit(ctx, db); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// signedBy is the store as op.CreateJWT sees it, signing with a key fetched
// beforehand instead of looking one up.
type signedBy struct {
	*Store
	key op.SigningKey
}

func (s signedBy) SigningKey(context.Context) (op.SigningKey, error) { return s.key, nil }

// sealGrace encrypts a response with a key derived from the refresh token
// that was spent for it: the stored copy is useless to anyone who does not
// hold that token.
func sealGrace(token string, resp *TokenResponse) ([]byte, error) {
	plain, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	aead, err := graceAEAD(token)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, plain, nil), nil
}

func openGrace(token string, sealed []byte) (*TokenResponse, error) {
	aead, err := graceAEAD(token)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("grace response is corrupt")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], nil)
	if err != nil {
		return nil, fmt.Errorf("open grace response: %w", err)
	}
	resp := new(TokenResponse)
	return resp, json.Unmarshal(plain, resp)
}

func graceAEAD(token string) (cipher.AEAD, error) {
	k := sha256.Sum256([]byte("pressroom refresh grace v1\x00" + token))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
