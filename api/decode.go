package api

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/intake"
	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models"
)

// decodeResource reads a request body: one resource of type typ.
func decodeResource[A any](c *fiber.Ctx, typ string) (*jsonapi.RequestResource[A], error) {
	body, err := intake.Body(c) // read and bounded by the route's intake.ReadBody
	if err != nil {
		return nil, err
	}
	var doc jsonapi.RequestDocument[A]
	if err := jsonapi.Decode(body, &doc); err != nil {
		return nil, err
	}
	if err := checkType(doc.Data.Type, typ); err != nil {
		return nil, err
	}
	auditSent(c, doc.Data.Sent, slices.Sorted(maps.Keys(doc.Data.Relationships)))
	return doc.Data, nil
}

// decodeCreate reads the body of a POST: one resource of type typ, without
// an id (ids are made by the server).
func decodeCreate[A any](c *fiber.Ctx, typ string) (*jsonapi.RequestResource[A], error) {
	data, err := decodeResource[A](c, typ)
	if err != nil {
		return nil, err
	}
	if err := checkNoClientID(data.ID); err != nil {
		return nil, err
	}
	return data, nil
}

// patchRequest is the request of a PATCH of the resource the URL names.
type patchRequest[A any] struct {
	id          uuid.UUID // the id in the URL
	bodyVersion *int      // meta.version from the body, nil when absent
	data        *jsonapi.RequestResource[A]
}

// decodePatch reads a PATCH: the id in the URL (what names the resource in
// its 404), then the body: one resource of type typ with that id, and its
// meta.version.
func decodePatch[A any](c *fiber.Ctx, what, typ string) (patchRequest[A], error) {
	var req patchRequest[A]
	var err error
	if req.id, err = idParam(c, what); err != nil {
		return req, err
	}
	if req.data, err = decodeResource[A](c, typ); err != nil {
		return req, err
	}
	if err := checkID(req.data.ID, req.id); err != nil {
		return req, err
	}
	req.bodyVersion, err = metaVersion(req.data.Meta)
	return req, err
}

// attributesOf is a request's attributes that validate themselves into the
// fields F, given which members were sent and whether the request creates.
type attributesOf[F any] interface {
	validate(sent map[string]bool, create bool) (F, error)
}

// relNames are a resource's relationships: those a request may set, and
// those the server sets.
type relNames struct{ writable, readOnly []string }

// write is a decoded, validated POST or PATCH of one resource: its query,
// its body (and for a PATCH the URL's id and meta.version), and the
// validated attributes.
type write[A attributesOf[F], F any] struct {
	q *Query
	patchRequest[A]
	fields F
}

// readCreate reads a POST: the query against spec, the body (decodeCreate),
// its attributes and its relationship names.
func readCreate[A attributesOf[F], F any](c *fiber.Ctx, spec QuerySpec, typ string, rels relNames) (req write[A, F], err error) {
	if req.q, err = parseQuery(c, spec); err != nil {
		return req, err
	}
	if req.data, err = decodeCreate[A](c, typ); err != nil {
		return req, err
	}
	return req, req.validate(true, rels)
}

// readPatch reads a PATCH of the resource the URL names (what names it in a
// 404) as readCreate reads a POST, with decodePatch.
func readPatch[A attributesOf[F], F any](c *fiber.Ctx, spec QuerySpec, what, typ string, rels relNames) (req write[A, F], err error) {
	if req.q, err = parseQuery(c, spec); err != nil {
		return req, err
	}
	if req.patchRequest, err = decodePatch[A](c, what, typ); err != nil {
		return req, err
	}
	return req, req.validate(false, rels)
}

func (req *write[A, F]) validate(create bool, rels relNames) (err error) {
	if req.fields, err = req.data.Attributes.validate(req.data.Sent, create); err != nil {
		return err
	}
	return checkRelationshipNames(req.data.Relationships, rels.writable, rels.readOnly)
}

// checkType answers 409 when the body's type is not the endpoint's.
func checkType(got, want string) error {
	if got != want {
		return jsonapi.Conflict("type_mismatch", fmt.Sprintf("data.type must be %q.", want)).AtPointer("/data/type")
	}
	return nil
}

// checkNoClientID refuses a client-generated id on a create (ids are made by the server).
func checkNoClientID(id string) error {
	if id != "" {
		return jsonapi.NewError(fiber.StatusForbidden, "client_id_unsupported", "Ids are made by the server.").AtPointer("/data/id")
	}
	return nil
}

// checkID answers 400 when a PATCH body has no id and 409 when it is not the URL's.
func checkID(got string, want uuid.UUID) error {
	if got == "" {
		return jsonapi.BadRequest("malformed_document", "data.id is required in an update.").AtPointer("/data/id")
	}
	if got != want.String() {
		return jsonapi.Conflict("id_mismatch", "data.id does not match the id in the URL.").AtPointer("/data/id")
	}
	return nil
}

