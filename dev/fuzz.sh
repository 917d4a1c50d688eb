#!/bin/sh
# Runs every Go fuzz target for the given time each (default 2m):
# `make fuzz` runs them long, `make test` briefly. go test takes one -fuzz
# target per run, so they run one after another. A failure stops the run
# and leaves the input in the package's testdata/fuzz/<Target>/: commit it
# with the fix, and it stays a regression test of plain `go test`.
#
# The targets, package:Function, the only list of them (docs/security.md
# says what each checks):
TARGETS="
./api/jsonapi:FuzzDecode
./api:FuzzParseQuery
./activities/images:FuzzReadHeader
./api/oauth:FuzzParseTokenRequest
"
set -eu
fuzztime=${1:-2m}
for t in $TARGETS; do
	pkg=${t%%:*}
	fn=${t##*:}
	echo "fuzz: $fn ($pkg) for $fuzztime"
	# shellcheck disable=SC2086 # FUZZFLAGS is a list of flags
	${GO:-go} test -run "^$fn\$" -fuzz "^$fn\$" -fuzztime "$fuzztime" ${FUZZFLAGS:-} "$pkg"
done
