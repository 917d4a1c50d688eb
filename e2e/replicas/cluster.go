// Package replicas runs Pressroom the way production does: several
// `pressroom serve` and `pressroom worker` processes from the built binary,
// sharing one Postgres database, one Temporal namespace and task queues, and
// one pair of buckets, behind a round-robin reverse proxy. Its tests
// (replicas_test.go, faults_test.go) prove that what one process caches
// never contradicts what another did; bench/soak drives it for minutes.
//
// A Cluster is given a config.Config that already points at a migrated
// database and existing buckets (testsupport in tests, benchenv in the
// soak); it only starts and stops processes.
package replicas

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/testsupport"
)

// Options say what to run.
type Options struct {
	Bin     string        // the pressroom binary (dev.BuildPressroom)
	Config  config.Config // database, buckets, Temporal, task queues
	APIs    int
	Workers int
	Dir     string   // logs and the workers' TMPDIR
	Env     []string // extra NAME=value for every process; later values win
	// Temporal is a client of the cluster's Temporal server, used to see
	// that a worker polls before Start returns.
	Temporal client.Client
}

// Cluster is N API processes behind a round-robin proxy and M workers.
type Cluster struct {
	// URL is the proxy's; it is every API's PRESSROOM_PUBLIC_URL, so the
	// tokens any replica issues name it as their issuer and audience.
	URL     string
	APIs    []*Replica
	Workers []*Replica

	opts  Options
	proxy *http.Server
	next  atomic.Uint64
}

// Replica is one `pressroom serve` or `pressroom worker` process, which can
// be killed and started again with the same settings (and, for an API, the
// same address).
type Replica struct {
	Name string
	URL  string // an API's own address, for requests aimed at it; "" for a worker

	c       *Cluster
	args    []string
	env     []string
	logPath string
	// DebugURL serves net/http/pprof (PRESSROOM_DEBUG_ADDR): the soak reads
	// goroutine counts from it.
	DebugURL string

	mu   sync.Mutex
	proc *dev.Process
	log  *os.File
}

// Start starts the proxy, the APIs and the workers, and returns when every
// API answers /healthz and every worker polls its task queue.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.APIs < 1 || o.Workers < 0 {
		return nil, errors.New("replicas: want at least one API")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &Cluster{URL: "http://" + ln.Addr().String(), opts: o}
	c.opts.Config.PublicURL = c.URL
	c.proxy = &http.Server{Handler: &httputil.ReverseProxy{Rewrite: c.rewrite, ErrorHandler: proxyError}, ReadHeaderTimeout: 10 * time.Second}
	go c.proxy.Serve(ln) //nolint:errcheck // ends with Close
	if err := os.MkdirAll(filepath.Join(o.Dir, "tmp"), 0o755); err != nil {
		return nil, err
	}
	for i := range o.APIs {
		port, err := dev.FreePort()
		if err != nil {
			return nil, err
		}
		dport, err := dev.FreePort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		r := c.replica(fmt.Sprintf("api-%d", i+1), []string{"serve"}, dport,
			"PRESSROOM_HTTP_ADDR="+addr, "PRESSROOM_AUTO_MIGRATE=false")
		r.URL = "http://" + addr
		c.APIs = append(c.APIs, r)
	}
	for i := range o.Workers {
		dport, err := dev.FreePort()
		if err != nil {
			return nil, err
		}
		c.Workers = append(c.Workers, c.replica(fmt.Sprintf("worker-%d", i+1), []string{"worker"}, dport))
	}
	errs := make(chan error, len(c.APIs)+len(c.Workers))
	for _, r := range append(append([]*Replica{}, c.APIs...), c.Workers...) {
		go func() { errs <- r.Start(ctx) }()
	}
	var all []error
	for range len(c.APIs) + len(c.Workers) {
		all = append(all, <-errs)
	}
	if err := errors.Join(all...); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) replica(name string, args []string, debugPort int, env ...string) *Replica {
	debug := "127.0.0.1:" + strconv.Itoa(debugPort)
	e := append(testsupport.WorkerEnv(c.opts.Config, filepath.Join(c.opts.Dir, "tmp")),
		"PRESSROOM_PUBLIC_URL="+c.URL, "PRESSROOM_DEBUG_ADDR="+debug,
		"PRESSROOM_SITE_UPLOAD_LIMIT="+strconv.Itoa(c.opts.Config.SiteUploadLimit),
		"PRESSROOM_DB_MAX_CONNS="+strconv.Itoa(c.opts.Config.DBMaxConns),
		"PRESSROOM_SIGNATURE_TTL="+c.opts.Config.SignatureTTL.String(),
		"PRESSROOM_PUBLISH_WAIT="+c.opts.Config.PublishWait.String(),
		"PRESSROOM_REQUEST_TIMEOUT="+c.opts.Config.RequestTimeout.String(),
	)
	e = append(append(e, env...), c.opts.Env...)
	return &Replica{Name: name, c: c, args: args, env: e, DebugURL: "http://" + debug,
		logPath: filepath.Join(c.opts.Dir, name+".log")}
}

