package api

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/api/oauth"
	"github.com/pressroom/pressroom/models"
)

// The OpenAPI 3.1 description (GET /openapi.json) is generated, not
// written: from the routes the app registered (app.GetRoutes), the resource
// types and relationships in jsonapi.Relationships, and the attribute
// structs in attributeTypes. A route of the JSON:API shape
// (/{type}, /{type}/{id}, /{type}/{id}/{relationship},
// /{type}/{id}/relationships/{relationship}) is described from its type
// alone; anything else needs a line in specialRoutes, and New fails until it
// has one, so an endpoint cannot ship undescribed. See docs/architecture.md
// "Adding a resource".

// attributeTypes are the structs each resource type's attributes are
// rendered from; the description reflects their JSON fields. The content
// kinds' attributes are built per kind: they are described from the
// kind's field declarations (openapi_kinds.go).
var attributeTypes = map[string]any{
	"sites":               siteAttributes{},
	"users":               userAttributes{},
	"themes":              themeAttributes{},
	"layouts":             layoutAttributes{},
	"theme-assets":        themeAssetAttributes{},
	"drafts":              draftAttributes{},
	"hyperlinks":          hyperlinkAttributes{},
	"revisions":           revisionAttributes{},
	"versions":            versionAttributes{},
	"version-comparisons": comparisonAttributes{},
	"upload-signatures":   signatureAttributes{},
	"asset-uploads":       uploadAttributes{},
	"assets":              assetAttributes{},
	"asset-images":        imageAttributes{},
	"publish-plans":       planAttributes{},
	"webhooks":            webhookAttributes{},
	"webhook-deliveries":  deliveryAttributes{},
	"oauth-clients":       oauthClientAttributes{},
	"audit-events":        auditEventAttributes{},
	"memberships":         membershipAttributes{},
	"releases":            releaseAttributes{},
	"preview-links":       previewLinkAttributes{},
	"release-reviews":     releaseReviewAttributes{},
	"comments":            commentAttributes{},
}

// requestAttributeTypes are the structs create and update requests are
// decoded into (decodeCreate, decodePatch). Fields of interface type are
// there only to refuse read-only attributes, so they are not described as
// accepted. The content kinds' are their field declarations
// (openapi_kinds.go).
var requestAttributeTypes = map[string]any{
	"themes":            themeRequest{},
	"layouts":           layoutRequest{},
	"theme-assets":      themeAssetRequest{},
	"upload-signatures": signatureRequest{},
	"asset-uploads":     uploadRequest{},
	"revisions":         revisionRequest{},
	"publish-plans":     revisionRequest{}, // the body of POST /revisions (readPublishRequest)
	"webhooks":          webhookRequest{},
	"sites":             siteUpdate{},
	"oauth-clients":     oauthClientRequest{},
	"memberships":       membershipRequest{},
	"releases":          releaseRequest{},
	"preview-links":     previewLinkRequest{},
	"release-reviews":   releaseReviewRequest{},
	"comments":          commentRequest{},
}

// patchAttributeTypes are the structs a PATCH of a type decodes into when
// they are not its requestAttributeTypes; `oas:"required"` members of one
// are required in every PATCH.
var patchAttributeTypes = map[string]any{
	"revisions":   revisionPatch{},   // PATCH /revisions/:id moves publish-at
	"memberships": membershipPatch{}, // PATCH /memberships/:id: role and path-prefix
}

// opKind is how an operation answers.
type opKind int

const (
	opOne           opKind = iota // one resource of typ (status 200 or the one given)
	opMany                        // a collection of typ
	opNoContent                   // 204, no body
	opLinkage                     // the linkage of typ's relationship rel
	opJSON                        // plain JSON (not JSON:API)
	opHTML                        // an HTML page
	opOneOrAccepted               // 201 with the resource, or 202 while it is being made
	opRelated                     // the resources of a relationship (related), or null
	opScript                      // a JavaScript file
)

// special describes an operation: how it answers and, for the reader,
// what it does. Routes of the JSON:API shape get theirs from shapeOf.
type special struct {
	summary     string
	description string // one paragraph (Markdown)
	kind        opKind
	typ         string // resource type answered (opOne, opMany, opLinkage)
	rel         string // relationship (opLinkage)
	status      int    // success status (0: 200)
	public      bool   // no token needed
	body        string // request body: a resource type (JSON:API), "form" (OAuth form), "linkage", "" none
	nullable    bool   // opOne: data may be null
	idempotent  bool   // takes Idempotency-Key
	// related is the relationship a related-resource endpoint answers
	// (GET /{type}/{id}/{relationship}): its resources, or null.
	related *jsonapi.Linkage
	// errors are the codes it answers beyond its shape's (errorsOf):
	// errorCodes, or oauthErrorCodes when oauth.
	errors []string
	oauth  bool
	// unavailable: 503 answers the same type, saying what is not ready.
	unavailable bool
	// opJSON: a value of the type it answers (described by reflection),
	// and examples of the answer and, for a form, of the request.
	schema  any
	example any
	form    map[string]any
	// pages: an HTML route's pages answered with an error status (status:
	// what the page says).
	pages map[int]string
}

// historyDoc describes GET /<kind>/:id/versions (docs/history.md).
const historyDoc = "The record's versions, newest first, one per published change (a deleted record's too, while its versions are kept): event, object-changes, state (the record's attributes and relationships right after the version) and the revision and user. Paged by cursor: follow links.next (page[after]); there is no total and no last page."

