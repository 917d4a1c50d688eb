package drafts

import (
	"encoding/json"
	"reflect"
	"testing"
)

// rowSamples are to_jsonb rows as Postgres writes them, and the shapes the
// fast path must hand to encoding/json (escapes, bad UTF-8, odd numbers,
// malformed documents).
var rowSamples = []string{
	`{"id": "0b1e4c1e-5a6f-4d0e-9c7f-2a1b3c4d5e6f", "path": "page-0/page-123", "slug": "page-123", "title": "Page 123", "version": 2, "keywords": null, "created_at": "2026-11-24T06:47:55.123456+00:00", "search_engine_indexable": true, "search_engine_followable": false}`,
	`{"body": {"blocks": [{"type": "p", "text": "x", "n": [1, 2.5, -0.5e-3, 1E+2]}], "empty": {}, "none": []}}`,
	`{}`, ` { } `, `null`, ` null `, `{"a": "tab\there"}`, `{"a": "quote \" inside"}`, `{"a": "\u00e9\ud83d\ude00"}`,
	`{"a": "caf` + "\xc3\xa9" + `"}`, `{"a": "bad ` + "\xff" + ` byte"}`, "{\"a\": \"ctl\x01\"}",
	`{"a": 1e400}`, `{"a": -0}`, `{"a": 01}`, `{"a": 1.}`, `{"a": .5}`, `{"a": +1}`, `{"a": 0x10}`, `{"a": inf}`, `{"a": 1_0}`,
	`{"a": 1, "a": 2}`, `{"a": 1,}`, `{"a" 1}`, `{"a": [1,]}`, `{"a": tru}`, `{"a": nul}`, `{"a": 1} x`, `[1, 2]`, `"s"`, `3`, ``, `{`, `{"a": "x`,
}

func TestDecodeRowMatchesEncodingJSON(t *testing.T) {
	for _, s := range rowSamples {
		checkDecodeRow(t, []byte(s))
	}
}

func FuzzDecodeRow(f *testing.F) {
	for _, s := range rowSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecodeRow(t, data) })
}

func checkDecodeRow(t *testing.T, data []byte) {
	t.Helper()
	var want Row
	wantErr := json.Unmarshal(data, &want)
	want = liftTranslations(want) // decodeRow lifts a row's translations
	got, err := decodeRow(data)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("decodeRow(%q) error %v, encoding/json %v", data, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeRow(%q) = %#v, encoding/json %#v", data, got, want)
	}
}

// BenchmarkDecodeRow decodes a page's to_jsonb row, as every read does.
func BenchmarkDecodeRow(b *testing.B) {
	data := []byte(rowSamples[0])
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeRow(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r Row
			if err := json.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
