package oauth

import (
	"testing"

	"github.com/pressroom/pressroom/models"
)

// TestKeptMemberReadsBack: what the read cache keeps of a token's lookup
// is the role and section it read, a section of "" and none apart.
func TestKeptMemberReadsBack(t *testing.T) {
	empty, blog := "", "/blog/"
	for _, m := range []member{
		{role: models.RoleAdmin, live: true},
		{role: models.RoleEditor, prefix: &blog, live: true},
		{role: models.RoleAuthor, prefix: &empty, live: true},
	} {
		got := decodeMember(m.encode())
		if got.role != m.role || !got.live || (got.prefix == nil) != (m.prefix == nil) || (m.prefix != nil && *got.prefix != *m.prefix) {
			t.Errorf("%+v read back as %+v", m, got)
		}
	}
}