// rewrite sends each request to the next API in turn, skipping those that
// are down (killed by a test), as a load balancer's health check would.
func (c *Cluster) rewrite(pr *httputil.ProxyRequest) {
	n := len(c.APIs)
	start := c.next.Add(1)
	target := c.APIs[int(start%uint64(n))]
	for i := range n {
		if r := c.APIs[int((start+uint64(i))%uint64(n))]; r.Running() {
			target = r
			break
		}
	}
	u, _ := url.Parse(target.URL)
	pr.SetURL(u)
	pr.Out.Host = pr.In.Host
}

func proxyError(w http.ResponseWriter, _ *http.Request, err error) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, "proxy: "+err.Error(), http.StatusBadGateway)
}

// Close stops every process (SIGTERM, then SIGKILL) and the proxy.
func (c *Cluster) Close() {
	var wg sync.WaitGroup
	for _, r := range append(append([]*Replica{}, c.APIs...), c.Workers...) {
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.Stop(15 * time.Second) }()
	}
	wg.Wait()
	_ = c.proxy.Close()
	for _, r := range append(append([]*Replica{}, c.APIs...), c.Workers...) {
		r.mu.Lock()
		if r.log != nil {
			r.log.Close()
			r.log = nil
		}
		r.mu.Unlock()
	}
}

// Logs returns the tail of every process's output, for a failing test.
func (c *Cluster) Logs(tail int) string {
	var b strings.Builder
	for _, r := range append(append([]*Replica{}, c.APIs...), c.Workers...) {
		out, _ := os.ReadFile(r.logPath)
		if len(out) > tail {
			out = out[len(out)-tail:]
		}
		fmt.Fprintf(&b, "--- %s (%s)\n%s\n", r.Name, r.logPath, out)
	}
	return b.String()
}

// Start starts the process (again) and waits until it is ready: an API
// answers /healthz, a worker polls both task queues.
func (r *Replica) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != nil {
		select {
		case <-r.proc.Exited():
		default:
			return fmt.Errorf("%s is running", r.Name)
		}
	}
	if r.log == nil {
		f, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		r.log = f
	}
	p, err := dev.StartProcess(r.Name, r.c.opts.Bin, r.args, r.env, r.log, nil)
	if err != nil {
		return err
	}
	r.proc = p
	ready := r.apiReady
	if r.URL == "" {
		ready = r.workerReady
	}
	if err := p.WaitFor(ctx, 2*time.Minute, ready); err != nil {
		return fmt.Errorf("%w (log: %s)", err, r.logPath)
	}
	return nil
}

func (r *Replica) apiReady(ctx context.Context) error { return dev.HTTPOK(ctx, r.URL+"/healthz") }

// workerReady is true once this process (the SDK's default identity starts
// with its pid) polls the activities of its task queues (images, publishing,
// webhook deliveries).
func (r *Replica) workerReady(ctx context.Context) error {
	if r.c.opts.Temporal == nil {
		return nil
	}
	prefix := strconv.Itoa(r.proc.Pid()) + "@"
	for _, q := range []string{r.c.opts.Config.TaskQueue, r.c.opts.Config.PublishTaskQueue, r.c.opts.Config.Webhooks.TaskQueue} {
		resp, err := r.c.opts.Temporal.DescribeTaskQueue(ctx, q, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		if err != nil {
			return err
		}
		found := false
		for _, p := range resp.GetPollers() {
			found = found || strings.HasPrefix(p.GetIdentity(), prefix)
		}
		if !found {
			return fmt.Errorf("%s does not poll %s yet", r.Name, q)
		}
	}
	return nil
}

// Running tells whether the process is up (started and not exited).
func (r *Replica) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil {
		return false
	}
	select {
	case <-r.proc.Exited():
		return false
	default:
		return true
	}
}

// Pid is the process id of the current (or last) process; 0 before Start.
func (r *Replica) Pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil {
		return 0
	}
	return r.proc.Pid()
}

// Kill sends SIGKILL: no deferred cleanup, no graceful drain.
func (r *Replica) Kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != nil {
		r.proc.Kill()
	}
}

// Stop sends SIGTERM, then SIGKILL after grace.
func (r *Replica) Stop(grace time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil {
		return nil
	}
	return r.proc.Stop(grace)
}

// Goroutines reads the process's goroutine count from its pprof endpoint.
func (r *Replica) Goroutines(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.DebugURL+"/debug/pprof/goroutine?debug=1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	// The first line is "goroutine profile: total N".
	line := make([]byte, 64)
	n, _ := io.ReadFull(resp.Body, line)
	f := strings.Fields(strings.SplitN(string(line[:n]), "\n", 2)[0])
	if len(f) < 4 {
		return 0, fmt.Errorf("%s: unexpected goroutine profile %q", r.Name, line[:n])
	}
	return strconv.Atoi(f[3])
}

// RSS is the process's resident set size in bytes, from /proc.
func (r *Replica) RSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.Pid()))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("%s: no VmRSS", r.Name)
}
