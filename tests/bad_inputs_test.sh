#!/usr/bin/env bash
# Every bad input of the hardening issue, run as a user would run it: under a memory limit
# (ulimit -v) and a time limit, each must exit with the stated code and message, write nothing
# and remove nothing. Usage: bad_inputs_test.sh BUILD/gpufabric SOURCE_DIR
set -uo pipefail
bin=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d /tmp/gf-bad-inputs.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# 4 GiB of address space: far above what any refused input may take, far below what reading a
# 2 GB file whole (or /dev/zero without end) would.
mem_kib=$((4 * 1024 * 1024))
limit_s=20
failures=0
n=0

# expect CODE PATTERN CMD...: runs CMD under the limits; checks its exit code and that stderr or
# stdout matches the extended regex PATTERN.
expect() {
  local want=$1 pattern=$2
  shift 2
  n=$((n + 1))
  local out rc start end
  start=$(date +%s.%N)
  out=$( (ulimit -v $mem_kib; timeout $limit_s "$@") 2>&1)
  rc=$?
  end=$(date +%s.%N)
  if [ "$rc" != "$want" ]; then
    echo "FAIL [$*]: exit $rc, expected $want"; echo "$out" | head -5 | sed 's/^/    /'
    failures=$((failures + 1)); return
  fi
  if ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL [$*]: output does not match /$pattern/"; echo "$out" | head -5 | sed 's/^/    /'
    failures=$((failures + 1)); return
  fi
  printf 'ok   %-70.70s exit %s, %.2f s\n' "$*" "$rc" "$(echo "$end - $start" | bc)"
}

# nothing_in DIR: DIR holds exactly what `snapshot DIR` recorded.
snapshot() { (cd "$1" && find . -printf '%p %s\n' | sort) > "$work/.snap"; }
unchanged() {
  n=$((n + 1))
  if (cd "$1" && find . -printf '%p %s\n' | sort) | cmp -s - "$work/.snap"; then
    echo "ok   $1 unchanged"
  else
    echo "FAIL $1 changed:"; (cd "$1" && find . | sort) | sed 's/^/    /'
    failures=$((failures + 1))
  fi
}

good=$src/examples/seed-70b-1024.yaml
small() { printf 'cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n'; }

echo "== bounded reading"
truncate -s 2G big.yaml
expect 2 "big.yaml: error: spec file is 2 GiB; at most 4 MiB is read" "$bin" plan big.yaml
expect 2 "/dev/zero: error: spec file goes on past the limit" "$bin" plan /dev/zero
{ small; printf 'catalog: [/dev/zero]\n'; } > devzero-catalog.yaml
expect 2 "catalog: catalog file '/dev/zero': catalog file goes on past the limit" \
  "$bin" plan devzero-catalog.yaml
mkfifo fifo.yaml
expect 2 "fifo.yaml: error: the spec file is a FIFO that nothing was written into" "$bin" plan fifo.yaml
# Nested aliases ("billion laughs", 600 bytes) are refused as they are parsed, not expanded.
{ small; printf 'x:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n'
  for l in b c d e f g h i; do
    p=$(printf '%s' abcdefghi | cut -c$(( $(printf '%d' "'$l") - 97 )))
    printf '  %s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n' $l $l $p $p $p $p $p $p $p $p $p
  done; } > laughs.yaml
expect 2 "laughs.yaml: error: its aliases [(][*]name[)] expand the document" "$bin" plan laughs.yaml
# An output named as the command's own input is refused, and the input stays as it was.
small > own.yaml
expect 2 "own.yaml: error: --links: is one of this command's inputs" \
  "$bin" simulate own.yaml -e 1M --links own.yaml
n=$((n + 1)); cmp -s own.yaml <(small) || { echo "FAIL: own.yaml was replaced"; failures=$((failures + 1)); }
truncate -s 1G huge-log.txt
expect 2 "huge-log.txt: error: file is 1 GiB; at most 256 MiB is read" "$bin" diagnose huge-log.txt
expect 2 "huge-log.txt: error: file is 1 GiB" "$bin" check "$good" huge-log.txt
expect 2 "error: file goes on past the limit" "$bin" diagnose /dev/zero

