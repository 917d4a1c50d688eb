package oauth

import (
	"context"
	"errors"
	"testing"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// A request's code is saved once: SaveAuthCode never replaces it, and needs
// a completed request; completion needs the browser the request is bound to.
func TestAuthCodeIsSavedOnce(t *testing.T) {
	t.Parallel()
	f := newCraftFixture(t)
	ctx := context.Background()
	s := f.p.store
	if _, err := s.CreateAuthRequest(ctx, &oidc.AuthRequest{ClientID: FirstPartyClientID}, ""); err == nil {
		t.Error("op's CreateAuthRequest stored a request bound to no browser")
	}
	if _, err := s.createAuthRequest(ctx, &oidc.AuthRequest{ClientID: FirstPartyClientID, RedirectURI: OOBRedirectURI}, ""); err == nil {
		t.Error("createAuthRequest stored a request bound to no browser")
	}
	browser := hashToken("the browser's nonce")
	req, err := s.createAuthRequest(ctx, &oidc.AuthRequest{ClientID: FirstPartyClientID, RedirectURI: OOBRedirectURI,
		ResponseType: oidc.ResponseTypeCode, Scopes: oidc.SpaceDelimitedArray{DefaultScope}}, browser)
	if err != nil {
		t.Fatal(err)
	}
	id := req.GetID()
	if err := s.SaveAuthCode(ctx, id, "code-before-login"); !errors.Is(err, errCodeIssued) {
		t.Errorf("SaveAuthCode before the login = %v, want errCodeIssued", err)
	}
	if err := s.completeAuthRequest(ctx, req.row.ID, hashToken("another browser's nonce"), f.user); err == nil {
		t.Error("another browser completed the request")
	}
	if err := s.completeAuthRequest(ctx, req.row.ID, browser, f.user); err != nil {
		t.Fatal(err)
	}
	if err := s.completeAuthRequest(ctx, req.row.ID, browser, f.peer); err == nil {
		t.Error("a completed request was completed again")
	}
	if err := s.SaveAuthCode(ctx, id, "first"); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveAuthCode(ctx, id, "second"); !errors.Is(err, errCodeIssued) {
		t.Errorf("second SaveAuthCode = %v, want errCodeIssued", err)
	}
	if _, err := s.AuthRequestByCode(ctx, "first"); err != nil {
		t.Errorf("the first code no longer finds its request: %v", err)
	}
	if _, err := s.AuthRequestByCode(ctx, "second"); err == nil {
		t.Error("the second code replaced the first")
	}
}
