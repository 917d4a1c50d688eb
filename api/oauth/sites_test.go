package oauth_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/models"
)

// A user of several sites names one at the code exchange (site, its
// subdomain-slug): without it invalid_request naming the parameter (the
// code stays unspent), a site not theirs invalid_grant, and with it the
// token names that site (issue 28).
func TestCodeExchangeNamesTheSite(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if _, err := models.AddMembership(context.Background(), s.DB, s.Other.ID, s.Editor.ID, models.RoleViewer, nil); err != nil {
		t.Fatal(err)
	}
	r := s.authorize(t, s.authURL(s.ConfID, s.RedirectURI, url.Values{"state": {"st"}}), "editor@demo.test", password)
	code := s.codeOf(t, r)
	if code == "" {
		t.Fatalf("no code: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	creds := func(site string) url.Values {
		v := url.Values{"client_id": {s.ConfID}, "client_secret": {s.ConfSecret}}
		if site != "" {
			v.Set("site", site)
		}
		return v
	}
	if status, m := s.exchange(t, code, s.RedirectURI, creds("")); status != 400 || m["error"] != "invalid_request" ||
		!strings.Contains(m["error_description"].(string), "site") {
		t.Errorf("exchange without site = %d %v, want 400 invalid_request naming site", status, m)
	}
	if status, m := s.exchange(t, code, s.RedirectURI, creds("nosuch")); status != 400 || m["error"] != "invalid_grant" {
		t.Errorf("exchange for a site not theirs = %d %v, want 400 invalid_grant", status, m)
	}
	status, m := s.exchange(t, code, s.RedirectURI, creds(s.Other.SubdomainSlug))
	if status != 200 {
		t.Fatalf("exchange with site = %d %v", status, m)
	}
	r = s.get(t, "/site", m["access_token"].(string))
	if b := string(body(t, r)); r.StatusCode != 200 || !strings.Contains(b, s.Other.ID.String()) {
		t.Errorf("the token's GET /site = %d %s, want site %s", r.StatusCode, b, s.Other.ID)
	}
}
