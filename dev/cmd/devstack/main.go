// Command devstack runs Pressroom's local stack.
//
//	devstack up                 everything: databases, Temporal (+UI), MinIO, seed data, API, worker (make dev)
//	devstack exec -- CMD ARGS   the services only, on free ports, for the length of CMD (make test)
//	devstack tools              build (once, cached) the Temporal CLI, MinIO, Helm and kubeconform binaries
//	devstack chart              lint the Helm chart and validate what it renders (make vet)
//	devstack deps               install (as root or with sudo, on Debian/Ubuntu) the system packages the stack needs
//
// Every command first checks the system packages (libvips, a C compiler, the
// vips tools, PostgreSQL when none is reachable; exec and deps also Chromium
// for the browser tests), so a missing one is found in seconds, before any
// multi-minute build.
//
// Both stop everything they started on Ctrl-C or SIGTERM.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
	"github.com/pressroom/pressroom/models"
)

func main() {
	// Stop with whatever started us (make, go run, a terminal that closes):
	// the kernel sends SIGTERM when the parent dies, and the handler below
	// then stops every service, so nothing is left running.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		fail(errors.New("usage: devstack up | devstack exec -- CMD [ARGS...] | devstack tools | devstack chart | devstack deps"))
	}
	root, err := dev.CheckoutRoot()
	if err != nil {
		fail(err)
	}
	switch os.Args[1] {
	case "up", "tools":
		if err := (dev.SystemCheck{}).Ensure(ctx, dev.SystemRequirements()); err != nil {
			fail(err)
		}
	case "exec", "deps": // the tests' needs too (Chromium), which `up` has not
		if err := (dev.SystemCheck{}).Ensure(ctx, dev.TestRequirements()); err != nil {
			fail(err)
		}
	}
	switch os.Args[1] {
	case "deps":
		fmt.Fprintln(os.Stderr, "devstack: system packages present")
	case "up":
		err = up(ctx, root)
	case "tools":
		err = tools(ctx, root)
	case "chart":
		err = dev.CheckChart(ctx, root, os.Stderr)
	case "exec":
		args := os.Args[2:]
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) == 0 {
			fail(errors.New("usage: devstack exec -- CMD [ARGS...]"))
		}
		var code int
		code, err = execWith(ctx, root, args)
		if err == nil {
			os.Exit(code)
		}
	default:
		err = fmt.Errorf("unknown command %q (want up, exec, tools, chart or deps)", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

// tools builds (or finds cached) every tool and makes the chart check's
// Kubernetes schemas, so `make vet` and `make test` build nothing.
func tools(ctx context.Context, root string) error {
	for _, t := range []dev.Tool{dev.TemporalTool, dev.MinIOTool, dev.HelmTool, dev.KubeconformTool} {
		path, err := t.Ensure(ctx, root, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %s\n", t.Name, path)
	}
	dir, err := dev.KubernetesSchemas(ctx, root, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Printf("kubernetes-schemas: %s\n", dir)
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "devstack:", err)
	os.Exit(1)
}

// execWith starts the services on free ports in a temporary directory, runs
// args with PRESSROOM_TEST_* pointing at them, and stops the services.
func execWith(ctx context.Context, root string, args []string) (int, error) {
	state, err := os.MkdirTemp("", "pressroom-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(state)
	start := time.Now()
	stack, err := dev.Up(ctx, dev.StackOptions{
		RepoRoot: root, StateDir: state, DatabaseURL: os.Getenv("DATABASE_URL"), Database: "pressroom", Log: os.Stderr,
	})
	if err != nil {
		return 0, err
	}
	defer stack.Down() //nolint:errcheck // best effort on the way out
	fmt.Fprintf(os.Stderr, "devstack: services up in %s (postgres: %s, temporal: %s, minio: %s)\n",
		time.Since(start).Round(time.Millisecond), stack.Postgres.Source, stack.TemporalAddress, stack.S3Endpoint)

	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), dev.TestEnv(stack)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 0, err
	}
	return 0, nil
}

// up runs the whole stack for a developer until interrupted.
func up(ctx context.Context, root string) error {
	if !dev.PortFree(8080) {
		return errors.New("port 8080 is taken: is another `make dev` running? Stop it first")
	}
	state := filepath.Join(root, ".dev")
	stack, err := dev.Up(ctx, dev.StackOptions{
		RepoRoot: root, StateDir: state, Persistent: true, FixedPorts: true,
		DatabaseURL: os.Getenv("DATABASE_URL"), Database: "pressroom", Log: os.Stderr,
	})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(os.Stderr, "devstack: stopping everything")
		if err := stack.Down(); err != nil {
			fmt.Fprintln(os.Stderr, "devstack:", err)
		}
	}()
	fmt.Fprintf(os.Stderr, "devstack: postgres from %s\n", stack.Postgres.Source)

	seed, err := migrateAndSeed(ctx, stack.Postgres.URL)
	if err != nil {
		return err
	}

	bin, err := dev.BuildPressroom(ctx, root, filepath.Join(state, "bin"))()
	if err != nil {
		return err
	}
	env := append(stack.Env(), dev.DevServerEnv(os.Getenv)...)
	api, err := dev.StartProcess("api", bin, []string{"serve"}, env, os.Stderr, nil)
	if err != nil {
		return err
	}
	defer api.Stop(15 * time.Second) //nolint:errcheck
	worker, err := dev.StartProcess("worker", bin, []string{"worker"}, env, os.Stderr, nil)
	if err != nil {
		return err
	}
	defer worker.Stop(15 * time.Second) //nolint:errcheck
	if err := api.WaitFor(ctx, 60*time.Second, func(ctx context.Context) error {
		return dev.HTTPOK(ctx, "http://127.0.0.1:8080/readyz")
	}); err != nil {
		return err
	}

	printBanner(stack, seed)

	select {
	case <-ctx.Done():
		return nil
	case <-api.Exited():
		return fmt.Errorf("the API exited: %v", api.Err())
	case <-worker.Exited():
		return fmt.Errorf("the worker exited: %v", worker.Err())
	}
}

