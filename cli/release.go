package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Releases (docs/releases.md): `pressroom release create TITLE`,
// `pressroom release stage RELEASE DRAFT...` (--unstage takes them out)
// and `pressroom release publish RELEASE`, clients of /releases and
// POST /revisions like any other.

// ReleaseOptions say what Release does.
type ReleaseOptions struct {
	// Command is create, stage or publish; Args its arguments.
	Command string
	Args    []string
	// Unstage: stage takes the drafts out instead.
	Unstage bool
	// Comment is the publishing revision's comments; Wait bounds how long
	// publish follows a revision still publishing.
	Comment string
	Wait    time.Duration
}

// Release runs one release command; create prints the new release's id.
func Release(ctx context.Context, o Options, ro ReleaseOptions) error {
	c, err := connect(ctx, o)
	if err != nil {
		return err
	}
	switch ro.Command {
	case "create":
		if len(ro.Args) != 1 {
			return errors.New("release create: give the title")
		}
		return c.createRelease(ctx, o, ro.Args[0])
	case "stage":
		if len(ro.Args) < 2 {
			return errors.New("release stage: give the release and at least one draft")
		}
		return c.stageDrafts(ctx, o, ro)
	case "publish":
		if len(ro.Args) != 1 {
			return errors.New("release publish: give the release")
		}
		if ro.Wait <= 0 {
			ro.Wait = time.Minute
		}
		fmt.Fprintf(o.Stderr, "publishing release %s…\n", ro.Args[0])
		body := map[string]any{"data": map[string]any{"type": "revisions", "attributes": map[string]any{"comments": ro.Comment},
			"relationships": map[string]any{"release": map[string]any{"data": map[string]any{"type": "releases", "id": ro.Args[0]}}}}}
		_, err := c.postRevision(ctx, o, PublishOptions{Comment: ro.Comment, Wait: ro.Wait}, body)
		return err
	}
	return fmt.Errorf("release: unknown command %q (create, stage, publish)", ro.Command)
}

func (c *session) createRelease(ctx context.Context, o Options, title string) error {
	r, err := c.do(ctx, http.MethodPost, "/releases", map[string]any{"data": map[string]any{"type": "releases",
		"attributes": map[string]any{"title": title}}})
	if err != nil {
		return err
	}
	if r.Status != http.StatusCreated {
		return statusErr(r, http.MethodPost, "/releases")
	}
	rel, err := r.Resource()
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Stdout, rel.ID)
	return nil
}

func (c *session) stageDrafts(ctx context.Context, o Options, ro ReleaseOptions) error {
	data := make([]map[string]any, len(ro.Args)-1)
	for i, id := range ro.Args[1:] {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	method, verb := http.MethodPost, "staged"
	if ro.Unstage {
		method, verb = http.MethodDelete, "unstaged"
	}
	path := "/releases/" + url.PathEscape(ro.Args[0]) + "/relationships/drafts"
	r, err := c.do(ctx, method, path, map[string]any{"data": data})
	if err != nil {
		return err
	}
	if r.Status != http.StatusNoContent {
		return statusErr(r, method, path)
	}
	fmt.Fprintf(o.Stdout, "%s %d %s\n", verb, len(data), plural(len(data), "draft", "drafts"))
	return nil
}
