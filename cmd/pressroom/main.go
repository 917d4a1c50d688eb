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
	"strings"
	"syscall"

	"github.com/cli/browser"

	"github.com/pressroom/pressroom/config"
)

func main() {
	// What the system's browser launcher (xdg-open, open) prints is
	// progress, not a command's output: stdout stays for results.
	browser.Stdout = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var u usageError
		if errors.As(err, &u) {
			if c, _ := lookup(os.Args[1:]); c != nil {
				fmt.Fprint(os.Stderr, c.usage())
			} else {
				fmt.Fprint(os.Stderr, usage)
			}
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
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			fmt.Fprint(stdout, usage)
			return nil
		}
		c, rest := lookup(args[1:])
		if c == nil || len(rest) > 0 {
			return usageError{fmt.Sprintf("help: no command %q", strings.Join(args[1:], " "))}
		}
		fmt.Fprint(stdout, c.usage())
		return nil
	}
	c, rest := lookup(args)
	if c != nil && wantsHelp(rest) {
		fmt.Fprint(stdout, c.usage())
		return nil
	}
	// The editor commands are clients of a running API: they need none of
	// the server's configuration.
	if c != nil && c.client {
		return runClient(ctx, c.name, rest, getenv, stdin, stdout, stderr)
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := cfg.NewLogger(stderr)
	env := &environment{cfg: cfg, log: log, stdin: stdin, stdout: stdout, getenv: getenv}

	cmd, rest := args[0], args[1:]
	// The long-running processes refuse the secret keys' source defaults
	// (each the keys it uses); the admin commands may run against a
	// development database with them.
	if keys := secretKeysOf[cmd]; keys != nil {
		if err := cfg.CheckSecretKeys(keys...); err != nil {
			return fmt.Errorf("configuration: %w", err)
		}
	}
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
	}
	return usageError{fmt.Sprintf("unknown command %q", cmd)}
}

// secretKeysOf names the secret keys each long-running command uses: the
// API stores client secrets and seals webhook secrets, the worker opens
// webhook secrets to sign deliveries.
var secretKeysOf = map[string][]string{
	"serve":  {config.ClientSecretKeyVar, config.WebhookSecretKeyVar},
	"worker": {config.WebhookSecretKeyVar},
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