// specialRoutes describe every route that is not /{type}[/{id}[/…]] of a
// type in jsonapi.Relationships, keyed "METHOD /path" as registered.
var specialRoutes = map[string]special{
	"GET /healthz": {summary: "Liveness", kind: opJSON, public: true, example: map[string]any{"status": "ok"},
		description: "Answers 200 while the process serves requests. It touches no dependency, so a database outage never gets the API restarted in a loop; use /readyz to take an instance out of a load balancer."},
	"GET /readyz": {summary: "Readiness", kind: opJSON, public: true, schema: Readiness{}, unavailable: true,
		example:     map[string]any{"status": "ok", "checks": map[string]any{"postgres": map[string]any{"status": "ok"}}},
		description: "Runs every dependency check at once (Postgres, Temporal, both storage buckets), each under the readiness timeout, and answers 200 when all pass and 503 naming the failing ones otherwise. Why a check failed goes to the log with the request id, not to the answer."},
	"GET /openapi.json": {summary: "This OpenAPI 3.1 description", kind: opJSON, public: true, example: map[string]any{"openapi": "3.1.0"},
		description: "The description of every route the server registers, generated at start-up from the route table, the resource types and relationships, and the structs the API decodes and renders. Feed it to a client generator (the Go client in client/ is made from it)."},
	"GET /docs": {summary: "The API reference", kind: opHTML, public: true,
		description: "The reference rendered from /openapi.json by the Redoc bundle served with the binary; it works offline and loads nothing from another origin. It opens with a getting-started section."},
	"GET /docs/redoc.standalone.js": {summary: "The reference renderer", kind: opScript, public: true,
		description: "The pinned Redoc bundle /docs loads (third_party/redoc)."},
	"GET /asset-types": {summary: "The asset types table", kind: opJSON, schema: models.AssetTypes{},
		example:     map[string]any{"image/png": map[string]any{"asset-type": "image", "sub-type": "png"}},
		description: "Which content types an upload may have and what asset type and sub-type each becomes; POST /upload-signatures refuses any other. Plain JSON (not JSON:API), behind the token, cached privately for five minutes."},
	"GET /.well-known/openid-configuration": {summary: "OpenID discovery document", kind: opJSON, public: true,
		example:     map[string]any{"issuer": "http://localhost:8080", "token_endpoint": "http://localhost:8080/oauth/token"},
		description: "The provider's endpoints, signing algorithms, grants (password, authorization_code, refresh_token) and response types, for OAuth and OpenID Connect client libraries."},
	"GET /oauth/keys": {summary: "The token signing keys (JWKS)", kind: opJSON, public: true,
		example:     map[string]any{"keys": []any{map[string]any{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": "k1", "n": "…", "e": "AQAB"}}},
		description: "The public keys access tokens are signed with, the current and the recently retired ones, as a JSON Web Key Set."},
	"POST /oauth/token": {summary: "Get or refresh tokens", kind: opJSON, public: true, body: "form", oauth: true, schema: oauth.TokenResponse{},
		errors:      []string{"invalid_request", "invalid_grant", "unsupported_grant_type", "invalid_client", "slow_down", "server_error", "temporarily_unavailable"},
		form:        map[string]any{"grant_type": "password", "username": "editor@demo.test", "password": "correct horse battery staple"},
		example:     map[string]any{"token_type": "bearer", "access_token": "eyJhbGciOi…", "refresh_token": "b3f1…", "expires_in": 7200},
		description: "The token endpoint (RFC 6749). A first-party app signs in with the password grant (username, password, client_id); any other client exchanges the code of the authorization code flow with its PKCE code_verifier (grant_type=authorization_code); either refreshes with grant_type=refresh_token, which rotates the refresh token (a reused one revokes its whole chain). Errors are RFC 6749 §5.2 JSON; failed sign-ins are throttled per user and per address (429 slow_down with Retry-After)."},
	"POST /oauth/token.json": {summary: "Password grant only", kind: opJSON, public: true, body: "form", oauth: true, schema: oauth.TokenResponse{},
		errors:      []string{"invalid_request", "invalid_grant", "unsupported_grant_type", "invalid_client", "slow_down", "server_error", "temporarily_unavailable"},
		form:        map[string]any{"grant_type": "password", "username": "editor@demo.test", "password": "correct horse battery staple"},
		example:     map[string]any{"token_type": "bearer", "access_token": "eyJhbGciOi…", "refresh_token": "b3f1…", "expires_in": 7200},
		description: "The token endpoint for the password grant alone, as the content API spec names it; every other grant is unsupported_grant_type here. Same answers as POST /oauth/token."},
	"POST /oauth/introspect": {summary: "Token introspection (RFC 7662)", kind: opJSON, public: true, body: "form", oauth: true,
		errors: []string{"invalid_request", "invalid_client", "slow_down", "temporarily_unavailable"}, form: map[string]any{"token": "eyJhbGciOi…"},
		example:     map[string]any{"active": true, "sub": "2c5e…", "client_id": "pressroom", "exp": 1767225600},
		description: "Tells a confidential client (authenticated with its id and secret) whether a token is active and whose it is; an unknown, expired or revoked token is {\"active\": false}."},
	"POST /oauth/revoke": {summary: "Token revocation (RFC 7009)", kind: opJSON, public: true, body: "form", oauth: true,
		errors: []string{"invalid_request", "invalid_client", "slow_down", "temporarily_unavailable"}, form: map[string]any{"token": "b3f1…"},
		example:     map[string]any{},
		description: "Revokes a token of the calling client: an access token, or a refresh token with its whole chain and the access tokens issued from it. Answers 200 for an unknown token too, as RFC 7009 asks."},
	"GET /oauth/authorize": {summary: "Start the authorization code flow", kind: opHTML, public: true, status: 302, oauth: true,
		description: "The authorization endpoint: a registered client sends the user here with response_type=code, its redirect_uri (a registered one, a loopback http://127.0.0.1:<port>/… for native apps, or urn:ietf:wg:oauth:2.0:oob), state, and a PKCE code_challenge (S256). Redirects to the sign-in form; the code arrives at the redirect_uri after it."},
	"GET /oauth/login": {summary: "The sign-in form", kind: opHTML, public: true, oauth: true,
		description: "The HTML form a user signs in with during the authorization code flow."},
	"POST /oauth/login": {summary: "Sign in", kind: opHTML, public: true, body: "form", oauth: true, form: map[string]any{"id": "auth-request-id", "username": "editor@demo.test", "password": "correct horse battery staple"},
		description: "Checks the email and password of the sign-in form (throttled like the password grant) and hands out the code: by redirect to the client's redirect_uri, or on a page to copy from for the out-of-band redirect."},
	"GET /preview/:token/render/*": {summary: "A page of a release, rendered", kind: opHTML, public: true, pages: previewErrorPages,
		description: "The page at the path after /render (its layout's Liquid template given site, page and contents; a page without a layout through a plain built-in one), as the preview link's release would make it. No credential but the link (POST /preview-links); read-only. Below the same url, GET answers every read endpoint of pages, contents, content-blocks, layouts, themes, theme-assets, assets, asset-images, hyperlinks and the site, as JSON:API with the release as the preview. Any other method is 405."},
	"GET /password-setup": {summary: "The password setup form", kind: opHTML, public: true, pages: setupErrorPages,
		description: "The page of the meta.password-setup-url a new member's POST /memberships answers with (?token=…): a form to choose the password, with a CSRF token bound to the browser by a cookie. The link works once, for 72 hours; a used, expired or unknown one answers 410 with a page saying so."},
	"POST /password-setup": {summary: "Set a new member's password", kind: opHTML, public: true, body: "form", pages: setupErrorPages, form: map[string]any{"token": "setup-token", "csrf": "form-token", "password": "correct horse battery staple"},
		description: "Sets the password (8 to 1024 bytes) of the user the setup link was made for and spends the link. The form must come from the page the link opened (403 otherwise); a used or expired link answers 410."},
	"GET /site": {summary: "The caller's site", kind: opOne, typ: "sites",
		description: "The site the access token belongs to; every other record the API serves is scoped to it. include=theme adds the live theme."},
	"PATCH /site": {summary: "Update the caller's site", kind: opOne, typ: "sites", body: "sites",
		errors: []string{"invalid_title", "invalid_slug", "invalid_approvals", "taken", "theme_required", "missing_relationship", "invalid_relationship_type",
			"invalid_locales", "duplicate_locale", "locale_fallback_cycle", "too_many_fallbacks", "invalid_require_default_locale", "locale_in_use", "base_locale", "path_taken", "invalid_force"},
		description: "Changes the site's title or subdomain-slug (unique among sites), release-approvals (0 to 5: how many valid approvals a release needs before it is published; admins only, as every change of the site), or its live theme through relationships.theme. " +
			"Locales (docs/locales.md): locales (1 to 20 canonical BCP 47 tags, the first the default), locale-fallbacks (tag → the tag its missing values come from; a chain may pass through tags the site does not list; acyclic), require-default-locale. Problems are 422, all at once, each at its tag (/data/attributes/locales/1, /data/attributes/locale-fallbacks/fr-CA). " +
			"While the site has one locale, replacing it relabels base-locale too. Removing the base locale is 409 base_locale; removing a locale with content is 409 locale_in_use (one error per locale, meta: locale, records, drafts) unless the document carries top-level meta {\"force\": true}, which deletes that locale's values and drafts (versions keep their history). " +
			"Optimistic like every versioned write: send If-Match (the ETag) or meta.version, and a stale one is 412."},
	"GET /site/theme": {summary: "The site's live theme", kind: opOne, typ: "themes", nullable: true,
		description: "The theme the site's pages render with, or data null while no theme has been published."},
	"GET /site/relationships/theme": {summary: "The site's theme linkage", kind: opLinkage, typ: "sites", rel: "theme",
		description: "The identifier of the site's live theme, or null."},
	"PATCH /site/relationships/theme": {summary: "Change the site's live theme", kind: opLinkage, typ: "sites", rel: "theme", body: "linkage",
		errors:      []string{"unsupported_media_type", "malformed_document", "invalid_member", "body_too_large", "type_mismatch", "theme_required", "not_found"},
		description: "Makes another of the site's themes the live one (a published theme only once one is live: null is refused with theme_required)."},
	"GET /users/me": {summary: "The signed-in user", kind: opOne, typ: "users", nullable: true,
		description: "The user the access token was issued to: their email and name, and in meta.memberships their sites and roles. An integration client's token (client_credentials) acts for no person: data is null and meta.oauth-client names the client (id, client-id, name, role, site-id)."},
	"POST /upload-signatures": {summary: "Sign an upload", kind: opOne, typ: "upload-signatures", body: "upload-signatures",
		errors:      []string{"invalid_filename", "unsupported_content_type"},
		description: "The first step of an upload: a signed form (a storage POST policy) for one file of an accepted content type (GET /asset-types). POST the file with the form's fields to the endpoint, straight to storage, then notify the upload with POST /asset-uploads and the signature's key."},
	"POST /asset-uploads": {summary: "Notify an upload", kind: opOne, typ: "asset-uploads", status: 202, body: "asset-uploads",
		errors:      []string{"invalid_file_name", "invalid_key", "unknown_key", "invalid_file_size", "file_too_large", "invalid_user_agent", "file_missing", "content_type_mismatch", "already_uploaded", "too_many_uploads"},
		description: "Tells the API a file is in storage under a signature's key. The upload joins its site's processing queue (status processing, meta.queue-position while it waits); poll the Location (GET /asset-uploads/{id}?wait=10s waits for the end) until it is finished, with its asset and image, or error with an error-message."},
	"POST /revisions": {summary: "Publish drafts", kind: opOneOrAccepted, typ: "revisions", body: "revisions", idempotent: true,
		errors:      []string{"missing_relationship", "invalid_relationship", "invalid_relationship_type", "required", "too_many", "invalid_comments", "invalid_publish_at", "invalid_force", "invalid_idempotency_key", "draft_in_flight", "stale_version", "path_taken", "publish_failed", "revert_conflict", "history_pruned", "revision_not_published", "conflict", "not_found", "release_not_open", "release_empty", "approval_required", "default_locale_required"},
		description: "Publishes the drafts listed in relationships.drafts (each identifier may carry meta.version), with what they depend on, in one revision: 201 when it published within the wait, 202 while it is still publishing (poll the Location), 422 publish_failed when it failed and nothing changed. With publish-at it is scheduled (201, status scheduled) and publishes then. With relationships.reverts instead of drafts it rolls a published revision back (force restores over later changes). With relationships.release instead of drafts it publishes that open release's staged drafts with their closure (the release goes publishing, then published; a failure leaves it open); it needs publish like any revision. While the site requires approvals (PATCH /site release-approvals above 0), drafts go live only through an approved release: a revision listing drafts, or publishing or scheduling a release that is not approved, is 409 approval_required with approvals-count and approvals-required in meta (a rollback stays allowed). An Idempotency-Key makes a retry answer the first request's result."},
	"DELETE /revisions/:id": {summary: "Cancel a scheduled revision", kind: opNoContent, typ: "revisions",
		errors:      []string{"revision_not_scheduled"},
		description: "Cancels a revision scheduled with publish-at: its drafts are free again. 409 once it is publishing, published, failed or cancelled."},
	"POST /releases/:id/relationships/drafts": {summary: "Stage drafts in a release", kind: opNoContent, typ: "releases", body: "linkage",
		errors:      []string{"malformed_document", "invalid_member", "body_too_large", "required", "too_many", "invalid_relationship_type", "not_found", "staged_elsewhere", "release_not_open"},
		description: "Stages the drafts listed in data ([{type: drafts, id}], at most 1000) in the open release (204). A draft is in at most one release: one staged in another is 409 staged_elsewhere at its item, with meta.release; another site's or a missing draft is 404 at its item. Staging a draft already in the release changes nothing. A release that is not open answers 409 release_not_open."},
	"DELETE /releases/:id/relationships/drafts": {summary: "Unstage drafts from a release", kind: opNoContent, typ: "releases", body: "linkage",
		errors:      []string{"malformed_document", "invalid_member", "body_too_large", "required", "too_many", "invalid_relationship_type", "not_found", "release_not_open"},
		description: "Takes the drafts listed in data out of the open release (204); the drafts stay as they are. A draft of the site not in the release is left alone; another site's or a missing one is 404 at its item."},
	"POST /publish-plans": {summary: "Plan a publish (dry run)", kind: opOne, typ: "publish-plans", body: "publish-plans",
		errors:      []string{"missing_relationship", "invalid_relationship", "invalid_relationship_type", "required", "too_many", "invalid_comments", "invalid_publish_at", "invalid_force", "not_found"},
		description: "Takes the body POST /revisions takes and answers what it would do without doing it: the steps in order (what each draft pulls in), the hyperlinks it would break and, as conflicts (still 200), what would make the POST answer 409 or 412. Nothing changes; an Idempotency-Key is ignored. The plan of a release (relationships.release) marks each step staged true or false (a draft its closure pulls in)."},
	"POST /webhook-deliveries/:id/retry": {summary: "Redeliver a failed delivery", kind: opOne, typ: "webhook-deliveries", status: 202,
		errors:      []string{"not_failed"},
		description: "Queues a failed delivery again, at once, with its attempts reset; 422 not_failed for one pending or delivered."},
	"GET /audit-events": {summary: "The site's audit trail", kind: opMany, typ: "audit-events",
		errors:      []string{"invalid_page", "invalid_filter"},
		description: "Every write, publish, schedule change, rollback, sign-in, failed sign-in, token refresh and client_credentials grant of the site, newest first (docs/audit.md). Paged by cursor, since the trail grows without bound: follow links.next (page[after]); there is no total and no last page. Admins only."},
	"GET /search": {summary: "Search the site", kind: opRelated, related: &searchLinkage,
		errors:      []string{"invalid_filter"},
		description: "Full-text search across the site's pages, contents, content blocks and assets (docs/search.md): filter[q] (required) names the words; the answer is one page of the records that match, of any of those types, most relevant first, each with meta.search (rank and highlight). With include=draft the drafted values are searched (unpublished creates included) and the hits' drafts are included. With locale-tag, the values a reader in that locale is shown are searched, each locale's with its language's stemmer, and meta.search.locale names the locale that matched (docs/locales.md)."},
	"GET /revisions/:id/versions": {summary: "The versions a revision published", kind: opMany, typ: "versions",
		description: "One page of the versions a published revision wrote, one per record it changed: the event and the object's changes."},
	"GET /pages/:id/versions": {summary: "The page's history", kind: opMany, typ: "versions",
		errors:      []string{"invalid_page"},
		description: historyDoc},
	"GET /contents/:id/versions": {summary: "The content's history", kind: opMany, typ: "versions",
		errors:      []string{"invalid_page"},
		description: historyDoc},
	"GET /content-blocks/:id/versions": {summary: "The content block's history", kind: opMany, typ: "versions",
		errors:      []string{"invalid_page"},
		description: historyDoc},
	"GET /versions/:id/compare/:other": {summary: "Compare two versions of a record", kind: opOne, typ: "version-comparisons",
		errors:      []string{"different_records"},
		description: "What changed between version id and version other of the same record (422 different_records otherwise), or, with other = draft, between the version and the record's pending draft (404 without one): changes maps each differing attribute or relationship to [at id, at other], and diff holds a unified line diff of each changed long text (body...). The answer reads again at its links.self."},
	"POST /versions/:id/restore": {summary: "Restore a version as a draft", kind: opOne, typ: "drafts", status: 201,
		errors:      []string{"draft_pending", "nothing_to_restore", "history_incomplete", "already_restored", "path_taken", "draft_in_flight", "drafted_for_deletion"},
		description: "Drafts the record back to the version's state (a delete's version: the state before it): an update draft for a live record; for a deleted one a create draft under its id, with its contents and blocks as they were (each a create draft, published with it). Nothing goes live until a revision publishes the drafts. 201 with the record's draft (the others in included, meta.drafts counts them). 409 draft_pending when the record has a pending draft, unless replace-draft=true; 409 path_taken with meta.page when another page holds the path; 409 history_incomplete when a record deleted with it was purged from the trash; 409 already_restored when another restore brought it back first."},
	"GET /versions/:id": {summary: "One published version", kind: opOne, typ: "versions",
		description: "A record's change as a revision published it: the event (create, update, delete) and object-changes, [old, new] per attribute."},
	"DELETE /drafts/:id": {summary: "Revert a draft", kind: opNoContent,
		errors:      []string{"draft_in_flight"},
		description: "Throws a draft away: its record goes back to what is published (a record never published goes altogether, with the drafts that depend on it). 409 draft_in_flight while a revision holds it."},
}

// servedRoutes are the method and path pairs the app answers, without the
// HEAD twin Fiber adds to every GET and without the 405 answers oauth's
// serve registers with app.All for the methods a path does not serve. Fiber
// merges a second registration of a method and path into the first route,
// so on a path with every method registered the served methods are the ones
// with more than the one 405 handler.
func servedRoutes(routes []fiber.Route) [][2]string {
	handlers := map[[2]string]int{}
	methods := map[string]int{}
	for _, r := range routes {
		k := [2]string{r.Method, r.Path}
		if _, seen := handlers[k]; !seen {
			methods[r.Path]++
		}
		handlers[k] += len(r.Handlers)
	}
	var out [][2]string
	for k, n := range handlers {
		method, path := k[0], k[1]
		allMethods := methods[path] >= len(fiber.DefaultMethods)
		if method == fiber.MethodHead || allMethods && n < 2 {
			continue
		}
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][1] != out[j][1] {
			return out[i][1] < out[j][1]
		}
		return out[i][0] < out[j][0]
	})
	return out
}

// buildOpenAPI describes routes; specs are the query specs their handlers
// parse with (probeQuerySpecs), keyed "METHOD /path". It fails on a route
// it cannot describe.
func buildOpenAPI(routes []fiber.Route, publicURL string, specs map[string]QuerySpec, perms permissionTable) ([]byte, error) {
	b := specBuilder{paths: map[string]map[string]any{}, schemas: map[string]any{}, responses: map[string]any{}, perms: perms}
	b.commonSchemas()
	var errs []string
	for _, r := range servedRoutes(routes) {
		var spec *QuerySpec
		if s, ok := specs[r[0]+" "+r[1]]; ok {
			spec = &s
		}
		if err := b.describe(r[0], r[1], spec); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapi: %s", strings.Join(errs, "; "))
	}
	doc := map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"info": map[string]any{
			"title":       "Pressroom API",
			"version":     "1.0.0",
			"summary":     "Content-site editing API: JSON:API 1.1 behind OAuth 2.0.",
			"description": gettingStarted,
		},
		"servers":    []any{map[string]any{"url": publicURL}},
		"security":   []any{map[string]any{"bearer": []any{}}},
		"tags":       b.tags(),
		"paths":      b.paths,
		"components": map[string]any{"schemas": b.schemas, "securitySchemes": securitySchemes, "parameters": parameters, "responses": b.responses},
	}
	b.prune(doc)
	return json.Marshal(doc)
}