echo "== the spec"
{ small; printf 'name: a\nname: b\n'; } > dup.yaml
expect 2 "dup.yaml:3:1: error: name: key given twice" "$bin" plan dup.yaml
printf 'cluster:\n  gpu: h100-sxm\n  nodes: 4\n  nodes: 8\n  nic: cx7-400g\n' > dup2.yaml
expect 2 "dup2.yaml:4:3: error: cluster.nodes: key given twice" "$bin" plan dup2.yaml
{ small; printf -- '---\nname: second\n'; } > docs.yaml
expect 2 "docs.yaml:2:1: error: 2 YAML documents" "$bin" plan docs.yaml
{ small; printf 'name: "Cluster α — 東京"\n'; } > unicode.yaml
expect 0 '"name": "Cluster α — 東京"' "$bin" plan unicode.yaml --json
{ small; printf 'name: "%s"\n' "$(head -c 1000000 /dev/zero | tr '\0' x)"; } > longname.yaml
expect 2 "longname.yaml:2:7: error: name: the name is 1000000 characters long; at most 128" \
  "$bin" plan longname.yaml
{ small; printf 'name: "a\\nb"\n'; } > newline-name.yaml
expect 2 "name: the name holds a control character" "$bin" plan newline-name.yaml
{ small; printf 'name: \xff\n'; } > bad-utf8.yaml
expect 2 "name: the name is not valid UTF-8" "$bin" plan bad-utf8.yaml
printf 'cluster: {gpu: h100-sxm, nodes: 3000000000, nic: cx7-400g}\n' > nodes-overflow.yaml
expect 2 "cluster.nodes: 3000000000 is more than the 2097152 this tool plans" \
  "$bin" plan nodes-overflow.yaml
printf 'cluster: {gpu: h100-sxm, gpus: 20000000, nic: cx7-400g}\n' > too-many-gpus.yaml
expect 2 "cluster.gpus: 20000000 is more than the 16777216 this tool plans" \
  "$bin" plan too-many-gpus.yaml
expect 2 "is a folder, not a spec file" "$bin" plan "$work"
{ small; printf 'networks:\n  storage: {target_bandwidth: 40}\n'; } > net-unitless.yaml
expect 2 "net-unitless.yaml:3:31: error: networks.storage.target_bandwidth" "$bin" plan net-unitless.yaml
{ small; printf 'networks:\n  storage: {storage_nodes: 100000000000}\n'; } > net-huge.yaml
expect 2 "net-huge.yaml:3:28: error: networks.storage.storage_nodes" "$bin" plan net-huge.yaml
{ small; printf 'networks:\n  storage: {storage_nodes: 70000}\n'; } > net-many.yaml
expect 2 "net-many.yaml:3:28: error: networks.storage.storage_nodes: 70000 is more than the 65536" "$bin" plan net-many.yaml
{ printf 'cluster: {gpu: h100-sxm, nodes: 100000, nic: cx7-400g}\n'; printf 'networks:\n  storage: {target_bandwidth: 2000GB/s}\n'; } > net-target.yaml
expect 2 "net-target.yaml:3:.*networks.storage.target_bandwidth: .*more than the 65536" "$bin" plan net-target.yaml
{ small; printf 'networks: [storage]\n'; } > net-list.yaml
expect 2 "net-list.yaml:2:11: error: networks" "$bin" plan net-list.yaml

echo "== jobs"
jb() {  # a 2-unit cluster, then the jobs: lines given
  printf 'cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g}\nfabric: {technology: roce, scalable_unit: 4}\njobs:\n'
  printf '%s\n' "$@"
}
w='workload: {model: {params: 8B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}, parallelism: {tp: 8}, global_batch: 64}'
jb "  - {name: a, nodes: 2, placement: [node001, node002], $w}" \
   "  - {name: b, nodes: 2, placement: [node003, node001], $w}" > jobs-overlap.yaml
