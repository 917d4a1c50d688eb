package testsupport

import (
	"strings"
	"testing"
)

// TestCheckJSONAPIChecksRelationshipArity: the helper every API test uses
// refuses null linkage on a to-many relationship, an array on a to-one, a
// relationship without data, undeclared relationships and identifiers of
// the wrong type, in primary
// data, in included and in relationship endpoint documents.
func TestCheckJSONAPIChecksRelationshipArity(t *testing.T) {
	const id = `"00000000-0000-4000-8000-000000000001"`
	draft := func(rels string) string {
		return `{"type":"drafts","id":` + id + `,"attributes":{"event":"create"},"relationships":{` + rels + `}}`
	}
	cases := []struct {
		name, body, want string
	}{
		{"to-many as array", `{"data":` + draft(`"publication-dependencies":{"data":[]},"hyperlinks":{"data":[{"type":"hyperlinks","id":"x"}]}`) + `}`, ""},
		{"to-many links only", `{"data":` + draft(`"hyperlinks":{"links":{"related":"http://x/drafts/1/hyperlinks"}}`) + `}`, "no data"},
		{"to-many first page", `{"data":` + draft(`"hyperlinks":{"links":{"next":"http://x/n"},"data":[],"meta":{"count":101}}`) + `}`, ""},
		{"to-one null", `{"data":` + draft(`"user":{"data":null}`) + `}`, ""},
		{"to-many null", `{"data":` + draft(`"hyperlinks":{"data":null}`) + `}`, "to-many"},
		{"to-many null in a list", `{"data":[` + draft(`"reversion-dependencies":{"data":null}`) + `]}`, "to-many"},
		{"to-many null in included", `{"data":null,"included":[` + draft(`"publication-dependencies":{"data":null}`) + `]}`, "to-many"},
		{"to-many as one identifier", `{"data":` + draft(`"hyperlinks":{"data":{"type":"hyperlinks","id":"x"}}`) + `}`, "to-many"},
		{"to-one as array", `{"data":` + draft(`"user":{"data":[]}`) + `}`, "to-one"},
		{"wrong identifier type", `{"data":` + draft(`"user":{"data":{"type":"pages","id":"x"}}`) + `}`, "holds only"},
		{"undeclared relationship", `{"data":` + draft(`"owner":{"data":null}`) + `}`, "does not declare"},
		{"undeclared type with relationships", `{"data":{"type":"widgets","id":"1","relationships":{"a":{"data":null}}}}`, "not declared"},
		{"relationship endpoint, to-many", `{"links":{"self":"http://x/themes/1/relationships/layouts"},"data":[]}`, ""},
		{"relationship endpoint, to-many null", `{"links":{"self":"http://x/themes/1/relationships/layouts?page%5Bnumber%5D=1"},"data":null}`, "to-many"},
		{"relationship endpoint, to-one", `{"links":{"self":"http://x/site/relationships/theme"},"data":null}`, ""},
		{"relationship endpoint, to-one array", `{"links":{"self":"http://x/site/relationships/theme"},"data":[]}`, "to-one"},
	}
	for _, tc := range cases {
		err := CheckJSONAPI([]byte(tc.body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused a valid document: %v", tc.name, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: accepted %s", tc.name, tc.body)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: error %q does not mention %q", tc.name, err, tc.want)
		}
	}
}
