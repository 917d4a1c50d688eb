package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/google/uuid"
)

// A page's history and restoring a version (docs/history.md): pressroom
// history PAGE-PATH and pressroom restore VERSION.

// HistoryOptions say whose history to list and how much of it.
type HistoryOptions struct {
	// Path is the page's path (/blog/post), live or in the trash.
	Path string
	// Limit is how many versions to list, newest first (1 to 100).
	Limit int
}

// History prints the versions of the page at Path, newest first: version
// id, time, event, what changed, and the title after it. A page in the
// trash is found there (its deletion is the newest version).
func History(ctx context.Context, o Options, ho HistoryOptions) error {
	if ho.Limit < 1 || ho.Limit > 100 {
		return fmt.Errorf("history: -n must be from 1 to 100")
	}
	c, err := connect(ctx, o)
	if err != nil {
		return err
	}
	id, err := c.pageAt(ctx, ho.Path)
	if err != nil {
		return err
	}
	path := fmt.Sprintf("/pages/%s/versions?page[size]=%d", id, ho.Limit)
	r, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if r.Status != http.StatusOK {
		return statusErr(r, http.MethodGet, path)
	}
	var vs []resource
	if err := json.Unmarshal(r.Doc.Data, &vs); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	w := tabwriter.NewWriter(o.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "VERSION\tCREATED\tEVENT\tCHANGED\tTITLE")
	for _, v := range vs {
		changes, _ := v.Attributes["object-changes"].(map[string]any)
		names := make([]string, 0, len(changes))
		for name := range changes {
			names = append(names, name)
		}
		slices.Sort(names)
		title := "-"
		if st, ok := v.Attributes["state"].(map[string]any); ok {
			if a, ok := st["attributes"].(map[string]any); ok {
				title = fmt.Sprint(a["title"])
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", v.ID, v.Attributes["created-at"], v.Attributes["event"], strings.Join(names, ","), title)
	}
	if r.Doc.Links.Next != nil {
		fmt.Fprintf(w, "(older versions follow: -n up to 100, or GET %s)\n", *r.Doc.Links.Next)
	}
	return w.Flush()
}

// pageAt is the id of the live page at path, or else of the page of the
// trash (its first page of 100) that was there.
func (c *session) pageAt(ctx context.Context, path string) (string, error) {
	for _, q := range []string{"/pages?filter[path]=" + url.QueryEscape(path), "/pages?filter[trashed]=true&page[size]=100"} {
		r, err := c.do(ctx, http.MethodGet, q, nil)
		if err != nil {
			return "", err
		}
		if r.Status != http.StatusOK {
			return "", statusErr(r, http.MethodGet, q)
		}
		var ps []resource
		if err := json.Unmarshal(r.Doc.Data, &ps); err != nil {
			return "", fmt.Errorf("GET %s: %w", q, err)
		}
		for _, p := range ps {
			if p.Attributes["path"] == path {
				return p.ID, nil
			}
		}
	}
	return "", fmt.Errorf("no page of the site is, or was lately, at %s", path)
}

// RestoreOptions name the version to restore.
type RestoreOptions struct {
	Version string
	// ReplaceDraft reverts a pending draft of the record first.
	ReplaceDraft bool
}

// Restore drafts the record of a version back to that version's state
// (POST /versions/:id/restore) and prints the drafts made: nothing is live
// until they are published (pressroom publish --draft ID ...).
func Restore(ctx context.Context, o Options, ro RestoreOptions) error {
	if _, err := uuid.Parse(ro.Version); err != nil {
		return fmt.Errorf("restore: %q is not a version id", ro.Version)
	}
	c, err := connect(ctx, o)
	if err != nil {
		return err
	}
	path := "/versions/" + ro.Version + "/restore"
	if ro.ReplaceDraft {
		path += "?replace-draft=true"
	}
	r, err := c.do(ctx, http.MethodPost, path, nil)
	if err != nil {
		return err
	}
	if r.Status != http.StatusCreated {
		return statusErr(r, http.MethodPost, path)
	}
	var first resource
	var rest []resource
	if err := json.Unmarshal(r.Doc.Data, &first); err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if len(r.Doc.Included) > 0 {
		if err := json.Unmarshal(r.Doc.Included, &rest); err != nil {
			return fmt.Errorf("POST %s: %w", path, err)
		}
	}
	args := []string{}
	for _, d := range append([]resource{first}, rest...) {
		fmt.Fprintf(o.Stdout, "drafted %s %s\n", d.Attributes["event"], d.ID)
		args = append(args, "--draft "+d.ID)
	}
	fmt.Fprintf(o.Stdout, "publish with: pressroom publish %s\n", strings.Join(args, " "))
	return nil
}
