package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
)

// PublishOptions say what Publish publishes.
type PublishOptions struct {
	// All publishes every pending draft, everyone's; Mine the caller's;
	// otherwise Drafts names them. Without any, Publish lists the drafts.
	All, Mine bool
	Drafts    []string
	// Yes publishes without asking: --all asks on a terminal (and refuses
	// elsewhere), as does --mine when the caller's drafts need other
	// people's drafts published with them.
	Yes bool
	// Comment is the revision's comments.
	Comment string
	// Wait bounds how long to follow a revision the API answered 202 for.
	Wait time.Duration
}

// Draft is a pending draft as listed.
type Draft struct {
	ID, Event, ItemType, ItemID string
	// UserID and Author (e-mail) name who last changed it; empty when
	// the user is gone.
	UserID, Author string
	Updated        time.Time
	// Summary is one line: "update page /about: title, slug".
	Summary string
}

// PublishResult is the revision's outcome.
type PublishResult struct {
	RevisionID    string
	Status        string // published, failed, publishing
	VersionsCount int
	ErrorMessage  string
}

// ErrPublishFailed is returned when the revision failed.
var ErrPublishFailed = errors.New("publish failed")

// ErrNotConfirmed is returned when publish needs a confirmation it could
// not ask for (no terminal) and --yes was not given.
var ErrNotConfirmed = errors.New("not confirmed")

// maxListedDrafts is what one revision may list (the API's limit).
const maxListedDrafts = 5000

// Publish lists the pending drafts (GET /drafts, newest first, with who
// changed them and what) and, with All, Mine or Drafts, publishes them in
// one revision (POST /revisions) and shows the outcome: published, failed
// with the server's message, or still publishing after Wait (the revision
// then goes on publishing on the server).
func Publish(ctx context.Context, o Options, po PublishOptions) (*PublishResult, error) {
	if n := countTrue(po.All, po.Mine, len(po.Drafts) > 0); n > 1 {
		return nil, errors.New("publish: give one of --all, --mine or --draft")
	}
	if po.Wait <= 0 {
		po.Wait = time.Minute
	}
	c, err := connect(ctx, o)
	if err != nil {
		return nil, err
	}
	var me string
	if po.Mine {
		u, err := c.get(ctx, "/users/me")
		if err != nil {
			return nil, err
		}
		me = u.ID
	}
	drafts, err := c.listDrafts(ctx, me)
	if err != nil {
		return nil, err
	}
	ids := po.Drafts
	switch {
	case !po.All && !po.Mine && len(po.Drafts) == 0:
		if len(drafts) == 0 {
			fmt.Fprintln(o.Stderr, "no pending drafts")
			return nil, nil
		}
		printDrafts(o.Stdout, drafts)
		fmt.Fprintf(o.Stderr, "%d pending %s, newest first; publish yours with `pressroom publish --mine -m COMMENT`, "+
			"some with `--draft ID`, or everyone's with `--all`\n", len(drafts), plural(len(drafts), "draft", "drafts"))
		return nil, nil
	case po.All || po.Mine:
		if len(drafts) == 0 {
			fmt.Fprintln(o.Stderr, "no pending drafts: nothing to publish")
			return nil, nil
		}
		ids = make([]string, len(drafts))
		for i, d := range drafts {
			ids[i] = d.ID
		}
	}
	if len(ids) > maxListedDrafts {
		return nil, fmt.Errorf("publish: %d drafts; a revision lists at most %d: publish them with --draft in parts", len(ids), maxListedDrafts)
	}
	var ok bool
	switch {
	case po.All:
		ok, err = confirmAll(o, po, drafts)
	case po.Mine:
		ok, err = c.confirmPulledIn(ctx, o, po, me, drafts)
	default:
		ok = true
	}
	if !ok || err != nil {
		return nil, err
	}
	return c.publishRevision(ctx, o, po, ids)
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// printDrafts writes the drafts as a table.
func printDrafts(w io.Writer, drafts []Draft) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DRAFT\tUPDATED\tAUTHOR\tCHANGE")
	for _, d := range drafts {
		author := d.Author
		if author == "" {
			author = "(unknown)"
		}
		updated := "-"
		if !d.Updated.IsZero() {
			updated = d.Updated.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.ID, updated, author, d.Summary)
	}
	tw.Flush()
}

