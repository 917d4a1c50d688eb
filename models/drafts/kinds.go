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
	"regexp"
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

// Field is one editable column, with the rules its values obey, declared
// once: CheckAttributes judges every drafted state by them, and api
// describes them in /openapi.json (type, enum, lengths, pattern, format,
// default, required on create).
type Field struct {
	Column string
	// Name is the JSON:API attribute, or the relationship for references:
	// the column with dashes for underscores, without "_id" for references.
	Name string
	Type FieldType
	// RefType is the JSON:API type a reference points to.
	RefType string
	// Description says what the value is, in a sentence.
	Description string
	// Default is the value of a create that does not send the field (nil:
	// null, or for a String nothing: RequiredOnCreate).
	Default any
	// RequiredOnCreate: a create must send the field (for a String, a
	// create without it is refused as an invalid value).
	RequiredOnCreate bool
	// Enum lists the values a String may take.
	Enum []string
	// MinLen and MaxLen bound a String's length in characters once
	// surrounding space is trimmed (0: no bound).
	MinLen, MaxLen int
	// MaxBytes bounds a String's length in bytes (0: no bound).
	MaxBytes int
	// Pattern is what a String must match, whole.
	Pattern *regexp.Regexp
	// Example is a valid value, shown in /openapi.json's examples (a
	// pattern's example cannot be made up from the pattern).
	Example string
	// Format is a JSON Schema format a String must have: "uri" is an
	// absolute http or https URL.
	Format string
	// Holds is a rule over the whole drafted state beyond the declared
	// ones (a page's slug may be empty on the home page alone); nil: none.
	Holds func(state Row) bool
	// Rule is the sentence a value that breaks any of the field's
	// constraints is answered with; "" for the one the broken constraint
	// says ("title must be 1 to 200 characters.").
	Rule string
	// Localized: the field has a value per locale of the site (pages'
	// title, description, keywords and slug, contents' title, blocks'
	// body; docs/locales.md). The row's column holds the base locale's;
	// the others' are the row's translations, keyed "column@tag"
	// (Locale.Key).
	Localized bool
}

// Code is the error code of a value that breaks the field's declarations.
func (f Field) Code() string { return "invalid_" + f.Column }

// field is f named after its column, as a list to concatenate like columns.
func field(f Field) Field {
	f.Name = strings.ReplaceAll(f.Column, "_", "-")
	return f
}

