package api

import (
	"errors"
	"slices"
	"testing"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// TestWebhookValidateJudgesFormWithoutResolving: the attributes' own
// validate judges a url by its form only (no DNS lookup: checkHost does
// that once the request is valid), with the same answers as before for
// every other fault, and events without repeats.
func TestWebhookValidateJudgesFormWithoutResolving(t *testing.T) {
	str := func(s string) *string { return &s }
	events := func(e ...string) *[]string { return &e }
	f, err := webhookRequest{URL: str("https://unresolvable.invalid/hook"), Events: events("draft.reverted", "draft.reverted")}.
		validate(map[string]bool{"url": true, "events": true}, true)
	if err != nil || f.url != "https://unresolvable.invalid/hook" || !slices.Equal(f.events, []string{"draft.reverted"}) || !f.active {
		t.Fatalf("validate = %+v, %v", f, err)
	}
	for _, c := range []struct {
		name    string
		r       webhookRequest
		sent    []string
		create  bool
		pointer string
	}{
		{"no url", webhookRequest{Events: events("draft.reverted")}, []string{"events"}, true, "/data/attributes/url"},
		{"ftp", webhookRequest{URL: str("ftp://example.com/")}, []string{"url"}, false, "/data/attributes/url"},
		{"credentials", webhookRequest{URL: str("https://u:p@example.com/")}, []string{"url"}, false, "/data/attributes/url"},
		{"unknown event", webhookRequest{Events: events("draft.reverted", "page.published")}, []string{"events"}, false, "/data/attributes/events/1"},
		{"rotate on create", webhookRequest{URL: str("https://example.com/"), Events: events("draft.reverted")}, []string{"url", "events", "rotate-secret"}, true, "/data/attributes/rotate-secret"},
		{"rotate false", webhookRequest{RotateSecret: new(bool)}, []string{"rotate-secret"}, false, "/data/attributes/rotate-secret"},
		{"secret", webhookRequest{Secret: "whsec_mine"}, []string{"secret"}, false, "/data/attributes/secret"},
	} {
		sent := map[string]bool{}
		for _, s := range c.sent {
			sent[s] = true
		}
		_, err := c.r.validate(sent, c.create)
		var je *jsonapi.Error
		if !errors.As(err, &je) || je.Status != "422" || je.Source == nil || *je.Source.Pointer != c.pointer {
			t.Errorf("%s: validate = %v, want 422 at %s", c.name, err, c.pointer)
		}
	}
}
