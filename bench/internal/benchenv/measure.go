package benchenv

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"time"
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
