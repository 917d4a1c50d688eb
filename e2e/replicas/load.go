package replicas

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Mix weighs the operations a Load sends. Schedule is a publish at a time
// 1.5–3 s ahead (POST /revisions with publish-at), optional.
type Mix struct{ ReadLive, ReadDraft, Write, Publish, Upload, Schedule int }

// The operations, as reported.
const (
	OpReadLive  = "read live"
	OpReadDraft = "read draft"
	OpWrite     = "write"
	OpPublish   = "publish"
	OpUpload    = "upload"
	OpSchedule  = "scheduled publish"
)

// Ops lists the operations in report order.
var Ops = []string{OpReadLive, OpReadDraft, OpWrite, OpPublish, OpSchedule, OpUpload}

// Load is a rate-limited mixed load on one site, as an editing team and a
// public reader make it: reads of pages live and with drafts, edits of
// page titles, publishes of the edited pages (at once or scheduled a few
// seconds ahead) and image uploads; with Hook, a webhook of the site
// delivers every event to a receiver. Each page
// belongs to one of its goroutines, so the last accepted write of a page
// is known and can be checked at the end (CheckWrites).
type Load struct {
	HTTP  *http.Client
	Base  string // the proxy, or one replica
	Token string
	Rate  float64 // operations per second, all kinds together
	Mix   Mix
	Conc  int // goroutines sending (each owns Pages/Conc pages)
	// Hook, when set, is subscribed (Prepare) before anything happens, so
	// every event of the load is delivered to it (CheckWebhook).
	Hook *Receiver

	pages []string

	mu        sync.Mutex
	stats     map[string]*OpStats
	uploads   []string
	revisions []string
	scheduled []string
	titles    map[string][]string // page → titles it may show: the last accepted, plus any whose answer was lost
	dropped   int                 // ticks with every goroutine busy
	seq       int
}

// OpStats are one operation's figures.
type OpStats struct {
	Latency  []time.Duration
	Statuses map[int]int // 0 counts transport errors
	// NoRetryAfter counts 503s without a Retry-After header.
	NoRetryAfter int
}

// Prepare creates n pages and publishes them, so reads find them live.
func (l *Load) Prepare(ctx context.Context, n int) error {
	l.stats, l.titles = map[string]*OpStats{}, map[string][]string{}
	if l.Hook != nil {
		if err := l.Hook.Subscribe(ctx, l.HTTP, l.Base, l.Token); err != nil {
			return err
		}
	}
	var drafts []string
	for i := range n {
		title := fmt.Sprintf("page %d", i)
		r := Send(ctx, l.HTTP, l.Base, l.Token, http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
			"attributes": map[string]any{"title": title, "slug": fmt.Sprintf("load-%d", i)}}})
		if r.Err != nil || r.Status != 201 {
			return fmt.Errorf("POST /pages = %s", r)
		}
		id, draft := ids(r.Raw)
		l.pages = append(l.pages, id)
		l.titles[id] = []string{title}
		drafts = append(drafts, draft)
	}
	for chunk := range slices.Chunk(drafts, 20) {
		r := Send(ctx, l.HTTP, l.Base, l.Token, http.MethodPost, "/revisions", revisionBody(chunk...))
		if r.Err != nil || (r.Status != 201 && r.Status != 202) {
			return fmt.Errorf("POST /revisions = %s", r)
		}
		id, _ := ids(r.Raw)
		l.revisions = append(l.revisions, id)
	}
	return nil
}

// Run sends the load until ctx ends.
func (l *Load) Run(ctx context.Context) {
	if l.Conc < 1 {
		l.Conc = 1
	}
	jobs := make(chan struct{}, l.Conc)
	var wg sync.WaitGroup
	for g := range l.Conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []string
			for i, p := range l.pages {
				if i%l.Conc == g {
					mine = append(mine, p)
				}
			}
			w := &loader{l: l, pages: mine, drafts: map[string]string{}, rnd: rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))}
			for {
				select {
				case <-ctx.Done():
					return
				case <-jobs:
					w.one(ctx)
				}
			}
		}()
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / l.Rate))
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			select {
			case jobs <- struct{}{}:
			default:
				l.mu.Lock()
				l.dropped++
				l.mu.Unlock()
			}
		}
	}
	wg.Wait()
}