var securitySchemes = map[string]any{
	"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
		"description": "An access token from POST /oauth/token (password grant, or the authorization code flow with PKCE)."},
}

var parameters = map[string]any{
	"id":      map[string]any{"name": "id", "in": "path", "required": true, "description": "The record's id", "schema": map[string]any{"type": "string", "format": "uuid"}},
	"ifMatch": map[string]any{"name": "If-Match", "in": "header", "description": "The ETag last read; a stale one is 412 stale_version", "schema": map[string]any{"type": "string"}},
	"idemKey": map[string]any{"name": "Idempotency-Key", "in": "header", "description": "Makes a retried create answer the first request's result", "schema": map[string]any{"type": "string", "maxLength": 200}},
	"previewRelease": map[string]any{"name": previewParam, "in": "query",
		"description": "Read the site as publishing this release would make it: the live records with the release's drafts and their publication closure laid over them, and no other draft (docs/releases.md). 404 for a release the site does not have; 400 invalid_parameter with include=draft.",
		"schema":      map[string]any{"type": "string", "format": "uuid"}},
	"localeTag": map[string]any{"name": localeParam, "in": "query",
		"description": "The locale to read and write in: one of the site's locales (GET /site, attribute locales), a BCP 47 language tag compared case-insensitively; without it, the site's default locale (the first). The response names it in Content-Language. Localized attributes (pages' title, description, keywords, slug; contents' title; blocks' body) are the locale's values, or its fallbacks' (named in the resource's meta.fallbacks). 400 invalid_locale for a tag that is not BCP 47, 400 unknown_locale for one the site does not have (docs/locales.md).",
		"schema":      map[string]any{"type": "string", "maxLength": models.MaxTagLen, "example": "de"}},
}

