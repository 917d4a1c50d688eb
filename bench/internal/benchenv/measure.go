package benchenv

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/uptrace/bun"
)

// Percentile is the nearest-rank percentile p (0 to 100) of sorted d,
// which must not be empty.
func Percentile(d []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(d)))) - 1
	return d[max(0, min(len(d)-1, i))]
}

// LoadAvg is the 1, 5 and 15-minute load averages, as /proc/loadavg has
// them, or "unknown".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Machine describes this machine and Go for a report's header.
func Machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}

// ProcessCPU is the user and system CPU time this process has used.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PostgresCPU is the CPU time (user + system) of every backend connected
// to the benchmark's database, by pid, from /proc (Postgres runs on this
// machine).
func PostgresCPU(ctx context.Context, db *bun.DB) (map[int]time.Duration, error) {
	var pids []int
	if err := db.NewRaw("SELECT pid FROM pg_stat_activity WHERE datname = current_database()").Scan(ctx, &pids); err != nil {
		return nil, err
	}
	out := map[int]time.Duration{}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command (which is in parentheses): state is
		// field 3; utime and stime are fields 14 and 15, in clock ticks.
		rest := string(b[bytes.LastIndexByte(b, ')')+2:])
		f := strings.Fields(rest)
		if len(f) < 13 {
			continue
		}
		var ut, st int64
		fmt.Sscan(f[11], &ut)
		fmt.Sscan(f[12], &st)
		out[pid] = time.Duration(ut+st) * time.Second / clockTicks
	}
	return out, nil
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100