expect 2 "jobs-overlap.yaml:5:[0-9]+: error: jobs\[1\]\.placement\[1\]: node 'node001' is already job 'a''s" \
  "$bin" jobs jobs-overlap.yaml
jb "  - {name: a, nodes: 6, $w}" "  - {name: b, nodes: 4, $w}" > jobs-big.yaml
expect 2 "jobs-big.yaml:4:[0-9]+: error: jobs: the jobs need 80 GPUs \(10 nodes\); the cluster has 64" \
  "$bin" jobs jobs-big.yaml
jb "  - {name: a, nodes: 2, placement: [node001, nod002], $w}" > jobs-name.yaml
expect 2 "jobs-name.yaml:4:[0-9]+: error: jobs\[0\]\.placement\[1\]: unknown node 'nod002' \(did you mean 'node002'" \
  "$bin" jobs jobs-name.yaml
jb "  - {name: a, nodes: 2, placement: packd, $w}" > jobs-policy.yaml
expect 2 "jobs-policy.yaml:4:[0-9]+: error: jobs\[0\]\.placement" "$bin" jobs jobs-policy.yaml
# A trace job: its file missing (relative to the spec's folder), its groups beyond its GPUs, a
# size that is not the traced run's, both workload and trace; nothing written.
jb "  - {name: a, gpus: 16, trace: rank0.json}" > jobs-trace.yaml
expect 2 "jobs-trace.yaml:4:[0-9]+: error: jobs\[0\]\.trace: job 'a': trace '(\./)?rank0.json': " \
  "$bin" jobs jobs-trace.yaml -o jobs-trace-out
[ ! -e jobs-trace-out ] || { echo "FAIL jobs-trace-out written for a bad trace job"; failures=$((failures + 1)); }
kin16="$src/tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json"
jb "  - {name: a, nodes: 1, trace: $kin16}" > jobs-trace-small.yaml
expect 2 "jobs-trace-small.yaml:4:[0-9]+: error: jobs\[0\]\.trace: job 'a': the traced job has 16 ranks but the job has 8 GPUs" \
  "$bin" jobs jobs-trace-small.yaml
jb "  - {name: a, nodes: 4, trace: $kin16}" > jobs-trace-big.yaml
expect 2 "jobs-trace-big.yaml:4:[0-9]+: error: jobs\[0\]\.nodes: job 'a' has 32 GPUs but its trace is of a run of 16 ranks" \
  "$bin" jobs jobs-trace-big.yaml
jb "  - {name: a, nodes: 2, trace: [$kin16, $src/tests/data/replay/missing-rank8.json]}" > jobs-trace-list.yaml
expect 2 "jobs-trace-list.yaml:4:[0-9]+: error: jobs\[0\]\.trace\[1\]: job 'a': trace '.*missing-rank8.json'" \
  "$bin" jobs jobs-trace-list.yaml
jb "  - {name: a, nodes: 2, trace: $kin16, $w}" > jobs-trace-both.yaml
expect 2 "jobs-trace-both.yaml:4:[0-9]+: error: jobs\[0\]\.trace: give either workload or trace, not both" \
  "$bin" jobs jobs-trace-both.yaml
head -c 20000 "$kin16" > jobs-cut.json
jb "  - {name: a, nodes: 2, trace: jobs-cut.json}" > jobs-trace-cut.yaml
expect 2 "jobs-cut.json:[0-9]+:[0-9]+: error: .*(truncated|ends)" "$bin" jobs jobs-trace-cut.yaml
expect 2 "error: jobs: the spec has no jobs section" "$bin" jobs "$good"
jb "  - {name: a, nodes: 2, $w}" > jobs-ok.yaml
expect 2 "placement: unknown placement 'spraed' \(did you mean 'spread'" \
  "$bin" jobs jobs-ok.yaml --placement spraed