// confirm asks question on the terminal, or, without one, refuses with
// refusal (an ErrNotConfirmed). A "no" is not an error: nothing happens.
func confirm(o Options, question, refusal string) (bool, error) {
	if !o.Terminal {
		return false, fmt.Errorf("%w: %s", ErrNotConfirmed, refusal)
	}
	fmt.Fprintf(o.Stderr, "%s [y/N] ", question)
	answer, err := readLine(o.Stdin)
	if err != nil {
		return false, fmt.Errorf("read the answer: %w", err)
	}
	if a := strings.ToLower(answer); a == "y" || a == "yes" {
		return true, nil
	}
	fmt.Fprintln(o.Stderr, "nothing published")
	return false, nil
}

// confirmAll asks before --all publishes every editor's drafts.
func confirmAll(o Options, po PublishOptions, drafts []Draft) (bool, error) {
	if po.Yes {
		return true, nil
	}
	people := map[string]bool{}
	for _, d := range drafts {
		people[d.UserID] = true
	}
	n, k := len(drafts), len(people)
	what := fmt.Sprintf("%d %s by %d %s", n, plural(n, "draft", "drafts"), k, plural(k, "person", "people"))
	if o.Terminal {
		printDrafts(o.Stdout, drafts)
	}
	return confirm(o, "Publish "+what+"?", fmt.Sprintf("publish --all would publish %s, and there is no terminal to ask: "+
		"add --yes to publish them all, or publish only yours with --mine", what))
}

// revisionBody is the body of POST /revisions (and, with typ
// publish-plans, of its plan) listing ids.
func revisionBody(typ, comment string, ids []string) map[string]any {
	members := make([]map[string]any, len(ids))
	for i, id := range ids {
		members[i] = map[string]any{"type": "drafts", "id": id}
	}
	return map[string]any{"data": map[string]any{"type": typ,
		"attributes":    map[string]any{"comments": comment},
		"relationships": map[string]any{"drafts": map[string]any{"data": members}}}}
}

// publishRevision publishes ids in one revision and follows it.
func (c *session) publishRevision(ctx context.Context, o Options, po PublishOptions, ids []string) (*PublishResult, error) {
	fmt.Fprintf(o.Stderr, "publishing %d %s…\n", len(ids), plural(len(ids), "draft", "drafts"))
	return c.postRevision(ctx, o, po, revisionBody("revisions", po.Comment, ids))
}

// postRevision posts a revision's body (listed drafts, or a release) and
// follows it.
func (c *session) postRevision(ctx context.Context, o Options, po PublishOptions, body map[string]any) (*PublishResult, error) {
	// The key makes a repeated POST (none today; a retry later) answer with
	// the same revision instead of publishing twice.
	r, err := c.do(ctx, http.MethodPost, "/revisions", body, "Idempotency-Key", "cli-"+randomString())
	if err != nil {
		return nil, err
	}
	var res *PublishResult
	switch r.Status {
	case http.StatusCreated, http.StatusAccepted:
		rev, err := r.Resource()
		if err != nil {
			return nil, err
		}
		res = revisionResult(rev)
	case http.StatusUnprocessableEntity:
		if len(r.Doc.Errors) > 0 && r.Doc.Errors[0].Code == "publish_failed" {
			res = &PublishResult{Status: "failed", ErrorMessage: r.Doc.Errors[0].Detail}
			break
		}
		return nil, statusErr(r, "POST", "/revisions")
	default:
		return nil, statusErr(r, "POST", "/revisions")
	}
	deadline := time.Now().Add(po.Wait)
	for res.Status == "publishing" && time.Now().Before(deadline) {
		fmt.Fprintf(o.Stderr, "revision %s still publishing…\n", res.RevisionID)
		if err := sleep(ctx, time.Second); err != nil {
			return res, err
		}
		p := "/revisions/" + res.RevisionID
		g, err := c.do(ctx, http.MethodGet, p, nil)
		if err != nil {
			return res, err
		}
		if g.Status != http.StatusOK {
			return res, statusErr(g, "GET", p)
		}
		rev, err := g.Resource()
		if err != nil {
			return res, err
		}
		res = revisionResult(rev)
	}
	switch res.Status {
	case "published":
		fmt.Fprintf(o.Stdout, "published: revision %s, %d versions\n", res.RevisionID, res.VersionsCount)
	case "publishing":
		fmt.Fprintf(o.Stdout, "still publishing: revision %s (see GET /revisions/%s)\n", res.RevisionID, res.RevisionID)
	default:
		if res.RevisionID != "" {
			fmt.Fprintf(o.Stdout, "failed: revision %s: %s\n", res.RevisionID, res.ErrorMessage)
		} else { // 422 publish_failed carries the reason, not the revision
			fmt.Fprintf(o.Stdout, "failed: %s\n", res.ErrorMessage)
		}
		return res, fmt.Errorf("%w: %s", ErrPublishFailed, res.ErrorMessage)
	}
	return res, nil
}

