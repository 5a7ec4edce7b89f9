#!/usr/bin/env bash
# The sweep under Open MPI: `mpirun -np 4` splits the designs across ranks and gathers them on
# rank 0; sweep.json and sweep.csv must be byte-identical to a one-process run.
set -euo pipefail
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v mpirun >/dev/null || { echo "missing mpirun (make deps installs openmpi-bin)"; exit 1; }
args=("$src/examples/seed-70b-1024.yaml" --vary fabric.technology=roce,infiniband
      --vary cluster.nic=cx7-400g,cx8-800g --vary fabric.oversubscription=1,2
      --vary cluster.nodes=96,128,64)
"$bin" sweep "${args[@]}" -o "$tmp/one" >"$tmp/one.txt" 2>"$tmp/one.err"
# Shared-memory transport without ptrace (containers), TCP on loopback only.
OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl_tcp_if_include=lo \
  mpirun --allow-run-as-root --oversubscribe -np 4 "$bin" sweep "${args[@]}" -o "$tmp/mpi" \
  >"$tmp/mpi.txt" 2>"$tmp/mpi.err" || { cat "$tmp/mpi.err"; exit 1; }
cmp "$tmp/one/sweep.json" "$tmp/mpi/sweep.json"
cmp "$tmp/one/sweep.csv" "$tmp/mpi/sweep.csv"
diff <(grep -v "^written:" "$tmp/one.txt") <(grep -v "^written:" "$tmp/mpi.txt")  # one table, rank 0 only
grep -q "rank 3/4\]: 6/6 designs" "$tmp/mpi.err" || { echo "rank 3 did not run its share"; cat "$tmp/mpi.err"; exit 1; }
designs=$(grep -c '"design":' "$tmp/mpi/sweep.json")
[ "$designs" -eq 24 ] || { echo "expected 24 designs, got $designs"; exit 1; }
echo "mpirun -np 4: the same $designs designs as one process"