expect 2 "fail: unknown switch 'spine99'" "$bin" jobs jobs-ok.yaml --fail switch:spine99
mkdir -p jl/links.csv
snapshot jl
expect 2 "jl/links.csv: error: --links: a folder is where this output file goes" \
  "$bin" jobs jobs-ok.yaml --links jl/links.csv
unchanged jl

echo "== memory: refused before it starts, with the figure"
printf 'cluster: {gpu: h100-sxm, nodes: 1000000, nic: cx7-400g}\n' > million.yaml
expect 2 "million.yaml:1:33: error: cluster.nodes: 1000000 nodes x 8 GPUs need about [0-9.]+ GiB of memory to plan and simulate; [0-9.]+ [MG]iB is available" \
  "$bin" simulate million.yaml
# (16 x the GPUs at the same global batch: one microbatch, which the interleaved schedule refuses.)
sed 's/gpus: 16384/nodes: 32768/; s/virtual_pipeline: [0-9]*/virtual_pipeline: 1/' \
  "$src/examples/roce-16k.yaml" > a2a-32k.yaml
expect 2 "alltoall on 262144 GPUs needs about [0-9.]+ GiB of memory for its flows" \
  "$bin" simulate a2a-32k.yaml --op alltoall -b 1G -e 1G

echo "== flags"
est="$bin estimate --params 70B --gpus 1024 --link 400G"
expect 2 "link-efficiency: 'nan' is not a finite number" $est --link-efficiency nan
expect 2 "steps: '-5' is outside 1..1000000000000" $est --steps -5
expect 2 "params: '1e40' is outside" "$bin" estimate --params 1e40 --gpus 1024 --link 400G
expect 2 "gpus: '1e18' is outside 2..16777216" "$bin" estimate --params 70B --gpus 1e18 --link 400G
expect 2 "gpus: '99999999999999999999' is outside 2..16777216" \
  "$bin" estimate --params 70B --gpus 99999999999999999999 --link 400G
expect 2 "gpus: '2.5' is not a whole number" "$bin" estimate --params 70B --gpus 2.5 --link 400G
expect 2 "tolerance: 'nan' is not a finite number" \
  "$bin" check "$good" "$src/tests/data/outputs/nccl-tests-2node-allreduce.txt" --tolerance nan
expect 2 "nodes: Value 0 not in range" "$bin" simulate "$good" --nodes 0
expect 2 "ngpus: Value 17 not in range 1 to 16" "$bin" simulate "$good" -g 17
expect 2 "stepfactor: 'nan' is not a finite number" "$bin" simulate "$good" -f nan
expect 2 "-f: [0-9]+ sizes from -b to -e; at most 200" "$bin" simulate "$good" -f 1.001
expect 2 "-b: '-8' is not a non-negative size" "$bin" simulate "$good" -b -8
expect 2 "engine: unknown engine 'fast' \(use flow or packet\)" "$bin" simulate "$good" --engine fast
expect 2 "engine: the packet-level engine simulates RoCE" "$bin" simulate "$good" --engine packet
expect 2 "-e: ring all_reduce of 8 GiB over 64 GPUs \(8 nodes\) moves 126 GiB" \
  "$bin" simulate "$src/examples/roce-lab-64.yaml" --engine packet
expect 2 "bytes: 'inf' is not" "$bin" what-if "$good" --fail node:node001 --bytes inf
expect 2 "grow: '1e9' is outside" "$bin" what-if "$good" --grow nodes=+1e9
expect 2 "degrade: unknown device 'su01-r0-leef' \(did you mean 'su01-r0-leaf'\?\)" \
  "$bin" what-if "$good" --degrade link:node001:su01-r0-leef=200G
expect 2 "degrade: cannot read 'link:node001:su01-r0-leaf' \(use link:A:B=RATE" \
  "$bin" what-if "$good" --degrade link:node001:su01-r0-leaf
