#!/usr/bin/env bash
# The bash completion (`gpufabric completion bash`) in a real bash: subcommands, flags, the values
# of --op, --algo, --proto, --load-balancing, --precision, --collective and catalog ids, file names
# for specs; every value it offers is one the parser takes, and is the set --help lists.
# Usage: completion_test.sh BINARY SOURCE_DIR
set -euo pipefail
bin=$(realpath "$1")
src=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$bin" completion bash >"$tmp/gpufabric.bash"
bash -n "$tmp/gpufabric.bash" || { echo "the script is not valid bash"; exit 1; }
# shellcheck disable=SC1091
source "$tmp/gpufabric.bash"
[ "$(complete -p gpufabric)" = "complete -F _gpufabric gpufabric" ] || fail "complete -p: $(complete -p gpufabric)"

# complete WORD... : what TAB offers after the words (the last one is the word being completed),
# sorted, one line; bash splits --flag=value at '=' as it does when typing.
complete_words() {
  COMP_WORDS=(gpufabric "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE="${COMP_WORDS[*]}"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _gpufabric
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() {  # expect "OFFERED" WORD...
  local want=$1 got
  shift
  got=$(complete_words "$@")
  [ "$got" = "$want" ] || fail "gpufabric $*<TAB>: got '$got', want '$want'"
}
sorted() { tr ' ' '\n' <<<"$*" | sort | tr '\n' ' ' | sed 's/ $//'; }

# Subcommands: those --help lists, and they alone.
subcommands=$("$bin" --help | sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z-]*\) .*/\1/p')
expect "$(sorted $subcommands)" ''
expect "simulate step sweep" s
expect "what-if" wh
expect "replay report" re
expect "--help --version" --
expect "--version" --v

# Flags: each subcommand offers every flag its --help lists.
for cmd in $subcommands; do
  offered=" $(complete_words "$cmd" -) "
  for flag in $("$bin" "$cmd" --help | grep -oE '^  (-[a-zA-Z],)?--[a-z][a-z-]*' | tr ',' ' '); do
    [[ $offered == *" $flag "* ]] || fail "$cmd -<TAB> does not offer $flag (offered:$offered)"
  done
done
expect "--load-balancing" simulate examples/seed-70b-1024.yaml --lo
expect "--explain" simulate --ex
expect "--no-concurrency" step examples/roce-16k.yaml --no-c

# Values: exactly the set --help lists for the flag.
help_values() {  # help_values CMD FLAG: the "a | b | c" list in FLAG's description in `CMD --help`
  # The help is read whole first: awk stops at the flag, and a help of more than one 4 KiB write
  # would otherwise meet a closed pipe (SIGPIPE, which pipefail takes as a failure).
  local help
  help=$("$bin" "$1" --help)
  awk -v flag="$2" '
      found { print; exit }  # the description, on the next line when the name column is full
      $1 == flag || $1 ~ ("," flag "$") {
        sub(/^ *[^ ]+ [^ ]+ */, ""); if ($0 != "") { print; exit } found = 1 }' <<<"$help" |
    sed -E 's/\([^)]*\)//g; s/.*: //' | tr -d '|' | xargs -n1 | sort | tr '\n' ' ' | sed 's/ $//'
}
for cv in "simulate --op" "simulate --algo" "simulate --proto" "simulate --load-balancing" \
          "estimate --precision" "estimate --collective" "calibrate --algo" "jobs --placement"; do
  read -r cmd flag <<<"$cv"
  want=$(help_values "$cmd" "$flag")
  [ -n "$want" ] || fail "no values in $cmd --help for $flag"
  expect "$want" "$cmd" examples/seed-70b-1024.yaml "$flag" ''
done
expect "all_gather all_reduce alltoall" simulate examples/seed-70b-1024.yaml --op al
expect "LL LL128" simulate x.yaml --proto L
# --flag=value, split at '=' by bash (COMP_WORDBREAKS), and whole.
expect "nvls nvls_tree" simulate x.yaml --algo = nv
expect "adaptive ecmp ecmp-multi-qp spray" simulate x.yaml --load-balancing = ''
expect "ecmp ecmp-multi-qp" simulate x.yaml --load-balancing = ec
COMP_WORDS=(gpufabric simulate --algo=nv) COMP_CWORD=2 COMPREPLY=()
_gpufabric
[ "$(sorted "${COMPREPLY[*]}")" = "--algo=nvls --algo=nvls_tree" ] || fail "--algo=nv: ${COMPREPLY[*]}"
# Catalog ids: the NICs of the built-in catalog.
expect "cx7-400g" estimate --params 70B --nic cx7
expect "flow packet" simulate examples/roce-lab-64.yaml --engine ''
qos_pfc=$(complete_words qos examples/roce-lab-64.yaml --pfc '')
[[ "$qos_pfc" == "off on" || "$qos_pfc" == "on off" ]] || fail "qos --pfc: $qos_pfc"
expect "dcqcn hpcc none" qos examples/roce-lab-64.yaml --cc ''
expect "hpcc" qos x.yaml --cc h
expect "dcqcn hpcc none" simulate x.yaml --engine packet --cc ''
qos_pattern=$(complete_words qos x --pattern '')
[[ " $qos_pattern " == *" incast:8 "* && " $qos_pattern " == *" all_reduce "* ]] || fail "qos --pattern: $qos_pattern"
nics=$(complete_words what-if examples/seed-70b-1024.yaml --nic '')
[[ " $nics " == *" cx7-400g "* && " $nics " == *" bf3-400g "* ]] || fail "what-if --nic: $nics"
rnics=$(complete_words replay tests/data/replay/kineto-one-allreduce.json --nic '')
[ "$rnics" = "$nics" ] || fail "replay --nic: $rnics, what-if offers $nics"
expect "adaptive ecmp ecmp-multi-qp spray" replay x.json --load-balancing ''
expect "--oversubscription" replay x.json --ov
# Positionals: lab's action, then a spec; file names for specs and for flags' free values.
expect "check down up" lab ''
expect "examples/roce-lab-16.yaml examples/roce-lab-64.yaml" lab up examples/roce-lab
expect "examples/seed-70b-1024.yaml examples/seed-70b-plain-dp.yaml" plan examples/seed-70b
expect "examples/seed-70b-1024.yaml examples/seed-70b-plain-dp.yaml" simulate --op all_reduce -b 8 examples/seed
expect "examples" report examples/roce-lab-16.yaml -o examples
expect "bash" completion ''
expect "" no-such-command ''

# Every value offered is one the parser takes (none is refused as unknown).
accepted() {  # accepted ARGS...: exits 0, or fails for another reason than an unknown name
  local err
  err=$("$bin" "$@" 2>&1 >/dev/null) && return 0
  ! grep -qi "unknown\|not in" <<<"$err" || { fail "gpufabric $*: $err"; return 1; }
}
for v in $(complete_words simulate x --op ''); do accepted simulate examples/roce-lab-16.yaml -b 8 -e 8 --op "$v"; done
for v in $(complete_words simulate x --algo ''); do accepted simulate examples/roce-lab-16.yaml -b 8 -e 8 --algo "$v"; done
for v in $(complete_words simulate x --proto ''); do accepted simulate examples/roce-lab-16.yaml -b 8 -e 8 --proto "$v"; done
for v in $(complete_words simulate x --load-balancing ''); do accepted simulate examples/roce-lab-16.yaml -b 8 -e 8 --load-balancing "$v"; done
for v in $(complete_words simulate x --engine ''); do accepted simulate examples/roce-lab-16.yaml -b 8 -e 8 --engine "$v"; done
for v in $(complete_words estimate --precision ''); do accepted estimate --params 70B --gpus 8 --link 400G --precision "$v"; done
for v in $(complete_words estimate --collective ''); do accepted estimate --params 70B --gpus 8 --link 400G --collective "$v"; done
for v in $(complete_words estimate --nic ''); do accepted estimate --params 70B --gpus 8 --nic "$v"; done
for v in $(complete_words calibrate --algo ''); do
  accepted calibrate --fit tests/data/calfit/nccl-sendrecv-8node-79941.out \
    --spec tests/data/calfit/use3a-ss.yaml -o /nonexistent-dir/p.yaml --algo "$v"
done
expect "--fit --folds" calibrate --f
for v in $(complete_words what-if x --nic ''); do accepted what-if examples/roce-lab-16.yaml --bytes 1M --nic "$v"; done
for v in $(complete_words replay x --load-balancing ''); do accepted replay tests/data/replay/kineto-one-allreduce.json --spec tests/data/replay/two-nodes.yaml --load-balancing "$v"; done
for v in $(complete_words jobs x --placement ''); do accepted jobs examples/jobs-roce-16k.yaml --no-compare --placement "$v"; done

[ "$fails" = 0 ] || { echo "$fails completion checks failed"; exit 1; }
echo "bash completion: subcommands, flags, values and file names as the parser takes them"
