// Package render renders a page through its layout, a Liquid template
// (github.com/osteele/liquid), for preview links (docs/releases.md,
// "Preview links"). It knows no HTTP and no database: the API hands it the
// page's data and gets HTML or an *Error back.
//
// An author's template must not hang the API: a render runs with a time
// limit and an output limit, and at most Concurrency renders run at once
// (a render past its time limit keeps its slot until it really ends, so
// runaway templates cannot pile up goroutines).
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"strings"
	"sync"
	"time"

	"github.com/osteele/liquid"
)

// Limits bound one render.
type Limits struct {
	// Timeout is the longest a render may take (default 2 s).
	Timeout time.Duration
	// MaxOutput is the most bytes a render may write (default 4 MiB).
	MaxOutput int
	// Concurrency is how many renders may run at once (default 4).
	Concurrency int
}

// Site is the template's `site`.
type Site struct{ Title string }

// Block is one content block of `contents[i].blocks`.
type Block struct {
	VarName, DataType, Body string
	// AssetURL is the url of an image block's asset ("" for none).
	AssetURL string
}

// Content is one item of `contents`, its blocks in order.
type Content struct {
	Title  string
	Blocks []Block
}

// Page is what a render needs: the page's attributes (names with `-`,
// as the API shows them), its layout's Liquid source ("" for none: the
// built-in layout) and its contents in order.
type Page struct {
	Attributes map[string]any
	Layout     string
	Contents   []Content
}

// Error is a render that failed because of the author's template: the
// line (0 when unknown) and what went wrong, to be shown to the author.
type Error struct {
	Line    int
	Message string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// ErrBusy is a render refused because Concurrency renders are running and
// none ended before the context did.
var ErrBusy = errors.New("render: too many renders running")

// Renderer renders pages within its limits. Safe for concurrent use.
type Renderer struct {
	engine *liquid.Engine
	limits Limits
	slots  chan struct{}
	mu     sync.Mutex
	cache  map[string]*liquid.Template
}

// BuiltinLayout renders a page without a layout: its title, description
// and every block's body in order.
const BuiltinLayout = `<!doctype html>
<html><head><meta charset="utf-8"><title>{{ page.title | escape }} · {{ site.title | escape }}</title>
{% if page.description %}<meta name="description" content="{{ page.description | escape }}">{% endif %}
</head><body><main><h1>{{ page.title | escape }}</h1>
{% for content in contents %}<section><h2>{{ content.title | escape }}</h2>
{% for block in content.blocks %}{% if block.data_type == "image" and block.asset_url %}<img src="{{ block.asset_url | escape }}" alt="{{ block.body | escape }}">
{% elsif block.data_type == "html" %}{{ block.body }}
{% else %}<p>{{ block.body | escape }}</p>
{% endif %}{% endfor %}</section>
{% endfor %}</main></body></html>
`

// New is a Renderer with limits l (zero fields take their defaults).
func New(l Limits) *Renderer {
	if l.Timeout <= 0 {
		l.Timeout = 2 * time.Second
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = 4 << 20
	}
	if l.Concurrency <= 0 {
		l.Concurrency = 4
	}
	return &Renderer{engine: liquid.NewEngine(), limits: l, slots: make(chan struct{}, l.Concurrency), cache: map[string]*liquid.Template{}}
}

// maxCached bounds the parsed templates kept (by source).
const maxCached = 256

// parse is the parsed template of src, cached by its source.
func (r *Renderer) parse(src string) (*liquid.Template, error) {
	r.mu.Lock()
	t, ok := r.cache[src]
	r.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := r.engine.ParseTemplateLocation([]byte(src), "layout", 1)
	if err != nil {
		return nil, sourceError(err)
	}
	r.mu.Lock()
	if len(r.cache) >= maxCached {
		clear(r.cache)
	}
	r.cache[src] = t
	r.mu.Unlock()
	return t, nil
}

// Render renders p through its layout. An error of the author's template
// is an *Error; ErrBusy and ctx's error are the server's.
func (r *Renderer) Render(ctx context.Context, site Site, p Page) ([]byte, error) {
	src := p.Layout
	if strings.TrimSpace(src) == "" {
		src = BuiltinLayout
	}
	t, err := r.parse(src)
	if err != nil {
		return nil, err
	}
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ErrBusy
	}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	deadline := time.Now().Add(r.limits.Timeout)
	go func() {
		defer func() { <-r.slots }()
		w := &boundedWriter{max: r.limits.MaxOutput, deadline: deadline}
		err := execute(t, w, bindings(site, p))
		done <- result{w.buf.Bytes(), err}
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case res := <-done:
		return res.out, res.err
	case <-timer.C:
		return nil, &Error{Message: fmt.Sprintf("the template took longer than %s to render", r.limits.Timeout)}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// execute runs t into w. The library panics when the writer fails on its
// last flush; the writer's limits come back as errors either way.
func execute(t *liquid.Template, w *boundedWriter, b liquid.Bindings) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if w.err != nil {
				err = w.err
				return
			}
			err = &Error{Message: fmt.Sprint("the template failed: ", p)}
		}
	}()
	if serr := t.FRender(w, b); serr != nil {
		if w.err != nil {
			return w.err
		}
		return sourceError(serr)
	}
	return nil
}

