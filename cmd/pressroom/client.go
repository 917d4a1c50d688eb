package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	clicmd "github.com/pressroom/pressroom/cli"
	"github.com/pressroom/pressroom/config"
)

// draftIDs collects repeated --draft flags.
type draftIDs []string

func (d *draftIDs) String() string     { return strings.Join(*d, ",") }
func (d *draftIDs) Set(v string) error { *d = append(*d, v); return nil }

// runClient runs an editor command (package cli) against the API.
func runClient(ctx context.Context, name string, args []string, getenv config.Getenv, stdin io.Reader, stdout, stderr io.Writer) error {
	var api string
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&api, "api", "", "the API's base URL")
	var (
		clientID    string
		timeout     time.Duration
		all         bool
		drafts      draftIDs
		comment     string
		publishWait time.Duration
	)
	switch name {
	case "login":
		fs.StringVar(&clientID, "client-id", clicmd.ClientID, "OAuth client id")
	case "upload":
		fs.DurationVar(&timeout, "timeout", 10*time.Minute, "wait for one file's processing")
	case "publish":
		fs.BoolVar(&all, "all", false, "publish every pending draft")
		fs.Var(&drafts, "draft", "a draft to publish (repeatable)")
		fs.StringVar(&comment, "comment", "", "the revision's comment")
		fs.StringVar(&comment, "m", "", "the revision's comment")
		fs.DurationVar(&publishWait, "wait", time.Minute, "follow a revision still publishing")
	}
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("%s: %v", name, err)}
	}
	if name != "upload" && fs.NArg() > 0 {
		return usageError{fmt.Sprintf("%s: unexpected argument %q", name, fs.Arg(0))}
	}
	o := clicmd.Options{API: clicmd.APIURL(api, getenv), Getenv: getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr, ConfigDir: configDir(getenv)}
	switch name {
	case "login":
		return clicmd.Login(ctx, o, clientID)
	case "logout":
		return clicmd.Logout(o)
	case "upload":
		if fs.NArg() == 0 {
			return usageError{"upload: name at least one file"}
		}
		_, err := clicmd.Upload(ctx, o, clicmd.UploadOptions{Timeout: timeout}, fs.Args())
		return err
	case "publish":
		if all && len(drafts) > 0 {
			return usageError{"publish: give --all or --draft, not both"}
		}
		_, err := clicmd.Publish(ctx, o, clicmd.PublishOptions{All: all, Drafts: drafts, Comment: comment, Wait: publishWait})
		return err
	}
	return usageError{fmt.Sprintf("unknown command %q", name)}
}

// configDir is where the sign-in is kept: $XDG_CONFIG_HOME/pressroom when
// set (read through getenv, so tests can point it elsewhere), otherwise
// the package default (os.UserConfigDir).
func configDir(getenv config.Getenv) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "pressroom")
	}
	return ""
}
