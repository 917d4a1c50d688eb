package api

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// The words of the OpenAPI description: the getting-started section /docs
// opens with, one line per resource type (its tag's description, and the
// noun its operations' summaries use), and the paragraph each operation of
// the JSON:API shape gets from its shape (shapeDoc), with the codes one
// route answers beyond its shape's (routeErrors). Special routes carry
// theirs in specialRoutes (openapi.go).

// gettingStarted is info.description: the first section /docs renders.
//
//go:embed openapi_getting_started.md
var gettingStarted string

// resourceDoc is a resource type as the reference names it.
type resourceDoc struct {
	one string // "a theme"
	doc string // what a record of the type is
}

// resourceDocs are every type of jsonapi.Relationships (TestOpenAPIDocuments checks).
var resourceDocs = map[string]resourceDoc{
	"sites":               {"the site", "The site a token belongs to: its title, subdomain and live theme. Every other record is scoped to it."},
	"users":               {"a user", "An editor of the site."},
	"themes":              {"a theme", "A set of Liquid layouts and assets the site's pages render with; one is live (PATCH /site/relationships/theme)."},
	"layouts":             {"a layout", "A Liquid template of a theme that pages render with."},
	"theme-assets":        {"a theme asset", "An asset (image, stylesheet…) placed at a path in a theme's assets folder."},
	"pages":               {"a page", "A page of the site: drafted by every write, live once a revision publishes its draft. Reads show the published record; include=draft (or GET /drafts) shows the drafted one. A published deletion puts it in the trash: the list with filter[trashed]=true (docs/history.md)."},
	"contents":            {"a content", "A named piece of a page's content, holding content blocks; drafted like pages, with a trash like theirs (filter[trashed]=true)."},
	"content-blocks":      {"a content block", "One block of a content (text, an asset, data); drafted like pages, with a trash like theirs (filter[trashed]=true). Its hyperlinks to pages and assets are kept as hyperlinks records."},
	"drafts":              {"a draft", "The pending change of one record (create, update or delete), with the drafts it depends on; POST /revisions publishes drafts, DELETE /drafts/{id} throws one away."},
	"revisions":           {"a revision", "A publish of drafts (or a rollback of an earlier revision), at once or scheduled with publish-at; it records the versions it wrote."},
	"releases":            {"a release", "A named set of drafts staged to be previewed (preview-release on every read) and published as one (POST /revisions with relationships.release). Authors create, stage and cancel releases; publishing needs publish. DELETE cancels an open release (204): its drafts stay, unstaged. A release that is not open (or in review) answers 409 release_not_open to every change. With the site's release-approvals above 0 a release must be approved (POST /release-reviews) before it is published: status in-review after a request, approved once approvals-count reaches approvals-required (docs/releases.md)."},
	"publish-plans":       {"a publish plan", "What a POST /revisions would do, computed without doing it."},
	"version-comparisons": {"a version comparison", "What changed between two versions of one record, or a version and the record's draft (id: from..to, to a version id or draft)."},
	"versions":            {"a version", "One record's change as a revision published it."},
	"hyperlinks":          {"a hyperlink", "A link from a content block to a page or asset, kept so that moving or deleting the target is caught."},
	"upload-signatures":   {"an upload signature", "A signed form for uploading one file straight to storage."},
	"asset-uploads":       {"an asset upload", "A file uploaded to storage and notified, processed in its site's queue into an asset."},
	"assets":              {"an asset", "A file the site uses (an image, a stylesheet…), made by an upload."},
	"asset-images":        {"an asset image", "An image asset's file: its URL, size, properties and resized variants."},
	"webhooks":            {"a webhook", "A receiver URL the site's events are delivered to, signed (Standard Webhooks)."},
	"webhook-deliveries":  {"a webhook delivery", "One event's delivery to a webhook, with its attempts."},
	"oauth-clients":       {"an OAuth client", "An integration client of the site: it gets access tokens with the client_credentials grant and acts as itself, with its role and its own rate limit. The secret is only in the answer to POST."},
	"release-reviews":     {"a review of a release", "A request for review of a release (verdict requested: anyone who may edit; the release goes in-review) or a verdict on it (approved or changes-requested: publish permission, a person, and nobody approves a release holding a draft they last changed: 403 own_approval), with an optional comment (at most 10,000 characters). An approval records every staged draft's meta.version; it turns stale (and stops counting) when any of them changes or a draft is staged or unstaged. GET /releases/{id}/reviews lists a release's reviews, oldest first (docs/releases.md, Review)."},
	"comments":            {"a comment", "A note on a page, content, content block, draft or release of the site (relationships.item), with a body of 1 to 10,000 characters, optionally resolved. GET /comments?filter[item]=type:id lists a record's comments; a draft's are its to-many comments (GET /releases/{id}?include=drafts.comments). Authors and up comment and resolve; only a comment's author changes its body or deletes it (403 not_comment_author)."},
	"preview-links":       {"a preview link", "A secret url that shows one release of the site to anyone who has it, without an account: read-only, until expires-at (at most 30 days, 7 by default), DELETE, or the release's publication or cancellation (then 410 preview_link_gone). Below the url, GET serves the site's read endpoints (pages, contents, content-blocks, layouts, themes, theme-assets, assets, asset-images, hyperlinks, site) as the release would make them, and GET {url}/render/{page path} the page as HTML through its layout; any other method is 405. url and token are only in the answer to POST; only the token's hash is kept. Authors and up make and revoke links; every reader sees them. Each link may make 600 requests a minute (429 rate_limited)."},
	"audit-events":        {"an audit event", "One change, publish, sign-in, failed sign-in or token refresh of the site: who (user, null for an integration client; oauth-client, null for a person), what (action, the record), from where (request-id, client-address), when, and for writes the names of the attributes sent (never values). Read-only; admins only."},
	"memberships":         {"a membership", "A user's role in the site (viewer, author, editor, admin), narrowed to a section by path-prefix; admins only. POST adds an existing user by email or creates one: then, once, meta.password-setup-url is the link where the new member sets a password (72 hours, one use). The site's last admin cannot be removed or demoted (409 last_admin); a role change or removal holds from the member's next request, and a removal revokes the member's tokens of the site."},
}

