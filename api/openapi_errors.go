package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/models"
)

// The error responses of the OpenAPI description: every code the API
// answers (errorCodes; TestOpenAPIErrorCodesAreTheSources checks it against
// the codes the handlers, the decoder, the query parser and the error
// table in errors.go write), and which of them each operation may answer:
// those of its shape (errorsOf) and those its doc lists (opDoc.errors).

// errorCode is one code of an error object: its status and when it is sent.
type errorCode struct {
	status int
	when   string
}

// errorCodes are the codes of the JSON:API error objects, by code.
var errorCodes = map[string]errorCode{
	// Every request (negotiate.go, the token check, errors.go).
	"invalid_token":          {401, "no bearer token, or one expired, revoked or of a deleted user"},
	"forbidden":              {403, "the caller's role (or section) lacks the permission the detail names"},
	"not_acceptable":         {406, "Accept names no media type the endpoint answers"},
	"unsupported_media_type": {415, "Content-Type is not the JSON:API media type without parameters, or the body is compressed"},
	"method_not_allowed":     {405, "the path does not take the method"},
	"request_error":          {400, "another request Fiber refuses"},
	"bad_request":            {400, "the request could not be parsed"},
	"internal_error":         {500, "a bug: logged with the request id, nothing else said"},
	"unavailable":            {503, "the server is too busy to answer in time (Retry-After)"},
	"dependency_unavailable": {503, "the database or Temporal did not answer (Retry-After)"},
	// The query string (query.go).
	"invalid_query":      {400, "the query string is malformed"},
	"repeated_parameter": {400, "a query parameter is given twice"},
	"unknown_parameter":  {400, "a query parameter the endpoint does not take"},
	"invalid_character":  {400, "a parameter or attribute holds U+0000 (422 inside attributes), or a parameter is not valid UTF-8"},
	"unknown_include":    {400, "an include path the endpoint does not offer"},
	"unknown_sort":       {400, "a sort key the endpoint does not offer"},
	"invalid_page":       {400, "page[number] or page[size] out of range, page[after] or page[before] not a cursor of the list, combined with page[number] or each other, or given to a search of one type (filter[q])"},
	"invalid_filter":     {400, "a filter value of the wrong form: filter[q] without words, with too many or too long; an operator the filter does not take; a value not of the filter's type (an id, an RFC 3339 time, one of the listed values); a filter of GET /audit-events that is not a user id, a type:id or an RFC 3339 time"},
	"invalid_parameter":  {400, "an endpoint-specific parameter (wait) out of range"},
	// Locales (locale.go, site_locales.go, models/sitestore.go; docs/locales.md).
	"invalid_locale":                 {400, "locale-tag, a site's locale or a locale-fallbacks tag is not a canonical BCP 47 language tag such as de or fr-CA (422 in PATCH /site, at the tag)"},
	"unknown_locale":                 {400, "locale-tag is not one of the site's locales (meta.locales lists them)"},
	"invalid_locales":                {422, "locales is not a list of 1 to 20 tags"},
	"duplicate_locale":               {422, "a tag listed twice in locales"},
	"locale_fallback_cycle":          {422, "locale-fallbacks go round in a circle (the detail shows it), at its first tag"},
	"too_many_fallbacks":             {422, "locale-fallbacks has more than 50 entries"},
	"invalid_require_default_locale": {422, "require-default-locale is not a boolean"},
	"locale_in_use":                  {409, "a locale to remove has content: records' values or drafts (meta: locale, records, drafts); send meta.force true to remove it anyway"},
	"base_locale":                    {409, "the base locale (base-locale) cannot be removed while the site has other locales"},
	// The body (jsonapi.Decode, decode.go, intake).
	"malformed_document":        {400, "the body is not a JSON:API document of one resource"},
	"invalid_member":            {400, "a member of the wrong JSON type"},
	"unknown_member":            {400, "an attribute or relationship the resource does not have"},
	"body_too_large":            {413, "the body is larger than PRESSROOM_BODY_LIMIT"},
	"body_timeout":              {408, "the body did not arrive in time"},
	"type_mismatch":             {409, "data.type is not the endpoint's type"},
	"id_mismatch":               {409, "data.id is not the URL's id"},
	"client_id_unsupported":     {403, "a create sent data.id: ids are made by the server"},
	"read_only":                 {422, "an attribute or relationship the server sets"},
	"missing_relationship":      {422, "a required relationship missing or null"},
	"invalid_relationship_type": {422, "a relationship identifier of the wrong type"},
	"invalid_relationship":      {422, "a relationship that cannot be combined with another"},
	"immutable_relationship":    {422, "a relationship that cannot change after the create"},
	"required":                  {422, "a required member is missing"},
	// The domain error table (errors.go domainErrors) and refining codes.
	"not_found":            {404, "no such record in the caller's site (or a related one, at its identifier)"},
	"conflict":             {409, "a unique value already taken"},
	"taken":                {422, "a unique attribute already taken"},
	"path_taken":           {409, "another page is live or drafted at the path (on a site with several locales, in the locale meta.locale names)"},
	"draft_in_flight":      {409, "the draft is held by a revision being published or scheduled"},
	"drafted_for_deletion": {409, "the record is drafted for deletion"},
	"stale_version":        {412, "If-Match or meta.version is not the current version"},
	"too_large":            {422, "the change touches more records than one request may"},
	"edited_concurrently":  {409, "other writes kept landing first; retry"},
	"invalid":              {422, "a value breaks a rule"},
	// Attributes (the resources' validate methods and handlers).
	"invalid_title":            {422, "title missing, empty or over 200 characters"},
	"invalid_role":             {422, "role is not one of viewer, author, editor, admin"},
	"invalid_email":            {422, "email missing, or not an e-mail address of 3 to 320 characters"},
	"invalid_name":             {422, "name missing (an OAuth client's) or over 200 characters"},
	"invalid_path_prefix":      {422, "path-prefix neither null nor a path that starts and ends with /"},
	"already_member":           {409, "a member of the site already has that email"},
	"last_admin":               {409, "the change would leave the site without an admin"},
	"staged_elsewhere":         {409, "the draft is staged in another release (meta.release)"},
	"release_not_open":         {409, "the release is not open: publishing, published or cancelled"},
	"release_empty":            {422, "the release to publish has no drafts staged"},
	"default_locale_required":  {422, "a record the publish creates has no title in the site's default locale, which the site requires (require-default-locale; meta: type, id, locale)"},
	"approval_required":        {409, "the site requires approvals: publish an approved release (meta: approvals-count, approvals-required)"},
	"own_approval":             {403, "the approver last changed a draft of the release (four eyes)"},
	"too_many_reviews":         {409, "the release has as many reviews as it may (500)"},
	"invalid_verdict":          {422, "verdict is not requested, approved or changes-requested"},
	"invalid_comment":          {422, "a review's comment over 10,000 characters"},
	"invalid_approvals":        {422, "the site's release-approvals is not a whole number from 0 to 5"},
	"invalid_comment_body":     {422, "a comment's body missing, empty or over 10,000 characters"},
	"invalid_resolved":         {422, "resolved is not a boolean"},
	"not_comment_author":       {403, "only a comment's author changes its body or deletes it"},
	"invalid_description":      {422, "description too long (a page's: 1000 characters; a theme's or revision's: 2000)"},
	"invalid_keywords":         {422, "keywords over 1000 characters"},
	"invalid_slug":             {422, "not a slug of lower-case letters, digits and dashes"},
	"invalid_file_name":        {422, "file-name missing or not allowed"},
	"invalid_content":          {422, "a layout's content missing or not allowed"},
	"content_too_large":        {422, "a layout's content over 1 MiB"},
	"invalid_unique":           {422, "unique is not a boolean"},
	"invalid_path":             {422, "a theme asset's path missing or not a canonical relative path"},
	"invalid_body":             {422, "a content block's body is not allowed"},
	"invalid_canonical_url":    {422, "canonical-url is not an http(s) URL"},
	"invalid_data_type":        {422, "a content's data-type is unknown"},
	"invalid_var_name":         {422, "a content's var-name is not an identifier"},
	"invalid_page_type":        {422, "a page's page-type is unknown"},
	"page_type_taken":          {422, "a unique page type already used by another page"},
	"parent_loop":              {422, "the parent would make a page its own ancestor"},
	"theme_required":           {422, "a site with a published theme cannot go without one"},
	"invalid_url":              {422, "a webhook url that is not http(s) or points at a private address"},
	"invalid_events":           {422, "events empty or naming an unknown event"},
	"invalid_active":           {422, "active is not a boolean"},
	"invalid_rotate_secret":    {422, "rotate-secret other than true, or on a create"},
	"too_many_webhooks":        {422, "the site has the most webhooks it may have"},
	"not_failed":               {422, "only a failed delivery can be retried"},
	"invalid_filename":         {422, "filename missing or over 255 characters"},
	"unsupported_content_type": {422, "a content type the asset types table does not accept"},
	"invalid_key":              {422, "key missing"},
	"unknown_key":              {422, "no upload signature with that key"},
	"invalid_file_size":        {422, "file-size missing or below 1"},
	"file_too_large":           {422, "file-size over the upload limit"},
	"invalid_user_agent":       {422, "user-agent over 512 characters"},
	"file_missing":             {422, "no file at the key in storage yet"},
	"content_type_mismatch":    {422, "the stored file's content type is not the signed one"},
	"already_uploaded":         {409, "the key's upload has finished"},
	"too_many_uploads":         {429, "the site has the most uploads waiting it may have (Retry-After)"},
	// Revisions (revisions.go, revisions_schedule.go, models/drafts).
	"invalid_comments":        {422, "comments over 10000 characters"},
	"invalid_publish_at":      {422, "publish-at not an RFC 3339 time in the future"},
	"invalid_force":           {422, "force without reverts; PATCH /site: meta.force not a boolean"},
	"too_many":                {422, "more drafts than one revision may list"},
	"invalid_idempotency_key": {400, "Idempotency-Key empty or over 200 characters"},
	"publish_failed":          {422, "publishing failed within the wait; nothing was published"},
	"draft_pending":           {409, "the record has a pending draft (restore with replace-draft=true)"},
	"nothing_to_restore":      {422, "the version keeps no state, or the record already is as it left it"},
	"already_restored":        {409, "another restore brought the record back first (meta.type, meta.id)"},
	"history_incomplete":      {409, "a record deleted with the one restored was purged from the trash: it cannot come back whole"},
	"different_records":       {422, "the compared versions are of different records"},
	"revert_conflict":         {409, "a later revision changed what the rollback would restore (send force)"},
	"history_pruned":          {409, "some of the revision's versions were pruned from the history: it can no longer be rolled back"},
	"revision_not_published":  {409, "only a published revision can be reverted"},
	"revision_not_scheduled":  {409, "only a scheduled revision can be moved or cancelled"},
	// Integration clients (oauth_clients.go, api/oauth/ratelimit.go).
	"invalid_rate_limit": {422, "rate-limit not a whole number from 1 to 1000000"},
	"rate_limited":       {429, "an integration client's token or a preview link past its requests per minute (Retry-After, RateLimit-Policy, RateLimit)"},
	// Preview links (preview_links.go, preview_gate.go).
	"invalid_expires_at": {422, "expires-at not an RFC 3339 time in the future at most 30 days ahead"},
	"preview_link_gone":  {410, "the preview link expired or was revoked, or its release was published or cancelled (an HTML page for a browser)"},
}

