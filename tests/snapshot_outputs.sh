#!/usr/bin/env bash
# Writes what gpufabric prints and writes for every example into one folder, so that two builds
# can be compared byte for byte (a refactoring must not change behaviour):
#
#   tests/snapshot_outputs.sh OLD_BINARY /tmp/before
#   tests/snapshot_outputs.sh NEW_BINARY /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical
#
# Covers plan (text, --json, -o), simulate (every op, --json and --explain), step, what-if,
# estimate, configs (every target), diagnose and check on the recorded tool outputs, and the
# sweep's JSON. report.html is left out: it embeds the charting libraries and nothing else of
# its own that the files above do not already hold.
set -u
BIN=$(realpath "$1")
OUT=$2
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
cd "$SRC"

run() {  # run NAME ARGS...: stdout, stderr and the exit code of one command
  local name=$1; shift
  "$BIN" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  echo $? >"$OUT/$name.rc"
}

for spec in examples/*.yaml; do
  n=$(basename "$spec" .yaml)
  run "$n.plan" plan "$spec"
  run "$n.plan.json" plan "$spec" --json
  rm -rf "$OUT/$n.plan.d"; run "$n.plan.o" plan "$spec" -o "$OUT/$n.plan.d"
  for op in all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv; do
    run "$n.sim.$op" simulate "$spec" --op "$op" -b 8 -e 8G -f 4 --json
  done
  run "$n.sim.explain" simulate "$spec" --explain
  for lb in ecmp ecmp-multi-qp adaptive spray; do
    run "$n.sim.lb.$lb" simulate "$spec" --load-balancing "$lb" -b 1M -e 1G -f 32
  done
  for algo in ring tree nvls collnet pat; do
    run "$n.sim.algo.$algo" simulate "$spec" --algo "$algo" -b 1K -e 4G -f 16
  done
  run "$n.step" step "$spec" --json
  run "$n.step.txt" step "$spec"
  # A switch and a link of the plan's own cabling (its first leaf and that leaf's first uplink).
  leaf=$(awk -F, 'NR == 2 {print $3}' "$OUT/$n.plan.d/cabling.csv")
  up=$(awk -F, -v l="$leaf" '$1 == l {print $1 ":" $3; exit}' "$OUT/$n.plan.d/cabling.csv")
  run "$n.whatif.switch" what-if "$spec" --fail "switch:$leaf" --json
  [ -n "$up" ] && run "$n.whatif.link" what-if "$spec" --fail "link:$up" --json
  run "$n.whatif.grow" what-if "$spec" --grow nodes=+8 --json
  run "$n.whatif.nic" what-if "$spec" --nic 800G --json
  rm -rf "$OUT/$n.configs.d"; run "$n.configs" configs "$spec" -o "$OUT/$n.configs.d"
  run "$n.check" check "$spec" tests/data/outputs/{nccl-tests,ib_write,iperf3}* --json
done
run estimate estimate --params 70B --precision bf16 --gpus 1024 --link 400G --compute-time 10s --json
run diagnose diagnose $(ls tests/data/outputs/* | grep -v /frr-) --json
run diagnose.txt diagnose $(ls tests/data/outputs/* | grep -v /frr-)
rm -rf "$OUT/sweep.d"
run sweep sweep examples/seed-70b-1024.yaml --vary fabric.oversubscription=1,2 --threads 1 -q \
  -o "$OUT/sweep.d" --json
for csv in data/calibration/*.csv; do run "calibrate.$(basename "$csv" .csv)" calibrate "$csv" --json; done
# The sweep records how long it ran; that is not behaviour.
find "$OUT" -type f -name 'sweep.*' -exec sed -i -E 's/"(elapsed|seconds|wall)[a-z_]*": [0-9.e+-]+/"\1": 0/g' {} +
sed -i -E 's/"(elapsed|seconds|wall)[a-z_]*": [0-9.e+-]+/"\1": 0/g' "$OUT"/sweep.out
# Where the snapshot was written is not behaviour either.
for f in "$OUT"/*.out "$OUT"/*.err; do sed -i "s#$OUT#SNAPSHOT#g" "$f"; done
# Nor which build wrote it (plan.json and sweep.json record the version and git revision).
grep -rlZ '"gpufabric_version": ' "$OUT" | xargs -0 -r sed -i -E 's/"gpufabric_version": "[^"]*"/"gpufabric_version": "BUILD"/'
