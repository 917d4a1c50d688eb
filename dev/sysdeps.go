package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Requirement is one thing outside Go that the stack needs from the
// operating system, and the Debian packages that provide it.
type Requirement struct {
	// What names it for people: "libvips with pkg-config".
	What string
	// Why says what needs it, in the line printed before installing.
	Why string
	// Packages are the Debian/Ubuntu packages that provide it.
	Packages []string
	// Present reports whether the machine already has it.
	Present func(ctx context.Context) bool
}

// SystemRequirements lists what `make dev` and `make test` need beyond Go:
// libvips for the image pipeline (cgo, found through pkg-config), a C
// compiler for cgo, the vips command-line tools the image tests use to make
// fixtures the standard library cannot, and PostgreSQL's binaries, but only
// when no server is there to use.
func SystemRequirements() []Requirement {
	return []Requirement{
		{
			What: "a C compiler", Why: "cgo builds the libvips bindings",
			Packages: []string{"gcc"},
			Present:  func(context.Context) bool { return onPath("cc") || onPath("gcc") },
		},
		{
			What: "libvips with pkg-config", Why: "image processing links libvips through cgo",
			Packages: []string{"libvips-dev", "pkg-config"},
			Present: func(ctx context.Context) bool {
				return onPath("pkg-config") && exec.CommandContext(ctx, "pkg-config", "--exists", "vips").Run() == nil
			},
		},
		{
			What: "the vips tools", Why: "image tests and the image benchmark compare against the vips command",
			Packages: []string{"libvips-tools"},
			Present:  func(context.Context) bool { return onPath("vips") && onPath("vipsthumbnail") },
		},
		{
			What: "PostgreSQL", Why: "no DATABASE_URL, no server at " + redact(DefaultLocalPostgres) + ", and no initdb/pg_ctl to start a private cluster",
			Packages: []string{"postgresql"},
			Present: func(ctx context.Context) bool {
				if os.Getenv("DATABASE_URL") != "" {
					return true
				}
				if _, err := findPostgresBinaries(); err == nil {
					return true
				}
				return probePostgres(ctx, DefaultLocalPostgres) == nil
			},
		},
	}
}

// TestRequirements is SystemRequirements plus what only the tests need:
// Chromium for the browser tests (e2e/browser_test.go), curl and jq for
// the README's tour (e2e/readme_tour_test.go runs it), and Node.js with npm
// for the TypeScript client (e2e/typescript_test.go). `make test` and
// `make deps` (so CI) check them; `make dev` needs neither.
func TestRequirements() []Requirement {
	return append(SystemRequirements(), Requirement{
		What: "Chromium", Why: "the browser tests drive headless Chromium (sign-in page, direct upload, /docs)",
		Packages: []string{"chromium"},
		Present: func(context.Context) bool {
			return os.Getenv("PRESSROOM_CHROMIUM") != "" || onPath("chromium") || onPath("chromium-browser") || onPath("google-chrome")
		},
	}, Requirement{
		What: "curl and jq", Why: "the README's tour is run as written (curl for each call, jq to take ids from the answers)",
		Packages: []string{"curl", "jq"},
		Present:  func(context.Context) bool { return onPath("curl") && onPath("jq") },
	}, Requirement{
		What: "Node.js and npm", Why: "the TypeScript client (clients/typescript) is installed with npm ci, type-checked with tsc --strict and bundled for its browser test",
		Packages: []string{"nodejs", "npm"},
		Present:  func(context.Context) bool { return onPath("node") && onPath("npm") },
	})
}

func onPath(name string) bool { _, err := exec.LookPath(name); return err == nil }

// SystemCheck decides what to do about missing system packages. Its fields
// are seams: the zero value asks the real machine.
type SystemCheck struct {
	// Debian reports whether apt-get can install the packages.
	Debian func() bool
	// Root reports whether the process runs as root.
	Root func() bool
	// Sudo reports whether sudo works without a password prompt.
	Sudo func(ctx context.Context) bool
	// Run runs an install command, its output going to Log.
	Run func(ctx context.Context, argv []string) error
	// Log receives the one line that says what is installed and why.
	Log io.Writer
}

// ErrMissingPackages is wrapped by the error Ensure returns when packages
// are missing and it may not install them; the error's text names the
// exact command to run.
var ErrMissingPackages = errors.New("missing system packages")

// Ensure checks every requirement. When some are missing it installs their
// packages with apt-get (once `apt-get update`, then one `apt-get install
// -y`) if it runs as root or may use sudo on a Debian-like system, and
// otherwise stops with an error that names the exact command. It runs
// before anything is built, so a missing package costs seconds, not the
// minutes of the tool builds.
func (s SystemCheck) Ensure(ctx context.Context, reqs []Requirement) error {
	s = s.withDefaults()
	var missing []Requirement
	for _, r := range reqs {
		if !r.Present(ctx) {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var pkgs, whats, whys []string
	for _, r := range missing {
		pkgs = append(pkgs, r.Packages...)
		whats = append(whats, r.What)
		whys = append(whys, r.What+": "+r.Why)
	}
	if !s.Debian() {
		return fmt.Errorf("%w: %s is not installed (%s). Install it with your system's package manager (macOS: brew install vips pkg-config postgresql), then run this again",
			ErrMissingPackages, strings.Join(whats, ", "), strings.Join(whys, "; "))
	}
	var prefix []string
	switch {
	case s.Root():
	case s.Sudo(ctx):
		prefix = []string{"sudo"}
	default:
		return fmt.Errorf("%w: %s (%s). Run:\n    sudo apt-get update && sudo apt-get install -y %s\nthen run this again",
			ErrMissingPackages, strings.Join(whats, ", "), strings.Join(whys, "; "), strings.Join(pkgs, " "))
	}
	fmt.Fprintf(s.Log, "devstack: installing %s with apt-get (%s)\n", strings.Join(pkgs, " "), strings.Join(whys, "; "))
	if err := s.Run(ctx, append(prefix, "apt-get", "update", "-qq")); err != nil {
		return fmt.Errorf("apt-get update: %w", err)
	}
	install := append(prefix, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq", "--no-install-recommends")
	if err := s.Run(ctx, append(install, pkgs...)); err != nil {
		return fmt.Errorf("apt-get install %s: %w", strings.Join(pkgs, " "), err)
	}
	for _, r := range missing {
		if !r.Present(ctx) {
			return fmt.Errorf("%w: installed %s, but %s is still not found", ErrMissingPackages, strings.Join(r.Packages, " "), r.What)
		}
	}
	return nil
}

func (s SystemCheck) withDefaults() SystemCheck {
	if s.Log == nil {
		s.Log = os.Stderr
	}
	if s.Debian == nil {
		s.Debian = func() bool { return onPath("apt-get") && onPath("dpkg") }
	}
	if s.Root == nil {
		s.Root = func() bool { return os.Geteuid() == 0 }
	}
	if s.Sudo == nil {
		s.Sudo = func(ctx context.Context) bool {
			return onPath("sudo") && exec.CommandContext(ctx, "sudo", "-n", "true").Run() == nil
		}
	}
	if s.Run == nil {
		// apt's own chatter is kept back unless it fails, so a working
		// install prints the one line above and nothing else.
		s.Run = func(ctx context.Context, argv []string) error {
			out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%w\n%s", err, lastLines(string(out), 20))
			}
			return nil
		}
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
