// Package drafts is Pressroom's draft engine (DESIGN.md §4, the "stash"
// model): live rows stay as they are while a draft holds an item's drafted
// state; publishing applies drafts with their dependencies in one
// transaction; reverting undoes them with theirs.
//
// Rows and drafted states are maps keyed by column (Postgres to_jsonb of the
// row), so one generic engine serves pages, contents and content blocks,
// described by the Kinds table below.
package drafts

import "strings"

// FieldType is how a column's value is checked and stored.
type FieldType int

const (
	String FieldType = iota
	NullString
	Bool
	Int
	Ref     // a required reference (uuid)
	NullRef // an optional reference (uuid or null)
)

// Field is one editable column.
type Field struct {
	Column string
	// Name is the JSON:API attribute, or the relationship for references.
	Name string
	Type FieldType
	// RefType is the JSON:API type a reference points to.
	RefType string
	// Draftable says the referenced type has drafts (its create must be
	// published first).
	Draftable bool
}

// IsRef tells whether the field is a relationship.
func (f Field) IsRef() bool { return f.Type == Ref || f.Type == NullRef }

// SQLType is the column's type for jsonb_to_recordset.
func (f Field) SQLType() string {
	switch f.Type {
	case Bool:
		return "boolean"
	case Int:
		return "integer"
	case Ref, NullRef:
		return "uuid"
	default:
		return "text"
	}
}

// Child is a kind whose rows point at this kind through Column.
type Child struct {
	Type   string
	Column string
}

// Kind describes a draftable resource type.
type Kind struct {
	Type     string
	Table    string
	Fields   []Field
	Children []Child
	// Derived columns are computed, not edited (pages' path).
	Derived []string
}

// Singular names one item of the kind in messages: "page", "content-block".
func (k *Kind) Singular() string { return strings.TrimSuffix(k.Type, "s") }

// Field returns the field named name (attribute or relationship).
func (k *Kind) Field(name string) (Field, bool) {
	for _, f := range k.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Columns are the editable columns.
func (k *Kind) Columns() []string {
	out := make([]string, len(k.Fields))
	for i, f := range k.Fields {
		out[i] = f.Column
	}
	return out
}

// The three draftable kinds.
var (
	Pages = &Kind{Type: "pages", Table: "pages",
		Fields: []Field{
			{Column: "page_type", Name: "page-type", Type: String},
			{Column: "slug", Name: "slug", Type: String},
			{Column: "title", Name: "title", Type: String},
			{Column: "description", Name: "description", Type: NullString},
			{Column: "keywords", Name: "keywords", Type: NullString},
			{Column: "search_engine_indexable", Name: "search-engine-indexable", Type: Bool},
			{Column: "search_engine_followable", Name: "search-engine-followable", Type: Bool},
			{Column: "canonical_url", Name: "canonical-url", Type: NullString},
			{Column: "parent_id", Name: "parent", Type: NullRef, RefType: "pages", Draftable: true},
			{Column: "layout_id", Name: "layout", Type: NullRef, RefType: "layouts"},
		},
		Children: []Child{{Type: "pages", Column: "parent_id"}, {Type: "contents", Column: "page_id"}},
		Derived:  []string{"path"},
	}
	Contents = &Kind{Type: "contents", Table: "contents",
		Fields: []Field{
			{Column: "title", Name: "title", Type: String},
			{Column: "position", Name: "position", Type: Int},
			{Column: "page_id", Name: "page", Type: Ref, RefType: "pages", Draftable: true},
		},
		Children: []Child{{Type: "content-blocks", Column: "content_id"}},
	}
	ContentBlocks = &Kind{Type: "content-blocks", Table: "content_blocks",
		Fields: []Field{
			{Column: "var_name", Name: "var-name", Type: String},
			{Column: "data_type", Name: "data-type", Type: String},
			{Column: "body", Name: "body", Type: String},
			{Column: "position", Name: "position", Type: Int},
			{Column: "content_id", Name: "content", Type: Ref, RefType: "contents", Draftable: true},
			{Column: "asset_id", Name: "asset", Type: NullRef, RefType: "assets"},
		},
	}
	kinds = map[string]*Kind{Pages.Type: Pages, Contents.Type: Contents, ContentBlocks.Type: ContentBlocks}
)

// KindOf returns the kind of a JSON:API type.
func KindOf(typ string) (*Kind, bool) {
	k, ok := kinds[typ]
	return k, ok
}

// depthOrder publishes parents before children: pages, then contents, then blocks.
var depthOrder = map[string]int{"pages": 0, "contents": 1, "content-blocks": 2}
