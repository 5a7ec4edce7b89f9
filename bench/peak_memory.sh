#!/usr/bin/env bash
# Wall time and peak memory of whole commands (make bench). Targets: plan of 131,072 GPUs with
# cabling.csv in under 2 s and 1 GiB; simulate sweeps as bench/sim_perftest.cc says; replay of a
# 1 GB trace in under 30 s and 1 GiB.
set -euo pipefail
bin=${1:-build/gpufabric}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '\n%-72s %9s %12s\n' "command" "wall_s" "peak_MiB"
for args in "plan examples/seed-70b-1024.yaml -o $out/o" "plan examples/roce-16k.yaml -o $out/o" \
            "plan bench/specs/ib-131k.yaml -o $out/o" "plan bench/specs/roce-131k-qm.yaml -o $out/o" \
            "simulate examples/roce-16k.yaml --load-balancing ecmp" \
            "simulate bench/specs/ib-131k.yaml" \
            "plan bench/specs/ib-1m.yaml -o $out/o" "plan bench/specs/roce-1m.yaml -o $out/o" \
            "simulate bench/specs/ib-1m.yaml" "simulate bench/specs/roce-1m.yaml" \
            "simulate examples/seed-70b-1024.yaml --op alltoall -b 1G -e 1G" \
            "simulate examples/roce-16k.yaml --op alltoall -b 1G -e 1G" \
            "simulate bench/specs/roce-16k-nonrail.yaml --op alltoall -b 1G -e 1G" \
            "step examples/roce-16k.yaml" \
            "what-if examples/roce-16k.yaml --fail link:su01-r0-leaf:pod01-spine01" \
            "report examples/roce-16k.yaml -o $out/o" \
            "acceptance examples/roce-16k.yaml -o $out/o" \
            "jobs examples/jobs-roce-16k.yaml --no-compare" "jobs examples/jobs-roce-16k.yaml"; do
  /usr/bin/time -q -f "%e %M" -o "$out/t" "$bin" $args >/dev/null 2>&1 || true  # step exits 1 on a failed constraint
  read -r wall kb <"$out/t"
  printf '%-72s %9s %12.1f\n' "gpufabric ${args//$out\/o/DIR}" "$wall" "$(awk -v k="$kb" 'BEGIN{print k/1024}')"
done
# replay of a 1 GB PyTorch profiler trace (target 30 s, 1 GiB): bench/replay_perftest.cc writes it.
bench=$(dirname "$bin")/gpufabric_bench
if [ -x "$bench" ] && [ "$(df --output=avail -k "$out" | tail -1)" -gt $((3 * 1024 * 1024)) ]; then
  GPUFABRIC_BENCH_TRACE="$out/trace.json" "$bench" --benchmark_filter=BM_ReplayTrace1GB >/dev/null 2>&1
  args="replay $out/trace.json --spec examples/seed-70b-1024.yaml"
  /usr/bin/time -q -f "%e %M" -o "$out/t" "$bin" $args >/dev/null 2>&1 || true
  read -r wall kb <"$out/t"
  printf '%-72s %9s %12.1f\n' "gpufabric replay TRACE-1GB --spec examples/seed-70b-1024.yaml" "$wall" "$(awk -v k="$kb" 'BEGIN{print k/1024}')"
fi
