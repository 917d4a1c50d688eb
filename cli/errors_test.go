package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/pressroom/pressroom/models"
)

// TestFileTypeRefusalInPlainWords: a file the API would refuse is
// explained by what it looks like and what is accepted, from the API's
// own table (GET /asset-types, here the default one).
func TestFileTypeRefusalInPlainWords(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(models.DefaultAssetTypes())
	if err != nil {
		t.Fatal(err)
	}
	var types assetTypes
	if err := json.Unmarshal(raw, &types); err != nil {
		t.Fatal(err)
	}
	for ct, want := range map[string]string{
		"application/pdf":           "this file looks like a PDF, not an image: Pressroom accepts JPEG, PNG and GIF",
		"text/plain; charset=utf-8": "this file looks like a text file, not an image: Pressroom accepts JPEG, PNG and GIF",
		"image/webp":                "this file is a WebP image: Pressroom accepts JPEG, PNG and GIF",
		"video/mp4":                 "this file looks like a video, not an image: Pressroom accepts JPEG, PNG and GIF",
		"image/jpeg":                "",
		"image/png":                 "",
		"image/gif":                 "",
	} {
		if got := types.refusal(ct); got != want {
			t.Errorf("refusal(%q) = %q, want %q", ct, got, want)
		}
	}
}

func TestAPIErrorsInPlainWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  StatusError
		want string
	}{
		{StatusError{Method: "POST", Path: "/revisions", Status: 409, Code: "draft_in_flight", Detail: "Draft d1 is already being published by revision r0."},
			"a draft you chose is already being published by another revision: wait until that one has finished, then run `pressroom publish` again " +
				"(the API says: Draft d1 is already being published by revision r0; POST /revisions: 409 draft_in_flight)"},
		{StatusError{Method: "GET", Path: "/drafts", Status: 401, Code: "invalid_token", Detail: "The access token is invalid."},
			"the API did not accept your sign-in: sign in again with `pressroom login`, or check PRESSROOM_TOKEN " +
				"(the API says: The access token is invalid; GET /drafts: 401 invalid_token)"},
		{StatusError{Method: "POST", Path: "/revisions", Status: 404, Code: "not_found", Detail: "No draft with that id (reverted or already published?)."},
			"not found on your site (the API says: No draft with that id (reverted or already published?); POST /revisions: 404 not_found)"},
		{StatusError{Method: "GET", Path: "/site", Status: 500, Code: "internal", RequestID: "req-1"},
			"the API failed on its side: try again, and if it goes on, report it with the request id shown (GET /site: 500 internal; request id req-1)"},
		{StatusError{Method: "POST", Path: "/revisions", Status: 403, Code: "forbidden", Detail: "Your role on this site lacks the permission \"publish\"."},
			"your role on this site does not allow that: ask an editor or an admin of the site (docs/auth.md, \"Roles and memberships\") " +
				"(the API says: Your role on this site lacks the permission \"publish\"; POST /revisions: 403 forbidden)"},
		{StatusError{Method: "GET", Path: "/site", Status: 418},
			"the API answered 418 I'm a teapot (GET /site: 418)"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.err, got, c.want)
		}
	}
}

func TestUnreachableAPI(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("connect: %w", syscall.ECONNREFUSED)}
	err := unreachable("http://127.0.0.1:8080", refused)
	if !errors.Is(err, syscall.ECONNREFUSED) || !strings.HasPrefix(err.Error(), "cannot reach the API at http://127.0.0.1:8080: nothing answers there; is it running?") {
		t.Errorf("unreachable = %v", err)
	}
	dns := &net.DNSError{Name: "api.example.invalid", Err: "no such host", IsNotFound: true}
	if err := unreachable("https://api.example.invalid", dns); !strings.Contains(err.Error(), `the host name "api.example.invalid" is not known`) {
		t.Errorf("unreachable = %v", err)
	}
}