type specBuilder struct {
	paths     map[string]map[string]any
	schemas   map[string]any
	responses map[string]any // components.responses: error answers several operations share
	perms     permissionTable
}

var rawJSON = reflect.TypeOf(json.RawMessage(nil))

// describe adds the operation for one route; spec is the query its handler
// parses (nil: it takes none).
func (b *specBuilder) describe(method, path string, spec *QuerySpec) error {
	sp, ok := specialRoutes[method+" "+path]
	if !ok {
		var err error
		if sp, err = shapeOf(method, path); err != nil {
			return err
		}
	}
	if sp.typ != "" {
		if _, known := jsonapi.Relationships[sp.typ]; !known {
			return fmt.Errorf("%s %s answers type %q, which jsonapi.Relationships does not declare", method, path, sp.typ)
		}
	}
	if sp.description == "" {
		return fmt.Errorf("%s %s has no description (specialRoutes, resourceDocs)", method, path)
	}
	op := map[string]any{"summary": sp.summary, "description": sp.description, "operationId": operationID(method, path), "tags": []any{tagOf(path)}}
	withPermission(op, b.perms, method, path) // x-permission: what the caller's role needs (api/permissions.go)
	if sp.public {
		op["security"] = []any{}
	}
	if params := b.parameters(method, path, sp, spec); len(params) > 0 {
		op["parameters"] = params
	}
	if body := b.requestBody(method, sp); body != nil {
		op["requestBody"] = body
	}
	codes := errorsOf(method, path, sp, spec, b.perms)
	op["x-error-codes"] = codes
	op["responses"] = b.successResponses(sp)
	if d, ok := op["responses"].(map[string]any)["default"].(map[string]any); ok && !sp.oauth && sp.kind != opHTML && sp.kind != opJSON {
		d["description"] = defaultErrors(codes)
	}
	b.addExamples(op)
	for status, r := range errorResponses(codes, sp.oauth) {
		if _, taken := op["responses"].(map[string]any)[status]; !taken {
			op["responses"].(map[string]any)[status] = b.sharedResponse(status, r.(map[string]any))
		}
	}
	p := oasPath(path)
	if b.paths[p] == nil {
		b.paths[p] = map[string]any{}
	}
	b.paths[p][strings.ToLower(method)] = op
	return nil
}

