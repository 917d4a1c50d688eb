package oauth

import (
	"context"
	"testing"
)

// A replica that reloaded its keys within the last 5 s (here: the slot is
// taken by hand, as a token with a made-up key id would take it) still
// verifies a token of a key another replica made just now: the key is
// looked up by id (e2e/replicas TestAcrossReplicas/rotation… shows it over
// two processes).
func TestVerifyLooksUpANewKeyWhileReloadsAreRateLimited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newCraftFixture(t)
	a := f.p
	first := f.issue(t, f.user)
	if _, err := a.Verify(ctx, first.AccessToken); err != nil {
		t.Fatal(err)
	}
	if !a.Keys().mayReload() {
		t.Fatal("the reload slot was taken before the test took it")
	}
	b, err := New(f.db.DB, a.settings, a.log)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Keys().RotateNow(ctx); err != nil {
		t.Fatal(err)
	}
	second := (&craftFixture{p: b, db: f.db}).issue(t, f.user)
	if _, err := a.Verify(ctx, second.AccessToken); err != nil {
		t.Errorf("replica a, its reload rate-limited, rejects replica b's new key: %v", err)
	}
	// A made-up key id finds nothing and is refused, not an error.
	if k, err := a.Keys().lookup(ctx, "0b7c9a52-0d4f-4a43-9a43-0a3f5f1d2b11"); k != nil || err != nil {
		t.Errorf("lookup of a made-up key id = %v, %v; want nil, nil", k, err)
	}
	if k, err := a.Keys().lookup(ctx, "not-a-uuid"); k != nil || err != nil {
		t.Errorf("lookup of a non-UUID key id = %v, %v; want nil, nil", k, err)
	}
}
