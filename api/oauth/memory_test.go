package oauth_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// peakRSS reads a process's high-water mark of resident memory (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// The API runs as its own process (a fresh `pressroom serve` with default
// settings, except that the client-authentication throttle is off so every
// request does the full work), and its peak resident memory is read from
// /proc while unauthenticated requests with made-up client credentials
// flood the token, introspection and revocation endpoints. Before client
// secrets were HMACs, each of them ran a 64 MiB argon2id check: 24 at once
// took the API from 82 MB to 1.45 GB. Real sign-ins keep working during it.
func TestBadClientFloodKeepsMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the API binary")
	}
	t.Parallel()
	ctx := context.Background()
	bin := testsupport.BuildPressroom(t)()

	db := testsupport.NewDatabase(t)
	cfg := testsupport.Config(t, db, testsupport.Defaults().Storage)
	site, err := models.CreateSite(ctx, db, "Demo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := auth.HashPassword(password)
	if _, err := models.CreateUser(ctx, db, site.ID, "editor@demo.test", "Ed", hash); err != nil {
		t.Fatal(err)
	}
	port, err := dev.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	env := append(testsupport.WorkerEnv(cfg, t.TempDir()),
		"PRESSROOM_HTTP_ADDR=127.0.0.1:"+strconv.Itoa(port), "PRESSROOM_PUBLIC_URL="+base,
		"PRESSROOM_AUTO_MIGRATE=false", "PRESSROOM_CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS=100000")
	var out strings.Builder
	var outMu sync.Mutex
	p, err := dev.StartProcess("api", bin, []string{"serve"}, env, lockedWriter{&out, &outMu}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(10 * time.Second)
		if t.Failed() {
			outMu.Lock()
			t.Logf("api output:\n%s", out.String())
			outMu.Unlock()
		}
	})
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	if err := p.WaitFor(ctx, time.Minute, func(ctx context.Context) error {
		r, err := hc.Get(base + "/healthz")
		if err != nil {
			return err
		}
		r.Body.Close()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s := &server{URL: base, http: hc}
	before := peakRSS(t, p.Pid())

	const workers, duration = 48, 6 * time.Second
	deadline := time.Now().Add(duration)
	var sent, unexpected atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				id, secret := fmt.Sprintf("made-up-%d-%d", w, i), "not-the-secret-"+strconv.Itoa(i)
				var a answer
				switch i % 3 {
				case 0:
					a = s.post("/oauth/token", url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"},
						"password": {"guess"}, "client_id": {id}, "client_secret": {secret}})
				case 1:
					a = s.post("/oauth/introspect", url.Values{"token": {"x"}}, "Authorization", secBasic(id, secret))
				default:
					a = s.post("/oauth/revoke", url.Values{"token": {"x"}}, "Authorization", secBasic(id, secret))
				}
				sent.Add(1)
				if a.err != nil || a.status != 401 {
					unexpected.Add(1)
				}
			}
		}()
	}
	logins, failed := 0, 0
	for time.Now().Before(deadline) {
		if a := s.post("/oauth/token", login("editor@demo.test", password)); a.status == 200 {
			logins++
		} else {
			failed++
			t.Errorf("a real sign-in during the flood = %d %s %v", a.status, a.body, a.err)
		}
	}
	wg.Wait()
	peak := peakRSS(t, p.Pid())
	t.Logf("%d bad-client requests from %d connections in %v (%d not 401); %d real sign-ins, %d failed; peak RSS %d MiB (%d MiB before the flood)",
		sent.Load(), workers, duration, unexpected.Load(), logins, failed, peak>>20, before>>20)
	if unexpected.Load() > 0 {
		t.Errorf("%d bad-client requests got something other than 401", unexpected.Load())
	}
	if logins == 0 {
		t.Error("no real sign-in succeeded during the flood")
	}
	if peak > 300<<20 {
		t.Errorf("peak RSS %d MiB under the flood, want under 300 MiB", peak>>20)
	}
}

type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