// oauthErrorCodes are the `error` values of the OAuth endpoints' RFC 6749
// §5.2 JSON answers (api/oauth/token.go, clientauth.go).
var oauthErrorCodes = map[string]errorCode{
	"invalid_request":         {400, "a parameter is missing, repeated or malformed"},
	"invalid_grant":           {400, "wrong email or password, or a code or refresh token that is spent, expired or not the client's"},
	"unsupported_grant_type":  {400, "a grant_type the endpoint does not take"},
	"invalid_client":          {401, "client authentication failed"},
	"slow_down":               {429, "too many failed sign-ins from the address or for the user (Retry-After)"},
	"server_error":            {500, "the server could not issue a token"},
	"temporarily_unavailable": {503, "the database did not answer (Retry-After)"},
	"unauthorized_client":     {400, "client_credentials from a client that is not an integration client"},
}

// Codes every operation of a shape may answer (errorsOf).
var (
	authedErrors  = []string{"invalid_token", "not_acceptable", "unavailable", "dependency_unavailable", "internal_error"}
	queryErrors   = []string{"invalid_query", "repeated_parameter", "unknown_parameter", "invalid_character"}
	bodyErrors    = []string{"unsupported_media_type", "malformed_document", "invalid_member", "unknown_member", "body_too_large", "body_timeout", "type_mismatch", "read_only"}
	versionErrors = []string{"stale_version", "invalid_member"}
)

