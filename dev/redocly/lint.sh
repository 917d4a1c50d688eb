#!/usr/bin/env bash
# `make vet`'s lint of the OpenAPI description: dumps it as GET /openapi.json
# serves it (go run ./dev/cmd/openapi, no servers) and runs the Redocly CLI
# pinned in package-lock.json on it, with redocly.yaml and the accepted
# problems of .redocly.lint-ignore.yaml. Any other error or warning fails.
# The CLI is installed with `npm ci` into dev/redocly/node_modules
# (git-ignored), again only when package-lock.json changes; npm keeps its
# download in its own cache (~/.npm).
set -euo pipefail
cd "$(dirname "$0")"
root=../..

# The pinned CLI needs Node.js 20.19 or later (package-lock.json, engines).
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || a === 20 && b >= 19 ? 0 : 1)' 2>/dev/null; then
  echo "redocly lint: needs Node.js 20.19 or later with npm on PATH (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi

stamp=node_modules/.package-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -x node_modules/.bin/redocly || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  command -v npm >/dev/null || { echo "redocly lint: npm is missing (install it with Node.js 20.19+)" >&2; exit 1; }
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi

mkdir -p "$root/.dev"
(cd "$root" && ${GO:-go} run ./dev/cmd/openapi) > "$root/.dev/openapi.json"
# Redocly fails only on errors; a warning must fail too, so the totals of
# its JSON report decide (its stylish report is printed when they are not 0).
export REDOCLY_SUPPRESS_UPDATE_NOTICE=true REDOCLY_TELEMETRY=off
lint() { node_modules/.bin/redocly lint --config redocly.yaml --max-problems 1000 "$@" ../../.dev/openapi.json; }
report=$(lint --format json 2>/dev/null) || true
if ! node -e '
  const t = JSON.parse(process.argv[1]).totals;
  console.log(`redocly lint: ${t.errors} errors, ${t.warnings} warnings, ${t.ignored} accepted (.redocly.lint-ignore.yaml)`);
  process.exit(t.errors + t.warnings > 0 ? 1 : 0);' "$report"; then
  lint --format stylish 2>&1 | grep -v '[║╔╚]' || true
  exit 1
fi
