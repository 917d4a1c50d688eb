package api

import (
	"slices"
	"testing"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models/drafts"
)

// TestRelationshipDeclarationFollowsTheKinds: the declaration the test
// helper checks every response against (jsonapi.Relationships) has each
// draftable kind's references as to-one relationships of the right type,
// plus draft, and every type a relationship may point to is declared too.
func TestRelationshipDeclarationFollowsTheKinds(t *testing.T) {
	for _, k := range []*drafts.Kind{drafts.Pages, drafts.Contents, drafts.ContentBlocks} {
		decl, ok := jsonapi.Relationships[k.Type]
		if !ok {
			t.Fatalf("%s is not declared", k.Type)
		}
		for _, f := range k.Fields {
			if !f.IsRef() {
				continue
			}
			if l, ok := decl[f.Name]; !ok || l.ToMany || !slices.Equal(l.Types, []string{f.RefType}) {
				t.Errorf("%s.%s is declared %+v, want to-one %s", k.Type, f.Name, l, f.RefType)
			}
		}
		if l := decl["draft"]; l.ToMany || !slices.Equal(l.Types, []string{"drafts"}) {
			t.Errorf("%s.draft is declared %+v, want to-one drafts", k.Type, l)
		}
	}
	for typ, rels := range jsonapi.Relationships {
		for name, l := range rels {
			for _, to := range l.Types {
				if _, ok := jsonapi.Relationships[to]; !ok {
					t.Errorf("%s.%s points to %s, which is not declared", typ, name, to)
				}
			}
		}
	}
}
