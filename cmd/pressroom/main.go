// Command pressroom is the one Pressroom binary: the API server, the
// Temporal worker, migrations and the administrative commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pressroom/pressroom/config"
)

const usage = `pressroom: a content-site editing API

Usage:
  pressroom serve                  run the HTTP API
  pressroom worker                 run the Temporal worker
  pressroom migrate up|down|status apply, roll back (last batch) or list migrations
  pressroom site create   -slug S -title T
  pressroom user create   -site S -email E [-name N]   (password from PRESSROOM_PASSWORD or stdin)
  pressroom client create -name N [-redirect-uri U ...] [-public]
  pressroom storage init           create the storage buckets with their expiry and CORS rules

Configuration comes from environment variables; see the README.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprint(os.Stderr, usage)
		}
		fmt.Fprintln(os.Stderr, "pressroom:", err)
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// run dispatches a command line; main and the tests both call it.
func run(ctx context.Context, args []string, getenv config.Getenv, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"no command given"}
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := cfg.NewLogger(stderr)
	env := &environment{cfg: cfg, log: log, stdin: stdin, stdout: stdout, getenv: getenv}

	cmd, rest := args[0], args[1:]
	switch {
	case cmd == "serve":
		serveDebug(ctx, env)
		return serve(ctx, env)
	case cmd == "worker":
		serveDebug(ctx, env)
		return runWorker(ctx, env)
	case cmd == "migrate" && len(rest) == 1:
		return migrateCmd(ctx, env, rest[0])
	case cmd == "site" && len(rest) >= 1 && rest[0] == "create":
		return siteCreate(ctx, env, rest[1:])
	case cmd == "user" && len(rest) >= 1 && rest[0] == "create":
		return userCreate(ctx, env, rest[1:])
	case cmd == "client" && len(rest) >= 1 && rest[0] == "create":
		return clientCreate(ctx, env, rest[1:])
	case cmd == "storage" && len(rest) == 1 && rest[0] == "init":
		return storageInit(ctx, env)
	case cmd == "help" || cmd == "-h" || cmd == "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usageError{fmt.Sprintf("unknown command %q", cmd)}
}

// environment is what every command gets: configuration, logger and streams.
type environment struct {
	cfg    config.Config
	log    *slog.Logger
	stdin  io.Reader
	stdout io.Writer
	getenv config.Getenv
}

func parseFlags(name string, args []string, define func(*flag.FlagSet)) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	define(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("%s: %v", name, err)}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("%s: unexpected argument %q", name, fs.Arg(0))}
	}
	return nil
}