// loader is one goroutine's state: its pages and their open drafts.
type loader struct {
	l      *Load
	pages  []string
	drafts map[string]string // page → draft id
	rnd    *rand.Rand
}

func (w *loader) one(ctx context.Context) {
	m := w.l.Mix
	n := w.rnd.IntN(m.ReadLive + m.ReadDraft + m.Write + m.Publish + m.Schedule + m.Upload)
	page := w.pages[w.rnd.IntN(len(w.pages))]
	began := time.Now()
	var op string
	var r Result
	switch {
	case n < m.ReadLive:
		op = OpReadLive
		r = Send(ctx, w.l.HTTP, w.l.Base, w.l.Token, http.MethodGet, "/pages/"+page, nil)
	case n < m.ReadLive+m.ReadDraft:
		op = OpReadDraft
		r = Send(ctx, w.l.HTTP, w.l.Base, w.l.Token, http.MethodGet, "/pages/"+page+"?include=draft", nil)
	case n < m.ReadLive+m.ReadDraft+m.Write:
		op = OpWrite
		w.l.mu.Lock()
		w.l.seq++
		title := fmt.Sprintf("edit %d", w.l.seq)
		w.l.mu.Unlock()
		r = Send(ctx, w.l.HTTP, w.l.Base, w.l.Token, http.MethodPatch, "/pages/"+page, map[string]any{"data": map[string]any{
			"type": "pages", "id": page, "attributes": map[string]any{"title": title}}})
		w.l.mu.Lock()
		switch {
		case r.Err != nil || r.Status >= 500:
			// No answer (also when the load's end cancelled the request: it
			// may have committed first), the proxy's 502 because the API died mid-request,
			// or a 503 because the database went away: the write may or may
			// not have landed (the commit can succeed and the read of the
			// response, or the commit's acknowledgement, fail; seen in
			// TestPostgresRestartUnderLoad). The client retries it (a PATCH
			// is idempotent).
			w.l.titles[page] = append(w.l.titles[page], title)
		case r.Status == 200:
			w.l.titles[page] = []string{title}
			if d := draftID(r.Raw); d != "" {
				w.drafts[page] = d
			}
		}
		w.l.mu.Unlock()
	case n < m.ReadLive+m.ReadDraft+m.Write+m.Publish+m.Schedule:
		op = OpPublish
		var at time.Time
		// Until the API has accepted one scheduled revision, every publish
		// is scheduled: a short load under a fault sends few publishes,
		// and the checks need at least one scheduled publish to judge.
		w.l.mu.Lock()
		noneScheduled := len(w.l.scheduled) == 0
		w.l.mu.Unlock()
		if n >= m.ReadLive+m.ReadDraft+m.Write+m.Publish || noneScheduled {
			// At least 1 s ahead when the API reads it (else 422).
			op, at = OpSchedule, time.Now().Add(1500*time.Millisecond+time.Duration(w.rnd.IntN(1500))*time.Millisecond)
		}
		var draft string
		for p, d := range w.drafts {
			page, draft = p, d
			break
		}
		if draft == "" {
			return // nothing drafted here yet
		}
		body := revisionBody(draft)
		if !at.IsZero() {
			body["data"].(map[string]any)["attributes"].(map[string]any)["publish-at"] = at.UTC().Format(time.RFC3339Nano)
		}
		r = Send(ctx, w.l.HTTP, w.l.Base, w.l.Token, http.MethodPost, "/revisions", body)
		if r.Status == 201 || r.Status == 202 || (r.Status >= 400 && r.Status < 500 && r.Status != 409 && r.Status != 429) {
			// Published, publishing, scheduled, or gone (published by an
			// earlier request whose answer was lost).
			delete(w.drafts, page)
		}
		if r.Status == 201 || r.Status == 202 {
			id, _ := ids(r.Raw)
			w.l.mu.Lock()
			w.l.revisions = append(w.l.revisions, id)
			if op == OpSchedule {
				w.l.scheduled = append(w.l.scheduled, id)
			}
			w.l.mu.Unlock()
		}
	default:
		op = OpUpload
		var err error
		r, err = Upload(ctx, w.l.HTTP, w.l.Base, w.l.Token, "photo.png", "image/png", PNG(96+w.rnd.IntN(64), 64+w.rnd.IntN(64), w.rnd.IntN(255)))
		if err != nil && r.Status == 0 && r.Err == nil {
			r.Err = err
		}
		if r.Status == 202 {
			id, _ := ids(r.Raw)
			w.l.mu.Lock()
			w.l.uploads = append(w.l.uploads, id)
			w.l.mu.Unlock()
		}
	}
	if ctx.Err() != nil && r.Err != nil {
		return // cut off by the end of the run, not an answer
	}
	w.l.record(op, time.Since(began), r)
}

