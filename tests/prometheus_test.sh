#!/usr/bin/env bash
# The exporter with the real tools: promtool checks a scrape and the alert rules; a real
# Prometheus server on loopback scrapes the exporter, the test reads a counter through its API,
# changes the recorded sysfs and sees the counter move; the malformed counter is logged once over
# many scrapes, and once more when it is fixed. Every process started here is stopped on exit,
# also when a step fails.
set -euo pipefail
bin=$1
src=$2
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
for tool in promtool prometheus curl; do
  command -v "$tool" >/dev/null || { echo "missing $tool (make deps installs it)"; exit 1; }
done
cp -r "$src/tests/data/sysfs-mlx5" "$tmp/sys"

"$bin" exporter --once --sysfs "$tmp/sys" --ethtool-dir "$tmp/sys/ethtool" >"$tmp/scrape.txt" 2>"$tmp/once.log"
promtool check metrics <"$tmp/scrape.txt"
grep -q "is not a counter" "$tmp/once.log"  # the malformed counter file was skipped with a log line
"$bin" dashboard "$src/examples/seed-70b-1024.yaml" -o "$tmp/dash" 2>/dev/null
promtool check rules "$tmp/dash/prometheus-rules.yml"
# A RoCE fabric's rules, with the thresholds from the packet-level run.
"$bin" dashboard "$src/examples/roce-lab-64.yaml" -o "$tmp/roce-dash" 2>/dev/null
promtool check rules "$tmp/roce-dash/prometheus-rules.yml"
# The derived pause rule, evaluated by promtool: a NIC paused at ten times its threshold for
# 20 minutes fires it, one at half the threshold does not.
rules="$tmp/roce-dash/prometheus-rules.yml"
thr=$(grep -A1 "alert: GpufabricPfcPausesAbovePlan" "$rules" | sed -n 's/.* > \([0-9.e+]*\)$/\1/p')
[ -n "$thr" ] || { echo "no threshold in GpufabricPfcPausesAbovePlan"; exit 1; }
hot=$(awk -v t="$thr" 'BEGIN { printf "%g", 600 * t }')    # per minute: 10 x the threshold a second
calm=$(awk -v t="$thr" 'BEGIN { printf "%g", 30 * t }')    # half the threshold a second
value=$(awk -v t="$thr" 'BEGIN { printf "%.4g", 10 * t }')  # what humanize prints for it
desc=$(grep -A8 "alert: GpufabricPfcPausesAbovePlan" "$rules" | sed -n 's/^ *description: "\(.*\)"$/\1/p' |
       sed "s/{{ \$value | humanize }}/$value/")
cat >"$tmp/roce-dash/test.yml" <<YAML
rule_files: [prometheus-rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'gpufabric_net_pfc_pause_frames_total{instance="hot",interface="eth2",direction="rx",priority="3"}'
        values: '0+${hot}x30'
      - series: 'gpufabric_net_pfc_pause_frames_total{instance="calm",interface="eth2",direction="rx",priority="3"}'
        values: '0+${calm}x30'
    alert_rule_test:
      - eval_time: 20m
        alertname: GpufabricPfcPausesAbovePlan
        exp_alerts:
          - exp_labels: {severity: warning, instance: hot, interface: eth2}
            exp_annotations:
              summary: "PFC pauses above plan on hot eth2"
              description: "$desc"
YAML
(cd "$tmp/roce-dash" && promtool test rules test.yml)

eport=$((20000 + RANDOM % 20000))
pport=$((eport + 1))
"$bin" exporter --listen "127.0.0.1:$eport" --sysfs "$tmp/sys" --ethtool-dir "$tmp/sys/ethtool" \
  2>"$tmp/exporter.log" &
pids+=($!)
cat >"$tmp/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$tmp/dash/prometheus-rules.yml"]
scrape_configs:
  - job_name: gpufabric
    static_configs: [{targets: ["127.0.0.1:$eport"]}]
YAML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
pids+=($!)

query() { curl -s "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" || true; }
wait_for() {
  for _ in $(seq 1 90); do
    if query "$1" | grep -q "$2"; then return 0; fi
    sleep 0.5
  done
  echo "timed out waiting for $1 to show $2"
  query "$1"
  tail -20 "$tmp/prometheus.log" "$tmp/exporter.log"
  return 1
}
metric='gpufabric_rdma_port_transmit_bytes_total{device="mlx5_0"}'
wait_for "$metric" '"4000000000"'                       # 1e9 words x 4 bytes
wait_for 'gpufabric_net_pfc_pause_frames_total{priority="3",direction="rx"}' '"8811209"'
echo 1500000000 >"$tmp/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data"
wait_for "$metric" '"6000000000"'                       # the counter moved
# Many scrapes, one log line for the malformed counter; fixed, it is logged as recovered.
bad="$tmp/sys/class/infiniband/mlx5_1/ports/1/counters/port_rcv_errors"
if [[ $(grep -c "is not a counter" "$tmp/exporter.log") != 1 ]]; then
  echo "the malformed counter was logged on every scrape:"
  tail -5 "$tmp/exporter.log"
  exit 1
fi
echo 7 >"$bad"
wait_for 'gpufabric_rdma_port_receive_errors_total{device="mlx5_1"}' '"7"'
grep -q "$bad recovered" "$tmp/exporter.log" || { echo "no recovery line"; cat "$tmp/exporter.log"; exit 1; }
echo "prometheus scraped the exporter and saw the counter move"
