#!/usr/bin/env bash
# The exporter stays up for Prometheus while idle TCP connections are open: with IDLE (default
# 100) connections that never send a request, a scrape answers within 100 ms of its time without
# them. Connections are opened from this shell (bash /dev/tcp); the only process started here is
# the exporter, stopped on exit by its PID, also when a step fails.
# Usage: exporter_idle_test.sh GPUFABRIC_BIN SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
idle=${IDLE:-100}
allowed_ms=100  # the target: idle connections delay a scrape by at most this
rounds=3        # median of a few rounds, so one slow scheduling on a busy machine is no failure
tmp=$(mktemp -d)
pid=
cleanup() {
  if [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
command -v curl >/dev/null || { echo "missing curl"; exit 1; }

# A free loopback port: the exporter binds before it says "serving", and exits 2 on a port in use.
for _ in 1 2 3 4 5 6 7 8 9 10; do
  port=$((20000 + RANDOM % 20000))
  "$bin" exporter --listen "127.0.0.1:$port" --sysfs "$src/tests/data/sysfs-mlx5" \
    --ethtool-dir "$src/tests/data/sysfs-mlx5/ethtool" 2>"$tmp/exporter.log" &
  pid=$!
  for _ in $(seq 1 100); do
    grep -q serving "$tmp/exporter.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null && grep -q serving "$tmp/exporter.log"; then break; fi
  wait "$pid" 2>/dev/null || true
  pid=
done
[[ -n $pid ]] || { echo "could not start the exporter"; cat "$tmp/exporter.log"; exit 1; }
url="http://127.0.0.1:$port/metrics"

# Seconds one scrape takes (curl gives up after 15 s, past Prometheus' default 10 s timeout).
scrape() {
  local t
  rm -f "$tmp/scrape.txt"
  t=$(curl -s -o "$tmp/scrape.txt" -w '%{time_total}' --max-time 15 "$url") || t=15
  echo "$t"
}
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

scrape >/dev/null  # warm up
for _ in $(seq 1 5); do scrape >>"$tmp/base"; done
base=$(median <"$tmp/base")

for _ in $(seq 1 "$rounds"); do
  fds=()
  for _ in $(seq 1 "$idle"); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$port"
    fds+=("$fd")
  done
  scrape >>"$tmp/idle"
  grep -qs '^gpufabric_rdma_port_transmit_bytes_total' "$tmp/scrape.txt" || touch "$tmp/no-metrics"
  for fd in "${fds[@]}"; do exec {fd}>&-; done
done
with_idle=$(median <"$tmp/idle")

echo "scrape: ${base}s alone, ${with_idle}s with $idle idle connections (median of $rounds)"
if ! awk -v b="$base" -v i="$with_idle" -v a="$allowed_ms" 'BEGIN {exit !(i < b + a / 1000)}'; then
  echo "FAIL: $idle idle connections delay a scrape by more than ${allowed_ms} ms"
  tail -5 "$tmp/exporter.log"
  exit 1
fi
kill -0 "$pid" 2>/dev/null || { echo "FAIL: the exporter exited"; cat "$tmp/exporter.log"; exit 1; }
if [[ -e $tmp/no-metrics ]]; then
  echo "FAIL: a scrape with $idle idle connections returned no metrics"
  exit 1
fi
echo "idle connections do not delay a scrape"