expect 2 "degrade: '1e999G' in .* is not a rate" \
  "$bin" what-if "$good" --degrade link:node001:su01-r0-leaf=1e999G
expect 2 "degrade: 800G is faster than the link's 400G" \
  "$bin" what-if "$good" --degrade link:node001:su01-r0-leaf=800G
expect 2 "degrade: 'nan' in 'switch:spine01=nan' is not a fraction" \
  "$bin" what-if "$good" --degrade switch:spine01=nan
expect 2 "slow: unknown node 'node0001'" "$bin" what-if "$good" --slow node:node0001=0.8
expect 2 "slow: cannot read 'node001' \(use node:NAME=SPEED" "$bin" what-if "$good" --slow node001
expect 2 "slow: '-1' in 'node:node001=-1' is not a speed" "$bin" what-if "$good" --slow node:node001=-1
expect 2 "links-bytes: 'x' is not" "$bin" simulate "$good" --links l.csv --links-bytes x
expect 2 "timeout: 'nan' is not a finite number" "$bin" lab check "$good" --timeout nan
expect 2 "threads: Value 0 not in range" "$bin" sweep "$good" --vary fabric.planes=1,2 -o sw --threads 0
expect 2 "unknown subcommand 'nosuch'" "$bin" nosuch
expect 2 "unknown subcommand 'simulat' \(did you mean 'simulate'\?\)" "$bin" simulat "$good"

echo "== judging nothing is not a pass"
# A run cut after its small sizes (the 1 GiB and 8 GiB rows and the footer lost).
head -n 28 "$src/tests/data/outputs/nccl-tests-2node-allreduce.txt" > cut.txt
expect 1 "Verdict: NOTHING JUDGED" "$bin" check "$good" cut.txt
expect 1 '"verdict": "nothing judged"' "$bin" check "$good" cut.txt --json
printf 'hello\nthis is not a tool output\n' > unknown.txt
expect 2 "unknown.txt: error: not a result check can read: expected the output of nccl-tests" \
  "$bin" check "$good" unknown.txt
# A folder is a results folder of the acceptance runbook; one without its files is refused.
expect 2 "error: RESULTS: holds none of the results the acceptance runbook names" \
  "$bin" check "$good" "$work"

echo "== calibration profiles and calibrate --fit"
fixtures=$src/tests/data/calfit
{ small; printf 'calibration: prof.yaml\n'; } > calibrated.yaml
printf 'factors:\n  network_efficiency: 1.5\n' > prof.yaml
expect 2 "prof.yaml:2:23: error: factors.network_efficiency: an efficiency .* must lie in \\[0.05, 1\\]" \
  "$bin" simulate calibrated.yaml
