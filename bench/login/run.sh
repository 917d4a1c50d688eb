#!/usr/bin/env bash
# Login fairness (issue 18 target 4), measured over several runs:
# BenchmarkPasswordLogin16 (api/oauth/login_bench_test.go) run ROUNDS times,
# and with -base, a baseline commit's benchmark run alternately with it, so
# that both see the same machine. One run's p99/p50 moves with whatever
# else the machine does during it; the median over runs is the figure.
#
#   bench/login/run.sh [-base COMMIT] [-rounds 5] [-logins 300]
#
# Needs only Go: it starts Postgres with dev/cmd/devstack.
set -euo pipefail
cd "$(dirname "$0")/../.."
base="" rounds=5 logins=300
while [ $# -gt 0 ]; do
	case "$1" in
	-base) base=$2; shift 2 ;;
	-rounds) rounds=$2; shift 2 ;;
	-logins) logins=$2; shift 2 ;;
	*) echo "usage: $0 [-base COMMIT] [-rounds N] [-logins N]" >&2; exit 2 ;;
	esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/after.test" ./api/oauth/
variants=(after)
if [ -n "$base" ]; then
	# The baseline from git's object store: the work tree is not touched.
	mkdir "$work/src"
	git archive "$base" | tar -x -C "$work/src"
	(cd "$work/src" && go test -c -o "$work/before.test" ./api/oauth/)
	variants=(before after)
fi
cat >"$work/rounds.sh" <<SCRIPT
#!/usr/bin/env bash
set -euo pipefail
cd "$PWD/api/oauth"
for r in \$(seq $rounds); do
	for v in ${variants[*]}; do
		printf '%s %s load %s ' "\$v" "\$(date -u +%T)" "\$(cut -d' ' -f1 /proc/loadavg)"
		"$work/\$v.test" -test.run XXX -test.bench PasswordLogin16 -test.benchtime ${logins}x | grep 'logins/s' || echo "\$v FAILED"
	done
done
SCRIPT
chmod +x "$work/rounds.sh"
go run ./dev/cmd/devstack exec -- "$work/rounds.sh" | tee "$work/runs.txt"
# The median of each figure per variant.
awk '
	/FAILED/ { next }
	{ v = $1; n[v]++
	  for (i = 5; i < NF; i++) {
		if ($(i+1) == "logins/s") ls[v, n[v]] = $i
		if ($(i+1) == "p50-ms") p50[v, n[v]] = $i
		if ($(i+1) == "p99-ms") p99[v, n[v]] = $i
		if ($(i+1) == "p99/p50") r[v, n[v]] = $i
		if ($(i+1) == "busy-503s") busy[v, n[v]] += $i
	  } }
	function median(a, v, k,   m, i, j, t, x) {
		for (i = 1; i <= k; i++) x[i] = a[v, i]
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		return k % 2 ? x[(k + 1) / 2] : (x[k / 2] + x[k / 2 + 1]) / 2
	}
	END {
		for (v in n) {
			worst = 0
			for (i = 1; i <= n[v]; i++) if (r[v, i] > worst) worst = r[v, i]
			printf "%s: %d runs, median logins/s %.2f, p50 %.0f ms, p99 %.0f ms, p99/p50 %.2f (worst run %.2f)\n",
				v, n[v], median(ls, v, n[v]), median(p50, v, n[v]), median(p99, v, n[v]), median(r, v, n[v]), worst
		}
	}' "$work/runs.txt"