// ref is the field of the reference column (typ Ref or NullRef) to
// refType, as a list to concatenate like columns.
func ref(typ FieldType, column, refType, description string) []Field {
	return []Field{{Column: column, Name: strings.ReplaceAll(strings.TrimSuffix(column, "_id"), "_", "-"), Type: typ, RefType: refType,
		Description: description, RequiredOnCreate: typ == Ref}}
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
	// Derived are computed columns, not edited (pages' path): read-only
	// attributes.
	Derived []Field
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

// LocalizedFields are the fields with a value per locale.
func (k *Kind) LocalizedFields() []Field {
	var out []Field
	for _, f := range k.Fields {
		if f.Localized {
			out = append(out, f)
		}
	}
	return out
}

// fieldByColumn returns the field of column c.
func (k *Kind) fieldByColumn(c string) (Field, bool) {
	for _, f := range k.Fields {
		if f.Column == c {
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
		Fields: slices.Concat([]Field{
			field(Field{Column: "page_type", Type: String, Default: "page", Enum: []string{"home", "page", "not_found", "error", "search"},
				Description: "What the page is: an ordinary page, or the site's one home, not-found, error or search page."}),
			field(Field{Column: "slug", Type: String, Localized: true, Default: "", MaxLen: 100, Pattern: regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,98}[a-z0-9])?)?$`),
				Example:     "about-us",
				Holds:       func(s Row) bool { return str(s["slug"]) != "" || str(s["page_type"]) == "home" },
				Rule:        "slug must be lowercase letters, digits and inner hyphens (1 to 100); only the home page may have an empty slug.",
				Description: "The last segment of the page's path, unique among its siblings; empty only on the home page."}),
			field(Field{Column: "title", Type: String, Localized: true, RequiredOnCreate: true, MinLen: 1, MaxLen: 200, Description: "The page's title."}),
			field(Field{Column: "description", Type: NullString, Localized: true, MaxLen: 1000, Description: "The page's description for search engines and link previews."}),
			field(Field{Column: "keywords", Type: NullString, Localized: true, MaxLen: 1000, Description: "The page's keywords for search engines."}),
			field(Field{Column: "search_engine_indexable", Type: Bool, Default: true, Description: "Whether search engines may index the page."}),
			field(Field{Column: "search_engine_followable", Type: Bool, Default: true, Description: "Whether search engines may follow the page's links."}),
			field(Field{Column: "canonical_url", Type: NullString, Format: "uri", MaxBytes: 2000,
				Rule: "canonical-url must be an absolute http(s) URL or null.", Description: "The page's canonical URL, when another one is."}),
		},
			ref(NullRef, "parent_id", "pages", "The page this one is under (null: at the root)."),
			ref(NullRef, "layout_id", "layouts", "The layout the page is rendered with (null: the theme's default).")),
		Children: []Child{{Type: "pages", Column: "parent_id"}, {Type: "contents", Column: "page_id"}},
		Derived: []Field{field(Field{Column: "path", Type: String,
			Description: "Where the page is served: its ancestors' slugs and its own, joined by /."})},
	}
	Contents = &Kind{Type: "contents", Table: "contents",
		Fields: slices.Concat([]Field{
			field(Field{Column: "title", Type: String, Localized: true, RequiredOnCreate: true, MinLen: 1, MaxLen: 200, Description: "The content's title."}),
			field(Field{Column: "position", Type: Int, Default: 0, Description: "The content's place among its page's contents."}),
		}, ref(Ref, "page_id", "pages", "The page the content is on.")),
		Children: []Child{{Type: "content-blocks", Column: "content_id"}},
	}
	ContentBlocks = &Kind{Type: "content-blocks", Table: "content_blocks",
		Fields: slices.Concat([]Field{
			field(Field{Column: "var_name", Type: String, RequiredOnCreate: true, MaxLen: 64, Pattern: regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`),
				Example:     "headline",
				Rule:        "var-name must start with a letter or _ and hold letters, digits, _ or - (at most 64).",
				Description: "The name the layout reads the block by."}),
			field(Field{Column: "data_type", Type: String, Default: "text", Enum: []string{"text", "html", "image", "link", "markdown"},
				Description: "How the body is read."}),
			field(Field{Column: "body", Type: String, Localized: true, Default: "", MaxBytes: MaxBody, Description: "The block's text, HTML, link or markdown."}),
			field(Field{Column: "position", Type: Int, Default: 0, Description: "The block's place among its content's blocks."}),
		}, ref(Ref, "content_id", "contents", "The content the block belongs to."),
			ref(NullRef, "asset_id", "assets", "The asset the block shows (an image block).")),
	}
	kinds = map[string]*Kind{Pages.Type: Pages, Contents.Type: Contents, ContentBlocks.Type: ContentBlocks}
)

// MaxBody bounds a block's body, in bytes (it is also bounded by the
// request body limit).
const MaxBody = 256 << 10

// refTables are the tables of the types references point to that are not
// kinds (a kind's is its Table).
var refTables = map[string]string{"layouts": "layouts", "assets": "assets"}

// tableOf is the table of the records of the JSON:API type typ.
func tableOf(typ string) string {
	if k, ok := kinds[typ]; ok {
		return k.Table
	}
	return refTables[typ]
}

// Defaults is the state a create starts from: each field's default.
func (k *Kind) Defaults() Row {
	out := Row{}
	for _, f := range k.Fields {
		if f.Default != nil {
			out[f.Column] = f.Default
		}
	}
	return out
}

// KindOf returns the kind of a JSON:API type.
func KindOf(typ string) (*Kind, bool) {
	k, ok := kinds[typ]
	return k, ok
}

// depthOrder publishes parents before children: pages, then contents, then blocks.
var depthOrder = map[string]int{"pages": 0, "contents": 1, "content-blocks": 2}
