package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/uptrace/bun"
)

// cpuTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ,
// 100 on every Linux this runs on).
const cpuTick = 10 * time.Millisecond

// procCPU reads a process's user+system CPU time and its comm and parent
// from /proc/<pid>/stat.
func procCPU(pid int) (cpu time.Duration, comm string, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", 0, false
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return 0, "", 0, false
	}
	comm = s[open+1 : closing]
	f := strings.Fields(s[closing+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, "", 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * cpuTick, comm, ppid, true
}

// cpuSnapshot is the CPU time each process group of the stack has used.
type cpuSnapshot struct {
	api, worker, temporal, minio, postgres time.Duration
	temporalSeen, minioSeen                bool
}

// snapshotCPU reads the CPU time of this process (the API and the
// benchmark's clients), the worker, the Temporal and MinIO servers that
// this run (or the devstack it runs under) started, and the Postgres
// backends connected to the run's database.
func snapshotCPU(ctx context.Context, workerPid int, db *bun.DB) cpuSnapshot {
	var s cpuSnapshot
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.api = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	s.worker, _, _, _ = procCPU(workerPid)
	// The services are descendants of this process (private stack) or of
	// the devstack process this runs under.
	root := os.Getpid()
	for p := os.Getppid(); p > 1; {
		_, comm, parent, ok := procCPU(p)
		if !ok {
			break
		}
		if comm == "devstack" {
			root = p
			break
		}
		p = parent
	}
	parents := map[int]int{}
	cpus := map[int]time.Duration{}
	comms := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		cpu, comm, ppid, ok := procCPU(pid)
		if ok {
			parents[pid], cpus[pid], comms[pid] = ppid, cpu, comm
		}
	}
	for pid, comm := range comms {
		under := false
		for p := parents[pid]; p > 1 && !under; p = parents[p] {
			under = p == root
		}
		if !under {
			continue
		}
		switch {
		case strings.Contains(comm, "temporal"):
			s.temporal += cpus[pid]
			s.temporalSeen = true
		case strings.Contains(comm, "minio"):
			s.minio += cpus[pid]
			s.minioSeen = true
		}
	}
	var pids []int
	if err := db.NewRaw("SELECT pid FROM pg_stat_activity WHERE datname = current_database()").Scan(ctx, &pids); err == nil {
		for _, pid := range pids {
			if cpu, _, _, ok := procCPU(pid); ok {
				s.postgres += cpu
			}
		}
	}
	return s
}

// printCPU prints the CPU per upload of each process between two snapshots.
// Postgres backends that exited in between are not counted, and backends
// that started in between count from zero (their whole life is in the run).
func printCPU(before, after cpuSnapshot, n int) {
	per := func(a, b time.Duration) string {
		return fmt.Sprintf("%.1f ms", float64(b-a)/float64(time.Millisecond)/float64(n))
	}
	fmt.Printf("CPU per upload (user+system, /proc and getrusage):\n")
	fmt.Printf("  API + benchmark clients (this process): %s\n", per(before.api, after.api))
	fmt.Printf("  worker:                                 %s\n", per(before.worker, after.worker))
	if after.temporalSeen {
		fmt.Printf("  Temporal server:                        %s\n", per(before.temporal, after.temporal))
	} else {
		fmt.Printf("  Temporal server:                        n/a (not started by this run or its devstack)\n")
	}
	if after.minioSeen {
		fmt.Printf("  MinIO:                                  %s\n", per(before.minio, after.minio))
	}
	fmt.Printf("  Postgres (backends on the run's database): %s\n", per(before.postgres, after.postgres))
	total := (after.api - before.api) + (after.worker - before.worker) + (after.temporal - before.temporal) + (after.postgres - before.postgres)
	fmt.Printf("  total without MinIO:                    %.1f ms\n", float64(total)/float64(time.Millisecond)/float64(n))
}
