package main

import (
	"fmt"
	"slices"
	"strings"
)

// command is one subcommand's entry in `pressroom --help` and its own
// `--help` text.
type command struct {
	name     string // the words that select it: "site create"
	synopsis string // what follows "pressroom " in the usage line
	summary  string // one line for the overview
	client   bool   // talks to a running API; needs no server configuration
	help     string // description, flags and examples
}

var commands = []command{
	{name: "serve", synopsis: "serve", summary: "run the HTTP API", help: `
Runs the JSON:API server on PRESSROOM_HTTP_ADDR until interrupted, then drains
requests for up to PRESSROOM_SHUTDOWN_TIMEOUT. With PRESSROOM_AUTO_MIGRATE on it
applies pending migrations first. Configuration comes from environment
variables (see the README). It refuses to start while PRESSROOM_CLIENT_SECRET_KEY
or PRESSROOM_WEBHOOK_SECRET_KEY is its built-in development default, unless
PRESSROOM_DEV=true.

Examples:
  pressroom serve
  PRESSROOM_HTTP_ADDR=:9090 PRESSROOM_PUBLIC_URL=https://api.example.com pressroom serve
`},
	{name: "worker", synopsis: "worker", summary: "run the Temporal worker", help: `
Polls the task queues for upload and publish workflows until interrupted. It
retries until Temporal answers, so it may be started before the server. It
refuses to start while PRESSROOM_WEBHOOK_SECRET_KEY is its built-in development
default, unless PRESSROOM_DEV=true.

Examples:
  pressroom worker
  PRESSROOM_TEMPORAL_ADDRESS=temporal:7233 pressroom worker
`},
	{name: "migrate", synopsis: "migrate up|down|status", summary: "apply, roll back (last batch) or list migrations", help: `
  up      apply every pending migration
  down    roll back the last batch
  status  list migrations as applied or pending

Examples:
  pressroom migrate status
  DATABASE_URL=postgres://pressroom@db/pressroom pressroom migrate up
`},
	{name: "site create", synopsis: "site create -slug S -title T", summary: "create a site", help: `
Flags:
  -slug S    subdomain slug (lowercase letters, digits, hyphens)
  -title T   site title

Example:
  pressroom site create -slug demo -title "Demo site"
`},
	{name: "user create", synopsis: "user create -site S -email E [-name N] [-role R] [-path-prefix P]", summary: "create a user of a site with a role (password from PRESSROOM_PASSWORD or stdin)", help: `
The password (at least 8 characters) comes from PRESSROOM_PASSWORD or the first
line of stdin, never from the command line, where ps and shell history keep it.

Flags:
  -site S    slug of the user's site
  -email E   e-mail address (the login name)
  -name N    display name
  -role R    viewer, author, editor (the default) or admin (docs/auth.md, "Roles")
  -path-prefix P
             narrow an author's or editor's rights to the pages under P
             (for example /blog/); reads stay site-wide

Examples:
  pressroom user create -site demo -email editor@example.com -name "Ed Itor" < password.txt
  pressroom user create -site demo -email author@example.com -role author -path-prefix /blog/ < password.txt
  PRESSROOM_PASSWORD=… pressroom user create -site demo -email editor@example.com
`},
	{name: "client create", synopsis: "client create -name N [-redirect-uri U ...] [-public] | -site S -role R [-name N] [-rate-limit M]", summary: "create an OAuth client", help: `
Prints the client id and, for a confidential client, its secret (once).
With -site and -role it creates an integration client of the site instead
(POST /oauth-clients does the same): it gets tokens with the
client_credentials grant and acts as itself with role R, at most M requests
a minute (default 600). See docs/auth.md, "Integration tokens".
urn:ietf:wg:oauth:2.0:oob is always an allowed redirect URI. Sign-in requests
must name a registered redirect URI exactly; only a public client registered
with http://127.0.0.1/... or http://[::1]/... may use any port there (RFC 8252).

Flags:
  -name N           client name
  -redirect-uri U   an allowed redirect URI (repeatable)
  -public           a public client: no secret, PKCE required
  -site S           an integration client of the site whose slug is S
  -role R           its role: viewer, author, editor or admin
  -rate-limit M     its requests per minute (default 600)

Examples:
  pressroom client create -name "Editor app" -redirect-uri https://editor.example.com/callback
  pressroom client create -name "Desktop app" -public
  pressroom client create -site demo -role author -name "Importer"
`},
	{name: "storage init", synopsis: "storage init", summary: "create the storage buckets with their expiry and CORS rules", help: `
Creates the uploads and assets buckets (PRESSROOM_S3_UPLOADS_BUCKET,
PRESSROOM_S3_ASSETS_BUCKET) when missing and sets their rules. Safe to repeat.

Example:
  pressroom storage init
`},
	{name: "login", synopsis: "login [--api URL] [--no-browser] [--client-id ID] [--site SLUG]", summary: "sign in to an API in the browser (or with a pasted code)", client: true, help: `
Signs in with the OAuth authorization-code flow and PKCE, as a desktop app
does: it opens the system browser on the API's sign-in page and takes the
answer on http://127.0.0.1:<a free port>/callback; the page then says you can
close it. When no browser can be opened (no graphical session, as over SSH),
or with --no-browser, it prints an address to open in any browser instead;
sign in there and paste the code the page shows. It ends with
"signed in as <email> (<role>) to <site> at <API>". A user of several sites names the
one to sign in to with --site <subdomain-slug> (without it, the API asks).

The browser is the command in PRESSROOM_BROWSER, else in BROWSER (a list of
commands separated by ":", "%s" standing for the address), else the
system's (xdg-open, open). The refresh token is stored in the user's
configuration directory ($XDG_CONFIG_HOME/pressroom/credentials.json, mode
0600) per API: http://localhost:8080, http://127.0.0.1:8080/ and
http://127.0.0.1:8080 are one API. It is replaced every time it is used, as
the server rotates it. Instead of signing in, a command may use an access
token from PRESSROOM_TOKEN.

Flags:
  --api URL        the API (default $PRESSROOM_API_URL, else http://127.0.0.1:8080)
  --no-browser     print the address and read the pasted code
  --timeout D      how long to wait for the sign-in in the browser (default 5m)
  --client-id ID   the OAuth client (default: the built-in public client
                   "pressroom"); a client of your own needs the redirect URI
                   http://127.0.0.1/callback (pressroom client create -public
                   -redirect-uri http://127.0.0.1/callback)

Examples:
  pressroom login
  pressroom login --api https://api.example.com
  ssh editor@host pressroom login --no-browser
`},
	{name: "logout", synopsis: "logout [--api URL]", summary: "forget the stored sign-in", client: true, help: `
Removes the stored sign-in for the API.

Example:
  pressroom logout --api https://api.example.com
`},
	{name: "upload", synopsis: "upload [--api URL] [--timeout D] FILE...", summary: "upload images as assets; prints their URLs", client: true, help: `
For each file, in turn: checks its type against GET /asset-types ("this file
looks like a PDF, not an image: Pressroom accepts JPEG, PNG and GIF"), asks
for an upload signature, posts the file straight to storage, sends the upload
notice and waits (long poll) until the service has processed it. A line of progress per step goes to stderr; at the end stdout
lists each uploaded file with its asset's URL. A file that fails (missing,
refused by the API or by storage, rejected while processing) is reported with
the reason and the others go on; the exit status is then 1.

Flags (before the files):
  --api URL      the API (default $PRESSROOM_API_URL, else http://127.0.0.1:8080)
  --timeout D    how long to wait for one file's processing (default 10m)

Signs in with the stored sign-in (pressroom login) or PRESSROOM_TOKEN.

Examples:
  pressroom upload photos/harbour.jpg
  pressroom upload --api https://api.example.com *.png
  PRESSROOM_TOKEN=eyJ… pressroom upload logo.gif > urls.txt
`},
	{name: "release preview", synopsis: "release preview [--api URL] [--expires-in D] RELEASE_ID", summary: "make a preview link of a release and print its url", client: true, help: `
Makes a preview link of the release (POST /preview-links, docs/releases.md, "Preview links")
and prints its url on stdout. Anyone with the url sees the site as the release
would make it, read-only and without an account, until the link expires, is
revoked (DELETE /preview-links/ID), or the release is published or cancelled.
The url is shown this once: the server keeps only its token's hash.

Flags (before the release id):
  --api URL        the API (default $PRESSROOM_API_URL, else http://127.0.0.1:8080)
  --expires-in D   how long the link works (default 7 days, at most 720h)

Signs in with the stored sign-in (pressroom login) or PRESSROOM_TOKEN.

Examples:
  pressroom release preview 0192f3c4-…
  pressroom release preview --expires-in 48h 0192f3c4-… | pbcopy
`},
	{name: "history", synopsis: "history [--api URL] [-n N] PAGE-PATH", summary: "list the versions of a page, newest first", client: true, help: `
Lists the versions of the page at PAGE-PATH (GET /pages/ID/versions,
docs/history.md), newest first: version id, when it was published, the event
(create, update, delete), the attributes and relationships it changed, and
the title after it. A page deleted lately is found in the trash
(GET /pages?filter[trashed]=true). Restore one with pressroom restore.

Flags (before the path):
  --api URL   the API (default $PRESSROOM_API_URL, else http://127.0.0.1:8080)
  -n N        how many versions (default 20, at most 100)

Signs in with the stored sign-in (pressroom login) or PRESSROOM_TOKEN.

Examples:
  pressroom history /blog/launch
  pressroom history -n 100 /about
`},
	{name: "restore", synopsis: "restore [--api URL] [--replace-draft] VERSION", summary: "draft a record back to a version (restore from history or the trash)", client: true, help: `
Drafts the record of VERSION back to the state that version left
(POST /versions/VERSION/restore, docs/history.md): an update draft for a live
record, create drafts for a deleted one (with its subpages, contents and
blocks as they were). Nothing goes live: it prints the drafts made and the
pressroom publish command that publishes them. A record with a pending draft
is refused unless --replace-draft.

Flags (before the version):
  --api URL         the API (default $PRESSROOM_API_URL, else http://127.0.0.1:8080)
  --replace-draft   revert the record's pending draft and replace it

Examples:
  pressroom restore 0192f3c4-…
  pressroom restore --replace-draft 0192f3c4-…
`},
	{name: "publish", synopsis: "publish [--api URL] [--mine | --all [--yes] | --draft ID ...] [-m COMMENT]", summary: "list pending drafts; publish yours, some or all", client: true, help: `
Without --mine, --all or --draft, lists the site's pending drafts, newest
first: id, when it last changed, its author, and one line saying what it
changes ("update page /about: title, slug"). With them, publishes those
drafts in one revision with the comment and shows the outcome: published
(with the number of versions), failed (with the server's reason; exit status
1), or still publishing after --wait (the revision goes on publishing on the
server).

--all publishes every editor's drafts: on a terminal it lists them and asks
"Publish N drafts by K people? [y/N]"; elsewhere (a script) it refuses unless
--yes is given. --mine publishes only your drafts; should they need another
editor's drafts published with them (a new page someone else drafted, which
your content is on), it names those and asks the same way.

Flags:
  --api URL        the API (default $PRESSROOM_API_URL, else http://127.0.0.1:8080)
  --mine           publish your pending drafts
  --all            publish every pending draft, everyone's
  --draft ID       publish this draft (repeatable)
  -y, --yes        do not ask
  -m, --comment C  the revision's comment
  --wait D         how long to follow a revision still publishing (default 1m)

Signs in with the stored sign-in (pressroom login) or PRESSROOM_TOKEN.

Examples:
  pressroom publish
  pressroom publish --mine -m "About page"
  pressroom publish --all -m "Spring update"
  pressroom publish --all --yes -m "Nightly"       # from a script
  pressroom publish --draft 0192f3c4-… --draft 0192f3c5-… -m "Fix the footer"
`},
	{name: "release", synopsis: "release create TITLE | release stage [--unstage] RELEASE DRAFT... | release publish [-m COMMENT] RELEASE", summary: "stage drafts in a release and publish it as one", client: true, help: `
Releases (docs/releases.md) are named sets of drafts, previewed as one
(?preview-release=ID on every read) and published as one.

  create TITLE              makes an open release and prints its id
  stage RELEASE DRAFT...    stages the drafts in it (--unstage takes them out);
                            a draft staged in another release is refused
  publish RELEASE           publishes its drafts, with what they depend on, in
                            one revision (needs the permission publish), and
                            shows the outcome as publish does

Flags (after the command, before its arguments):
  --api URL        the API (default $PRESSROOM_API_URL, else http://127.0.0.1:8080)
  --unstage        stage: take the drafts out
  -m, --comment C  publish: the revision's comment
  --wait D         publish: how long to follow a revision still publishing (default 1m)

Examples:
  pressroom release create "Spring launch"
  pressroom release stage 0192f3c4-… 0192f3d0-… 0192f3d1-…
  pressroom release publish -m "Spring launch" 0192f3c4-…
`},
	{name: "member list", synopsis: "member list [--api URL]", summary: "list the site's members and their roles (admins)", client: true, help: `
Lists the members of the site you are signed in to: membership id, e-mail,
role, section (path-prefix) and name. Admins only (others get a message
naming the permission they lack).

Signs in with the stored sign-in (pressroom login) or PRESSROOM_TOKEN.

Examples:
  pressroom member list
`},
	{name: "member add", synopsis: "member add [--api URL] -email E -role R [-name N] [-path-prefix P]", summary: "add a member to the site by e-mail (admins)", client: true, help: `
Adds the user with this e-mail to the site with the role (viewer, author,
editor or admin), narrowed to a section with -path-prefix. A new user is
created and a one-time password setup link is printed (72 hours, one use).

Examples:
  pressroom member add -email ada@example.com -role author
  pressroom member add -email bo@example.com -role editor -path-prefix /blog/
`},
	{name: "member role", synopsis: "member role [--api URL] -role R [-path-prefix P] MEMBER", summary: "change a member's role (admins)", client: true, help: `
Changes the role of MEMBER (a membership id or an e-mail). It holds from the
member's next request. The last admin of a site cannot be demoted.

Examples:
  pressroom member role -role viewer ada@example.com
`},
	{name: "member remove", synopsis: "member remove [--api URL] MEMBER", summary: "remove a member from the site (admins)", client: true, help: `
Removes MEMBER (a membership id or an e-mail) from the site; their tokens for
it stop working at once. The last admin of a site cannot be removed.

Examples:
  pressroom member remove ada@example.com
`},
}

