package oauth

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// The audit trail's sign-in events (docs/audit.md): a sign-in (a password
// grant, or an authorization code's exchange: auth.sign-in), a refresh
// (auth.refresh) and a failed sign-in (auth.sign-in-failed, the password
// grant's or the login form's). The event is recorded in the transaction
// that issues the tokens (issue) or counts the failure (throttle.Fail).

// requestIDKey is the Locals key the API's request-id middleware uses.
const requestIDKey = "X-Request-Id"

// withSignInAudit starts the audit of a token request of grantType (or
// the login form's, "password"). The actor is known once the grant is
// checked (issue, failedSignIn).
func withSignInAudit(ctx context.Context, c *fiber.Ctx, grantType, siteSlug string) context.Context {
	action, itemType := "auth.sign-in", "users"
	switch grantType {
	case "refresh_token":
		action = "auth.refresh"
	case "client_credentials":
		action, itemType = "auth.client-credentials", "oauth-clients"
	case "password", "authorization_code":
	default:
		return ctx // not a grant that signs anyone in
	}
	id, _ := c.Locals(requestIDKey).(string)
	ctx = context.WithValue(ctx, siteSlugKey{}, siteSlug)
	return models.WithAudit(ctx, models.NewAudit(action, itemType, nil, nil, "", id, c.IP()))
}

// clientGranted names the integration client sc in the request's audit
// (a client_credentials grant's), to be recorded with its token.
func clientGranted(ctx context.Context, sc *models.SiteClient) {
	if a := models.AuditOf(ctx); a != nil {
		site := sc.SiteID
		a.SetClient(&site, sc.ClientID)
		a.SetItem(sc.ID.String())
	}
}

// failedClientGrant records a refused client_credentials grant
// (auth.client-credentials-failed) of the client id clientID: on its site
// when it names an integration client, else on none (kept for the
// operator, as a failed sign-in of an unknown name is). Its own statement:
// nothing else is written.
func failedClientGrant(ctx context.Context, db bun.IDB, clientID string) error {
	a := models.AuditOf(ctx)
	if a == nil || clientID == "" {
		return nil
	}
	a.SetAction("auth.client-credentials-failed")
	if sc, err := models.SiteClientByClientID(ctx, db, clientID); err == nil {
		clientGranted(ctx, sc)
	} else if !models.IsNoRows(err) {
		return err
	}
	return models.RecordAudit(context.WithoutCancel(ctx), db)
}

// siteSlugKey carries the site a sign-in names, for its failure's event.
type siteSlugKey struct{}

// failedSignIn turns the request's audit into a failed sign-in of u (nil:
// no such user), on the site the request names (or u's only site), or on
// none: then no site's admin sees it, but it is kept. It is recorded with the failure's count (throttle.Fail).
func failedSignIn(ctx context.Context, db bun.IDB, u *models.User, ip string) {
	a := models.AuditOf(ctx)
	if a == nil {
		return
	}
	a.SetAction("auth.sign-in-failed")
	if u == nil {
		return
	}
	uid := u.ID
	var site *uuid.UUID
	slug, _ := ctx.Value(siteSlugKey{}).(string)
	if s, ok, _, err := models.MemberSite(ctx, db, u.ID, strings.TrimSpace(slug)); err == nil && ok {
		site = &s
	}
	a.SetActor(site, &uid)
	a.SetItem(uid.String())
}
