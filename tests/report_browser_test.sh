#!/usr/bin/env bash
# The report in a real browser: Debian's headless Chromium opens report.html (offline, every
# network request refused) and the test reads the DOM it produced. It fails on any page error or
# console.error, a missing topology diagram, or a chart that drew no data marks, and keeps a
# screenshot beside the build for a human to look at.
set -euo pipefail
bin=$1
src=$2
shot=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "missing chromium (make deps installs it)"; exit 1; }

"$bin" report "$src/examples/seed-70b-1024.yaml" -o "$tmp/out" --configs \
  --measured "$src/tests/data/outputs/nccl-tests-2node-allreduce.txt" >"$tmp/report.log"
grep -q "report: $tmp/out/report.html" "$tmp/report.log"

flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run
       --disable-component-update --disable-sync --user-data-dir="$tmp/profile"
       --host-resolver-rules="MAP * ~NOTFOUND" --virtual-time-budget=15000)
"$browser" "${flags[@]}" --dump-dom "file://$tmp/out/report.html" >"$tmp/dom.html" 2>"$tmp/chromium.log"
"$browser" "${flags[@]}" --window-size=1200,3000 --screenshot="$tmp/shot.png" \
  "file://$tmp/out/report.html" >/dev/null 2>>"$tmp/chromium.log"

fail() { echo "FAIL: $*"; grep -o 'data-[a-z-]*="[^"]*"' "$tmp/dom.html" | head -20; exit 1; }
grep -q 'data-errors=' "$tmp/dom.html" && fail "the page reported errors"
grep -q 'Uncaught' "$tmp/chromium.log" && fail "uncaught error in the browser log"
grep -q '<svg id="topology"' "$tmp/dom.html" || fail "no topology diagram"
grep -q 'data-charts-rendered="5"' "$tmp/dom.html" || fail "not all five charts rendered (busbw, link heat map, step, step timeline, sensitivity)"
grep -q 'data-empty-charts=""' "$tmp/dom.html" || fail "a chart drew no data points"
points=$(grep -o 'data-chart-points="[0-9]*"' "$tmp/dom.html" | grep -o '[0-9]*')
[ "${points:-0}" -gt 20 ] || fail "only ${points:-0} data marks drawn"
grep -q "measured: nccl-tests-2node-allreduce.txt (2 nodes)" "$tmp/dom.html" || fail "measured run not in the legend"
grep -q "all_reduce on 2 nodes (simulated)" "$tmp/dom.html" || fail "no simulated curve for the measured job"
grep -q '<h2>Configurations</h2>' "$tmp/dom.html" || fail "no Configurations section"
[ -s "$tmp/out/configs/opensm/opensm.conf" ] || fail "--configs wrote no configs/opensm/opensm.conf"
[ -s "$tmp/shot.png" ] || fail "no screenshot"
cp "$tmp/shot.png" "$shot"

# The sweep's frontier page, the same way.
"$bin" sweep "$src/examples/seed-70b-1024.yaml" --vary cluster.nic=cx7-400g,cx8-800g \
  --vary fabric.oversubscription=1,2 -q -o "$tmp/sweep" >/dev/null
"$browser" "${flags[@]}" --dump-dom "file://$tmp/sweep/sweep.html" >"$tmp/dom.html" 2>"$tmp/chromium.log"
grep -q 'data-errors=' "$tmp/dom.html" && fail "the sweep page reported errors"
grep -q 'data-charts-rendered="1"' "$tmp/dom.html" || fail "the frontier chart did not render"
grep -q 'data-empty-charts=""' "$tmp/dom.html" || fail "the frontier chart drew no points"
sweep_points=$(grep -o 'data-chart-points="[0-9]*"' "$tmp/dom.html" | grep -o '[0-9]*')
[ "${sweep_points:-0}" -eq 4 ] || fail "the frontier chart drew ${sweep_points:-0} designs, expected 4"
# A RoCE fabric's report: its QoS section draws the default qos run's queue and pause charts.
"$bin" report "$src/examples/roce-lab-64.yaml" -o "$tmp/roce" >/dev/null
"$browser" "${flags[@]}" --dump-dom "file://$tmp/roce/report.html" >"$tmp/dom.html" 2>"$tmp/chromium.log"
grep -q 'data-errors=' "$tmp/dom.html" && fail "the RoCE report reported errors"
grep -q '<h2>RoCE QoS at packet level</h2>' "$tmp/dom.html" || fail "no QoS section in the RoCE report"
grep -q 'data-charts-rendered="4"' "$tmp/dom.html" || fail "not all four charts of the RoCE report rendered (busbw, link heat map, QoS queue, QoS pause)"
grep -q 'data-empty-charts=""' "$tmp/dom.html" || fail "a chart of the RoCE report drew no data points"
for id in chart-qos-queue chart-qos-pause; do
  # The chart's own SVG: from its element to the end of its first <svg>, every data point a path.
  marks=$(grep -o "id=\"$id\".*" "$tmp/dom.html" | sed 's|</svg>.*||' | grep -o '<path' | wc -l)
  [ "$marks" -gt 100 ] || fail "$id drew $marks marks, expected a series per port over the run"
  qos_marks="${qos_marks:-}$id $marks; "
done

# The jobs section (report/jobs_report.h), when the spec has jobs: two jobs spread over the
# lab's two units, so that they meet on the spines.
w='workload: {model: {params: 8B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}, parallelism: {tp: 2}, global_batch: 8}'
{ cat "$src/examples/roce-lab-16.yaml"
  printf 'jobs:\n  - {name: job-a, nodes: 4, placement: spread, %s}\n' "$w"
  printf '  - {name: job-b, nodes: 4, placement: spread, %s}\n' "$w"; } >"$tmp/jobs.yaml"
"$bin" report "$tmp/jobs.yaml" -o "$tmp/jobs-out" >"$tmp/report.log"
[ -s "$tmp/jobs-out/jobs.json" ] || fail "the report of a spec with jobs: wrote no jobs.json"
"$browser" "${flags[@]}" --dump-dom "file://$tmp/jobs-out/report.html" >"$tmp/dom.html" 2>"$tmp/chromium.log"
grep -q 'data-errors=' "$tmp/dom.html" && fail "the jobs report reported errors"
grep -q 'Uncaught' "$tmp/chromium.log" && fail "uncaught error in the browser log (jobs report)"
grep -q '<section id="jobs"><h2>Jobs sharing the fabric</h2>' "$tmp/dom.html" || fail "no jobs section"
grep -q '<td>job-b</td>' "$tmp/dom.html" || fail "the jobs table lacks job-b"
grep -q 'Where the jobs meet' "$tmp/dom.html" || fail "the jobs section names no meeting links"
grep -q 'data-empty-charts=""' "$tmp/dom.html" || fail "a chart of the jobs report drew no data points"
jmarks=$(grep -o 'id="chart-jobs-links".*' "$tmp/dom.html" | sed 's|</svg>.*||' | grep -o '<path' | wc -l)
[ "$jmarks" -gt 0 ] || fail "the jobs' link heat map drew no cells"
echo "chromium rendered the report: 5 charts, $points data marks; screenshot $shot"
echo "chromium rendered the RoCE report's QoS charts: $qos_marks"
echo "chromium rendered the sweep frontier: $sweep_points designs"