// sourceError is the author's view of a Liquid error: its line and message.
func sourceError(err liquid.SourceError) *Error {
	msg := err.Error()
	if c := err.Cause(); c != nil {
		msg = c.Error()
	} else if _, rest, ok := strings.Cut(msg, "): "); ok && strings.HasPrefix(msg, "Liquid error (") {
		msg = rest
	}
	return &Error{Line: err.LineNumber(), Message: msg}
}

// boundedWriter fails the render past its size or its deadline.
type boundedWriter struct {
	buf      bytes.Buffer
	max      int
	deadline time.Time
	err      error
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.buf.Len()+len(p) > w.max {
		w.err = &Error{Message: fmt.Sprintf("the page is larger than %d bytes", w.max)}
		return 0, w.err
	}
	if time.Now().After(w.deadline) {
		w.err = &Error{Message: "the template took too long to render"}
		return 0, w.err
	}
	return w.buf.Write(p)
}

// bindings are the template's variables: site, page (attribute names with
// `_` for `-`), contents.
func bindings(site Site, p Page) liquid.Bindings {
	page := make(map[string]any, len(p.Attributes))
	for k, v := range p.Attributes {
		page[strings.ReplaceAll(k, "-", "_")] = v
	}
	contents := make([]map[string]any, len(p.Contents))
	for i, c := range p.Contents {
		blocks := make([]map[string]any, len(c.Blocks))
		for j, b := range c.Blocks {
			blocks[j] = map[string]any{"var_name": b.VarName, "data_type": b.DataType, "body": b.Body, "asset_url": b.AssetURL}
		}
		contents[i] = map[string]any{"title": c.Title, "blocks": blocks}
	}
	return liquid.Bindings{"site": map[string]any{"title": site.Title}, "page": page, "contents": contents}
}

// ErrorPage is the HTML page that shows the author a template error: the
// line and the message, escaped, never a stack trace.
func ErrorPage(e *Error) []byte {
	where := ""
	if e.Line > 0 {
		where = fmt.Sprintf(" on line %d", e.Line)
	}
	return []byte(fmt.Sprintf(`<!doctype html>
<html><head><meta charset="utf-8"><title>Template error</title></head>
<body><h1>The layout could not be rendered</h1>
<p>The page's layout has an error%s:</p>
<pre>%s</pre>
</body></html>
`, where, html.EscapeString(e.Message)))
}

// GonePage is the HTML page of a preview link that no longer works,
// saying why.
func GonePage(why string) []byte {
	return []byte(fmt.Sprintf(`<!doctype html>
<html><head><meta charset="utf-8"><title>Preview link no longer works</title></head>
<body><h1>This preview link no longer works</h1>
<p>%s</p>
</body></html>
`, html.EscapeString(why)))
}
