package drafts

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
)

// TestSplitLocale: a change in a locale other than the base divides into
// its shared part and its locale's flat keys; a change without flat keys
// is all shared.
func TestSplitLocale(t *testing.T) {
	shared, local, tag := splitLocale(Pages, Change{"title@de": "Über", "slug@de": nil, "page_type": "page"})
	if tag != "de" || !reflect.DeepEqual(shared, Change{"page_type": "page"}) || !reflect.DeepEqual(local, Change{"title@de": "Über", "slug@de": nil}) {
		t.Errorf("split = %v, %v, %q", shared, local, tag)
	}
	c := Change{"title": "About", "page_type@de": "x"} // not a localized field: no locale key
	if shared, local, tag := splitLocale(Pages, c); tag != "" || local != nil || !reflect.DeepEqual(shared, c) {
		t.Errorf("split of a base change = %v, %v, %q", shared, local, tag)
	}
}

// TestChangesOfLocaleKeys: object-changes name a locale's values
// "<attribute>@<tag>", a cleared one [value, null]; a create draft holds
// every locale's values (editableAll), a shared draft only its columns.
func TestChangesOfLocaleKeys(t *testing.T) {
	live := Row{"title": "About", "title@de": "Über", "slug@fr": "a-propos"}
	drafted := Row{"title": "About", "title@de": nil, "slug@fr": "a-propos", "description@de": "Wer"}
	got := changes(Pages, live, drafted)
	want := map[string]any{"title@de": []any{"Über", nil}, "description@de": []any{nil, "Wer"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes = %v, want %v", got, want)
	}
	if all := editableAll(Pages, live); all["title@de"] != "Über" || all["slug@fr"] != "a-propos" {
		t.Errorf("editableAll = %v", all)
	}
	if e := editable(Pages, live); len(e) != len(Pages.Fields) {
		t.Errorf("editable holds %v, want the kind's columns only", e)
	}
}

// TestCheckAttributesInALocale: a locale's value is judged by its
// field's rules, at the attribute, with meta.locale; null there is no
// value (cleared); a base title may be null while another locale has one.
func TestCheckAttributesInALocale(t *testing.T) {
	base := Row{"page_type": "page", "slug": "about", "title": "About", "search_engine_indexable": true, "search_engine_followable": true}
	with := func(kv ...any) Row {
		r := Row{}
		for k, v := range base {
			r[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			r[kv[i].(string)] = kv[i+1]
		}
		return r
	}
	if err := CheckAttributes(Pages, with("slug@de", "ueber-uns", "title@de", nil)); err != nil {
		t.Errorf("valid German values: %v", err)
	}
	err := CheckAttributes(Pages, with("slug@de", "Nicht Gültig"))
	var me *models.Error
	if !errors.As(err, &me) || me.Code != "invalid_slug" || me.Meta["locale"] != "de" || me.At.Attribute != "slug" {
		t.Errorf("an invalid German slug: %#v", err)
	}
	if err := CheckAttributes(Pages, with("title@de", strings.Repeat("x", 201))); !errors.As(err, &me) || me.Code != "invalid_title" {
		t.Errorf("a German title too long: %v", err)
	}
	if err := CheckAttributes(Pages, with("title", nil, "title@de", "Kontakt")); err != nil {
		t.Errorf("a base title null beside a German one: %v", err)
	}
	if err := CheckAttributes(Pages, with("title", nil)); err == nil {
		t.Error("a base title null with no other locale's passed")
	}
}

// TestReadQueriesOfOneLocale: a site with one locale keeps the statements
// of before locales (no locale drafts column); several locales add it.
func TestReadQueriesOfOneLocale(t *testing.T) {
	for _, k := range []*Kind{Pages, Contents, ContentBlocks} {
		if q := readQuery(k, true, false); strings.Contains(q, "ld.locale <> ''") {
			t.Errorf("%s: the single-locale read names locale drafts: %s", k.Type, q)
		}
		if q := readQuery(k, true, true); !strings.Contains(q, "ld.locale <> ''") {
			t.Errorf("%s: the multi-locale read lacks locale drafts: %s", k.Type, q)
		}
		if q := lockQuery(k, false); strings.Contains(q, "ld AS") {
			t.Errorf("%s: the single-locale lock names locale drafts", k.Type)
		}
		if q := lockQuery(k, true); !strings.Contains(q, "ld AS") {
			t.Errorf("%s: the multi-locale lock lacks locale drafts", k.Type)
		}
	}
}

// TestLocaleDraftsHoldNoParent: publication order reads a page's parent
// from its shared draft only (a locale draft holds none).
func TestLocaleDraftsHoldNoParent(t *testing.T) {
	parent, child := uuid.New(), uuid.New()
	// The child's drafts sort before the parent's by id: only the depth
	// puts the parent first.
	shared := &Draft{ID: uuid.MustParse("00000000-0000-4000-8000-000000000001"), ItemType: "pages", ItemID: child, Event: EventUpdate, Drafted: Row{"parent_id": parent.String()}}
	de := &Draft{ID: uuid.MustParse("00000000-0000-4000-8000-000000000002"), ItemType: "pages", ItemID: child, Event: EventUpdate, Locale: "de", Drafted: Row{"title@de": "x"}}
	up := &Draft{ID: uuid.MustParse("ffffffff-0000-4000-8000-000000000000"), ItemType: "pages", ItemID: parent, Event: EventUpdate, Drafted: Row{}}
	for _, ds := range [][]*Draft{{shared, de, up}, {de, shared, up}} {
		got := order(ds, nil)
		if got[0] != up {
			t.Errorf("order %v: the parent's draft is not first", got)
		}
	}
}
