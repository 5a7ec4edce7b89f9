#!/usr/bin/env bash
# The emulated fabric as a user runs it (root): `gpufabric lab up|check|down` on
# examples/roce-lab-16.yaml (numbered /31s) and on the same spec with BGP unnumbered; a daemon
# that fails in the middle of `up` must leave no namespace, daemon or state behind. The labs get
# their own names and state folder, so a user's lab of the example is never touched.
set -uo pipefail
bin=$1
src=$2
[ "$(id -u)" = 0 ] || { echo "skipped: the lab needs root"; exit 77; }
tmp=$(mktemp -d)
state="$tmp/state"
numbered="$tmp/numbered.yaml"
unnumbered="$tmp/unnumbered.yaml"
sed 's/^name: roce-lab-16/name: ctest-lab16/' "$src/examples/roce-lab-16.yaml" >"$numbered"
sed 's/^name: roce-lab-16/name: ctest-lab16u/; s/unnumbered: false/unnumbered: true/' \
  "$src/examples/roce-lab-16.yaml" >"$unnumbered"
echo "  host_netdevs: [ens1f0np0, ens2f0np0]  # rails named as on a real node" >>"$unnumbered"
ul16="$tmp/ul16.yaml"  # its state folder is made by the test, not by the lab
sed 's/^name: roce-lab-16/name: ctest-ul16/' "$src/examples/roce-lab-16.yaml" >"$ul16"
lab() { "$bin" lab "$@" --state-dir "$state"; }
dual="$tmp/dual.yaml"  # two planes of one 800G NIC per node: each plane its own fabric
cat >"$dual" <<'EOF'
name: ctest-dual
cluster: {gpu: h100-sxm, nodes: 4, gpus_per_node: 2, nic: cx8-800g, nics_per_node: 1}
fabric: {technology: roce, topology: clos2, scalable_unit: 2, switch: arista-7060x6,
         oversubscription: 1, planes: 2}
EOF
mine="gf-test-mine-$$"  # somebody else's namespace: the lab must never delete it
cleanup() {
  ip netns delete "$mine" 2>/dev/null
  lab down "$numbered" >/dev/null 2>&1
  lab down "$unnumbered" >/dev/null 2>&1
  lab down "$dual" >/dev/null 2>&1
  lab down "$ul16" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
spaces() { ip netns list | grep -c "^gf-$1-" || true; }

# A daemon that fails while `up` runs: everything made so far is removed again.
mkdir -p "$tmp/broken-frr"
for d in zebra bgpd; do printf '#!/bin/sh\necho "%s: cannot start (test)" >&2\nexit 1\n' "$d" \
  >"$tmp/broken-frr/$d"; chmod +x "$tmp/broken-frr/$d"; done
lab up "$numbered" --frr-dir "$tmp/broken-frr" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] || fail "up with a failing zebra: exit $rc, expected 1"
grep -q "zebra" "$tmp/err" || fail "the error does not name zebra: $(cat "$tmp/err")"
[ "$(spaces ctest-lab16)" = 0 ] || fail "a failed up left namespaces: $(ip netns list)"
[ "$(ls "$state/ctest-lab16")" = "logs" ] || fail "a failed up left more than its logs"
ls -d /var/run/frr/gf-ctest-lab16-* >/dev/null 2>&1 && fail "a failed up left FRR run folders"

# down deletes only the namespaces it recorded that are named as the lab's (gf-NAME-): another
# one written into its record stays.
ip netns add "$mine" || fail "cannot make the test namespace $mine"
echo "$mine" >>"$state/ctest-lab16/namespaces"
lab down "$numbered" >"$tmp/out" 2>"$tmp/err" || fail "down with a foreign record: $(cat "$tmp/err")"
ip netns list | grep -q "^$mine\b" || fail "down deleted $mine, which is not the lab's"
grep -q "warning: namespace '$mine'.*left alone" "$tmp/err" || fail "no warning: $(cat "$tmp/err")"
# ... and a folder the lab did not make (no marker) is refused whole: nothing removed.
mkdir -p "$state/ctest-ul16"
echo "$mine" >"$state/ctest-ul16/namespaces"
echo x >"$state/ctest-ul16/f"
lab down "$ul16" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "down in a folder the lab did not make: exit $rc, expected 2"
grep -q -- "--state-dir" "$tmp/err" || fail "the refusal does not name --state-dir: $(cat "$tmp/err")"
[ -f "$state/ctest-ul16/f" ] || fail "down removed a folder the lab did not make"
ip netns list | grep -q "^$mine\b" || fail "down deleted $mine from an unmarked folder's record"
lab up "$ul16" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "up in a folder the lab did not make: exit $rc, expected 2"
[ "$(spaces ctest-ul16)" = 0 ] || fail "a refused up made namespaces"
[ -f "$state/ctest-ul16/f" ] || fail "up removed a folder the lab did not make"
rm -r "$state/ctest-ul16"
ip netns delete "$mine"

# check before up is bad input.
lab check "$numbered" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] || fail "check of a lab that is not up: expected exit 2"
grep -q "not up" "$tmp/err" || fail "check before up does not say the lab is not up"

