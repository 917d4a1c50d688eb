package jsonapi

// Linkage declares how one relationship's resource linkage may look: to-one
// (null or one identifier) or to-many (an array, [] when empty; never
// null), and the types its identifiers may have.
type Linkage struct {
	ToMany bool
	Types  []string
}

func toOne(types ...string) Linkage  { return Linkage{Types: types} }
func toMany(types ...string) Linkage { return Linkage{ToMany: true, Types: types} }

// draftable are the types a draft or a version is about.
var draftable = []string{"pages", "contents", "content-blocks"}

// Relationships declares, per resource type Pressroom renders, every
// relationship its resource objects may carry (DESIGN.md §3). Renderers
// build linkage with ToOne or ToMany to match; the test helper
// testsupport.ValidateJSONAPI checks every response of every test against
// this table, so a relationship rendered with the wrong arity, or one not
// declared here, or one without data, fails the tests. The API derives
// every relationship's endpoints and include from this table too
// (api/relations.go). trashed-by: only a record of the trash (GET
// /<kind>?filter[trashed]=true) carries it, the revision that published
// its deletion.
var Relationships = map[string]map[string]Linkage{
	"sites":               {"theme": toOne("themes")},
	"users":               {},
	"themes":              {"user": toOne("users"), "layouts": toMany("layouts"), "theme-assets": toMany("theme-assets")},
	"layouts":             {"theme": toOne("themes")},
	"theme-assets":        {"theme": toOne("themes"), "asset": toOne("assets")},
	"pages":               {"parent": toOne("pages"), "layout": toOne("layouts"), "draft": toOne("drafts"), "trashed-by": toOne("revisions")},
	"contents":            {"page": toOne("pages"), "draft": toOne("drafts"), "content-blocks": toMany("content-blocks"), "trashed-by": toOne("revisions")},
	"content-blocks":      {"content": toOne("contents"), "asset": toOne("assets"), "draft": toOne("drafts"), "hyperlinks": toMany("hyperlinks"), "trashed-by": toOne("revisions")},
	"drafts":              {"item": toOne(draftable...), "user": toOne("users"), "publication-dependencies": toMany("drafts"), "reversion-dependencies": toMany("drafts"), "hyperlinks": toMany("hyperlinks"), "release": toOne("releases"), "comments": toMany("comments")},
	"revisions":           {"drafts": toMany("drafts"), "user": toOne("users"), "versions": toMany("versions"), "reverts": toOne("revisions"), "release": toOne("releases")},
	"publish-plans":       {"drafts": toMany("drafts"), "reverts": toOne("revisions"), "release": toOne("releases")},
	"version-comparisons": {},
	"versions":            {"item": toOne(draftable...), "revision": toOne("revisions"), "user": toOne("users")},
	"hyperlinks":          {"linkable": toOne("content-blocks"), "linked-to": toOne("pages", "assets")},
	"upload-signatures":   {},
	"asset-uploads":       {"asset": toOne("assets"), "asset-file": toOne("asset-images")},
	"assets":              {"asset-file": toOne("asset-images")},
	"asset-images":        {"asset": toOne("assets")},
	"webhooks":            {"deliveries": toMany("webhook-deliveries")},
	"webhook-deliveries":  {"webhook": toOne("webhooks")},
	"oauth-clients":       {},
	"audit-events":        {"user": toOne("users"), "oauth-client": toOne("oauth-clients")},
	"memberships":         {"user": toOne("users"), "site": toOne("sites")},
	"releases":            {"drafts": toMany("drafts"), "user": toOne("users"), "revision": toOne("revisions"), "reviews": toMany("release-reviews")},
	"release-reviews":     {"release": toOne("releases"), "user": toOne("users")},
	"comments":            {"item": toOne("pages", "contents", "content-blocks", "drafts", "releases"), "user": toOne("users")},
	"preview-links":       {"release": toOne("releases"), "user": toOne("users")},
}