func (l *Load) record(op string, d time.Duration, r Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats[op]
	if s == nil {
		s = &OpStats{Statuses: map[int]int{}}
		l.stats[op] = s
	}
	s.Latency = append(s.Latency, d)
	if r.Err != nil && r.Status == 0 {
		s.Statuses[0]++
		return
	}
	s.Statuses[r.Status]++
	if r.Status == http.StatusServiceUnavailable && r.Header.Get("Retry-After") == "" {
		s.NoRetryAfter++
	}
}

// Stats returns a copy of the figures so far, by operation, and how many
// ticks found every goroutine busy.
func (l *Load) Stats() (map[string]OpStats, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]OpStats{}
	for op, s := range l.stats {
		c := OpStats{Latency: slices.Clone(s.Latency), Statuses: map[int]int{}, NoRetryAfter: s.NoRetryAfter}
		for k, v := range s.Statuses {
			c.Statuses[k] = v
		}
		out[op] = c
	}
	return out, l.dropped
}

// Accepted returns the ids of the uploads (202) and revisions (201, 202)
// the API accepted.
func (l *Load) Accepted() (uploads, revisions []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.uploads), slices.Clone(l.revisions)
}

// Scheduled returns the ids of the scheduled revisions the API accepted
// (201); Accepted's revisions include them.
func (l *Load) Scheduled() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.scheduled)
}

// PublishDrafts publishes every page's open draft (after Run), so a check
// that follows sees every accepted write live.
func (l *Load) PublishDrafts(ctx context.Context) error {
	var drafts []string
	for _, p := range l.pages {
		r := Send(ctx, l.HTTP, l.Base, l.Token, http.MethodGet, "/pages/"+p+"?include=draft", nil)
		if r.Err != nil || r.Status != 200 {
			return fmt.Errorf("GET /pages/%s?include=draft = %s", p, r)
		}
		if d := draftID(r.Raw); d != "" {
			drafts = append(drafts, d)
		}
	}
	for chunk := range slices.Chunk(drafts, 20) {
		r := Send(ctx, l.HTTP, l.Base, l.Token, http.MethodPost, "/revisions", revisionBody(chunk...))
		if r.Err != nil || (r.Status != 201 && r.Status != 202) {
			return fmt.Errorf("POST /revisions = %s", r)
		}
		id, _ := ids(r.Raw)
		l.mu.Lock()
		l.revisions = append(l.revisions, id)
		l.mu.Unlock()
	}
	return nil
}

