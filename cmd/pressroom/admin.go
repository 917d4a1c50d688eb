package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/storage"
)

func withDB(ctx context.Context, env *environment, fn func(*bun.DB) error) error {
	db, err := models.Open(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

func migrateCmd(ctx context.Context, env *environment, action string) error {
	return withDB(ctx, env, func(db *bun.DB) error {
		m, err := models.NewMigrator(db)
		if err != nil {
			return err
		}
		switch action {
		case "up":
			names, err := m.Up(ctx)
			if err != nil {
				return err
			}
			if len(names) == 0 {
				fmt.Fprintln(env.stdout, "nothing to apply: the schema is up to date")
			}
			for _, n := range names {
				fmt.Fprintln(env.stdout, "applied", n)
			}
			if err := models.ConfigureSearch(ctx, db, env.cfg.SearchLanguage); err != nil {
				return err
			}
		case "down":
			names, err := m.Down(ctx)
			if err != nil {
				return err
			}
			if len(names) == 0 {
				fmt.Fprintln(env.stdout, "nothing to roll back")
			}
			for _, n := range names {
				fmt.Fprintln(env.stdout, "rolled back", n)
			}
		case "status":
			st, err := m.Status(ctx)
			if err != nil {
				return err
			}
			for _, s := range st {
				mark := "pending"
				if s.Applied {
					mark = "applied"
				}
				fmt.Fprintf(env.stdout, "%-8s %s_%s\n", mark, s.Name, s.Comment)
			}
		default:
			return usageError{fmt.Sprintf("migrate: unknown action %q (want up, down or status)", action)}
		}
		return nil
	})
}

func siteCreate(ctx context.Context, env *environment, args []string) error {
	var slug, title string
	if err := parseFlags("site create", args, func(fs *flag.FlagSet) {
		fs.StringVar(&slug, "slug", "", "subdomain slug (lowercase letters, digits, hyphens)")
		fs.StringVar(&title, "title", "", "site title")
	}); err != nil {
		return err
	}
	if slug == "" || title == "" {
		return usageError{"site create: -slug and -title are required"}
	}
	return withDB(ctx, env, func(db *bun.DB) error {
		s, err := models.CreateSite(ctx, db, title, slug)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "site %s created: id %s\n", s.SubdomainSlug, s.ID)
		return nil
	})
}

func userCreate(ctx context.Context, env *environment, args []string) error {
	var site, email, name, role, prefix string
	if err := parseFlags("user create", args, func(fs *flag.FlagSet) {
		fs.StringVar(&site, "site", "", "slug of the user's site")
		fs.StringVar(&email, "email", "", "e-mail address (the login name)")
		fs.StringVar(&name, "name", "", "display name")
		fs.StringVar(&role, "role", string(models.RoleEditor), "the user's role in the site: viewer, author, editor or admin")
		fs.StringVar(&prefix, "path-prefix", "", "narrow an author's or editor's rights to the pages under this path (for example /blog/)")
	}); err != nil {
		return err
	}
	if site == "" || email == "" || !strings.Contains(email, "@") {
		return usageError{"user create: -site and a valid -email are required"}
	}
	if !models.ValidRole(role) {
		return usageError{"user create: -role must be viewer, author, editor or admin"}
	}
	var section *string
	if prefix != "" {
		if !strings.HasPrefix(prefix, "/") || !strings.HasSuffix(prefix, "/") {
			return usageError{"user create: -path-prefix must start and end with / (for example /blog/)"}
		}
		section = &prefix
	}
	// The password never travels on the command line, where ps and shell
	// history would keep it.
	password := env.getenv("PRESSROOM_PASSWORD")
	if password == "" {
		line, err := bufio.NewReader(io.LimitReader(env.stdin, auth.MaxPasswordBytes+2)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read password from stdin: %w", err)
		}
		password = strings.TrimRight(line, "\r\n")
	}
	if len(password) < 8 {
		return errors.New("user create: the password (PRESSROOM_PASSWORD or the first line of stdin) must be at least 8 characters")
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return err
	}
	return withDB(ctx, env, func(db *bun.DB) error {
		s, err := models.SiteBySlug(ctx, db, site)
		if err != nil {
			return err
		}
		u, err := models.CreateMember(ctx, db, s.ID, email, name, hash, models.Role(role), section)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "user %s created in site %s as %s: id %s\n", u.Email, s.SubdomainSlug, role, u.ID)
		return nil
	})
}

