package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	clicmd "github.com/pressroom/pressroom/cli"
	"github.com/pressroom/pressroom/config"
)

// draftIDs collects repeated --draft flags.
type draftIDs []string

func (d *draftIDs) String() string     { return strings.Join(*d, ",") }
func (d *draftIDs) Set(v string) error { *d = append(*d, v); return nil }

// runClient runs an editor command (package cli) against the API.
func runClient(ctx context.Context, name string, args []string, getenv config.Getenv, stdin io.Reader, stdout, stderr io.Writer) error {
	if name == "release preview" || name == "history" || name == "restore" {
		return runOwnFlags(ctx, name, args, getenv, stdin, stdout, stderr)
	}
	var api string
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&api, "api", "", "the API's base URL")
	var (
		clientID, site string
		noBrowser      bool
		timeout        time.Duration
		all, mine, yes bool
		drafts         draftIDs
		comment        string
		publishWait    time.Duration
		sub            string
		unstage        bool
		mo             clicmd.MemberOptions
	)
	if name == "release" {
		if len(args) == 0 {
			return usageError{"release: give a command: create, stage or publish"}
		}
		sub, args = args[0], args[1:]
	}
	switch name {
	case "login":
		fs.StringVar(&clientID, "client-id", clicmd.ClientID, "OAuth client id")
		fs.StringVar(&site, "site", "", "the site to sign in to (its subdomain-slug), for a user of several sites")
		fs.BoolVar(&noBrowser, "no-browser", false, "print the address and read the pasted code")
		fs.DurationVar(&timeout, "timeout", 5*time.Minute, "wait for the sign-in in the browser")
	case "upload":
		fs.DurationVar(&timeout, "timeout", 10*time.Minute, "wait for one file's processing")
	case "publish":
		fs.BoolVar(&all, "all", false, "publish every pending draft")
		fs.BoolVar(&mine, "mine", false, "publish the caller's pending drafts")
		fs.BoolVar(&yes, "yes", false, "publish without asking")
		fs.BoolVar(&yes, "y", false, "publish without asking")
		fs.Var(&drafts, "draft", "a draft to publish (repeatable)")
		fs.StringVar(&comment, "comment", "", "the revision's comment")
		fs.StringVar(&comment, "m", "", "the revision's comment")
		fs.DurationVar(&publishWait, "wait", time.Minute, "follow a revision still publishing")
	case "release":
		releaseFlags(fs, &unstage, &comment, &publishWait)
	case "member add", "member role":
		memberFlags(fs, name, &mo)
	}
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("%s: %v", name, err)}
	}
	if err := checkArgs(name, fs, &mo); err != nil {
		return err
	}
	o := clientOptions(api, getenv, stdin, stdout, stderr)
	switch name {
	case "login":
		return clicmd.Login(ctx, o, clicmd.LoginOptions{ClientID: clientID, NoBrowser: noBrowser, Timeout: timeout, Site: site})
	case "logout":
		return clicmd.Logout(o)
	case "upload":
		if fs.NArg() == 0 {
			return usageError{"upload: name at least one file"}
		}
		_, err := clicmd.Upload(ctx, o, clicmd.UploadOptions{Timeout: timeout}, fs.Args())
		return err
	case "release":
		return clicmd.Release(ctx, o, clicmd.ReleaseOptions{Command: sub, Args: fs.Args(), Unstage: unstage, Comment: comment, Wait: publishWait})
	case "publish":
		if (all && mine) || ((all || mine) && len(drafts) > 0) {
			return usageError{"publish: give one of --all, --mine or --draft"}
		}
		_, err := clicmd.Publish(ctx, o, clicmd.PublishOptions{All: all, Mine: mine, Yes: yes, Drafts: drafts, Comment: comment, Wait: publishWait})
		return err
	case "member list", "member add", "member role", "member remove":
		return runMember(ctx, o, name, mo)
	}
	return usageError{fmt.Sprintf("unknown command %q", name)}
}

// releaseFlags registers the flags of the release commands.
func releaseFlags(fs *flag.FlagSet, unstage *bool, comment *string, wait *time.Duration) {
	fs.BoolVar(unstage, "unstage", false, "stage: take the drafts out of the release")
	fs.StringVar(comment, "comment", "", "publish: the revision's comment")
	fs.StringVar(comment, "m", "", "publish: the revision's comment")
	fs.DurationVar(wait, "wait", time.Minute, "publish: follow a revision still publishing")
}

