package models

import (
	"strings"
	"testing"
)

func TestSearchTerms(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"photog", "'photog':*", true},
		{"Café  tips!", "'Café':* & 'tips':*", true},
		{"a to be", "'a' & 'to' & 'be'", true},
		{`x' | !y:* & "z`, "'x' & 'y' & 'z'", true},
		{"&|!():*'\\", "", false},
		{"", "", false},
		{strings.Repeat("w ", MaxSearchTerms+1), "", false},
		{strings.Repeat("é", 100), "'" + strings.Repeat("é", 64) + "':*", true},
	} {
		got, ok := SearchTerms(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("SearchTerms(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestMarkHighlightEscapesAllButTheMarks(t *testing.T) {
	got := markHighlight(`a <script>"x"</script> ` + markStart + "photo" + markStop + " & b")
	want := `a &lt;script&gt;&#34;x&#34;&lt;/script&gt; <mark>photo</mark> &amp; b`
	if got != want {
		t.Errorf("markHighlight = %q, want %q", got, want)
	}
}
