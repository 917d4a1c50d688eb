package drafts

import (
	"reflect"
	"testing"

	"github.com/pressroom/pressroom/models"
)

func TestLocaleKeysAndSplit(t *testing.T) {
	l := Locale{Tag: "de", Base: "en", Default: "en", Chain: []string{"de", "en"}}
	title, _ := Pages.Field("title")
	typ, _ := Pages.Field("page-type")
	if got := l.Key(title, "de"); got != "title@de" {
		t.Errorf("Key(title, de) = %q", got)
	}
	if got := l.Key(title, "en"); got != "title" {
		t.Errorf("Key(title, base) = %q", got)
	}
	if got := l.Key(typ, "de"); got != "page_type" {
		t.Errorf("Key(page_type, de) = %q: not localized", got)
	}
	if got := l.Keys(Pages, "de"); !reflect.DeepEqual(got, []string{"slug@de", "title@de", "description@de", "keywords@de"}) {
		t.Errorf("Keys(pages, de) = %v", got)
	}
	if got := l.Keys(ContentBlocks, "en"); !reflect.DeepEqual(got, []string{"body"}) {
		t.Errorf("Keys(blocks, base) = %v", got)
	}
	shared, local := l.Split(Pages, Change{"title": "Über", "page_type": "page", "slug": "ueber"})
	if !reflect.DeepEqual(shared, Change{"page_type": "page"}) || !reflect.DeepEqual(local, Change{"title@de": "Über", "slug@de": "ueber"}) {
		t.Errorf("Split = %v, %v", shared, local)
	}
	c := Change{"title": "About"}
	if shared, local := (Locale{Tag: "en", Base: "en"}).Split(Pages, c); !reflect.DeepEqual(shared, c) || local != nil {
		t.Errorf("Split in the base = %v, %v", shared, local)
	}
	if col, tag := SplitKey("title@fr-CA"); col != "title" || tag != "fr-CA" {
		t.Errorf("SplitKey = %q %q", col, tag)
	}
	if n := len(Contents.LocalizedFields()); n != 1 {
		t.Errorf("contents have %d localized fields, want 1 (title)", n)
	}
}

func TestLocalePick(t *testing.T) {
	title, _ := Pages.Field("title")
	desc, _ := Pages.Field("description")
	typ, _ := Pages.Field("page-type")
	row := Row{"title": "About", "title@fr": "À propos", "description": nil, "page_type": "page"}
	frCA := Locale{Tag: "fr-CA", Base: "en", Default: "en", Chain: []string{"fr-CA", "fr", "en"}}
	for _, c := range []struct {
		l        Locale
		f        Field
		want     any
		wantFrom string
	}{
		{frCA, title, "À propos", "fr"},
		{Locale{Tag: "de", Base: "en", Default: "en", Chain: []string{"de", "en"}}, title, "About", "en"},
		{Locale{Tag: "en", Base: "en", Default: "en", Chain: []string{"en"}}, title, "About", "en"},
		{frCA, desc, nil, "fr-CA"},
		{frCA, typ, "page", "fr-CA"},
		{Locale{}, title, "About", ""},
		// The default (de) is not the base (en): the base still answers last.
		{Locale{Tag: "fr", Base: "en", Default: "de", Chain: []string{"fr", "de"}}, Field{Column: "x", Localized: true}, nil, "fr"},
		{Locale{Tag: "pt", Base: "en", Default: "de", Chain: []string{"pt", "de"}}, title, "About", "en"},
	} {
		got, from := c.l.Pick(row, c.f)
		if got != c.want || from != c.wantFrom {
			t.Errorf("%s Pick(%s) = %v from %q, want %v from %q", c.l.Tag, c.f.Column, got, from, c.want, c.wantFrom)
		}
	}
}

// TestFlatNestRoundTrip: a stored row decodes flat and nests back to what
// the table holds.
func TestFlatNestRoundTrip(t *testing.T) {
	stored := []byte(`{"id": "0b1e4c1e-5a6f-4d0e-9c7f-2a1b3c4d5e6f", "title": "About", "slug": "about", "version": 3, "translations": {"title@de": "Über uns", "slug@de": "ueber-uns", "title@fr-CA": "À propos"}}`)
	flat, err := decodeRow(stored)
	if err != nil {
		t.Fatal(err)
	}
	want := Row{"id": "0b1e4c1e-5a6f-4d0e-9c7f-2a1b3c4d5e6f", "title": "About", "slug": "about", "version": float64(3),
		"title@de": "Über uns", "slug@de": "ueber-uns", "title@fr-CA": "À propos"}
	if !reflect.DeepEqual(flat, want) {
		t.Fatalf("decodeRow = %#v, want %#v", flat, want)
	}
	nested := nestRow(Pages, flat)
	var back Row
	if back, err = decodeJSON(stored); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(nested, back) {
		t.Errorf("nestRow = %#v, want %#v", nested, back)
	}
	if _, ok := flat["translations"]; ok {
		t.Error("nestRow changed its argument")
	}
	// A row without translations (a version's state from before the
	// column) nests to {} so an insert keeps the column's NOT NULL.
	plain, err := decodeRow([]byte(`{"title": "About"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := nestRow(Pages, plain); !reflect.DeepEqual(got, Row{"title": "About", "translations": map[string]any{}}) {
		t.Errorf("nestRow(no translations) = %#v", got)
	}
	// An empty translations object disappears from the flat row.
	if got, _ := decodeRow([]byte(`{"title": "About", "translations": {}}`)); !reflect.DeepEqual(got, Row{"title": "About"}) {
		t.Errorf("decodeRow(empty translations) = %#v", got)
	}
}

// TestLocalizedColumnsAgree: models (which strips a removed locale's
// values) and the kinds declare the same localized columns.
func TestLocalizedColumnsAgree(t *testing.T) {
	for _, k := range []*Kind{Pages, Contents, ContentBlocks} {
		var cols []string
		for _, f := range k.LocalizedFields() {
			cols = append(cols, f.Column)
		}
		if got := models.LocalizedColumns(k.Table); !reflect.DeepEqual(got, cols) {
			t.Errorf("%s: models.LocalizedColumns = %v, the kind's localized fields %v", k.Table, got, cols)
		}
	}
}