// checkArgs checks the arguments left after the flags: one member for
// member role and remove, files for upload, a release's own for release,
// none for the rest.
func checkArgs(name string, fs *flag.FlagSet, mo *clicmd.MemberOptions) error {
	if name == "member role" || name == "member remove" {
		if fs.NArg() != 1 {
			return usageError{name + ": name one member (membership id or e-mail)"}
		}
		mo.Member = fs.Arg(0)
	} else if name != "upload" && name != "release" && fs.NArg() > 0 {
		return usageError{fmt.Sprintf("%s: unexpected argument %q", name, fs.Arg(0))}
	}
	return nil
}

// memberFlags registers the flags of member add and member role.
func memberFlags(fs *flag.FlagSet, name string, mo *clicmd.MemberOptions) {
	if name == "member add" {
		fs.StringVar(&mo.Email, "email", "", "the member's e-mail")
		fs.StringVar(&mo.Name, "name", "", "a new user's name")
	}
	fs.StringVar(&mo.Role, "role", "", "viewer, author, editor or admin")
	fs.StringVar(&mo.PathPrefix, "path-prefix", "", "the section the role covers (/blog/)")
}

// runMember runs a member command (docs/auth.md, "Managing the team").
func runMember(ctx context.Context, o clicmd.Options, name string, mo clicmd.MemberOptions) error {
	switch name {
	case "member add":
		if mo.Email == "" || mo.Role == "" {
			return usageError{"member add: -email and -role are required"}
		}
		return clicmd.MemberAdd(ctx, o, mo)
	case "member role":
		if mo.Role == "" {
			return usageError{"member role: -role is required"}
		}
		return clicmd.MemberRole(ctx, o, mo)
	case "member remove":
		return clicmd.MemberRemove(ctx, o, mo)
	}
	return clicmd.MemberList(ctx, o)
}

// isTerminal says whether f is a terminal (a person may be asked there).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
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

// runReleasePreview runs `pressroom release preview [--expires-in D] ID`:
// a preview link of the release, its url printed (docs/releases.md, "Preview links").
func runReleasePreview(ctx context.Context, args []string, getenv config.Getenv, stdin io.Reader, stdout, stderr io.Writer) error {
	var api string
	var expiresIn time.Duration
	fs := flag.NewFlagSet("release preview", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&api, "api", "", "the API's base URL")
	fs.DurationVar(&expiresIn, "expires-in", 0, "how long the link works (default 7 days, at most 30)")
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("release preview: %v", err)}
	}
	if fs.NArg() != 1 {
		return usageError{"release preview: name one release id"}
	}
	o := clientOptions(api, getenv, stdin, stdout, stderr)
	_, err := clicmd.ReleasePreview(ctx, o, clicmd.PreviewOptions{Release: fs.Arg(0), ExpiresIn: expiresIn})
	return err
}

// runHistory runs `pressroom history [-n N] PAGE-PATH` and `pressroom
// restore [--replace-draft] VERSION` (docs/history.md).
func runHistory(ctx context.Context, name string, args []string, getenv config.Getenv, stdin io.Reader, stdout, stderr io.Writer) error {
	var api string
	var limit int
	var replace bool
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&api, "api", "", "the API's base URL")
	if name == "history" {
		fs.IntVar(&limit, "n", 20, "how many versions")
	} else {
		fs.BoolVar(&replace, "replace-draft", false, "replace the record's pending draft")
	}
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("%s: %v", name, err)}
	}
	if fs.NArg() != 1 {
		if name == "history" {
			return usageError{"history: name one page path (/blog/post)"}
		}
		return usageError{"restore: name one version id"}
	}
	o := clientOptions(api, getenv, stdin, stdout, stderr)
	if name == "history" {
		return clicmd.History(ctx, o, clicmd.HistoryOptions{Path: fs.Arg(0), Limit: limit})
	}
	return clicmd.Restore(ctx, o, clicmd.RestoreOptions{Version: fs.Arg(0), ReplaceDraft: replace})
}

// runOwnFlags runs the editor commands whose flags runClient does not
// parse: release preview, history and restore.
func runOwnFlags(ctx context.Context, name string, args []string, getenv config.Getenv, stdin io.Reader, stdout, stderr io.Writer) error {
	if name == "release preview" {
		return runReleasePreview(ctx, args, getenv, stdin, stdout, stderr)
	}
	return runHistory(ctx, name, args, getenv, stdin, stdout, stderr)
}

// clientOptions are the options of an editor command against the API api
// (the flag's value; "" for the default).
func clientOptions(api string, getenv config.Getenv, stdin io.Reader, stdout, stderr io.Writer) clicmd.Options {
	return clicmd.Options{API: clicmd.APIURL(api, getenv), Getenv: getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr,
		ConfigDir: configDir(getenv), Terminal: isTerminal(stdin) && isTerminal(stderr)}
}
