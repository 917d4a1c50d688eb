// Command render measures a preview link's render route (issue 29,
// docs/releases.md "Preview links"), GET {link}/render/<page path>, whole:
// the link's lookup, the release's preview, the page's database reads
// (PageToRender) and the Liquid render, against the real stack (Postgres,
// the Temporal dev server, MinIO; the API in this process, no worker).
//
//	go run ./dev/cmd/devstack exec -- go run ./bench/render [-blocks 50] [-conns 4] [-duration 10s]
//
// It creates, through the API, a theme with a Liquid layout that loops
// over the contents and blocks (the one e2e/preview_links_test.go uses), a
// page at /bench using it, one content and -blocks text blocks, all as
// drafts staged in one release, and a preview link of the release. The
// link's rate limit is raised in the database (the limit is not what is
// measured). Then wrk (a process of its own: its CPU is not counted) reads
// the render route at -conns connections for -duration, and it prints the
// rate, p50 and p99, and the CPU per request of this process (the API
// alone: no worker runs) and of the database's Postgres backends. Every
// page is rendered from the preview: the drafts are laid over no live row.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pressroom/pressroom/bench/internal/benchenv"
)

type options struct {
	blocks, conns int
	duration      time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.blocks, "blocks", 50, "text blocks of the rendered page")
	flag.IntVar(&o.conns, "conns", 4, "wrk connections")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of the load")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		log.Fatal(err)
	}
}

// layout is the theme's page layout: every content and block.
const layout = `<!doctype html><html><head><title>{{ page.title }}</title></head><body>
<h1 id="title">{{ page.title }}</h1><p id="site">{{ site.title }}</p><p id="path">{{ page.path }}</p>
{% for c in contents %}<section><h2>{{ c.title }}</h2>{% for b in c.blocks %}{% if b.data_type == "image" %}<img id="{{ b.var_name }}" src="{{ b.asset_url }}">{% else %}<div class="block" id="{{ b.var_name }}">{{ b.body }}</div>{% endif %}{% endfor %}</section>{% endfor %}
</body></html>`

