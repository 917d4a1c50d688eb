package dev

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progressInterval is how often a long build reports its elapsed time.
const progressInterval = 10 * time.Second

// reporter shows the long steps running on one writer (the tool builds,
// which dev.Up runs in parallel): every interval the elapsed time of each,
// and when one ends, the time it took. On a terminal the running steps
// share one line rewritten in place; anywhere else (make's output piped to
// a log, CI) every report is a plain line of its own, so logs stay
// readable.
type reporter struct {
	w     io.Writer
	tty   bool
	every time.Duration

	mu    sync.Mutex
	tasks []*task
	open  bool // a status line without its newline is on a terminal
	stop  chan struct{}
}

type task struct {
	label string
	start time.Time
}

// reporters holds one reporter per writer, so parallel builds logging to
// the same terminal share its status line.
var reporters = struct {
	sync.Mutex
	m map[io.Writer]*reporter
}{m: map[io.Writer]*reporter{}}

// track starts reporting the step label on w, with a first line saying
// what it is (label and about); the returned function ends it (with the
// step's error, if any).
func track(w io.Writer, label, about string) func(err error) {
	reporters.Lock()
	r, ok := reporters.m[w]
	if !ok {
		r = newReporter(w, progressInterval, isTerminal(w))
		reporters.m[w] = r
	}
	reporters.Unlock()
	return r.track(label, about)
}

func newReporter(w io.Writer, every time.Duration, tty bool) *reporter {
	return &reporter{w: w, tty: tty, every: every}
}

// isTerminal reports whether w is a terminal that understands carriage
// returns and erasing a line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (r *reporter) track(label, about string) func(err error) {
	t := &task{label: label, start: time.Now()}
	r.mu.Lock()
	r.clearLine()
	fmt.Fprintf(r.w, "building %s (%s)\n", label, about)
	r.tasks = append(r.tasks, t)
	if len(r.tasks) == 1 {
		r.stop = make(chan struct{})
		go r.tick(r.stop)
	}
	r.mu.Unlock()
	var once sync.Once
	return func(err error) { once.Do(func() { r.end(t, err) }) }
}

func (r *reporter) tick(stop chan struct{}) {
	tk := time.NewTicker(r.every)
	defer tk.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tk.C:
			r.mu.Lock()
			r.report()
			r.mu.Unlock()
		}
	}
}

// report writes the running steps' elapsed times; r.mu is held.
func (r *reporter) report() {
	if len(r.tasks) == 0 {
		return
	}
	parts := make([]string, len(r.tasks))
	for i, t := range r.tasks {
		parts[i] = fmt.Sprintf("building %s… %s", t.label, elapsed(time.Since(t.start)))
	}
	if r.tty {
		fmt.Fprintf(r.w, "\r%s\x1b[K", strings.Join(parts, "; "))
		r.open = true
		return
	}
	for _, p := range parts {
		fmt.Fprintln(r.w, p)
	}
}

func (r *reporter) end(t *task, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.tasks {
		if x == t {
			r.tasks = append(r.tasks[:i], r.tasks[i+1:]...)
			break
		}
	}
	r.clearLine()
	d := elapsed(time.Since(t.start))
	if err != nil {
		fmt.Fprintf(r.w, "building %s failed after %s\n", t.label, d)
	} else {
		fmt.Fprintf(r.w, "built %s in %s\n", t.label, d)
	}
	if len(r.tasks) == 0 {
		close(r.stop)
		reporters.Lock()
		if reporters.m[r.w] == r {
			delete(reporters.m, r.w)
		}
		reporters.Unlock()
	} else if r.tty {
		r.report() // the others' line again, right away
	}
}

// clearLine erases an open status line; r.mu is held.
func (r *reporter) clearLine() {
	if r.open {
		fmt.Fprint(r.w, "\r\x1b[K")
		r.open = false
	}
}

// tailBuffer keeps the last max bytes written to it: a failed build's
// output, without holding all of a runaway one.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf
}

// elapsed formats a duration for people: "40 s", "3 min 05 s".
func elapsed(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s < 60 {
		return fmt.Sprintf("%d s", s)
	}
	return fmt.Sprintf("%d min %02d s", s/60, s%60)
}