// migrateAndSeed migrates the database at url and seeds the demo sites,
// their editors and the OAuth client.
func migrateAndSeed(ctx context.Context, url string) (dev.SeedResult, error) {
	db, err := models.Open(ctx, url)
	if err != nil {
		return dev.SeedResult{}, err
	}
	defer db.Close()
	m, err := models.NewMigrator(db)
	if err != nil {
		return dev.SeedResult{}, err
	}
	if _, err := m.Up(ctx); err != nil {
		return dev.SeedResult{}, err
	}
	// The API reads the same environment, so the seeded secret is
	// stored under the key it checks with.
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		return dev.SeedResult{}, err
	}
	return dev.Seed(ctx, db, []byte(cfg.OAuth.ClientSecretKey), dev.DemoSites(os.Getenv))
}

// printBanner tells the developer where everything runs and how to sign in.
func printBanner(stack *dev.Stack, seed dev.SeedResult) {
	sites := dev.DemoSites(os.Getenv)
	fmt.Printf(`
Pressroom is running.

  API            http://127.0.0.1:8080        (try: curl -s http://127.0.0.1:8080/healthz; the README's tour signs in)
  Temporal UI    %s
  Temporal       %s
  MinIO API      %s
  MinIO console  %s   (user %s, password %s)
  Database       %s

  Editors        %s / %s   (site %s)
                 %s / %s   (site %s)
  OAuth client   client_id %s
                 client_secret %s

Logs of Temporal and MinIO are in .dev/logs. Ctrl-C stops everything.
`, stack.TemporalUI, stack.TemporalAddress, stack.S3Endpoint, stack.MinIOConsole, stack.Storage.AccessKey, stack.Storage.SecretKey,
		stack.Postgres.URL, sites[0].Email, sites[0].Password, sites[0].Slug, sites[1].Email, sites[1].Password, sites[1].Slug,
		seed.ClientID, seed.ClientSecret)
}
