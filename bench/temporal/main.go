// Command temporal measures how long Temporal itself takes to run a
// workflow of one activity (the shape of a publish) under different server
// settings, so that a setting's effect on dispatch is seen apart from
// Pressroom's own work:
//
//	go run ./bench/temporal [-runs 35] [-settings defaults,eager,reads,chosen]
//
// For each setting it starts a private Temporal dev server (in memory,
// headless) with that dynamic configuration, a worker in this process and
// a workflow whose one activity returns at once, then runs -runs workflows
// one at a time (the first 5 are a warm-up) and prints the p50 and p95 of
// the whole run and of each phase, read from the workflow history: the
// start, each workflow task's and the activity's dispatch (scheduled →
// started) and the answer. See bench/content/README.md, "Publish latency".
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/pressroom/pressroom/bench/internal/benchenv"
	"github.com/pressroom/pressroom/dev"
)

// settings are the dynamic configurations compared, by name.
var settings = map[string][]string{
	"defaults":   {},
	"partitions": {"matching.numTaskqueueReadPartitions=1", "matching.numTaskqueueWritePartitions=1"},
	"eager":      {"system.enableActivityEagerExecution=true"},
	"reads":      {"history.transferProcessorMaxPollRPS=200"},
	"chosen":     dev.TemporalDynamicConfig,
}

const taskQueue = "bench-temporal"

// noop is the activity: all the time measured is Temporal's.
func noop(context.Context) error { return nil }

// oneActivity is a workflow of one activity, with the options of
// workflows.PublishRevision.
func oneActivity(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: 20 * time.Second})
	return workflow.ExecuteActivity(ctx, noop).Get(ctx, nil)
}

var phases = []string{"whole run (client)", "start → workflow started", "workflow task 1 dispatch", "activity dispatch", "workflow task 2 dispatch", "workflow completed → result"}

func main() {
	runs := flag.Int("runs", 35, "workflows per setting, one at a time (the first 5 are not counted)")
	which := flag.String("settings", "defaults,eager,reads,chosen", "settings to compare, in order: "+strings.Join(names(), ", "))
	flag.Parse()
	if *runs < 6 {
		log.Fatal("-runs must be at least 6")
	}
	bin, err := dev.TemporalTool.Ensure(context.Background(), mustRoot(), os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("machine: %s; load average at start: %s\n", benchenv.Machine(), benchenv.LoadAvg())
	fmt.Printf("%-10s", "setting")
	for _, p := range phases {
		fmt.Printf(" %26s", p)
	}
	fmt.Println("   (p50 / p95)")
	for _, name := range strings.Split(*which, ",") {
		cfg, ok := settings[name]
		if !ok {
			log.Fatalf("unknown setting %q (known: %s)", name, strings.Join(names(), ", "))
		}
		res, err := measure(context.Background(), bin, cfg, *runs)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		fmt.Printf("%-10s", name)
		for _, d := range res {
			slices.Sort(d)
			fmt.Printf(" %26s", fmt.Sprintf("%.1f / %.1f ms", ms(benchenv.Percentile(d, 50)), ms(benchenv.Percentile(d, 95))))
		}
		fmt.Println()
	}
	fmt.Printf("load average at the end: %s\n", benchenv.LoadAvg())
	for _, name := range names() {
		fmt.Printf("  %-10s %s\n", name, strings.Join(settings[name], " "))
	}
}

func measure(ctx context.Context, bin string, cfg []string, runs int) ([][]time.Duration, error) {
	port, err := dev.FreePort()
	if err != nil {
		return nil, err
	}
	srv, addr, err := dev.StartTemporal(ctx, dev.TemporalOptions{Bin: bin, Port: port, DynamicConfig: cfg}, io.Discard)
	if err != nil {
		return nil, err
	}
	defer srv.Stop(10 * time.Second) //nolint:errcheck // a private server going away
	quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	c, err := client.Dial(client.Options{HostPort: addr, Logger: quiet})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	w := worker.New(c, taskQueue, worker.Options{MaxConcurrentActivityExecutionSize: 4, MaxConcurrentWorkflowTaskExecutionSize: 16})
	w.RegisterWorkflow(oneActivity)
	w.RegisterActivity(noop)
	if err := w.Start(); err != nil {
		return nil, err
	}
	defer w.Stop()
	out := make([][]time.Duration, len(phases))
	for i := range runs {
		t0 := time.Now()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bench-%d", i), TaskQueue: taskQueue}, oneActivity)
		if err != nil {
			return nil, err
		}
		if err := run.Get(ctx, nil); err != nil {
			return nil, err
		}
		t1 := time.Now()
		if i < 5 {
			continue
		}
		p, err := split(ctx, c, run.GetID(), t0, t1)
		if err != nil {
			return nil, err
		}
		for k := range p {
			out[k] = append(out[k], p[k])
		}
	}
	return out, nil
}

// split reads a run's phases (see phases) from its history.
func split(ctx context.Context, c client.Client, id string, t0, t1 time.Time) ([]time.Duration, error) {
	r, err := benchenv.ReadRunTimes(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return []time.Duration{t1.Sub(t0), r.Started.Sub(t0), r.FirstTask(), r.ActivityStarted.Sub(r.ActivityScheduled),
		r.LastTask(), t1.Sub(r.Completed)}, nil
}

func names() []string {
	n := make([]string, 0, len(settings))
	for k := range settings {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

func mustRoot() string {
	root, err := dev.CheckoutRoot()
	if err != nil {
		log.Fatal(err)
	}
	return root
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