func run(ctx context.Context, o options) error {
	if _, err := exec.LookPath("wrk"); err != nil {
		return fmt.Errorf("wrk is needed (the Debian package wrk): %w", err)
	}
	env, err := benchenv.New("pressroom-bench-render-", false)
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.Up(ctx); err != nil {
		return err
	}
	c, err := env.User(ctx)
	if err != nil {
		return err
	}
	fmt.Println("pressroom render benchmark (GET {link}/render/<path>)")
	fmt.Printf("machine:  %s, GOMAXPROCS %d; services: %s\n", benchenv.Machine(), runtime.GOMAXPROCS(0), env.Where)
	url, err := seed(ctx, env, c, o.blocks)
	if err != nil {
		return err
	}
	target := url + "/render/bench"
	status, raw, err := c.Send(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK || strings.Count(string(raw), `class="block"`) != o.blocks {
		return fmt.Errorf("GET %s = %d, %d blocks: %.500s", target, status, strings.Count(string(raw), `class="block"`), raw)
	}
	fmt.Printf("page: %d blocks, %d bytes of HTML\n", o.blocks, len(raw))
	if _, err := env.DB.ExecContext(ctx, "ANALYZE"); err != nil {
		return err
	}
	fmt.Printf("load average before the load: %s\n", benchenv.LoadAvg())
	pg0, err := benchenv.PostgresCPU(ctx, env.DB)
	if err != nil {
		return err
	}
	cpu0 := benchenv.ProcessCPU()
	r, err := wrk(ctx, target, o)
	if err != nil {
		return err
	}
	cpu := benchenv.ProcessCPU() - cpu0
	pg1, err := benchenv.PostgresCPU(ctx, env.DB)
	if err != nil {
		return err
	}
	var pgCPU time.Duration
	for pid, t := range pg1 {
		pgCPU += t - pg0[pid]
	}
	n := max(1, r.requests)
	fmt.Printf("%d conns: %d requests (%d non-2xx), %.0f req/s, p50 %s, p99 %s; CPU per request: API %d µs, Postgres %d µs\n",
		o.conns, r.requests, r.bad, r.rate, r.p50, r.p99, cpu.Microseconds()/int64(n), pgCPU.Microseconds()/int64(n))
	fmt.Printf("load average after the load: %s\n", benchenv.LoadAvg())
	return nil
}

// seed makes the page, its blocks, the release and the link; it returns
// the link's url.
func seed(ctx context.Context, env *benchenv.Env, c *benchenv.Client, blocks int) (string, error) {
	var drafts []string
	create := func(typ string, attrs, rels map[string]any) (string, error) {
		raw, err := c.Call(ctx, http.MethodPost, "/"+typ, map[string]any{"data": map[string]any{"type": typ, "attributes": attrs, "relationships": rels}}, http.StatusCreated)
		if err != nil {
			return "", err
		}
		var doc struct {
			Data struct {
				ID            string
				Relationships struct {
					Draft struct{ Data *struct{ ID string } }
				}
			}
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return "", err
		}
		if d := doc.Data.Relationships.Draft.Data; d != nil {
			drafts = append(drafts, d.ID)
		}
		return doc.Data.ID, nil
	}
	ref := func(typ, id string) map[string]any {
		return map[string]any{"data": map[string]any{"type": typ, "id": id}}
	}
	theme, err := create("themes", map[string]any{"title": "Bench theme"}, nil)
	if err != nil {
		return "", err
	}
	lay, err := create("layouts", map[string]any{"title": "Page", "file-name": "page.liquid", "content": layout}, map[string]any{"theme": ref("themes", theme)})
	if err != nil {
		return "", err
	}
	page, err := create("pages", map[string]any{"title": "Bench page", "slug": "bench"}, map[string]any{"layout": ref("layouts", lay)})
	if err != nil {
		return "", err
	}
	content, err := create("contents", map[string]any{"title": "Body", "position": 1}, map[string]any{"page": ref("pages", page)})
	if err != nil {
		return "", err
	}
	for i := range blocks {
		body := fmt.Sprintf("<p>Paragraph %d: the quick brown fox jumps over the lazy dog, twice over, for a block of realistic length.</p>", i)
		if _, err := create("content-blocks", map[string]any{"var-name": fmt.Sprintf("b%d", i), "data-type": "text", "body": body, "position": i + 1},
			map[string]any{"content": ref("contents", content)}); err != nil {
			return "", err
		}
	}
	rel, err := create("releases", map[string]any{"title": "Bench release"}, nil)
	if err != nil {
		return "", err
	}
	data := make([]map[string]any, len(drafts))
	for i, id := range drafts {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	if _, err := c.Call(ctx, http.MethodPost, "/releases/"+rel+"/relationships/drafts", map[string]any{"data": data}, http.StatusNoContent); err != nil {
		return "", err
	}
	raw, err := c.Call(ctx, http.MethodPost, "/preview-links", map[string]any{"data": map[string]any{"type": "preview-links",
		"relationships": map[string]any{"release": ref("releases", rel)}}}, http.StatusCreated)
	if err != nil {
		return "", err
	}
	var link struct {
		Data struct{ Attributes struct{ URL string } }
	}
	if err := json.Unmarshal(raw, &link); err != nil {
		return "", err
	}
	// The per-link rate limit would answer most of the load with 429.
	if _, err := env.DB.ExecContext(ctx, "UPDATE preview_links SET rate_limit = 1000000"); err != nil {
		return "", err
	}
	return link.Data.Attributes.URL, nil
}

type result struct {
	requests, bad int
	rate          float64
	p50, p99      time.Duration
}

var (
	wrkRequests = regexp.MustCompile(`(\d+) requests in`)
	wrkRate     = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkP50      = regexp.MustCompile(`\s50%\s+([\d.]+\w+)`)
	wrkP99      = regexp.MustCompile(`\s99%\s+([\d.]+\w+)`)
)

// wrk loads url and reads wrk's summary (--latency).
func wrk(ctx context.Context, url string, o options) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, o.duration+30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "wrk", "-t1", "-c"+strconv.Itoa(o.conns), "-d"+o.duration.String(), "--latency", url).CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("wrk: %w: %s", err, out)
	}
	s := string(out)
	var r result
	if m := wrkRequests.FindStringSubmatch(s); m != nil {
		r.requests, _ = strconv.Atoi(m[1])
	}
	if m := wrkRate.FindStringSubmatch(s); m != nil {
		r.rate, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := wrkNon2xx.FindStringSubmatch(s); m != nil {
		r.bad, _ = strconv.Atoi(m[1])
	}
	if m := wrkP50.FindStringSubmatch(s); m != nil {
		r.p50, _ = time.ParseDuration(m[1])
	}
	if m := wrkP99.FindStringSubmatch(s); m != nil {
		r.p99, _ = time.ParseDuration(m[1])
	}
	if r.requests == 0 {
		return r, fmt.Errorf("wrk: no requests: %s", s)
	}
	return r, nil
}