// oasPath is a Fiber route's path as the description writes it: its
// parameters :id, :token and a trailing wildcard in braces.
func oasPath(path string) string {
	p := strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(path, ":id", "{id}"), ":other", "{other}"), ":token", "{token}")
	if strings.HasSuffix(p, "/*") {
		p = strings.TrimSuffix(p, "*") + "{path}"
	}
	return "/" + strings.TrimPrefix(p, "/")
}

func tagOf(path string) string {
	if strings.HasPrefix(path, "/oauth/") || strings.HasPrefix(path, "/.well-known/") {
		return "oauth"
	}
	return strings.Split(strings.Trim(path, "/"), "/")[0]
}

// tags lists every tag the operations use, each with its resource's doc.
func (b *specBuilder) tags() []any {
	seen := map[string]bool{}
	for _, item := range b.paths {
		for _, op := range item {
			seen[op.(map[string]any)["tags"].([]any)[0].(string)] = true
		}
	}
	var out []any
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		t := map[string]any{"name": name}
		if d, ok := resourceDocs[name]; ok {
			t["description"] = d.doc
		} else if d, ok := tagDocs[name]; ok {
			t["description"] = d
		}
		out = append(out, t)
	}
	return out
}

// parameters are an operation's path id, query (from spec) and headers.
func (b *specBuilder) parameters(method, path string, sp special, spec *QuerySpec) []any {
	var params []any
	if strings.Contains(path, ":id") {
		params = append(params, map[string]any{"$ref": "#/components/parameters/id"})
	}
	if strings.Contains(path, ":token") {
		params = append(params, map[string]any{"name": "token", "in": "path", "required": true, "description": "The preview link's token (POST /preview-links answers it once)", "schema": map[string]any{"type": "string"}})
	}
	if strings.HasSuffix(path, "/*") {
		params = append(params, map[string]any{"name": "path", "in": "path", "required": true, "description": "The page's path, without its leading slash", "schema": map[string]any{"type": "string"}})
	}
	if strings.Contains(path, ":other") { // GET /versions/:id/compare/:other
		params = append(params, map[string]any{"name": "other", "in": "path", "required": true,
			"description": "The version compared to (of the same record), or draft: the record's pending draft", "schema": map[string]any{"type": "string"}})
	}
	if spec != nil {
		params = append(params, b.queryParameters(*spec)...)
	}
	if method == fiber.MethodGet && spec != nil && !sp.public {
		params = append(params, map[string]any{"$ref": "#/components/parameters/previewRelease"}) // every read (preview.go)
	}
	if spec != nil && !sp.public {
		params = append(params, map[string]any{"$ref": "#/components/parameters/localeTag"}) // every route (locale.go)
	}
	if (method == fiber.MethodPatch || method == fiber.MethodDelete) && sp.kind != opLinkage {
		params = append(params, map[string]any{"$ref": "#/components/parameters/ifMatch"})
	}
	if sp.idempotent {
		params = append(params, map[string]any{"$ref": "#/components/parameters/idemKey"})
	}
	return params
}