// errorsOf are the codes an operation may answer: its shape's, then its
// doc's own, each once.
func errorsOf(method, path string, sp special, spec *QuerySpec, perms permissionTable) []string {
	var codes []string
	add := func(cs ...string) {
		for _, c := range cs {
			if !slices.Contains(codes, c) {
				codes = append(codes, c)
			}
		}
	}
	if !sp.public {
		add(authedErrors...)
		add("rate_limited") // an integration client's token past its rate limit
		if p, ok := perms.of(method, path); ok && p != models.PermRead {
			add("forbidden") // every role may read (but webhooks: PermWebhooks)
		}
	}
	if spec != nil {
		add(queryErrors...)
		if !sp.public {
			add("invalid_locale", "unknown_locale") // locale-tag, on every route (locale.go)
		}
		if len(spec.Includes) > 0 {
			add("unknown_include")
		}
		if len(spec.Sorts) > 0 && spec.Collection {
			add("unknown_sort")
		}
		if spec.Collection {
			add("invalid_page")
		}
	}
	if strings.Contains(path, ":id") {
		add("not_found")
	}
	if sp.body != "" && sp.body != "form" {
		add(bodyErrors...)
		if method == fiber.MethodPost {
			add("client_id_unsupported")
		} else {
			add("id_mismatch")
		}
	}
	if (method == fiber.MethodPatch || method == fiber.MethodDelete) && sp.kind != opLinkage {
		add(versionErrors...)
	}
	add(sp.errors...)
	return codes
}

