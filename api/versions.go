package api

import (
	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models/drafts"
)

type versionAttributes struct {
	Event         string         `json:"event" oas:"enum:draft-event"`
	ObjectChanges map[string]any `json:"object-changes"`
	CreatedAt     string         `json:"created-at" oas:"date-time"`
}

func (h revisionsHandler) versionResource(v *drafts.Version) *jsonapi.Resource {
	p := "/versions/" + v.ID.String()
	item, rev := v.ItemID.String(), v.RevisionID.String()
	var user *string
	if v.UserID != nil {
		s := v.UserID.String()
		user = &s
	}
	oc := v.ObjectChanges
	if oc == nil {
		oc = map[string]any{}
	}
	return &jsonapi.Resource{Type: "versions", ID: v.ID.String(), Links: h.links.self(p),
		Attributes: versionAttributes{Event: v.Event, ObjectChanges: oc, CreatedAt: timestamp(v.CreatedAt)},
		Relationships: map[string]*jsonapi.Relationship{
			"item":     h.links.relationship(p, "item", jsonapi.ToOne(v.ItemType, &item)),
			"revision": h.links.relationship(p, "revision", jsonapi.ToOne("revisions", &rev)),
			"user":     h.links.relationship(p, "user", jsonapi.ToOne("users", user)),
		}}
}