// CheckWrites returns every page whose drafted title (the draft if there
// is one, else the live row) is not its last accepted write: an accepted
// write that is neither published nor still a draft was lost. With live,
// the live title is checked instead (after PublishDrafts).
func (l *Load) CheckWrites(ctx context.Context, live bool) []string {
	var bad []string
	for _, p := range l.pages {
		path := "/pages/" + p + "?include=draft"
		if live {
			path = "/pages/" + p
		}
		r := Send(ctx, l.HTTP, l.Base, l.Token, http.MethodGet, path, nil)
		var d struct {
			Data struct{ Attributes struct{ Title string } }
		}
		if r.Err != nil || r.Status != 200 || json.Unmarshal(r.Raw, &d) != nil {
			bad = append(bad, fmt.Sprintf("GET %s = %s", path, r))
			continue
		}
		l.mu.Lock()
		want := l.titles[p]
		l.mu.Unlock()
		if !slices.Contains(want, d.Data.Attributes.Title) {
			bad = append(bad, fmt.Sprintf("page %s shows %q on %s, want the last accepted write %q", p, d.Data.Attributes.Title, path, want))
		}
	}
	return bad
}

// Report formats the figures as a table: count, p50, p99, max and
// statuses per operation.
func Report(stats map[string]OpStats, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| operation | count | per s | p50 | p99 | max | statuses |\n|---|---:|---:|---:|---:|---:|---|\n")
	for _, op := range Ops {
		s, ok := stats[op]
		if !ok || len(s.Latency) == 0 {
			continue
		}
		lat := slices.Clone(s.Latency)
		slices.Sort(lat)
		pct := func(p float64) time.Duration {
			i := int(float64(len(lat))*p/100+0.999999) - 1
			return lat[max(0, min(len(lat)-1, i))].Round(100 * time.Microsecond)
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f | %s | %s | %s | %s |\n", op, len(lat), float64(len(lat))/elapsed.Seconds(),
			pct(50), pct(99), lat[len(lat)-1].Round(100*time.Microsecond), statuses(s))
	}
	return b.String()
}

func statuses(s OpStats) string {
	var codes []int
	for c := range s.Statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		name := fmt.Sprint(c)
		if c == 0 {
			name = "transport error"
		}
		parts = append(parts, fmt.Sprintf("%s×%d", name, s.Statuses[c]))
	}
	if s.NoRetryAfter > 0 {
		parts = append(parts, fmt.Sprintf("(%d 503s without Retry-After)", s.NoRetryAfter))
	}
	return strings.Join(parts, " ")
}

// Status5xx counts answers of 500 and above, by status, over every
// operation; 503s are counted apart from the rest.
func Status5xx(stats map[string]OpStats) (unavailable, other int, noRetryAfter int) {
	for _, s := range stats {
		for c, n := range s.Statuses {
			switch {
			case c == http.StatusServiceUnavailable:
				unavailable += n
			case c >= 500:
				other += n
			}
		}
		noRetryAfter += s.NoRetryAfter
	}
	return
}

func ids(raw []byte) (id, draft string) {
	var d struct {
		Data struct {
			ID            string
			Relationships struct {
				Draft struct{ Data *struct{ ID string } }
			}
		}
	}
	_ = json.Unmarshal(raw, &d)
	if d.Data.Relationships.Draft.Data != nil {
		draft = d.Data.Relationships.Draft.Data.ID
	}
	return d.Data.ID, draft
}

func draftID(raw []byte) string { _, d := ids(raw); return d }

func revisionBody(draftIDs ...string) map[string]any {
	data := make([]map[string]any, len(draftIDs))
	for i, id := range draftIDs {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	return map[string]any{"data": map[string]any{"type": "revisions", "attributes": map[string]any{"comments": "load"},
		"relationships": map[string]any{"drafts": map[string]any{"data": data}}}}
}

// PNG is a w×h image with some variety, seeded, so uploads are real
// images that differ.
func PNG(w, h, seed int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x*7 + seed), uint8(y*5 + seed*3), uint8(x ^ y ^ seed), 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}
