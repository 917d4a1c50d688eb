package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

func TestMain(m *testing.M) { os.Exit(testsupport.Main(m)) }

const migration = "20261121000001_sites_users_clients"

// cli runs commands the way main does, with env as the environment.
type cli struct{ env map[string]string }

func newCLI(db *testsupport.Database) *cli {
	return &cli{env: map[string]string{"DATABASE_URL": db.URL}}
}

// run runs args with stdin and returns stdout, stderr and the error.
func (c *cli) run(stdin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, func(k string) string { return c.env[k] }, strings.NewReader(stdin), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// ok runs args and fails t on an error.
func (c *cli) ok(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := c.run(stdin, args...)
	if err != nil {
		t.Fatalf("pressroom %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// TestAdminCommands walks through what an operator does on a new database;
// the steps depend on each other, so they run in order.
func TestAdminCommands(t *testing.T) {
	t.Parallel()
	db := testsupport.NewEmptyDatabase(t)
	c := newCLI(db)
	ctx := context.Background()

	tableExists := func(name string) bool {
		t.Helper()
		var exists bool
		if err := db.NewRaw("SELECT to_regclass(?) IS NOT NULL", "public."+name).Scan(ctx, &exists); err != nil {
			t.Fatalf("look up table %s: %v", name, err)
		}
		return exists
	}
	statusLine := func(state string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^` + state + ` +` + migration + `$`)
	}

	t.Run("migrate status on an empty database", func(t *testing.T) {
		out := c.ok(t, "", "migrate", "status")
		if !statusLine("pending").MatchString(out) {
			t.Errorf("migrate status should list %s as pending:\n%s", migration, out)
		}
		if tableExists("sites") {
			t.Error("migrate status created the schema")
		}
	})

	t.Run("migrate up", func(t *testing.T) {
		out := c.ok(t, "", "migrate", "up")
		if !strings.Contains(out, "applied "+migration) {
			t.Errorf("migrate up should report %s applied:\n%s", migration, out)
		}
		for _, table := range []string{"sites", "users", "oauth_clients"} {
			if !tableExists(table) {
				t.Errorf("table %s missing after migrate up", table)
			}
		}
		if out := c.ok(t, "", "migrate", "up"); !strings.Contains(out, "nothing to apply") {
			t.Errorf("a second migrate up should have nothing to apply:\n%s", out)
		}
		out = c.ok(t, "", "migrate", "status")
		if !statusLine("applied").MatchString(out) {
			t.Errorf("migrate status should list %s as applied:\n%s", migration, out)
		}
	})

	t.Run("site create", func(t *testing.T) {
		out := c.ok(t, "", "site", "create", "-slug", "s1", "-title", "T")
		site, err := models.SiteBySlug(ctx, db, "s1")
		if err != nil {
			t.Fatalf("site s1 not stored: %v", err)
		}
		if site.Title != "T" || !strings.Contains(out, site.ID.String()) {
			t.Errorf("stored %+v, printed %q; want title T and the id printed", site, out)
		}
		_, _, err = c.run("", "site", "create", "-slug", "s1", "-title", "Again")
		if !errors.Is(err, models.ErrConflict) {
			t.Errorf("a duplicate slug gave %v; want models.ErrConflict", err)
		}
	})

	t.Run("user create", func(t *testing.T) {
		tests := []struct {
			name, email, stdin string
			env                map[string]string
			password           string // "" means the command must fail
		}{
			{name: "password on stdin", email: "a@b.test", stdin: "correct horse battery\n", password: "correct horse battery"},
			{name: "CRLF on stdin", email: "crlf@b.test", stdin: "windows-password\r\nignored\n", password: "windows-password"},
			{name: "no newline on stdin", email: "eof@b.test", stdin: "no-newline-pw", password: "no-newline-pw"},
			{name: "PRESSROOM_PASSWORD wins over stdin", email: "env@b.test", stdin: "from-stdin-pw\n",
				env: map[string]string{"PRESSROOM_PASSWORD": "from-env-password"}, password: "from-env-password"},
			{name: "password shorter than 8", email: "short@b.test", stdin: "1234567\n"},
			{name: "empty stdin", email: "empty@b.test", stdin: ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				uc := newCLI(db)
				for k, v := range tt.env {
					uc.env[k] = v
				}
				out, _, err := uc.run(tt.stdin, "user", "create", "-site", "s1", "-email", tt.email, "-name", "Ann")
				u, lookupErr := models.UserByEmail(ctx, db, tt.email)
				if tt.password == "" {
					if err == nil || !strings.Contains(err.Error(), "at least 8 characters") {
						t.Errorf("user create with stdin %q: err = %v; want it refused as too short", tt.stdin, err)
					}
					if lookupErr == nil {
						t.Errorf("user %s was created despite the error", tt.email)
					}
					return
				}
				if err != nil {
					t.Fatalf("user create: %v", err)
				}
				if lookupErr != nil {
					t.Fatalf("user %s not stored: %v", tt.email, lookupErr)
				}
				if !strings.Contains(out, u.ID.String()) {
					t.Errorf("output %q does not show the new user's id %s", out, u.ID)
				}
				if strings.Contains(u.PasswordHash, tt.password) {
					t.Errorf("the stored hash %q contains the clear password", u.PasswordHash)
				}
				if err := auth.CheckPassword(u.PasswordHash, tt.password); err != nil {
					t.Errorf("CheckPassword(stored hash, %q) = %v", tt.password, err)
				}
				if err := auth.CheckPassword(u.PasswordHash, tt.password+"x"); !errors.Is(err, auth.ErrMismatch) {
					t.Errorf("CheckPassword with a wrong password = %v, want ErrMismatch", err)
				}
				site, err := models.SiteBySlug(ctx, db, "s1")
				if err != nil || u.SiteID != site.ID || u.Name != "Ann" {
					t.Errorf("user %+v should belong to site s1 (%v) and be named Ann", u, err)
				}
			})
		}
		if _, _, err := c.run("another-password\n", "user", "create", "-site", "nosuch", "-email", "x@b.test"); err == nil {
			t.Error("user create in a site that does not exist succeeded")
		}
		if _, _, err := c.run("another-password\n", "user", "create", "-site", "s1", "-email", "A@B.test"); !errors.Is(err, models.ErrConflict) {
			t.Errorf("a second user a@b.test (case differs) gave %v; want models.ErrConflict", err)
		}
		// The role: editor unless -role says otherwise, narrowed by -path-prefix.
		site, err := models.SiteBySlug(ctx, db, "s1")
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			email, role, prefix string
			args                []string
		}{
			{"default-role@b.test", "editor", "", nil},
			{"author@b.test", "author", "/blog/", []string{"-role", "author", "-path-prefix", "/blog/"}},
		} {
			args := append([]string{"user", "create", "-site", "s1", "-email", tt.email}, tt.args...)
			if out, _, err := c.run("a-good-password\n", args...); err != nil || !strings.Contains(out, " as "+tt.role) {
				t.Fatalf("%v: %q %v", args, out, err)
			}
			u, err := models.UserByEmail(ctx, db, tt.email)
			if err != nil {
				t.Fatal(err)
			}
			m, err := models.MembershipOf(ctx, db, site.ID, u.ID)
			if err != nil || string(m.Role) != tt.role || (tt.prefix == "") != (m.PathPrefix == nil) || (m.PathPrefix != nil && *m.PathPrefix != tt.prefix) {
				t.Errorf("%s: membership %+v %v, want %s %q", tt.email, m, err, tt.role, tt.prefix)
			}
		}
		for _, args := range [][]string{{"-role", "owner"}, {"-role", "author", "-path-prefix", "blog"}} {
			args = append([]string{"user", "create", "-site", "s1", "-email", "bad-role@b.test"}, args...)
			if _, _, err := c.run("a-good-password\n", args...); err == nil {
				t.Errorf("%v succeeded", args)
			}
		}
	})

	t.Run("client create", func(t *testing.T) {
		out := c.ok(t, "", "client", "create", "-name", "x", "-redirect-uri", "https://app.example.test/cb")
		id := regexp.MustCompile(`(?m)^client_id: +(\S+)$`).FindStringSubmatch(out)
		secret := regexp.MustCompile(`(?m)^client_secret: +(\S+)$`).FindStringSubmatch(out)
		if id == nil || secret == nil {
			t.Fatalf("client create should print client_id and client_secret:\n%s", out)
		}
		if strings.Count(out, "client_secret") != 1 || strings.Count(out, secret[1]) != 1 {
			t.Errorf("the secret should be printed exactly once:\n%s", out)
		}
		var stored models.OAuthClient
		if err := db.NewSelect().Model(&stored).Where("id = ?", id[1]).Scan(ctx); err != nil {
			t.Fatalf("client %s not stored: %v", id[1], err)
		}
		if !stored.Confidential || stored.SecretHash == nil || stored.Name != "x" {
			t.Fatalf("stored client %+v; want a confidential client x with a secret hash", stored)
		}
		if *stored.SecretHash == secret[1] || strings.Contains(*stored.SecretHash, secret[1]) {
			t.Errorf("the clear secret is stored")
		}
		if err := auth.CheckClientSecret([]byte(testsupport.Defaults().OAuth.ClientSecretKey), *stored.SecretHash, secret[1]); err != nil {
			t.Errorf("the stored secret_hash does not verify the printed secret: %v", err)
		}
		if len(stored.RedirectURIs) != 1 || stored.RedirectURIs[0] != "https://app.example.test/cb" {
			t.Errorf("redirect URIs %q, want [https://app.example.test/cb]", stored.RedirectURIs)
		}

		out = c.ok(t, "", "client", "create", "-public", "-name", "y")
		if strings.Contains(out, "client_secret") {
			t.Errorf("a public client got a secret:\n%s", out)
		}
		id = regexp.MustCompile(`(?m)^client_id: +(\S+)$`).FindStringSubmatch(out)
		if id == nil {
			t.Fatalf("client create -public should print client_id:\n%s", out)
		}
		stored = models.OAuthClient{}
		if err := db.NewSelect().Model(&stored).Where("id = ?", id[1]).Scan(ctx); err != nil {
			t.Fatalf("public client %s not stored: %v", id[1], err)
		}
		if stored.Confidential || stored.SecretHash != nil {
			t.Errorf("stored public client %+v; want no secret and not confidential", stored)
		}
	})

	// client create -site -role: an integration client of s1 (docs/auth.md,
	// "Integration tokens"), as POST /oauth-clients makes one.
	t.Run("client create -site -role", func(t *testing.T) {
		out := c.ok(t, "", "client", "create", "-site", "s1", "-role", "author", "-rate-limit", "60", "-name", "Importer")
		id := regexp.MustCompile(`(?m)^client_id: +(\S+)$`).FindStringSubmatch(out)
		secret := regexp.MustCompile(`(?m)^client_secret: +(\S+)$`).FindStringSubmatch(out)
		if id == nil || secret == nil {
			t.Fatalf("client create -site should print client_id and client_secret:\n%s", out)
		}
		sc, err := models.SiteClientByClientID(ctx, db, id[1])
		if err != nil || sc.Role != models.RoleAuthor || sc.RateLimit != 60 {
			t.Fatalf("stored integration client %+v (%v); want an author with 60 requests a minute", sc, err)
		}
		for _, args := range [][]string{
			{"-site", "s1"}, {"-role", "author"}, {"-site", "s1", "-role", "owner"},
			{"-site", "s1", "-role", "viewer", "-rate-limit", "0"}, {"-site", "s1", "-role", "viewer", "-public"},
		} {
			if _, _, err := c.run("", append([]string{"client", "create"}, args...)...); err == nil {
				t.Errorf("client create %v succeeded; want it refused", args)
			}
		}
	})

	t.Run("migrate down", func(t *testing.T) {
		out := c.ok(t, "", "migrate", "down")
		if !strings.Contains(out, "rolled back "+migration) {
			t.Errorf("migrate down should report %s rolled back:\n%s", migration, out)
		}
		for _, table := range []string{"sites", "users", "oauth_clients"} {
			if tableExists(table) {
				t.Errorf("table %s still exists after migrate down", table)
			}
		}
		if out := c.ok(t, "", "migrate", "status"); !statusLine("pending").MatchString(out) {
			t.Errorf("after migrate down, status should list %s as pending:\n%s", migration, out)
		}
		if out := c.ok(t, "", "migrate", "down"); !strings.Contains(out, "nothing to roll back") {
			t.Errorf("a second migrate down should have nothing to roll back:\n%s", out)
		}
	})
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	db := testsupport.NewEmptyDatabase(t)
	tests := []struct {
		name string
		args []string
	}{
		{"no command", nil},
		{"unknown command", []string{"frobnicate"}},
		{"unknown subcommand", []string{"site", "delete"}},
		{"migrate without action", []string{"migrate"}},
		{"migrate with an unknown action", []string{"migrate", "sideways"}},
		{"unknown flag", []string{"site", "create", "-slug", "s", "-title", "T", "-colour", "red"}},
		{"flag without value", []string{"site", "create", "-slug"}},
		{"stray argument", []string{"site", "create", "-slug", "s", "-title", "T", "extra"}},
		{"missing required flag", []string{"site", "create", "-slug", "s"}},
		{"invalid e-mail", []string{"user", "create", "-site", "s", "-email", "not-an-email"}},
		{"client without name", []string{"client", "create", "-public"}},
		{"bad boolean flag", []string{"client", "create", "-name", "n", "-public=perhaps"}},
		{"storage with extra word", []string{"storage", "init", "now"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			getenv := func(k string) string {
				if k == "DATABASE_URL" {
					return db.URL
				}
				return ""
			}
			err := run(context.Background(), tt.args, getenv, strings.NewReader(""), &stdout, &stderr)
			var u usageError
			if !errors.As(err, &u) {
				t.Errorf("pressroom %q: err = %v (%T); want a usageError", tt.args, err, err)
			}
		})
	}

	t.Run("help", func(t *testing.T) {
		t.Parallel()
		var stdout bytes.Buffer
		if err := run(context.Background(), []string{"help"}, func(string) string { return "" }, strings.NewReader(""), &stdout, io.Discard); err != nil {
			t.Fatalf("help: %v", err)
		}
		if stdout.String() != usage {
			t.Errorf("help printed %q, want the usage text", stdout.String())
		}
	})

	t.Run("bad configuration is not a usage error", func(t *testing.T) {
		t.Parallel()
		getenv := func(k string) string {
			if k == "PRESSROOM_LOG_LEVEL" {
				return "loud"
			}
			return ""
		}
		err := run(context.Background(), []string{"migrate", "status"}, getenv, strings.NewReader(""), io.Discard, io.Discard)
		var u usageError
		if err == nil || errors.As(err, &u) || !strings.Contains(err.Error(), "PRESSROOM_LOG_LEVEL") {
			t.Errorf("err = %v; want a configuration error naming PRESSROOM_LOG_LEVEL", err)
		}
	})
}

// TestHelp: every command answers --help, -h and `pressroom help CMD` with
// its usage and examples, on stdout, without needing any configuration
// (even a bad one), and `pressroom --help` lists every command.
func TestHelp(t *testing.T) {
	t.Parallel()
	badConfig := func(k string) string {
		if k == "PRESSROOM_LOG_LEVEL" {
			return "loud"
		}
		return ""
	}
	runOut := func(t *testing.T, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, badConfig, strings.NewReader(""), &stdout, &stderr); err != nil {
			t.Fatalf("pressroom %s: %v", strings.Join(args, " "), err)
		}
		if stderr.Len() > 0 {
			t.Errorf("pressroom %s wrote to stderr: %s", strings.Join(args, " "), stderr.String())
		}
		return stdout.String()
	}
	overview := runOut(t, "--help")
	if overview != usage || runOut(t, "-h") != usage {
		t.Errorf("--help printed %q, want the usage text", overview)
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.name) + ` +\S`).MatchString(overview) {
				t.Errorf("pressroom --help does not list %q:\n%s", c.name, overview)
			}
			words := strings.Fields(c.name)
			got := runOut(t, append(words, "--help")...)
			if !strings.HasPrefix(got, "Usage: pressroom "+c.name) || !regexp.MustCompile(`(?m)^Examples?:\n  pressroom `).MatchString(got) &&
				!regexp.MustCompile(`(?m)^Examples?:\n  \S+=\S* pressroom `).MatchString(got) {
				t.Errorf("pressroom %s --help = %q; want the usage line and examples", c.name, got)
			}
			for _, other := range [][]string{append(words, "-h"), append([]string{"help"}, words...), append(append(words, "-x", "1"), "-help")} {
				if o := runOut(t, other...); o != got {
					t.Errorf("pressroom %s = %q; want the same as --help", strings.Join(other, " "), o)
				}
			}
		})
	}
	t.Run("help for an unknown command", func(t *testing.T) {
		t.Parallel()
		err := run(context.Background(), []string{"help", "frobnicate"}, badConfig, strings.NewReader(""), io.Discard, io.Discard)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("help frobnicate = %v; want a usageError", err)
		}
	})
}

// TestEditorCommandUsageErrors: the editor commands refuse bad command
// lines before they contact any API, and need no server configuration.
func TestEditorCommandUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"upload"},
		{"upload", "--timeout", "soon", "a.jpg"},
		{"publish", "--all", "--draft", "x"},
		{"publish", "extra"},
		{"login", "--colour", "red"},
		{"logout", "now"},
	} {
		err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("pressroom %q: err = %v; want a usageError", args, err)
		}
	}
	// A file that is not there is reported without contacting the API
	// (nothing listens at this address) and fails the command.
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"upload", "--api", "http://127.0.0.1:1", "/nonexistent/photo.jpg"},
		func(string) string { return "" }, strings.NewReader(""), io.Discard, &stderr)
	if err == nil || !strings.Contains(stderr.String(), "/nonexistent/photo.jpg: failed: cannot read the file") {
		t.Errorf("upload of a missing file = %v\n%s", err, stderr.String())
	}
}