// requestBody is an operation's body: a form, a linkage, or a resource of
// sp.body (a create's without id and with its required attributes).
func (b *specBuilder) requestBody(method string, sp special) map[string]any {
	switch sp.body {
	case "":
		return nil
	case "form":
		return map[string]any{"required": true, "content": map[string]any{"application/x-www-form-urlencoded": map[string]any{
			"schema":  map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			"example": sp.form}}}
	case "linkage":
		content := jsonapiContent(ref("RelationshipData"))
		content[jsonapi.MediaType].(map[string]any)["example"] = map[string]any{"data": map[string]any{"type": "themes", "id": exampleID}}
		return map[string]any{"required": true, "content": content}
	}
	create := method == fiber.MethodPost
	schema := schemaName(sp.body) + "Request"
	if create {
		schema = schemaName(sp.body) + "CreateRequest"
	}
	content := jsonapiContent(ref(schema))
	content[jsonapi.MediaType].(map[string]any)["example"] = b.requestExample(sp.body, schema, create)
	return map[string]any{"required": true, "content": content}
}

var headerSchemas = map[string]any{
	"ETag":     map[string]any{"description": "The resource's version, for If-Match", "schema": map[string]any{"type": "string"}},
	"Location": map[string]any{"description": "Where the resource is (or will be)", "schema": map[string]any{"type": "string", "format": "uri"}},
}

