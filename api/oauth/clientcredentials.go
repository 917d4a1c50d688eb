package oauth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pressroom/pressroom/models"
)

// clientCredentialsGrant issues an integration client's access token
// (RFC 6749 §4.4; docs/auth.md, "Integration tokens"): the client
// authenticates with its secret, and the token acts as the client, with
// the role its site gave it, for no person. No refresh token: the client
// asks again with its secret (§4.4.3).
func (p *Provider) clientCredentialsGrant(ctx context.Context, cr credentials) (*TokenResponse, error) {
	if cr.id == "" || cr.secret == "" {
		return nil, invalidRequest("client_credentials needs client_id and client_secret (HTTP Basic or the form)")
	}
	cl, err := p.client(ctx, cr, false)
	if te := (*tokenError)(nil); errors.As(err, &te) && te.Code == "invalid_client" {
		if aerr := failedClientGrant(ctx, p.store.db, cr.id); aerr != nil {
			return nil, aerr
		}
	}
	if err != nil {
		return nil, err
	}
	sc, err := models.SiteClientByClientID(ctx, p.store.db, cl.ID)
	switch {
	case models.IsNoRows(err):
		return nil, &tokenError{status: 400, Code: "unauthorized_client", Description: "this client is not an integration client of a site; only those may use client_credentials"}
	case err != nil:
		return nil, err
	}
	clientGranted(ctx, sc)
	g := &grant{siteID: sc.SiteID, clientID: cl.ID, client: true, authTime: time.Now().UTC(), audience: p.store.audience(cl.ID)}
	sk, err := p.store.SigningKey(ctx)
	if err != nil {
		return nil, err
	}
	// The token and the grant's audit event commit together.
	var access *accessRow
	err = p.store.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if access, err = p.store.insertAccess(ctx, tx, g, nil); err != nil {
			return err
		}
		return models.RecordAudit(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	jwt, err := op.CreateJWT(op.ContextWithIssuer(ctx, p.settings.Issuer), p.settings.Issuer, g, access.ExpiresAt,
		access.ID.String(), &client{row: cl, loginURL: p.store.loginURL}, signedBy{p.store, sk})
	if err != nil {
		return nil, fmt.Errorf("sign access token: %w", err)
	}
	return &TokenResponse{TokenType: "bearer", AccessToken: jwt, ExpiresIn: int64(p.settings.AccessTokenTTL / time.Second)}, nil
}
