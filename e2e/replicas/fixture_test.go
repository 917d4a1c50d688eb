package replicas_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/e2e/replicas"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

const password = "pressroom-dev"

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := testsupport.Main(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds the pressroom binary once for every test of the package.
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		root := testsupport.RepoRoot(t)
		if binDir, binErr = os.MkdirTemp("", "pressroom-replicas-bin-"); binErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		binPath, binErr = dev.BuildPressroom(ctx, root, binDir)()
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// fixture is one test's cluster with its database, buckets and a site
// with two editors.
type fixture struct {
	*replicas.Cluster
	Config   config.Config
	DB       *testsupport.Database
	Storage  *minio.Client
	Temporal client.Client
	Site     *models.Site
	http     *http.Client
}

type setup struct {
	apis, workers int
	env           []string
	cfg           func(*config.Config)
	db            *testsupport.Database // nil: a fresh one on the shared server
	temporal      string                // "": the shared server
	storage       *config.Storage       // nil: fresh buckets on the shared MinIO
	storageClient *minio.Client
}

// newFixture starts a cluster; it is stopped when the test ends, and its
// processes' logs are shown if the test failed.
func newFixture(t *testing.T, s setup) *fixture {
	t.Helper()
	bin := binary(t)
	var st config.Storage
	var mc *minio.Client
	if s.storage != nil {
		st, mc = *s.storage, s.storageClient
	} else {
		st, mc = testsupport.NewBuckets(t)
	}
	db := s.db
	if db == nil {
		db = testsupport.NewDatabase(t)
	}
	cfg := testsupport.Config(t, db, st)
	if s.temporal != "" {
		cfg.TemporalAddress = s.temporal
	}
	cfg.UploadWait = 10 * time.Second
	cfg.DBMaxConns = 8
	if s.cfg != nil {
		s.cfg(&cfg)
	}
	tc, err := client.Dial(client.Options{HostPort: cfg.TemporalAddress, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := replicas.Start(ctx, replicas.Options{Bin: bin, Config: cfg, APIs: s.apis, Workers: s.workers,
		Dir: t.TempDir(), Env: append([]string{"PRESSROOM_LOG_LEVEL=warn"}, s.env...), Temporal: tc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			t.Logf("process logs:\n%s", c.Logs(6000))
		}
	})
	f := &fixture{Cluster: c, Config: cfg, DB: db, Storage: mc, Temporal: tc, http: &http.Client{Timeout: 2 * time.Minute}}
	if f.Site, err = models.CreateSite(ctx, db, "Demo", "demo"); err != nil {
		t.Fatal(err)
	}
	hash, _ := auth.HashPassword(password)
	for _, email := range []string{"editor@demo.test", "second@demo.test", "guessed@demo.test"} {
		if _, err := models.CreateUser(ctx, db, f.Site.ID, email, "Editor", hash); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

type result = replicas.Result

// send sends a JSON:API request to base and checks a JSON answer is a
// valid JSON:API document (Err says why not).
func (f *fixture) send(base, token, method, path string, body any) result {
	r := replicas.Send(context.Background(), f.http, base, token, method, path, body)
	if r.Err == nil && len(r.Raw) > 0 && strings.Contains(r.Header.Get("Content-Type"), "json") && r.Status != http.StatusBadGateway {
		r.Err = testsupport.CheckJSONAPI(r.Raw)
	}
	return r
}

func (f *fixture) form(base, path string, v url.Values) result {
	return replicas.Form(context.Background(), f.http, base, path, v)
}

// token signs in on base with the password grant.
func (f *fixture) token(t *testing.T, base, email string) string {
	t.Helper()
	r := f.form(base, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {email}, "password": {password}})
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if r.Err != nil || r.Status != 200 || json.Unmarshal(r.Raw, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("password grant for %s on %s: %s", email, base, r)
	}
	return tok.AccessToken
}

// kid is the key id in a JWT's header.
func kid(t *testing.T, jwt string) string {
	t.Helper()
	h, _, _ := strings.Cut(jwt, ".")
	b, err := base64.RawURLEncoding.DecodeString(h)
	var hdr struct{ Kid string }
	if err != nil || json.Unmarshal(b, &hdr) != nil {
		t.Fatalf("not a JWT: %.40s", jwt)
	}
	return hdr.Kid
}

// resource is the primary data of a single-resource document.
type resource struct {
	Type, ID      string
	Attributes    map[string]any
	Relationships map[string]struct{ Data json.RawMessage }
}

func resourceOf(t testing.TB, r result) resource {
	t.Helper()
	var d struct{ Data resource }
	if err := json.Unmarshal(r.Raw, &d); err != nil || d.Data.ID == "" {
		t.Fatalf("not a resource document: %s", r)
	}
	return d.Data
}

func (r resource) rel(name string) string {
	var id struct{ ID string }
	_ = json.Unmarshal(r.Relationships[name].Data, &id)
	return id.ID
}

func pageBody(id string, attrs map[string]any) map[string]any {
	d := map[string]any{"type": "pages", "attributes": attrs}
	if id != "" {
		d["id"] = id
	}
	return map[string]any{"data": d}
}

func revisionBody(draftIDs ...string) map[string]any {
	data := make([]map[string]any, len(draftIDs))
	for i, id := range draftIDs {
		data[i] = map[string]any{"type": "drafts", "id": id}
	}
	return map[string]any{"data": map[string]any{"type": "revisions", "attributes": map[string]any{"comments": "replicas"},
		"relationships": map[string]any{"drafts": map[string]any{"data": data}}}}
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// publish publishes drafts through base and waits until the revision is
// published (201 at once, or 202 and then polled).
func (f *fixture) publish(t *testing.T, base, token string, drafts ...string) resource {
	t.Helper()
	r := f.send(base, token, http.MethodPost, "/revisions", revisionBody(drafts...))
	if r.Status != 201 && r.Status != 202 {
		t.Fatalf("POST /revisions on %s = %s", base, r)
	}
	rev := resourceOf(t, r)
	for deadline := time.Now().Add(2 * time.Minute); rev.Attributes["status"] == "publishing"; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("revision %s still publishing after 2 minutes", rev.ID)
		}
		rev = resourceOf(t, f.send(base, token, http.MethodGet, "/revisions/"+rev.ID, nil))
	}
	if rev.Attributes["status"] != "published" {
		t.Fatalf("revision %s = %v", rev.ID, rev.Attributes)
	}
	return rev
}

// loadReads reads path(i) for i = 0, 1, … on reps in turn, 8 readers at a
// time, until stop is called (again: a no-op): what a cache test's writes
// race. stop returns the first read that failed or that ok refused, and
// how many reads were made.
func (f *fixture) loadReads(reps []string, tok map[string]string, path func(int) string, ok func(result) bool) (stop func() (failure string, reads int64)) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Value
	var n atomic.Int64
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				rep := reps[i%len(reps)]
				r := f.send(rep, tok[rep], http.MethodGet, path(i), nil)
				n.Add(1)
				if r.Err != nil || !ok(r) {
					failed.CompareAndSwap(nil, fmt.Sprintf("GET %s on %s under load = %s", path(i), rep, r))
				}
			}
		}()
	}
	var once sync.Once
	return func() (string, int64) {
		once.Do(func() { close(done); wg.Wait() })
		s, _ := failed.Load().(string)
		return s, n.Load()
	}
}