// redirectURIs collects repeated -redirect-uri flags.
type redirectURIs []string

func (r *redirectURIs) String() string     { return strings.Join(*r, ",") }
func (r *redirectURIs) Set(v string) error { *r = append(*r, v); return nil }

func clientCreate(ctx context.Context, env *environment, args []string) error {
	var name, site, role string
	var public bool
	var rateLimit int
	uris := redirectURIs{}
	if err := parseFlags("client create", args, func(fs *flag.FlagSet) {
		fs.StringVar(&name, "name", "", "client name")
		fs.BoolVar(&public, "public", false, "a public client (no secret; PKCE required)")
		fs.Var(&uris, "redirect-uri", "allowed redirect URI (repeatable); urn:ietf:wg:oauth:2.0:oob is always allowed")
		fs.StringVar(&site, "site", "", "slug of the site of an integration client (client_credentials)")
		fs.StringVar(&role, "role", "", "an integration client's role: viewer, author, editor or admin")
		fs.IntVar(&rateLimit, "rate-limit", models.DefaultRateLimit, "an integration client's requests per minute")
	}); err != nil {
		return err
	}
	if site != "" || role != "" {
		return integrationClientCreate(ctx, env, site, role, name, rateLimit, public || len(uris) > 0)
	}
	if name == "" {
		return usageError{"client create: -name is required"}
	}
	return withDB(ctx, env, func(db *bun.DB) error {
		id, secret, err := models.NewOAuthClient(ctx, db, []byte(env.cfg.OAuth.ClientSecretKey), name, !public, uris)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "client_id:     %s\n", id)
		if secret != "" {
			fmt.Fprintf(env.stdout, "client_secret: %s\n(the secret is shown once; only its hash is stored)\n", secret)
		}
		return nil
	})
}

// integrationClientCreate is client create -site S -role R: what POST
// /oauth-clients does, for the site's first integration or a script.
func integrationClientCreate(ctx context.Context, env *environment, site, role, name string, rateLimit int, codeFlow bool) error {
	switch {
	case site == "" || role == "":
		return usageError{"client create: an integration client needs both -site and -role"}
	case codeFlow:
		return usageError{"client create: -public and -redirect-uri are for sign-in clients, not integration clients (-site, -role)"}
	case !models.ValidRole(role):
		return usageError{"client create: -role must be viewer, author, editor or admin"}
	case rateLimit < 1 || rateLimit > models.MaxRateLimit:
		return usageError{fmt.Sprintf("client create: -rate-limit must be from 1 to %d", models.MaxRateLimit)}
	}
	if name == "" {
		name = "integration (" + role + ")"
	}
	return withDB(ctx, env, func(db *bun.DB) error {
		s, err := models.SiteBySlug(ctx, db, site)
		if err != nil {
			return err
		}
		var sc *models.SiteClient
		var secret string
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			sc, secret, err = models.CreateSiteClient(ctx, tx, []byte(env.cfg.OAuth.ClientSecretKey), s.ID, name, models.Role(role), rateLimit)
			return err
		}); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "integration client %s of site %s as %s, %d requests a minute: id %s\n", name, s.SubdomainSlug, role, sc.RateLimit, sc.ID)
		fmt.Fprintf(env.stdout, "client_id:     %s\nclient_secret: %s\n(the secret is shown once; only its hash is stored)\n", sc.ClientID, secret)
		return nil
	})
}

func storageInit(ctx context.Context, env *environment) error {
	mc, err := storage.NewClient(env.cfg.Storage)
	if err != nil {
		return err
	}
	if err := storage.EnsureBuckets(ctx, mc, env.cfg.Storage); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "buckets %s and %s ready\n", env.cfg.Storage.UploadsBucket, env.cfg.Storage.AssetsBucket)
	return nil
}