// sharedStatuses are the statuses almost every operation may answer (a
// token refused, an Accept not met, the server busy or broken): they are
// left to the operation's default response (defaultErrors), so that each
// operation's responses (and a generated client's types) list the statuses
// particular to it; x-error-codes still names every code.
var sharedStatuses = map[int]bool{401: true, 406: true, 500: true, 503: true}

// defaultErrors is the description of an operation's default response.
func defaultErrors(codes []string) string {
	lines := []string{"A JSON:API error document. Besides the statuses listed, the operation may answer:"}
	for _, c := range codes {
		if e, ok := errorCodes[c]; ok && sharedStatuses[e.status] {
			lines = append(lines, fmt.Sprintf("- %d `%s`: %s", e.status, c, e.when))
		}
	}
	if len(lines) == 1 {
		return "A JSON:API error document (see x-error-codes)"
	}
	return strings.Join(lines, "\n")
}

// errorResponses are the responses of codes, one per status (but
// sharedStatuses), each listing its codes and an example error document of
// the first.
func errorResponses(codes []string, oauth bool) map[string]any {
	table, content := errorCodes, func() map[string]any { return jsonapiContent(ref("ErrorDocument")) }
	if oauth {
		table = oauthErrorCodes
		content = func() map[string]any {
			return map[string]any{"application/json": map[string]any{"schema": ref("OAuthError")}}
		}
	}
	byStatus := map[int][]string{}
	for _, c := range codes {
		if status := table[c].status; !sharedStatuses[status] {
			byStatus[status] = append(byStatus[status], c)
		}
	}
	if len(byStatus) == 0 && slices.Contains(codes, "invalid_token") {
		byStatus[401] = []string{"invalid_token"} // an operation's one 4xx answer
	}
	out := map[string]any{}
	for status, cs := range byStatus {
		var lines []string
		for _, c := range cs {
			lines = append(lines, fmt.Sprintf("- `%s`: %s", c, table[c].when))
		}
		body := content()
		mt := body[mediaTypeOf(body)].(map[string]any)
		mt["example"] = errorExample(status, cs[0], table[cs[0]].when, oauth)
		out[fmt.Sprint(status)] = map[string]any{"description": strings.Join(lines, "\n"), "content": body}
	}
	return out
}

func mediaTypeOf(content map[string]any) string {
	for k := range content {
		return k
	}
	return ""
}

func errorExample(status int, code, when string, oauth bool) map[string]any {
	if oauth {
		return map[string]any{"error": code, "error_description": when}
	}
	return map[string]any{"errors": []any{map[string]any{"status": fmt.Sprint(status), "code": code,
		"title": http.StatusText(status), "detail": strings.ToUpper(when[:1]) + when[1:] + "."}}}
}

// sharedResponse is r as a reference to components.responses, where
// operations answering the same codes under status share one entry
// (named by the status and a hash of its content).
func (b *specBuilder) sharedResponse(status string, r map[string]any) map[string]any {
	raw, _ := json.Marshal(r)
	sum := sha256.Sum256(raw)
	name := "Error" + status + "-" + hex.EncodeToString(sum[:4])
	b.responses[name] = r
	return map[string]any{"$ref": "#/components/responses/" + name}
}