printf 'factors:\n  algorithms: {trees: 0.9}\n' > prof.yaml
expect 2 "prof.yaml:2:.*factors.algorithms.trees.*did you mean 'tree'" "$bin" step calibrated.yaml
printf 'factors: {a: [}\n' > prof.yaml
expect 2 "prof.yaml:1:.*error" "$bin" what-if calibrated.yaml --grow nodes=+1
rm prof.yaml
expect 2 "calibrated.yaml:2:.*error: calibration: calibration profile '.*prof.yaml': cannot read" \
  "$bin" check calibrated.yaml "$src/tests/data/outputs/nccl-tests-2node-allreduce.txt"
{ small; printf 'calibration: /dev/zero\n'; } > devzero-profile.yaml
expect 2 "calibration profile '/dev/zero': .*past the limit" "$bin" plan devzero-profile.yaml
small > small4.yaml
mkdir -p fitout && echo keep > fitout/p.yaml
snapshot fitout
expect 2 "error: --spec: --fit needs the spec" "$bin" calibrate --fit "$fixtures/2026-05-12-all_reduce-ring-2n.out" -o fitout/p.yaml
expect 2 "error: -o: --fit writes a profile" "$bin" calibrate --fit "$fixtures/2026-05-12-all_reduce-ring-2n.out" --spec "$fixtures/flapping-airplanes.yaml"
expect 2 "error: --algo: unknown algorithm 'rong'" "$bin" calibrate --fit "$fixtures/2026-05-12-all_reduce-ring-2n.out" --spec "$fixtures/flapping-airplanes.yaml" -o fitout/p.yaml --algo rong
expect 2 "big.yaml: error: .*at most" "$bin" calibrate --fit big.yaml --spec "$fixtures/flapping-airplanes.yaml" -o fitout/p.yaml
expect 2 "devzero-catalog.yaml: error: not a nccl-tests output" "$bin" calibrate --fit devzero-catalog.yaml --spec "$fixtures/flapping-airplanes.yaml" -o fitout/p.yaml
sed 's/h100-sxm/b200/' small4.yaml > b200-4.yaml
expect 2 "the run used 64 nodes; the spec has 4" "$bin" calibrate --fit "$fixtures/2026-05-12-all_reduce-ring-64n.out" --spec b200-4.yaml -o fitout/p.yaml
expect 2 "the run's rank lines name NVIDIA B200; the spec's GPUs are h100-sxm" "$bin" calibrate --fit "$fixtures/2026-05-12-all_reduce-ring-64n.out" --spec small4.yaml -o fitout/p.yaml
expect 2 "the run's rank lines name NVIDIA B200; the spec's GPUs are h100-sxm" "$bin" check small4.yaml "$fixtures/2026-05-12-all_reduce-ring-2n.out"
expect 2 "the same output as" "$bin" calibrate --fit "$fixtures/2026-05-12-all_reduce-ring-2n.out" "$fixtures/2026-05-12-all_reduce-ring-2n.out" --spec "$fixtures/flapping-airplanes.yaml" -o fitout/p.yaml
expect 2 "error: --folds: .*" "$bin" calibrate --fit "$fixtures/2026-05-12-all_reduce-ring-2n.out" --spec "$fixtures/flapping-airplanes.yaml" -o fitout/p.yaml --folds 1
expect 2 "error: --spec: only read with --fit" "$bin" calibrate "$src/data/calibration/nccl-public.csv" --spec x.yaml
expect 2 "error: CSV: give a calibration CSV, or --fit" "$bin" calibrate
unchanged fitout

echo "== outputs are all-or-nothing"
mkdir -p lk/links.csv
snapshot lk
expect 2 "lk/links.csv: error: --links: a folder is where this output file goes" \
  "$bin" simulate "$good" -b 1G -e 1G --links lk/links.csv
unchanged lk
expect 2 "nosuchdir/links.csv: error: --links: the folder does not exist" \
  "$bin" simulate "$good" -b 1G -e 1G --links nosuchdir/links.csv
[ -e nosuchdir ] && { echo "FAIL: --links made a folder"; failures=$((failures + 1)); }
mkdir -p po/cabling.csv
snapshot po
expect 2 "po/cabling.csv: error: -o: a folder is where this output file goes" "$bin" plan "$good" -o po
unchanged po
mkdir -p keep && echo mine > keep/plan.json && mkdir -p keep/cabling.csv
snapshot keep
expect 2 "keep/plan.json: error: -o: is in the way of this output, and the folder has no record of what gpufabric wrote there" \
  "$bin" plan "$good" -o keep
unchanged keep
touch notadir
expect 2 "cannot create the output folder" "$bin" plan "$good" -o notadir/sub
n=$((n + 1)); if [ -e notadir/sub ] || [ ! -f notadir ]; then echo "FAIL notadir"; failures=$((failures + 1)); else echo "ok   notadir untouched"; fi
mkdir ro && chmod 500 ro
if [ "$(id -u)" != 0 ]; then  # root writes anywhere
  expect 2 "Permission denied" "$bin" plan "$good" -o ro/out