// tagDocs describe the tags that are not resource types.
var tagDocs = map[string]string{
	"oauth":          "Signing in: the OAuth 2.0 provider (password grant for first-party apps, authorization code with PKCE for others), discovery and keys.",
	"healthz":        "Liveness, for process supervisors.",
	"readyz":         "Readiness, for load balancers.",
	"openapi.json":   "This description.",
	"docs":           "The rendered reference.",
	"asset-types":    "The content types uploads may have.",
	"site":           "The caller's site.",
	"publish-plans":  "Dry runs of POST /revisions.",
	"password-setup": "The page where a new member sets a password (POST /memberships).",
	"search":         "Full-text search across pages, contents, content blocks and assets (docs/search.md).",
	"preview":        "What a preview link serves without any other credential (POST /preview-links): the site's reads as its release would make them, and pages rendered through their layouts.",
}

// contentWriteErrors are the codes a write of a drafted content kind may
// answer beyond its shape's.
var contentWriteErrors = []string{"invalid_title", "invalid_description", "invalid_keywords", "invalid_slug", "invalid_page_type", "page_type_taken", "parent_loop", "invalid_body",
	"invalid_canonical_url", "invalid_data_type", "invalid_var_name", "path_taken", "drafted_for_deletion", "draft_in_flight",
	"missing_relationship", "invalid_relationship_type", "edited_concurrently", "too_large"}