// responses are an operation's success answers, and a default error
// document for the codes no status lists.
func (b *specBuilder) successResponses(sp special) map[string]any {
	errDoc := map[string]any{"description": "A JSON:API error document (see x-error-codes)", "content": jsonapiContent(ref("ErrorDocument"))}
	out := map[string]any{"default": errDoc}
	status := cmp.Or(sp.status, 200)
	code := fmt.Sprint(status)
	name := schemaName(sp.typ)
	switch sp.kind {
	case opOne:
		doc := name + "Document"
		if sp.nullable {
			doc = name + "OrNullDocument"
		}
		r := map[string]any{"description": "The " + sp.typ + " resource", "content": jsonapiContent(ref(doc)),
			"headers": map[string]any{"ETag": headerSchemas["ETag"]}}
		if status != 200 {
			r["headers"] = map[string]any{"Location": headerSchemas["Location"]}
		}
		out[code] = r
	case opOneOrAccepted:
		out["201"] = map[string]any{"description": "Done", "content": jsonapiContent(ref(name + "Document")), "headers": map[string]any{"Location": headerSchemas["Location"]}}
		out["202"] = map[string]any{"description": "Accepted, still running: poll the Location", "content": jsonapiContent(ref(name + "Document")), "headers": map[string]any{"Location": headerSchemas["Location"]}}
	case opMany:
		out[code] = map[string]any{"description": "A collection of " + sp.typ, "content": jsonapiContent(ref(name + "CollectionDocument"))}
	case opRelated:
		out[code] = relatedResponse(sp.related)
	case opNoContent:
		out["204"] = map[string]any{"description": "Done"}
		if _, drafted := jsonapi.Relationships[sp.typ]["draft"]; drafted {
			// A published record is not removed but drafted for deletion.
			out["200"] = map[string]any{"description": "Drafted for deletion: the drafted view, trashed-at set",
				"content": jsonapiContent(ref(name + "Document")), "headers": map[string]any{"ETag": headerSchemas["ETag"]}}
		}
	case opLinkage:
		l := jsonapi.Relationships[sp.typ][sp.rel]
		out[code] = map[string]any{"description": "The " + sp.rel + " linkage", "content": jsonapiContent(map[string]any{
			"type": "object", "required": []any{"data"}, "properties": map[string]any{
				"data": linkageSchema(l), "links": ref("Links"), "meta": ref("Meta"), "jsonapi": ref("JSONAPI"),
				"included": map[string]any{"type": "array", "items": ref("Resource")}}})}
	default:
		plainResponses(sp, out, code)
	}
	return out
}

// relatedResponse is the answer of GET /{type}/{id}/{relationship}.
func relatedResponse(l *jsonapi.Linkage) map[string]any {
	var refs []any
	for _, t := range l.Types {
		refs = append(refs, ref(schemaName(t)))
	}
	one := map[string]any{"oneOf": refs}
	if len(refs) == 1 {
		one = refs[0].(map[string]any)
	}
	data := map[string]any{"type": "array", "items": one}
	if !l.ToMany {
		data = map[string]any{"oneOf": []any{map[string]any{"type": "null"}, one}}
	}
	return map[string]any{"description": "The related resources", "content": jsonapiContent(map[string]any{
		"type": "object", "required": []any{"data"}, "properties": map[string]any{
			"data": data, "links": ref("Links"), "meta": ref("Meta"), "jsonapi": ref("JSONAPI"),
			"included": map[string]any{"type": "array", "items": ref("Resource")}}})}
}