fi
expect 0 "wrote fresh/plan.json" "$bin" plan "$good" -o fresh
n=$((n + 1))
if ls -a fresh | grep -q 'gpufabric-[0-9]'; then echo "FAIL staging left in fresh/"; failures=$((failures + 1)); else echo "ok   no staging folder left"; fi
# Written again, the record lets it replace its own files; an edited one is refused, kept.
expect 0 "wrote fresh/plan.json" "$bin" plan "$good" -o fresh
echo "# my note" >> fresh/plan.md
snapshot fresh
expect 2 "fresh/plan.md: error: -o: was changed since gpufabric wrote it" "$bin" plan "$good" -o fresh
unchanged fresh

echo "== replay: traces truncated, garbage or endless, refused with the file and line"
rs="--spec $src/tests/data/replay/two-nodes.yaml"
kin="$src/tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json"
head -c 20000 "$kin" > cut.json
expect 2 "cut.json:[0-9]+:[0-9]+: error: .*(truncated|ends)" "$bin" replay cut.json $rs -o replay-out
[ ! -e replay-out ] || { echo "FAIL replay-out written for a bad trace"; failures=$((failures + 1)); }
printf 'hello\nworld\n' > junk.log
expect 2 "junk.log: error: not a PyTorch profiler trace.*nor an NCCL log" "$bin" replay junk.log $rs
expect 2 "/dev/zero: error: TRACE: the trace is not a regular file" "$bin" replay /dev/zero $rs
truncate -s 2G sparse.json
expect 2 "sparse.json:1: error: a line longer than 64 KiB" "$bin" replay sparse.json $rs
{ printf '{"traceEvents": [{"name": "'; head -c 20000000 /dev/zero | tr '\0' x; printf '"}]}'; } > huge.json
expect 2 "huge.json:1: error: a string longer than 16 MiB" "$bin" replay huge.json $rs
printf '{"traceEvents": [\n{"ph": "X", "cat": "kernel", "ts": 1, "dur": 2}\n' > open.json
expect 2 "open.json:3: error: traceEvents: the file ends inside the traceEvents array" "$bin" replay open.json $rs
gzip -c "$kin" > trace.json.gz
expect 2 "trace.json.gz: error: TRACE: a gzip file \(unzip it first" "$bin" replay trace.json.gz $rs
expect 2 "error: --step: .* has no step 'ProfilerStep#9'" "$bin" replay "$kin" $rs --step ProfilerStep#9
expect 2 "error: --fail: unknown switch" "$bin" replay "$kin" $rs --fail switch:nope
expect 2 "--spec is required" "$bin" replay "$kin"
expect 2 "error: --oversubscription: .*between 1 and 64|error: --oversubscription: " "$bin" replay "$kin" $rs --oversubscription 0.5
expect 2 "error: --oversubscription: " "$bin" replay "$kin" $rs --oversubscription two

echo "== the exporter refuses bad flags before it serves"
sys="--sysfs $src/tests/data/sysfs-mlx5"
expect 2 "/nonexistent: error: --sysfs: no such folder" "$bin" exporter --once --sysfs /nonexistent
expect 2 "/nonexistent: error: --baseline: cannot read the file" \
  "$bin" exporter --once $sys --baseline /nonexistent
expect 2 "error: --baseline: file goes on past the limit" \
  "$bin" exporter --once $sys --baseline /dev/zero
expect 2 "error: --node: 'node999' is not a node of the plan" \
  "$bin" exporter --once $sys --plan "$good" --node node999

expect 2 "/nonexistent: error: --sysfs: no such folder" "$bin" doctor --sysfs /nonexistent

echo "== lab state folders"
mkdir -p v/important && echo x > v/important/f
sed 's/^name: .*/name: important/' "$src/examples/roce-lab-16.yaml" > important.yaml
snapshot v
expect 2 "state-dir" "$bin" lab down important.yaml --state-dir v
unchanged v
expect 2 "state-dir" "$bin" lab down important.yaml --state-dir /
expect 2 "state-dir" "$bin" lab up important.yaml --state-dir /proc/x

echo "$((n - failures))/$n bad-input cases behave"
[ "$failures" = 0 ]
