package oauth

import (
	"reflect"
	"testing"

	"github.com/pressroom/pressroom/models"
)

// TestKeptMemberReadsBack: what the read cache keeps of a token's lookup
// is the role, section and site locales it read, a section of "" and none
// apart, one locale and several alike.
func TestKeptMemberReadsBack(t *testing.T) {
	empty, blog := "", "/blog/"
	several := models.SiteLocales{Locales: []string{"en", "de", "fr-CA"}, Base: "en",
		Chains: map[string][]string{"en": {"en"}, "de": {"de", "en"}, "fr-CA": {"fr-CA", "en"}}}
	relabelled := models.SiteLocales{Locales: []string{"de", "en"}, Base: "en",
		Chains: map[string][]string{"de": {"de"}, "en": {"en", "de"}}}
	for _, m := range []member{
		{role: models.RoleAdmin, locales: models.SingleLocale("en"), live: true},
		{role: models.RoleEditor, prefix: &blog, locales: models.SingleLocale("de"), live: true},
		{role: models.RoleAuthor, prefix: &empty, locales: several, live: true},
		{role: models.RoleAuthor, locales: relabelled, live: true},
	} {
		b, err := m.encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeMember(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.role != m.role || !got.live || (got.prefix == nil) != (m.prefix == nil) || (m.prefix != nil && *got.prefix != *m.prefix) ||
			!reflect.DeepEqual(got.locales, m.locales) {
			t.Errorf("%+v read back as %+v", m, got)
		}
	}
	if _, err := decodeMember([]byte("admin")); err == nil {
		t.Error("a malformed entry decoded")
	}
}
