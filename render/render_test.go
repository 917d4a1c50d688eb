package render

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func samplePage(layout string, blocks int) Page {
	c := Content{Title: "Intro"}
	for i := range blocks {
		c.Blocks = append(c.Blocks, Block{VarName: fmt.Sprintf("b%d", i), DataType: "text", Body: fmt.Sprintf("body %d", i)})
	}
	c.Blocks = append(c.Blocks, Block{VarName: "hero", DataType: "image", Body: "A hero", AssetURL: "https://cdn.test/a.png"})
	return Page{
		Attributes: map[string]any{"title": "Hello", "path": "/hello", "description": "Desc", "canonical-url": "https://x.test/hello"},
		Layout:     layout,
		Contents:   []Content{c, {Title: "Second"}},
	}
}

func TestRenderVariables(t *testing.T) {
	r := New(Limits{})
	layout := `{{ site.title }}|{{ page.title }}|{{ page.path }}|{{ page.description }}|{{ page.canonical_url }}|` +
		`{% for c in contents %}[{{ c.title }}:{% for b in c.blocks %}{{ b.var_name }}={{ b.data_type }}/{{ b.body }}/{{ b.asset_url }};{% endfor %}]{% endfor %}`
	out, err := r.Render(context.Background(), Site{Title: "Site"}, samplePage(layout, 1))
	if err != nil {
		t.Fatal(err)
	}
	want := "Site|Hello|/hello|Desc|https://x.test/hello|[Intro:b0=text/body 0/;hero=image/A hero/https://cdn.test/a.png;][Second:]"
	if string(out) != want {
		t.Fatalf("got %q\nwant %q", out, want)
	}
}

func TestRenderBuiltinLayout(t *testing.T) {
	out, err := New(Limits{}).Render(context.Background(), Site{Title: "S"}, samplePage("", 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<h1>Hello</h1>", "<p>body 1</p>", `<img src="https://cdn.test/a.png" alt="A hero">`, "<h2>Second</h2>"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("built-in layout lacks %q:\n%s", s, out)
		}
	}
}

func TestRenderTemplateErrorHasLine(t *testing.T) {
	_, err := New(Limits{}).Render(context.Background(), Site{}, samplePage("ok\nline two\n{% if %}", 0))
	var e *Error
	if !errors.As(err, &e) || e.Line != 3 {
		t.Fatalf("want a template error on line 3, got %#v", err)
	}
	page := string(ErrorPage(e))
	if !strings.Contains(page, "line 3") || strings.Contains(page, "goroutine") {
		t.Fatalf("error page: %s", page)
	}
	_, err = New(Limits{}).Render(context.Background(), Site{}, samplePage("a\n{{ page.title | nosuchfilter }}", 0))
	if !errors.As(err, &e) || e.Line != 2 {
		t.Fatalf("want an undefined filter error on line 2, got %#v", err)
	}
}

func TestRenderBounded(t *testing.T) {
	loop := `{% for i in (1..100000000) %}xxxxxxxxxx{% endfor %}`
	_, err := New(Limits{MaxOutput: 1000}).Render(context.Background(), Site{}, samplePage(loop, 0))
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "larger than") {
		t.Fatalf("want the size limit, got %v", err)
	}
	start := time.Now()
	_, err = New(Limits{Timeout: 50 * time.Millisecond, MaxOutput: 1 << 30}).Render(context.Background(), Site{}, samplePage(loop, 0))
	if !errors.As(err, &e) || !strings.Contains(e.Message, "took") {
		t.Fatalf("want the time limit, got %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("a render past its limit answered after %s", d)
	}
}

// BenchmarkRender50Blocks is the target: a page of 50 blocks in
// under 10 ms of CPU (a parsed layout is cached by its source).
func BenchmarkRender50Blocks(b *testing.B) {
	r := New(Limits{})
	p := samplePage(`<html><title>{{ page.title }}</title>{% for c in contents %}<h2>{{ c.title }}</h2>{% for b in c.blocks %}<div class="{{ b.var_name }}">{{ b.body }}{% if b.asset_url %}<img src="{{ b.asset_url }}">{% endif %}</div>{% endfor %}{% endfor %}</html>`, 49)
	for b.Loop() {
		if _, err := r.Render(context.Background(), Site{Title: "S"}, p); err != nil {
			b.Fatal(err)
		}
	}
}