// lookup finds the command args start with and returns it with the
// remaining arguments.
func lookup(args []string) (*command, []string) {
	for _, n := range []int{2, 1} {
		if len(args) < n {
			continue
		}
		name := strings.Join(args[:n], " ")
		if i := slices.IndexFunc(commands, func(c command) bool { return c.name == name }); i >= 0 {
			return &commands[i], args[n:]
		}
	}
	return nil, args
}

// wantsHelp reports whether args ask for help (before a "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

func (c *command) usage() string {
	return fmt.Sprintf("Usage: pressroom %s\n\n%s.\n%s", c.synopsis, strings.ToUpper(c.summary[:1])+c.summary[1:], c.help)
}

var usage = func() string {
	var b strings.Builder
	b.WriteString("pressroom: a content-site editing API\n\nUsage: pressroom COMMAND [FLAGS] [ARGS]\n\n")
	b.WriteString("Server and administration (configured by environment variables; see the README):\n")
	for _, c := range commands {
		if !c.client {
			fmt.Fprintf(&b, "  %-24s %s\n", c.name, c.summary)
		}
	}
	b.WriteString("\nEditor commands (talk to a running API: --api or PRESSROOM_API_URL, default http://127.0.0.1:8080):\n")
	for _, c := range commands {
		if c.client {
			fmt.Fprintf(&b, "  %-24s %s\n", c.name, c.summary)
		}
	}
	b.WriteString("\nRun `pressroom COMMAND --help` (or `pressroom help COMMAND`) for its flags and examples.\n")
	return b.String()
}()