// plainResponses are the answers of the endpoints that do not speak
// JSON:API: plain JSON (its type reflected from sp.schema), HTML, a script.
func plainResponses(sp special, out map[string]any, code string) {
	html := func() map[string]any {
		return map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}, "example": "<!doctype html><html>…</html>"}}
	}
	switch sp.kind {
	case opJSON:
		schema := map[string]any{"type": "object"}
		if sp.schema != nil {
			schema = typeSchema(reflect.TypeOf(sp.schema))
			delete(schema, "additionalProperties")
			if t, ok := schema["type"].([]any); ok {
				schema["type"] = t[0]
			}
		}
		out[code] = map[string]any{"description": "JSON", "content": map[string]any{"application/json": map[string]any{"schema": schema, "example": sp.example}}}
		if sp.unavailable {
			out["503"] = map[string]any{"description": "Not ready: the failing checks", "content": map[string]any{"application/json": map[string]any{"schema": schema,
				"example": map[string]any{"status": "unavailable", "checks": map[string]any{"postgres": map[string]any{"status": "unavailable"}}}}}}
		}
		plain := map[string]any{"type": "object"}
		if sp.oauth {
			plain = ref("OAuthError")
		}
		out["default"] = map[string]any{"description": "An error (OAuth endpoints: RFC 6749 §5.2 JSON; others: JSON:API)",
			"content": map[string]any{"application/json": map[string]any{"schema": plain}, jsonapi.MediaType: map[string]any{"schema": ref("ErrorDocument")}}}
	case opScript:
		out[code] = map[string]any{"description": "JavaScript", "content": map[string]any{"text/javascript": map[string]any{"schema": map[string]any{"type": "string"}, "example": "/* Redoc */"}}}
	case opHTML:
		out[code] = map[string]any{"description": "An HTML page", "content": html()}
		if sp.oauth {
			out["400"] = map[string]any{"description": "A page saying what is wrong with the sign-in request (start again from the application)", "content": html()}
		}
		if code == "302" || sp.body == "form" {
			out["302"] = map[string]any{"description": "A redirect", "headers": map[string]any{"Location": headerSchemas["Location"]}}
			out["200"] = map[string]any{"description": "An HTML page", "content": html()}
		}
		for status, what := range sp.pages {
			out[strconv.Itoa(status)] = map[string]any{"description": what, "content": html()}
		}
		out["default"] = map[string]any{"description": "An HTML page saying what is wrong, or an error document",
			"content": map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}, "example": "<!doctype html><html>…</html>"},
				"application/json": map[string]any{"schema": map[string]any{"type": "object"}}, jsonapi.MediaType: map[string]any{"schema": ref("ErrorDocument")}}}
	}
}

// previewErrorPages are the pages a preview link's render route answers
// with an error status (api/preview_gate.go).
var previewErrorPages = map[int]string{
	404: "No link has that token, or no page of the release is at the path.",
	405: "A preview link only reads (GET, HEAD).",
	410: "The link expired or was revoked, or its release was published or cancelled: the page says which.",
	429: "The link made more than its requests of the minute (Retry-After).",
	500: "The layout's Liquid template has an error: the page names its line.",
}

// setupErrorPages are the pages /password-setup answers with an error
// status (api/password_setup.go).
var setupErrorPages = map[int]string{
	403: "The form was not sent from the page the link opened (its CSRF token or cookie is missing): open the link again.",
	410: "The link is used, expired (72 hours) or unknown.",
	422: "The password is shorter than 8 or longer than 1024 bytes: the form again.",
	503: "The server is busy hashing passwords: try again shortly.",
}

// shapeOf describes a route of the JSON:API shape from its type.
func shapeOf(method, path string) (special, error) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	typ := segs[0]
	fail := fmt.Errorf("%s %s is not of the JSON:API shape /{type}[/:id[/{relationship}|/relationships/{relationship}]]: describe it in specialRoutes (api/openapi.go)", method, path)
	if _, known := jsonapi.Relationships[typ]; !known {
		return special{}, fail
	}
	var sp special
	switch {
	case len(segs) == 1 && method == fiber.MethodGet:
		sp = special{kind: opMany, typ: typ}
	case len(segs) == 1 && method == fiber.MethodPost:
		sp = special{kind: opOne, typ: typ, status: 201, body: typ}
	case len(segs) == 2 && segs[1] == ":id" && method == fiber.MethodGet:
		sp = special{kind: opOne, typ: typ}
	case len(segs) == 2 && segs[1] == ":id" && method == fiber.MethodPatch:
		sp = special{kind: opOne, typ: typ, body: typ}
	case len(segs) == 2 && segs[1] == ":id" && method == fiber.MethodDelete:
		sp = special{kind: opNoContent, typ: typ}
	case len(segs) == 3 && segs[1] == ":id" && method == fiber.MethodGet:
		l, ok := jsonapi.Relationships[typ][segs[2]]
		if !ok {
			return special{}, fmt.Errorf("%s %s: %s has no relationship %q in jsonapi.Relationships", method, path, typ, segs[2])
		}
		sp = special{kind: opRelated, related: &l, rel: segs[2]}
	case len(segs) == 4 && segs[1] == ":id" && segs[2] == "relationships" && method == fiber.MethodGet:
		if _, ok := jsonapi.Relationships[typ][segs[3]]; !ok {
			return special{}, fmt.Errorf("%s %s: %s has no relationship %q in jsonapi.Relationships", method, path, typ, segs[3])
		}
		sp = special{kind: opLinkage, typ: typ, rel: segs[3]}
	default:
		return special{}, fail
	}
	shapeDoc(method, path, typ, &sp)
	return sp, nil
}

// operationID names an operation for generated clients: "GET /pages/:id"
// → "getPagesId", "GET /pages/:id/relationships/layout" →
// "getPagesIdRelationshipsLayout".
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '.' || r == '-' || r == ':' }) {
		b.WriteString(strings.ToUpper(seg[:1]) + seg[1:])
	}
	return b.String()
}