// confirmPulledIn asks before --mine publishes other people's drafts:
// publishing a draft publishes the create drafts of the records it points
// to (docs/drafts.md, Dependencies), which may be someone else's. The
// publish plan of the same body (POST /publish-plans, which changes
// nothing) lists every draft the revision would publish.
func (c *session) confirmPulledIn(ctx context.Context, o Options, po PublishOptions, me string, mine []Draft) (bool, error) {
	fmt.Fprintf(o.Stderr, "your %d pending %s:\n", len(mine), plural(len(mine), "draft", "drafts"))
	printDrafts(o.Stderr, mine)
	if po.Yes {
		return true, nil
	}
	ids := make([]string, len(mine))
	for i, d := range mine {
		ids[i] = d.ID
	}
	const path = "/publish-plans?include=drafts"
	r, err := c.do(ctx, http.MethodPost, path, revisionBody("publish-plans", po.Comment, ids))
	if err != nil {
		return false, err
	}
	if r.Status != http.StatusOK {
		return false, statusErr(r, http.MethodPost, "/publish-plans")
	}
	var included []resource
	if err := json.Unmarshal(r.Doc.Included, &included); err != nil && len(r.Doc.Included) > 0 {
		return false, fmt.Errorf("POST /publish-plans: %w", err)
	}
	var others []Draft
	authors := map[string]string{}
	for _, inc := range included {
		if d := draftOf(inc, nil); inc.Type == "drafts" && d.UserID != me {
			others = append(others, d)
			authors[d.UserID] = ""
		}
	}
	if len(others) == 0 {
		return true, nil
	}
	// The plan includes the drafts, not their users: a look-up per person.
	for id := range authors {
		if id == "" { // the user is gone
			continue
		}
		if u, err := c.get(ctx, "/users/"+url.PathEscape(id)); err == nil {
			authors[id], _ = u.Attributes["email"].(string)
		}
	}
	for i := range others {
		others[i].Author = printable(authors[others[i].UserID])
	}
	fmt.Fprintf(o.Stderr, "Your drafts need %d %s by other people published with them:\n", len(others), plural(len(others), "draft", "drafts"))
	printDrafts(o.Stderr, others)
	return confirm(o, "Publish those too?", "your drafts need other people's drafts published with them, "+
		"and there is no terminal to ask: add --yes to publish them all, or wait until their authors publish them")
}

func revisionResult(rev resource) *PublishResult {
	res := &PublishResult{RevisionID: rev.ID}
	res.Status, _ = rev.Attributes["status"].(string)
	if n, ok := rev.Attributes["versions-count"].(float64); ok {
		res.VersionsCount = int(n)
	}
	res.ErrorMessage, _ = rev.Attributes["error-message"].(string)
	return res
}

