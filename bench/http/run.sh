#!/bin/sh
# bench/http: wrk loads against the real stack (see README.md).
# Usage: bench/http/run.sh [-pages 10000] [-duration 10s]
set -eu
cd "$(dirname "$0")/../.."
if ! command -v wrk >/dev/null 2>&1; then
	echo "installing wrk (Debian package)" >&2
	if [ "$(id -u)" = 0 ]; then apt-get install -y wrk; else sudo apt-get install -y wrk; fi
fi
exec timeout 30m go run ./dev/cmd/devstack exec -- go run ./bench/http "$@"