# up twice: the second removes the first.
lab up "$numbered" >"$tmp/out" 2>&1 || fail "up: $(cat "$tmp/out")"
lab up "$numbered" >"$tmp/out" 2>&1 || fail "second up: $(cat "$tmp/out")"
grep -q "14 namespaces (6 switches, 8 hosts), 24 veth links, 12 FRR daemons" "$tmp/out" ||
  fail "up: $(cat "$tmp/out")"
grep -qxF "next: gpufabric lab check $numbered --state-dir $state" "$tmp/out" ||
  fail "the next: hint does not repeat --state-dir: $(cat "$tmp/out")"
[ "$(spaces ctest-lab16)" = 14 ] || fail "expected 14 namespaces: $(ip netns list)"
pids=$(cat /var/run/frr/gf-ctest-lab16-*/{zebra,bgpd}.pid)
[ "$(echo "$pids" | wc -w)" = 12 ] || fail "expected 12 FRR pid files"

lab check "$numbered" --json --timeout 30 >"$tmp/check.json" 2>"$tmp/err"
rc=$?
cat "$tmp/check.json"
[ "$rc" = 0 ] || fail "check: exit $rc: $(cat "$tmp/err")"
grep -q '^  "ok": true' "$tmp/check.json" || fail "check JSON is not ok"
grep -q '"ok": false' "$tmp/check.json" && fail "a check failed"
for c in bgp-sessions ecmp-routes jumbo-frames oversized-frames-refused traffic-across-spines ecmp-spread \
  link-down-session link-down-reroutes link-down-pings link-down-traffic link-up-sessions link-up-restores; do
  grep -q "\"name\": \"$c\"" "$tmp/check.json" || fail "check $c missing"
done
grep -q "16 of 16 eBGP sessions Established" "$tmp/check.json" || fail "sessions"
grep -q "one next hop per uplink (2 on su01-r0-leaf: spine01, spine02)" "$tmp/check.json" ||
  fail "ECMP over both spines"

lab down "$numbered" >"$tmp/out" 2>&1 || fail "down: $(cat "$tmp/out")"
grep -q "14 namespaces removed, 12 FRR daemons ended" "$tmp/out" || fail "down: $(cat "$tmp/out")"
[ "$(spaces ctest-lab16)" = 0 ] || fail "down left namespaces"
for p in $pids; do  # ended (a zombie waiting for init counts as ended)
  state_of=$(ps -o stat= -p "$p" 2>/dev/null | cut -c1)
  [ -z "$state_of" ] || [ "$state_of" = Z ] || fail "FRR daemon $p still runs"
done
ls -d /var/run/frr/gf-ctest-lab16-* >/dev/null 2>&1 && fail "down left FRR run folders"

# BGP unnumbered (IPv6 link-local sessions, IPv4 routes over them) and rails with real netdev
# names: the same checks pass.
lab up "$unnumbered" >"$tmp/out" 2>&1 || fail "up unnumbered: $(cat "$tmp/out")"
lab check "$unnumbered" --timeout 30 >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ "$rc" = 0 ] || fail "check unnumbered: exit $rc"
grep -q "12 of 12 checks passed" "$tmp/out" || fail "unnumbered: not every check passed"
grep -q "node001 ens1f0np0 (10.128.0.2)" "$tmp/out" || fail "unnumbered: rails not named"
# An interrupt while the link is down: the link comes back, check stops and says so (exit 1).
"$bin" lab check "$unnumbered" --state-dir "$state" --timeout 30 >"$tmp/out" 2>&1 &
checker=$!
for _ in $(seq 600); do grep -q "link-down-session" "$tmp/out" && break; sleep 0.1; done
grep -q "link-down-session" "$tmp/out" || fail "check never took the link down: $(cat "$tmp/out")"
kill -TERM "$checker"
wait "$checker"
rc=$?
cat "$tmp/out"
[ "$rc" = 1 ] || fail "check interrupted during the link failure: exit $rc, expected 1"
grep -q "FAIL  interrupted" "$tmp/out" || fail "the interrupted check does not say so"
grep -q "link-up-sessions" "$tmp/out" && fail "check went on after the interrupt"
for ns in $(ip netns list | grep -o "^gf-ctest-lab16u-[^ ]*"); do
  ip -n "$ns" -o link show | grep "swp" | grep -v "[<,]UP[,>]" &&
    fail "a switch port in $ns stayed down after the interrupted check"
done
lab down "$unnumbered" >/dev/null 2>&1 || fail "down unnumbered"
[ "$(spaces ctest-lab16u)" = 0 ] || fail "down left namespaces (unnumbered)"
# Dual-plane: two separate fabrics; every address answers from the first node's port in its
# plane, and the link failure is handled inside plane 1.
lab up "$dual" >"$tmp/out" 2>&1 || fail "up dual-plane: $(cat "$tmp/out")"
lab check "$dual" --timeout 30 >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ "$rc" = 0 ] || fail "check dual-plane: exit $rc"
grep -q "6 of 6 host addresses answer" "$tmp/out" || fail "dual-plane: not every address answered"
lab down "$dual" >/dev/null 2>&1 || fail "down dual-plane"
[ "$(spaces ctest-dual)" = 0 ] || fail "down left namespaces (dual-plane)"
echo "lab up/check/down: numbered, unnumbered and dual-plane pass, failures clean up"
