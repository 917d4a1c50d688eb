package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/cli/browser"
)

// Opener opens an address in a browser. It may block while the browser
// runs (Login calls it on a goroutine); an error means no browser could be
// opened, and Login falls back to the pasted code.
type Opener func(url string) error

// errNoBrowser wraps the reason no browser could be opened.
var errNoBrowser = errors.New("no browser could be opened")

// SystemOpener is how `pressroom login` opens the browser: the command in
// PRESSROOM_BROWSER, else in BROWSER (each a list separated like PATH of
// commands, tried in turn: "%s" in one stands for the address, which is
// appended otherwise), else the system's own (github.com/cli/browser:
// xdg-open, open, rundll32). Where no graphical session is (an SSH login:
// neither DISPLAY nor WAYLAND_DISPLAY), the system's own is not tried: it
// would start a text browser in the terminal, or nothing.
func SystemOpener(getenv func(string) string) Opener {
	for _, v := range []string{"PRESSROOM_BROWSER", "BROWSER"} {
		if spec := strings.TrimSpace(getenv(v)); spec != "" {
			return commandOpener(v, spec)
		}
	}
	return func(url string) error {
		if reason := noGraphicalSession(getenv); reason != "" {
			return fmt.Errorf("%w: %s", errNoBrowser, reason)
		}
		if err := browser.OpenURL(url); err != nil {
			return fmt.Errorf("%w: %v", errNoBrowser, err)
		}
		return nil
	}
}

// noGraphicalSession says why a Unix desktop's browser cannot be shown
// here, or "" when it may be.
func noGraphicalSession(getenv func(string) string) string {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
	default:
		return ""
	}
	if getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != "" || getenv("WSL_DISTRO_NAME") != "" {
		return ""
	}
	return "no graphical session here (neither DISPLAY nor WAYLAND_DISPLAY is set)"
}

// commandOpener runs the commands of spec (from the variable name) in
// turn until one starts and ends well.
func commandOpener(name, spec string) Opener {
	return func(url string) error {
		var errs []string
		for entry := range strings.SplitSeq(spec, string(os.PathListSeparator)) {
			args := strings.Fields(entry)
			if len(args) == 0 {
				continue
			}
			substituted := false
			for i, a := range args[1:] {
				if strings.Contains(a, "%s") {
					args[i+1], substituted = strings.ReplaceAll(a, "%s", url), true
				}
			}
			if !substituted {
				args = append(args, url)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Stdout, cmd.Stderr = io.Discard, &limitedWriter{w: &stderr, n: 2048}
			if err := cmd.Run(); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v %s", args[0], err, strings.TrimSpace(stderr.String())))
				continue
			}
			return nil
		}
		return fmt.Errorf("%w: %s failed: %s", errNoBrowser, name, strings.Join(errs, "; "))
	}
}

// limitedWriter keeps the first n bytes written and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
