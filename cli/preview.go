package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// PreviewOptions say what link `pressroom release preview` makes.
type PreviewOptions struct {
	// Release is the release's id.
	Release string
	// ExpiresIn is how long the link works (0: the server's default, 7
	// days; at most 30 days).
	ExpiresIn time.Duration
}

// ReleasePreview makes a preview link of a release (POST /preview-links,
// docs/releases.md, "Preview links") and prints its url on stdout, and when it
// expires on stderr. The url is shown this once: the server keeps only
// its token's hash.
func ReleasePreview(ctx context.Context, o Options, po PreviewOptions) (string, error) {
	if strings.TrimSpace(po.Release) == "" {
		return "", errors.New("release preview: name the release's id")
	}
	c, err := connect(ctx, o)
	if err != nil {
		return "", err
	}
	data := map[string]any{"type": "preview-links",
		"relationships": map[string]any{"release": map[string]any{"data": map[string]any{"type": "releases", "id": po.Release}}}}
	if po.ExpiresIn > 0 {
		data["attributes"] = map[string]any{"expires-at": time.Now().Add(po.ExpiresIn).UTC().Format(time.RFC3339)}
	}
	r, err := c.do(ctx, http.MethodPost, "/preview-links", map[string]any{"data": data})
	if err != nil {
		return "", err
	}
	if r.Status != http.StatusCreated {
		return "", statusErr(r, http.MethodPost, "/preview-links")
	}
	link, err := r.Resource()
	if err != nil {
		return "", err
	}
	url, _ := link.Attributes["url"].(string)
	if url == "" {
		return "", errors.New("release preview: the answer has no url")
	}
	fmt.Fprintln(o.Stdout, url)
	if exp, ok := link.Attributes["expires-at"].(string); ok {
		fmt.Fprintf(o.Stderr, "preview link %s works until %s (revoke it with DELETE /preview-links/%s)\n", link.ID, exp, link.ID)
	}
	return url, nil
}
