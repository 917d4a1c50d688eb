package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/pressroom/pressroom/client"
)

// StatusError is an API answer the command cannot go on from. Error()
// says it in plain words first, then what the API said and the request,
// for a bug report: "a draft you chose is already being published…
// (the API says: …; POST /revisions: 409 draft_in_flight)".
// It is the client's Error (the request, the status, the API's code and
// detail, the request id), told for a person.
type StatusError client.Error

// plainCodes are sentences for the API's error codes a command of the
// CLI meets (api/errors.go and the handlers define the codes). The API's
// own detail follows them, as it names the record.
var plainCodes = map[string]string{
	"draft_in_flight":          "a draft you chose is already being published by another revision: wait until that one has finished, then run `pressroom publish` again",
	"stale_version":            "a draft changed after it was listed: list the drafts again with `pressroom publish` and choose again",
	"drafted_for_deletion":     "the record is drafted for deletion: revert that draft before changing it",
	"edited_concurrently":      "others were changing the same records at the same moment: try again",
	"conflict":                 "that value is already taken on this site",
	"taken":                    "that name or path is already taken on this site",
	"path_taken":               "that path is already taken on this site",
	"too_large":                "the change touches more records than one request may: publish the drafts in parts with --draft",
	"too_many":                 "that is more drafts than one revision may list: publish them in parts with --draft",
	"unsupported_content_type": "Pressroom does not accept this type of file: it accepts the types `GET /asset-types` lists (JPEG, PNG and GIF images by default)",
	"too_many_uploads":         "your site has as many uploads processing as it may: try again in a moment",
	"file_missing":             "the file did not arrive in storage: try the upload again",
	"already_uploaded":         "this upload was already sent and processed: upload the file again to make another asset",
	"body_too_large":           "the request is larger than the API accepts",
	"forbidden":                "your role on this site does not allow that: ask an editor or an admin of the site (docs/auth.md, \"Roles and memberships\")",
}

// plainStatuses are sentences by status, for codes without their own.
var plainStatuses = map[int]string{
	http.StatusUnauthorized:        "the API did not accept your sign-in: sign in again with `pressroom login`, or check PRESSROOM_TOKEN",
	http.StatusForbidden:           "you are not allowed to do that on this site",
	http.StatusNotFound:            "not found on your site",
	http.StatusTooManyRequests:     "the API is busy with too many requests from you: try again in a moment",
	http.StatusServiceUnavailable:  "the API is unavailable for the moment (its database or Temporal is not answering): try again shortly",
	http.StatusBadGateway:          "the API is unavailable for the moment (a proxy in front of it got no answer): try again shortly",
	http.StatusGatewayTimeout:      "the API is unavailable for the moment (a proxy in front of it got no answer in time): try again shortly",
	http.StatusInternalServerError: "the API failed on its side: try again, and if it goes on, report it with the request id shown",
}

func (e *StatusError) plain() string {
	if s, ok := plainCodes[e.Code]; ok {
		return s
	}
	if s, ok := plainStatuses[e.Status]; ok {
		return s
	}
	switch {
	case e.Status >= 500:
		return plainStatuses[http.StatusInternalServerError]
	case e.Detail != "":
		return "the API refused the request"
	}
	return fmt.Sprintf("the API answered %d %s", e.Status, http.StatusText(e.Status))
}

func (e *StatusError) Error() string {
	var b strings.Builder
	b.WriteString(e.plain())
	b.WriteString(" (")
	if e.Detail != "" {
		fmt.Fprintf(&b, "the API says: %s; ", strings.TrimSuffix(e.Detail, "."))
	}
	fmt.Fprintf(&b, "%s %s: %d", e.Method, e.Path, e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.RequestID != "" && e.Status >= 500 {
		b.WriteString("; request id " + e.RequestID)
	}
	b.WriteString(")")
	return b.String()
}

// unreachable explains a request that got no answer from the API at base.
func unreachable(base string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach the API at %s: nothing answers there; is it running? (`make dev` starts one; --api or PRESSROOM_API_URL names another) (%w)", base, err)
	case errors.As(err, &dns):
		return fmt.Errorf("cannot reach the API at %s: the host name %q is not known; check --api or PRESSROOM_API_URL (%w)", base, dns.Name, err)
	}
	return fmt.Errorf("cannot reach the API at %s (%w)", base, err)
}
