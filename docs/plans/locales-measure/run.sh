#!/usr/bin/env bash
# The measurements of docs/plans/locales.md, appendix A: a scratch database with
# every migration, 10,000 synthetic pages, and copies per variant. Dropped at the end.
set -euo pipefail
cd "$(dirname "$0")"
PG=(-h 127.0.0.1 -U postgres)
createdb "${PG[@]}" scratch_locales
for f in ../../../models/migrations/*.up.sql; do psql "${PG[@]}" -d scratch_locales -q -v ON_ERROR_STOP=1 -1 -f "$f" >/dev/null; done
psql "${PG[@]}" -d scratch_locales -v ON_ERROR_STOP=1 -f seed.sql
for v in a b c; do createdb "${PG[@]}" -T scratch_locales scratch_locales_$v; done
# A migration with a writer at 100/s: the writer's worst latency (µs, field 3 of pgbench's log).
migrate() { db=$1; shift
  (pgbench "${PG[@]}" -n -c 2 -R 100 -T 14 -f writer.sql -l --log-prefix=/tmp/w_$db $db > /tmp/w_$db.out 2>&1 &)
  sleep 3; for m in "$@"; do psql "${PG[@]}" -d $db -v ON_ERROR_STOP=1 -f $m | grep -E 'Time|window'; done
  sleep 11; cat /tmp/w_$db.[0-9]* | sort -k3 -n | tail -1; }
migrate scratch_locales_a mig_a.sql
migrate scratch_locales_b mig_b.sql
migrate scratch_locales_c mig_c1.sql mig_c2.sql mig_c3.sql
migrate scratch_locales mig_d.sql   # rolled back
# Reads: translations (a), side tables (b); statement latency from pgbench -r.
psql "${PG[@]}" -d scratch_locales -q -f pop.sql; psql "${PG[@]}" -d scratch_locales_a -q -f pop.sql; psql "${PG[@]}" -d scratch_locales_b -q -f pop.sql
psql "${PG[@]}" -d scratch_locales_a -q -f pop_a.sql; psql "${PG[@]}" -d scratch_locales_b -q -f pop_b.sql
psql "${PG[@]}" -d scratch_locales_a -f site_ops.sql
for round in 1 2 3; do for v in page_base page_a page_a_alt page_b page_base_drafts page_a_drafts block_base block_a block_a2 block_b; do
  db=scratch_locales; case $v in *_a|*_a2|page_a_*) db=scratch_locales_a;; *_b) db=scratch_locales_b;; esac
  echo "$round $v $(pgbench "${PG[@]}" -n -M prepared -c 8 -j 2 -T 5 -r -f r_$v.sql $db | grep -E 'SELECT (to_jsonb|\(to_jsonb)' | awk '{print $1}') ms"
done; done
for db in scratch_locales_a scratch_locales_b scratch_locales_c scratch_locales; do dropdb "${PG[@]}" $db; done
