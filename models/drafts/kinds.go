// Package drafts is Pressroom's draft engine (DESIGN.md §4, the "stash"
// model): live rows stay as they are while a draft holds an item's drafted
// state; publishing applies drafts with their dependencies in one
// transaction; reverting undoes them with theirs.
//
// Rows and drafted states are maps keyed by column (Postgres to_jsonb of the
// row), so one generic engine serves pages, contents and content blocks,
// described by the Kinds table below.
package drafts

import (
	"slices"
	"strings"
)

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
	// Name is the JSON:API attribute, or the relationship for references:
	// the column with dashes for underscores, without "_id" for references.
	Name string
	Type FieldType
	// RefType is the JSON:API type a reference points to.
	RefType string
}

// columns are the fields of the given columns, all of type typ.
func columns(typ FieldType, cols ...string) []Field {
	out := make([]Field, len(cols))
	for i, c := range cols {
		out[i] = Field{Column: c, Name: strings.ReplaceAll(c, "_", "-"), Type: typ}
	}
	return out
}

// ref is the field of the reference column (typ Ref or NullRef) to
// refType, as a list to concatenate like columns.
func ref(typ FieldType, column, refType string) []Field {
	return []Field{{Column: column, Name: strings.ReplaceAll(strings.TrimSuffix(column, "_id"), "_", "-"), Type: typ, RefType: refType}}
}

// IsRef tells whether the field is a relationship.
func (f Field) IsRef() bool { return f.Type == Ref || f.Type == NullRef }

// Draftable tells whether the field references a type that has drafts (a
// drafted create of it must be published first).
func (f Field) Draftable() bool {
	_, ok := kinds[f.RefType]
	return ok
}

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
	Type   string
	Table  string
	Fields []Field
	// Children are the kinds whose rows point at this one. A child's
	// drafted parent key is also the drafts table's generated column
	// drafted_parent (migration 20261124070000): a new child relation
	// must be added to that column's CASE too.
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
		Fields: slices.Concat(
			columns(String, "page_type", "slug", "title"),
			columns(NullString, "description", "keywords"),
			columns(Bool, "search_engine_indexable", "search_engine_followable"),
			columns(NullString, "canonical_url"),
			ref(NullRef, "parent_id", "pages"), ref(NullRef, "layout_id", "layouts")),
		Children: []Child{{Type: "pages", Column: "parent_id"}, {Type: "contents", Column: "page_id"}},
		Derived:  []string{"path"},
	}
	Contents = &Kind{Type: "contents", Table: "contents",
		Fields:   slices.Concat(columns(String, "title"), columns(Int, "position"), ref(Ref, "page_id", "pages")),
		Children: []Child{{Type: "content-blocks", Column: "content_id"}},
	}
	ContentBlocks = &Kind{Type: "content-blocks", Table: "content_blocks",
		Fields: slices.Concat(
			columns(String, "var_name", "data_type", "body"),
			columns(Int, "position"),
			ref(Ref, "content_id", "contents"), ref(NullRef, "asset_id", "assets")),
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