// routeErrors are the codes a route of the JSON:API shape answers beyond
// those of its shape, keyed "METHOD /path" as registered.
var routeErrors = map[string][]string{
	"POST /themes":               {"invalid_title", "invalid_description"},
	"PATCH /themes/:id":          {"invalid_title", "invalid_description"},
	"POST /layouts":              {"invalid_title", "invalid_file_name", "invalid_content", "content_too_large", "invalid_unique", "invalid_description", "missing_relationship", "invalid_relationship_type", "taken"},
	"PATCH /layouts/:id":         {"invalid_title", "invalid_file_name", "invalid_content", "content_too_large", "invalid_unique", "invalid_description", "immutable_relationship", "taken"},
	"POST /theme-assets":         {"invalid_path", "missing_relationship", "invalid_relationship_type", "taken"},
	"POST /webhooks":             {"invalid_url", "invalid_events", "invalid_active", "invalid_rotate_secret", "invalid_description", "too_many_webhooks"},
	"PATCH /webhooks/:id":        {"invalid_url", "invalid_events", "invalid_active", "invalid_rotate_secret", "invalid_description"},
	"PATCH /revisions/:id":       {"invalid_publish_at", "required", "revision_not_scheduled"},
	"GET /asset-uploads/:id":     {"invalid_parameter"},
	"POST /pages":                contentWriteErrors,
	"PATCH /pages/:id":           contentWriteErrors,
	"DELETE /pages/:id":          {"drafted_for_deletion", "draft_in_flight"},
	"POST /contents":             contentWriteErrors,
	"PATCH /contents/:id":        contentWriteErrors,
	"DELETE /contents/:id":       {"drafted_for_deletion", "draft_in_flight"},
	"POST /content-blocks":       contentWriteErrors,
	"PATCH /content-blocks/:id":  contentWriteErrors,
	"DELETE /content-blocks/:id": {"drafted_for_deletion", "draft_in_flight"},
	"POST /oauth-clients":        {"invalid_name", "invalid_role", "invalid_rate_limit"},
	"POST /memberships":          {"invalid_email", "invalid_name", "invalid_role", "invalid_path_prefix", "already_member"},
	"PATCH /memberships/:id":     {"invalid_role", "invalid_path_prefix", "last_admin"},
	"DELETE /memberships/:id":    {"last_admin"},
	"GET /pages":                 {"invalid_filter"},
	"GET /contents":              {"invalid_filter"},
	"GET /content-blocks":        {"invalid_filter"},
	"GET /assets":                {"invalid_filter"},
	"POST /releases":             {"invalid_title", "invalid_description"},
	"PATCH /releases/:id":        {"invalid_title", "invalid_description", "release_not_open"},
	"DELETE /releases/:id":       {"release_not_open"},
	"POST /preview-links":        {"invalid_expires_at", "release_not_open", "missing_relationship", "invalid_relationship_type"},
	"POST /comments":             {"invalid_comment_body", "invalid_resolved", "missing_relationship", "invalid_relationship_type"},
	"PATCH /comments/:id":        {"invalid_comment_body", "invalid_resolved", "not_comment_author"},
	"DELETE /comments/:id":       {"not_comment_author"},
	"POST /release-reviews":      {"invalid_verdict", "invalid_comment", "own_approval", "release_not_open", "release_empty", "too_many_reviews", "missing_relationship", "invalid_relationship_type"},
}

// shapeDoc fills the summary, description and extra codes of a route of
// the JSON:API shape from its type's resourceDoc.
func shapeDoc(method, path, typ string, sp *special) {
	d := resourceDocs[typ]
	_, drafted := jsonapi.Relationships[typ]["draft"]
	sp.errors = routeErrors[method+" "+path]
	switch {
	case sp.kind == opMany:
		sp.summary = "List " + typ
		sp.description = fmt.Sprintf("One page of the site's %s (page[size] at most %d, %d by default) with first, prev, next and last links and meta.total; or, by cursor (page[after] or page[before], from links.next and links.prev), the records after or before one in the list's order, with first (page[after]=), last (page[before]=), prev and next links and no meta.total. The parameters list the sort keys and filters it takes: filter[name] is equality, filter[name][op] another operator (docs/api-conventions.md). %s", typ, maxPageSize, defaultPageSize, d.doc)
	case method == fiber.MethodPost:
		sp.summary = "Create " + d.one
		sp.description = "Creates " + d.one + " in the caller's site from the attributes and relationships sent (ids are made by the server) and answers 201 with it and its Location. " + d.doc
		if drafted {
			sp.description += " The new record is a draft until a revision publishes it."
		}
	case sp.kind == opOne && method == fiber.MethodGet:
		sp.summary = "Get " + d.one
		sp.description = "The record the id names in the caller's site (404 otherwise), with its ETag; include adds related resources, fields[TYPE] keeps only the members named. " + d.doc
	case method == fiber.MethodPatch:
		sp.summary = "Update " + d.one
		sp.description = "Changes the attributes and relationships sent and keeps the rest. Optimistic: send If-Match with the ETag last read (or meta.version), and a stale one is 412 stale_version. " + d.doc
		if drafted {
			sp.description += " The change is drafted: reads show it with include=draft until a revision publishes it."
		}
	case method == fiber.MethodDelete:
		sp.summary = "Delete " + d.one
		sp.description = "Deletes the record (204). " + d.doc
		if drafted {
			sp.description = "A record never published goes at once (204); a published one is drafted for deletion (200 with the drafted view, trashed-at set) until a revision publishes the deletion. " + d.doc
		}
	case sp.kind == opRelated:
		sp.summary = "The " + sp.rel + " of " + d.one
		sp.description = "The resources the " + sp.rel + " relationship of " + d.one + " names, each rendered as its own GET renders it: data null when a to-one relationship names none, one page of them for a to-many one."
	case sp.kind == opLinkage:
		sp.summary = "The " + sp.rel + " linkage of " + d.one
		sp.description = "The identifiers the " + sp.rel + " relationship of " + d.one + " holds, with its links: null or one for a to-one relationship, a page of at most 100 (meta.count in all) for a to-many one."
	}
	sp.summary = strings.ToUpper(sp.summary[:1]) + sp.summary[1:]
}