// listDrafts reads every page of GET /drafts, newest first, with their
// users and records (bounded: a revision cannot list more anyway); only
// the drafts of the user userID when it is not empty.
func (c *session) listDrafts(ctx context.Context, userID string) ([]Draft, error) {
	var out []Draft
	q := url.Values{"sort": {"-updated-at"}, "include": {"user,item"}, "page[size]": {"100"}}
	if userID != "" {
		q.Set("filter[user]", userID)
	}
	next := "/drafts?" + q.Encode()
	for next != "" {
		r, err := c.do(ctx, http.MethodGet, next, nil)
		if err != nil {
			return nil, err
		}
		if r.Status != http.StatusOK {
			return nil, statusErr(r, "GET", "/drafts")
		}
		var page, included []resource
		if err := json.Unmarshal(r.Doc.Data, &page); err != nil {
			return nil, fmt.Errorf("GET /drafts: %w", err)
		}
		if len(r.Doc.Included) > 0 {
			if err := json.Unmarshal(r.Doc.Included, &included); err != nil {
				return nil, fmt.Errorf("GET /drafts: included: %w", err)
			}
		}
		byKey := map[string]resource{}
		for _, inc := range included {
			byKey[inc.Type+"/"+inc.ID] = inc
		}
		for _, d := range page {
			out = append(out, draftOf(d, byKey))
		}
		if len(out) > maxListedDrafts {
			return nil, fmt.Errorf("more than %d pending drafts", maxListedDrafts)
		}
		next = ""
		if r.Doc.Links.Next != nil && len(page) > 0 {
			next = *r.Doc.Links.Next
		}
	}
	return out, nil
}

// toOne reads a to-one relationship's linkage.
func toOne(r resource, name string) (typ, id string) {
	var rel struct {
		Data *struct{ Type, ID string } `json:"data"`
	}
	if raw, ok := r.Relationships[name]; ok && json.Unmarshal(raw, &rel) == nil && rel.Data != nil {
		return rel.Data.Type, rel.Data.ID
	}
	return "", ""
}

// draftOf reads a draft, its author and its record from the included
// resources (keyed type/id; nil when there are none).
func draftOf(r resource, included map[string]resource) Draft {
	d := Draft{ID: r.ID}
	d.Event, _ = r.Attributes["event"].(string)
	d.ItemType, d.ItemID = toOne(r, "item")
	_, d.UserID = toOne(r, "user")
	if s, ok := r.Attributes["updated-at"].(string); ok {
		d.Updated, _ = time.Parse(time.RFC3339Nano, s)
	}
	if u, ok := included["users/"+d.UserID]; ok {
		d.Author, _ = u.Attributes["email"].(string)
	}
	d.Author = printable(d.Author)
	changes, _ := r.Attributes["object-changes"].(map[string]any)
	d.Summary = summarize(d, included[d.ItemType+"/"+d.ItemID], changes)
	return d
}

// kindNames are the record kinds as a sentence names them.
var kindNames = map[string]string{"pages": "page", "contents": "content", "content-blocks": "content block"}

// summarize is a draft in one line: the event, the kind, the record (a
// page's path, a content's title, a block's var-name) and, for an update,
// which attributes it changes: "update page /about: title, slug".
func summarize(d Draft, item resource, changes map[string]any) string {
	kind, ok := kindNames[d.ItemType]
	if !ok {
		kind = strings.TrimSuffix(d.ItemType, "s")
	}
	label := ""
	switch d.ItemType {
	case "pages":
		label, _ = item.Attributes["path"].(string)
	case "contents":
		if t, _ := item.Attributes["title"].(string); t != "" {
			label = strconv.Quote(t)
		}
	case "content-blocks":
		label, _ = item.Attributes["var-name"].(string)
	}
	if label == "" { // the record was not included: what the change names
		for _, k := range []string{"title", "var-name", "slug"} {
			if pair, ok := changes[k].([]any); ok && len(pair) == 2 {
				if s, ok := pair[1].(string); ok && s != "" {
					label = strconv.Quote(s)
					break
				}
				if s, ok := pair[0].(string); ok && s != "" {
					label = strconv.Quote(s)
					break
				}
			}
		}
	}
	if label == "" {
		label = d.ItemID
	}
	line := d.Event + " " + kind + " " + label
	if d.Event == "update" && len(changes) > 0 {
		names := make([]string, 0, len(changes))
		for k := range changes {
			names = append(names, strings.TrimSuffix(k, "-id"))
		}
		slices.Sort(names)
		line += ": " + strings.Join(names, ", ")
	}
	return printable(line)
}

// printable keeps what the API returns from steering the terminal: other
// people's titles could hold escape sequences. Control characters become
// spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
