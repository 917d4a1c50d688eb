package oauth

import (
	"context"
	"testing"
)

// BenchmarkVerifyBearer is the cost of verifying one access token in
// process: parse, RS256 signature with the cached key, claims, and the one
// indexed lookup of the token's row.
func BenchmarkVerifyBearer(b *testing.B) {
	f := newCraftFixture(b)
	tok := f.issue(b, f.user).AccessToken
	ctx := context.Background()
	if _, err := f.p.Verify(ctx, tok); err != nil { // warms the key cache
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.p.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verifications/s")
}
