#!/usr/bin/env bash
# Wall time and peak memory of whole commands (make bench). Target: plan of 131,072 GPUs with
# cabling.csv written in under 2 s and 1 GiB.
set -euo pipefail
bin=${1:-build/gpufabric}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '\n%-58s %9s %12s\n' "command" "wall_s" "peak_MiB"
for args in "plan examples/seed-70b-1024.yaml" "plan examples/roce-16k.yaml" \
            "plan bench/specs/ib-131k.yaml" "plan bench/specs/roce-131k-qm.yaml"; do
  /usr/bin/time -f "%e %M" -o "$out/t" "$bin" $args -o "$out/o" >/dev/null 2>&1
  read -r wall kb <"$out/t"
  printf '%-58s %9s %12.1f\n' "gpufabric $args -o DIR" "$wall" "$(awk -v k="$kb" 'BEGIN{print k/1024}')"
done