// checkReadOnly answers 422 for the first read-only attribute that was
// sent: one of names, or a timestamp (readOnlyTimestamps), which every
// resource's server sets.
func checkReadOnly(sent map[string]bool, names ...string) error {
	for _, name := range append(names, "created-at", "updated-at") {
		if sent[name] {
			return jsonapi.Unprocessable("read_only", name+" is set by the server.").AtPointer("/data/attributes/" + name)
		}
	}
	return nil
}

// checkRelationshipNames answers 422 for a read-only relationship and 400
// for one the resource does not have.
func checkRelationshipNames(rels map[string]jsonapi.RequestRelationship, writable, readOnly []string) error {
	names := make([]string, 0, len(rels))
	for name := range rels {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch {
		case contains(writable, name):
		case contains(readOnly, name):
			return jsonapi.Unprocessable("read_only", "The "+name+" relationship is set by the server.").AtPointer("/data/relationships/" + name)
		default:
			return jsonapi.BadRequest("unknown_member", fmt.Sprintf("The relationship %q is not recognised here.", name)).AtPointer("/data/relationships/" + name)
		}
	}
	return nil
}

// toOne is a to-one relationship as a request sent it.
type toOne struct {
	sent, null bool
	id         uuid.UUID
}

// readToOne reads the to-one relationship name, whose members must be of
// type typ. An id that is not a UUID cannot name a record: it is answered
// like any unknown id, with a 404 at the identifier's id.
func readToOne(rels map[string]jsonapi.RequestRelationship, name, typ, what string) (toOne, error) {
	r, ok := rels[name]
	if !ok {
		return toOne{}, nil
	}
	ptr := "/data/relationships/" + name + "/data"
	ident, err := r.ToOne()
	if err != nil {
		return toOne{}, jsonapi.BadRequest("invalid_member", fmt.Sprintf(`relationships.%s.data must be null or {"type":%q,"id":"..."}.`, name, typ)).AtPointer(ptr)
	}
	if ident == nil {
		return toOne{sent: true, null: true}, nil
	}
	if ident.Type != typ {
		return toOne{}, wrongRelationshipType(name, typ)
	}
	id, err := uuid.Parse(ident.ID)
	if err != nil {
		return toOne{}, models.RefNotFound(name, what)
	}
	return toOne{sent: true, id: id}, nil
}

// wrongRelationshipType is the answer for a to-one relationship whose
// identifier is not of type typ, for every resource: 422
// invalid_relationship_type at the identifier's type.
func wrongRelationshipType(name, typ string) *jsonapi.Error {
	return jsonapi.Unprocessable("invalid_relationship_type", fmt.Sprintf("relationships.%s.data.type must be %q.", name, typ)).
		AtPointer("/data/relationships/" + name + "/data/type")
}

// requiredToOne answers 422 when a required relationship is missing or null.
func requiredToOne(rel toOne, name, what string) error {
	if !rel.sent {
		return missingRelationship(name, what)
	}
	if rel.null {
		return nullRelationship(name)
	}
	return nil
}

// missingRelationship is the answer, for every resource, to a required
// relationship a create did not send: 422 missing_relationship.
func missingRelationship(name, what string) *jsonapi.Error {
	return jsonapi.Unprocessable("missing_relationship", "The "+name+" relationship is required: the "+what+".").AtPointer("/data/relationships/" + name)
}

// nullRelationship is the answer to null for a required relationship.
func nullRelationship(name string) *jsonapi.Error {
	return jsonapi.Unprocessable("missing_relationship", "The "+name+" relationship cannot be null.").AtPointer("/data/relationships/" + name + "/data")
}

// readRequiredToOne reads a required to-one relationship (readToOne, then
// requiredToOne with role, what the record is to the resource) and answers
// the id it names.
func readRequiredToOne(rels map[string]jsonapi.RequestRelationship, name, typ, what, role string) (uuid.UUID, error) {
	rel, err := readToOne(rels, name, typ, what)
	if err != nil {
		return uuid.Nil, err
	}
	if err := requiredToOne(rel, name, role); err != nil {
		return uuid.Nil, err
	}
	return rel.id, nil
}

// serveOne answers a GET of one row: it reads the query against spec, then
// the row the URL names (load), and answers with respond.
func serveOne[M any](c *fiber.Ctx, spec QuerySpec, load func(*fiber.Ctx) (*M, error), respond func(*Query, *M) error) error {
	q, err := parseQuery(c, spec)
	if err != nil {
		return err
	}
	m, err := load(c)
	if err != nil {
		return err
	}
	return respond(q, m)
}
