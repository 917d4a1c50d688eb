package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
)

// PublishOptions say what Publish publishes.
type PublishOptions struct {
	// All publishes every pending draft; otherwise Drafts names them.
	All    bool
	Drafts []string
	// Comment is the revision's comments.
	Comment string
	// Wait bounds how long to follow a revision the API answered 202 for.
	Wait time.Duration
}

// Draft is a pending draft as listed.
type Draft struct {
	ID, Event, ItemType, ItemID, Label string
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

// maxListedDrafts is what one revision may list (the API's limit).
const maxListedDrafts = 5000

// Publish lists the pending drafts (GET /drafts) and, with All or Drafts,
// publishes them in one revision (POST /revisions) and shows the outcome:
// published, failed with the server's message, or still publishing after
// Wait (the revision then goes on publishing on the server).
func Publish(ctx context.Context, o Options, po PublishOptions) (*PublishResult, error) {
	if po.All && len(po.Drafts) > 0 {
		return nil, errors.New("publish: give --all or --draft, not both")
	}
	if po.Wait <= 0 {
		po.Wait = time.Minute
	}
	c, err := connect(ctx, o)
	if err != nil {
		return nil, err
	}
	drafts, err := c.listDrafts(ctx)
	if err != nil {
		return nil, err
	}
	if !po.All && len(po.Drafts) == 0 {
		if len(drafts) == 0 {
			fmt.Fprintln(o.Stderr, "no pending drafts")
			return nil, nil
		}
		tw := tabwriter.NewWriter(o.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DRAFT\tEVENT\tRECORD\tTITLE")
		for _, d := range drafts {
			fmt.Fprintf(tw, "%s\t%s\t%s/%s\t%s\n", d.ID, d.Event, d.ItemType, d.ItemID, d.Label)
		}
		tw.Flush()
		fmt.Fprintf(o.Stderr, "%d pending drafts; publish with `pressroom publish --all -m COMMENT` or `--draft ID`\n", len(drafts))
		return nil, nil
	}
	ids := po.Drafts
	if po.All {
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
	members := make([]map[string]any, len(ids))
	for i, id := range ids {
		members[i] = map[string]any{"type": "drafts", "id": id}
	}
	body := map[string]any{"data": map[string]any{"type": "revisions",
		"attributes":    map[string]any{"comments": po.Comment},
		"relationships": map[string]any{"drafts": map[string]any{"data": members}}}}
	fmt.Fprintf(o.Stderr, "publishing %d drafts…\n", len(ids))
	// The key makes a repeated POST (none today; a retry later) answer with
	// the same revision instead of publishing twice.
	r, err := c.do(ctx, http.MethodPost, "/revisions", body, "Idempotency-Key", "cli-"+randomString())
	if err != nil {
		return nil, err
	}
	var res *PublishResult
	switch r.status {
	case http.StatusCreated, http.StatusAccepted:
		rev, err := r.resource()
		if err != nil {
			return nil, err
		}
		res = revisionResult(rev)
	case http.StatusUnprocessableEntity:
		if len(r.doc.Errors) > 0 && r.doc.Errors[0].Code == "publish_failed" {
			res = &PublishResult{Status: "failed", ErrorMessage: r.doc.Errors[0].Detail}
			break
		}
		return nil, r.err("POST", "/revisions")
	default:
		return nil, r.err("POST", "/revisions")
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
		if g.status != http.StatusOK {
			return res, g.err("GET", p)
		}
		rev, err := g.resource()
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

func revisionResult(rev resource) *PublishResult {
	res := &PublishResult{RevisionID: rev.ID}
	res.Status, _ = rev.Attributes["status"].(string)
	if n, ok := rev.Attributes["versions-count"].(float64); ok {
		res.VersionsCount = int(n)
	}
	res.ErrorMessage, _ = rev.Attributes["error-message"].(string)
	return res
}

// listDrafts reads every page of GET /drafts (bounded: a revision cannot
// list more anyway).
func (c *client) listDrafts(ctx context.Context) ([]Draft, error) {
	var out []Draft
	next := "/drafts?page[size]=100"
	for next != "" {
		r, err := c.do(ctx, http.MethodGet, next, nil)
		if err != nil {
			return nil, err
		}
		if r.status != http.StatusOK {
			return nil, r.err("GET", next)
		}
		var page []resource
		if err := json.Unmarshal(r.doc.Data, &page); err != nil {
			return nil, fmt.Errorf("GET /drafts: %w", err)
		}
		for _, d := range page {
			out = append(out, draftOf(d))
		}
		if len(out) > maxListedDrafts {
			return nil, fmt.Errorf("more than %d pending drafts", maxListedDrafts)
		}
		next = ""
		if r.doc.Links.Next != nil && len(page) > 0 {
			next = *r.doc.Links.Next
		}
	}
	return out, nil
}

func draftOf(r resource) Draft {
	d := Draft{ID: r.ID}
	d.Event, _ = r.Attributes["event"].(string)
	var item struct {
		Data *struct{ Type, ID string } `json:"data"`
	}
	if raw, ok := r.Relationships["item"]; ok && json.Unmarshal(raw, &item) == nil && item.Data != nil {
		d.ItemType, d.ItemID = item.Data.Type, item.Data.ID
	}
	// object-changes holds [before, after] per attribute; show the title
	// (or a block's var-name) the draft gives the record.
	changes, _ := r.Attributes["object-changes"].(map[string]any)
	for _, k := range []string{"title", "var-name", "slug"} {
		if pair, ok := changes[k].([]any); ok && len(pair) == 2 {
			if s, ok := pair[1].(string); ok && s != "" {
				d.Label = s
				break
			}
			if s, ok := pair[0].(string); ok && s != "" {
				d.Label = s
				break
			}
		}
	}
	d.Label = strings.ReplaceAll(d.Label, "\t", " ")
	return d
}
