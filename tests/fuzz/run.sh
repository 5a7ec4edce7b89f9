#!/usr/bin/env bash
# Runs each libFuzzer target briefly, seeded with the shipped examples, catalog and tool outputs
# and with its own regression inputs (tests/data/fuzz-regressions/TARGET-*).
# A crash, a leak or a timeout fails the run; the reproducer is kept in build-fuzz/crashes/.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${FUZZ_SECONDS:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$build/crashes"
for target in spec catalog units parsers; do
  corpus="$build/corpus-$target"
  mkdir -p "$corpus"
  case $target in
    spec) cp "$root"/examples/*.yaml "$root"/tests/data/specs/*.yaml "$corpus"/ ;;
    catalog) cp "$root"/catalog/*.yaml "$corpus"/ ;;
    parsers) cp "$root"/tests/data/outputs/* "$root"/tests/data/acceptance/* "$corpus"/
             cp "$root"/tests/data/replay/*.json "$root"/tests/data/replay/*.log "$corpus"/ ;;
    units) printf '400G' >"$corpus/a"; printf '2:1' >"$corpus/b"; printf '8GiB' >"$corpus/c"
           printf '1.5h' >"$corpus/d"; printf '70B' >"$corpus/e" ;;
  esac
  # Inputs that once crashed (or hung) this target, kept as regressions.
  for f in "$root"/tests/data/fuzz-regressions/"$target"-*; do
    if [ -e "$f" ]; then cp "$f" "$corpus"/; fi
  done
  echo "fuzz_$target: ${seconds}s"
  "$build/fuzz_$target" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=16384 -artifact_prefix="$build/crashes/$target-" -print_final_stats=0 2>"$build/fuzz_$target.log" \
    || { tail -40 "$build/fuzz_$target.log"; echo "fuzz_$target FAILED" >&2; exit 1; }
  grep -E "^(#[0-9]+.*DONE|Done)" "$build/fuzz_$target.log" | tail -1 || true
done
