package dev_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/dev"
)

// fakeSystem records what SystemCheck asked of the machine and what it ran.
type fakeSystem struct {
	debian, root, sudo bool
	runErr             error
	installs           bool // a successful install makes every requirement present
	ran                [][]string
	present            map[string]bool
}

func (f *fakeSystem) check(log *bytes.Buffer) dev.SystemCheck {
	return dev.SystemCheck{
		Debian: func() bool { return f.debian },
		Root:   func() bool { return f.root },
		Sudo:   func(context.Context) bool { return f.sudo },
		Run: func(_ context.Context, argv []string) error {
			f.ran = append(f.ran, argv)
			if f.runErr != nil {
				return f.runErr
			}
			if f.installs && contains(argv, "install") {
				for k := range f.present {
					f.present[k] = true
				}
			}
			return nil
		},
		Log: log,
	}
}

func (f *fakeSystem) reqs() []dev.Requirement {
	req := func(what string, pkgs ...string) dev.Requirement {
		return dev.Requirement{What: what, Why: what + " is needed", Packages: pkgs,
			Present: func(context.Context) bool { return f.present[what] }}
	}
	return []dev.Requirement{req("libvips", "libvips-dev", "pkg-config"), req("vips tools", "libvips-tools")}
}

func contains(argv []string, s string) bool {
	for _, a := range argv {
		if a == s {
			return true
		}
	}
	return false
}

func TestSystemCheckPresentRunsNothing(t *testing.T) {
	f := &fakeSystem{debian: true, root: true, present: map[string]bool{"libvips": true, "vips tools": true}}
	var log bytes.Buffer
	if err := f.check(&log).Ensure(context.Background(), f.reqs()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if len(f.ran) != 0 || log.Len() != 0 {
		t.Fatalf("nothing is missing, yet it ran %v and printed %q", f.ran, log.String())
	}
}

func TestSystemCheckMissingAsRootInstallsOnce(t *testing.T) {
	f := &fakeSystem{debian: true, root: true, installs: true, present: map[string]bool{"libvips": false, "vips tools": true}}
	var log bytes.Buffer
	if err := f.check(&log).Ensure(context.Background(), f.reqs()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if len(f.ran) != 2 {
		t.Fatalf("want apt-get update then one install, ran %v", f.ran)
	}
	if got := strings.Join(f.ran[0], " "); got != "apt-get update -qq" {
		t.Errorf("first command %q, want apt-get update", got)
	}
	install := strings.Join(f.ran[1], " ")
	if !strings.Contains(install, "apt-get install -y") || !strings.HasSuffix(install, " libvips-dev pkg-config") {
		t.Errorf("install command %q should install exactly the missing packages", install)
	}
	if strings.Contains(install, "libvips-tools") || strings.HasPrefix(install, "sudo") {
		t.Errorf("install command %q: present packages or sudo as root", install)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "installing libvips-dev pkg-config") || !strings.Contains(lines[0], "libvips is needed") {
		t.Errorf("want one line saying what is installed and why, got %q", log.String())
	}
}

func TestSystemCheckMissingWithSudoUsesSudo(t *testing.T) {
	f := &fakeSystem{debian: true, sudo: true, installs: true, present: map[string]bool{"libvips": false, "vips tools": false}}
	if err := f.check(&bytes.Buffer{}).Ensure(context.Background(), f.reqs()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	for _, argv := range f.ran {
		if argv[0] != "sudo" {
			t.Errorf("not root: %v should run through sudo", argv)
		}
	}
	if install := strings.Join(f.ran[len(f.ran)-1], " "); !strings.HasSuffix(install, "libvips-dev pkg-config libvips-tools") {
		t.Errorf("one install of every missing package, got %q", install)
	}
}

func TestSystemCheckMissingAsNonRootStopsWithTheCommand(t *testing.T) {
	f := &fakeSystem{debian: true, present: map[string]bool{"libvips": false, "vips tools": true}}
	err := f.check(&bytes.Buffer{}).Ensure(context.Background(), f.reqs())
	if !errors.Is(err, dev.ErrMissingPackages) {
		t.Fatalf("want ErrMissingPackages, got %v", err)
	}
	if !strings.Contains(err.Error(), "sudo apt-get update && sudo apt-get install -y libvips-dev pkg-config") {
		t.Errorf("the error must name the exact command; got %q", err)
	}
	if len(f.ran) != 0 {
		t.Errorf("without root or sudo nothing may run; ran %v", f.ran)
	}
}

func TestSystemCheckNotDebianSaysWhatIsMissing(t *testing.T) {
	f := &fakeSystem{root: true, present: map[string]bool{"libvips": false, "vips tools": true}}
	err := f.check(&bytes.Buffer{}).Ensure(context.Background(), f.reqs())
	if !errors.Is(err, dev.ErrMissingPackages) || !strings.Contains(err.Error(), "libvips") {
		t.Fatalf("want an error naming libvips, got %v", err)
	}
	if len(f.ran) != 0 {
		t.Errorf("no apt-get: nothing may run; ran %v", f.ran)
	}
}

func TestSystemCheckFailedInstallIsReported(t *testing.T) {
	f := &fakeSystem{debian: true, root: true, runErr: errors.New("E: Unable to locate package"), present: map[string]bool{"libvips": false}}
	err := f.check(&bytes.Buffer{}).Ensure(context.Background(), f.reqs()[:1])
	if err == nil || !strings.Contains(err.Error(), "Unable to locate package") {
		t.Fatalf("want apt's error, got %v", err)
	}
}

func TestSystemCheckStillMissingAfterInstall(t *testing.T) {
	f := &fakeSystem{debian: true, root: true, present: map[string]bool{"libvips": false}}
	err := f.check(&bytes.Buffer{}).Ensure(context.Background(), f.reqs()[:1])
	if !errors.Is(err, dev.ErrMissingPackages) || !strings.Contains(err.Error(), "still not found") {
		t.Fatalf("want still-missing error, got %v", err)
	}
}

// TestSystemRequirementsOnThisMachine checks the real probes agree with the
// machine the tests run on: they run after devstack's own check, so each
// requirement must be present here.
func TestSystemRequirementsOnThisMachine(t *testing.T) {
	for _, r := range dev.SystemRequirements() {
		if !r.Present(context.Background()) {
			t.Errorf("%s (%s) is not present, yet the tests run", r.What, strings.Join(r.Packages, " "))
		}
	}
}

// TestChromiumOnlyForTests: `make test` and `make deps` (so CI) install
// Chromium for the browser tests; `make dev` never asks for it.
func TestChromiumOnlyForTests(t *testing.T) {
	names := func(reqs []dev.Requirement) []string {
		var pkgs []string
		for _, r := range reqs {
			pkgs = append(pkgs, r.Packages...)
		}
		return pkgs
	}
	if pkgs := names(dev.SystemRequirements()); contains(pkgs, "chromium") {
		t.Errorf("SystemRequirements (make dev) names chromium: %v", pkgs)
	}
	pkgs := names(dev.TestRequirements())
	for _, p := range []string{"chromium", "nodejs", "npm"} {
		if !contains(pkgs, p) {
			t.Errorf("TestRequirements (make test, make deps) does not name %s: %v", p, pkgs)
		}
	}
	if pkgs := names(dev.SystemRequirements()); contains(pkgs, "nodejs") {
		t.Errorf("SystemRequirements (make dev) names nodejs: %v", pkgs)
	}
	for _, p := range names(dev.SystemRequirements()) {
		if !contains(pkgs, p) {
			t.Errorf("TestRequirements lacks %s, which SystemRequirements has", p)
		}
	}
}
