#!/usr/bin/env bash
# Fails when git tracks a compiled executable or object (ELF, Mach-O, PE,
# or a Go/ar archive): build outputs never go into git. Reads the first
# four bytes of every tracked file; a few hundred files take well under a
# second. `make vet`, and so `.ci/run`, run it.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  magic=$(head -c 4 -- "$f" | od -An -tx1 | tr -d ' \n')
  case "$magic" in
    7f454c46) kind="ELF executable or object" ;;
    feedface|feedfacf|cefaedfe|cffaedfe|cafebabe) kind="Mach-O executable" ;;
    213c6172) kind="ar archive (a Go or C library build output)" ;;
    4d5a*) kind="Windows PE executable" ;;
    *) continue ;;
  esac
  # "MZ" also starts some text; a real PE file says "PE\0\0" at the offset in bytes 60-63.
  if [ "$kind" = "Windows PE executable" ]; then
    off=$(od -An -tu4 -j60 -N4 -- "$f" 2>/dev/null | tr -d ' ') || continue
    [ -n "$off" ] && [ "$(od -An -tx1 -j"$off" -N4 -- "$f" 2>/dev/null | tr -d ' \n')" = "50450000" ] || continue
  fi
  echo "tracked build output: $f ($kind); remove it with git rm --cached and add it to .gitignore" >&2
  bad=1
done < <(git ls-files -z)
exit $bad
