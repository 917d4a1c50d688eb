package activities

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/webhooks"
)

// countingReader is an endless answer that counts what was read of it.
type countingReader struct{ n int }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	r.n += len(p)
	return len(p), nil
}

func TestReadSnippetReadsAtMost64KiBAndKeeps1KiB(t *testing.T) {
	r := &countingReader{}
	s := readSnippet(r)
	if r.n > webhooks.MaxResponse || len(s) != webhooks.StoredResponse {
		t.Fatalf("read %d bytes, kept %d", r.n, len(s))
	}
	if got := readSnippet(io.MultiReader(strings.NewReader("ok\x00\xff"))); got != "ok" {
		t.Fatalf("kept %q", got)
	}
}

func TestPayloadIsTheSubjectAsAJSONAPIDocument(t *testing.T) {
	w := &Webhooks{PublicURL: "https://cms.example"}
	rev := uuid.New()
	d := &deliveryRow{WebhookDelivery: models.WebhookDelivery{SiteRow: models.SiteRow{ID: uuid.New()}}, EventType: webhooks.RevisionPublished,
		SubjectType: "revisions", SubjectID: rev, EventAt: time.Date(2026, 11, 24, 1, 2, 3, 4e6, time.UTC),
		Subject: []byte(`{"id":"` + rev.String() + `","site_id":"s","user_id":"u1","status":"published","draft_ids":["d1","d2"],
			"versions_count":2,"error_message":null,"idempotency_key":"secret-ish","locales":["en","de"],"created_at":"2026-11-24T01:02:03.004+00:00"}`)}
	b, err := w.payload(d)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Type, Timestamp string
		Data            struct {
			Data struct {
				Type, ID      string
				Attributes    map[string]any
				Relationships map[string]struct{ Data any }
				Links         struct{ Self string }
			}
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	r := m.Data.Data
	if m.Type != "revision.published" || m.Timestamp != "2026-11-24T01:02:03.004Z" || r.Type != "revisions" || r.ID != rev.String() ||
		r.Links.Self != "https://cms.example/revisions/"+rev.String() {
		t.Fatalf("message %s", b)
	}
	if r.Attributes["status"] != "published" || r.Attributes["versions-count"] != 2.0 || len(r.Attributes) != 6 ||
		r.Attributes["created-at"] != "2026-11-24T01:02:03.004Z" || r.Attributes["comments"] != nil || fmt.Sprint(r.Attributes["locales"]) != "[en de]" {
		t.Errorf("attributes %v (want comments, status, versions-count, error-message, locales, created-at: as GET /revisions/:id)", r.Attributes)
	}
	if _, ok := r.Relationships["user"]; !ok || len(r.Relationships["drafts"].Data.([]any)) != 2 {
		t.Errorf("relationships %v", r.Relationships)
	}
	if strings.Contains(string(b), "secret-ish") || strings.Contains(string(b), `"site_id"`) {
		t.Errorf("internal columns leaked: %s", b)
	}
}

// webhook.deactivated carries the webhook as GET /webhooks/:id shows it:
// the reason, the secret masked, and nothing of its sealed form.
func TestPayloadOfAWebhookDeactivated(t *testing.T) {
	w := &Webhooks{PublicURL: "https://cms.example"}
	hook := uuid.New()
	d := &deliveryRow{WebhookDelivery: models.WebhookDelivery{SiteRow: models.SiteRow{ID: uuid.New()}}, EventType: webhooks.WebhookDeactivated,
		SubjectType: "webhooks", SubjectID: hook, EventAt: time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC),
		Subject: []byte(`{"id":"` + hook.String() + `","site_id":"s","url":"https://receiver.example/hook","events":["draft.reverted"],
			"active":false,"description":null,"secret_last4":"wxyz","version":2,"deactivated_reason":"3 deliveries were pending",
			"deactivated_at":"2026-11-27T14:00:00.5+00:00","created_at":"2026-11-27T13:00:00+00:00","updated_at":"2026-11-27T14:00:00.5+00:00"}`)}
	b, err := w.payload(d)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Type string
		Data struct {
			Data struct {
				Type, ID      string
				Attributes    map[string]any
				Relationships map[string]struct{ Links map[string]string }
				Meta          struct{ Version int }
			}
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	r := m.Data.Data
	a := r.Attributes
	if m.Type != "webhook.deactivated" || r.Type != "webhooks" || r.ID != hook.String() || r.Meta.Version != 2 ||
		a["active"] != false || a["deactivated-reason"] != "3 deliveries were pending" || a["deactivated-at"] != "2026-11-27T14:00:00.500Z" ||
		a["secret"] != "whsec_…wxyz" || a["url"] != "https://receiver.example/hook" || len(a) != 9 {
		t.Fatalf("message %s", b)
	}
	if r.Relationships["deliveries"].Links["related"] != "https://cms.example/webhooks/"+hook.String()+"/deliveries" {
		t.Errorf("relationships %v", r.Relationships)
	}
	if strings.Contains(string(b), "secret_last4") || strings.Contains(string(b), `"site_id"`) {
		t.Errorf("internal columns leaked: %s", b)
	}
}
