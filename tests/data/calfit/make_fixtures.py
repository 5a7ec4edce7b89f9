#!/usr/bin/env python3
"""Writes the nccl-tests-format fixtures of calibration_fit_test from published rows.

The together-nccl-tests reports of the flapping-airplanes and use3a-ss B200 clusters publish one
figure per run (the peak bus bandwidth at 32 GiB or 8 GiB); the runs' stdout is not committed there ("Result
logs live under ~/nccl-results/ per repo convention and are not committed", the 2026-07-11
report). Each fixture is therefore one run's published row laid out as nccl-tests prints it:
the size and busbw as published, algbw = busbw / bus factor, time = size / algbw, the rank lines
of the launch the rows' notes name (flapping-airplanes -g 8: one process per node; use3a-ss
-g 1: one per GPU). Every file says so at its top.

Usage: make_fixtures.py  (from this folder; reads ../../../data/calibration/nccl-public.csv)
"""
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "..", "..", "..", "data", "calibration", "nccl-public.csv")
NCCL_ALGO = {"ring": "Ring", "tree": "Tree", "nvls": "NVLS", "nvls_tree": "NVLSTree"}
# (csv line, collective, algorithm, nodes): the 2026-05-12 run (NCCL 2.28.9, 32 GiB) and the
# 2026-07-11 'Tuned' run (NCCL 2.30.7, 8 GiB, 4 nodes).
WANTED = {"all_reduce": {"ring", "tree", "nvls_tree"}, "all_gather": {"ring", "nvls"},
          "reduce_scatter": {"ring", "nvls"}}


def bus_factor(op, n):
    return 2 * (n - 1) / n if op == "all_reduce" else (n - 1) / n


def main():
    with open(CSV, newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    col = {k: i for i, k in enumerate(head)}
    written = []
    for lineno, r in enumerate(rows[1:], start=2):
        src = r[col["source"]]
        if r[col["fabric"]] != "InfiniBand NDR":
            continue
        if "flapping-airplanes" in src:
            run = ("2026-05-12" if "2026-05-12" in src else
                   "2026-07-11" if "2026-07-11" in src else "")
            per_process, host = 8, "slinky"
        elif "use3a-ss" in src and "2026-05-02" in src:
            run, per_process, host = "use3a-ss-2026-05-02", 1, "use3a-ss-b200-gpu-"
        else:
            continue
        op, algo, nodes = r[col["collective"]], r[col["algo"]], int(r[col["nodes"]])
        if not run or algo not in WANTED.get(op, ()):
            continue
        size = int(r[col["bytes"]])
        busbw = float(r[col["busbw_gbs"]])
        ranks = nodes * 8
        algbw = busbw / bus_factor(op, ranks)
        time_us = size / (algbw * 1e9) * 1e6
        name = f"{run}-{op}-{algo}-{nodes}n.out"
        lines = [
            "# gpufabric test fixture, NOT a verbatim nccl-tests output: the source publishes only",
            f"# this run's peak busbw (data/calibration/nccl-public.csv line {lineno}: {src},",
            f"# NCCL {r[col['nccl']]}). The row is that figure in nccl-tests' layout (algbw = busbw /",
            f"# bus factor, time = size / algbw); the rank lines are those of its -g {per_process} launch.",
            "# Written by tests/data/calfit/make_fixtures.py.",
            f"# env: NCCL_ALGO={NCCL_ALGO[algo]}",
            f"# nThread 1 nGpus {per_process} minBytes {size} maxBytes {size} step: 2(factor) warmup iters: 5 "
            "iters: 20 agg iters: 1 validation: 1 graph: 0",
            "#",
            "# Using devices",
        ]
        for node in range(nodes):
            for d in range(8):
                pid = 1000 + node if per_process == 8 else 1000 + node * 8 + d
                dev = d if per_process == 8 else 0
                lines.append(f"#  Rank {node * 8 + d:3d} Group  0 Pid {pid:6d} on "
                             f"{host}{node} device {dev:2d} [0x{0x18 + d:02x}] NVIDIA B200")
        redop = "sum" if op != "all_gather" else "none"
        lines += [
            "#",
            f"# Collective test starting: {op}_perf",
            "#                                                              out-of-place                       in-place          ",
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
            f"{size:12d}  {size // 4:12d}     float  {redop:>6}      -1  {time_us:7.0f}  {algbw:6.2f}  "
            f"{busbw:6.2f}      0  {time_us:7.0f}  {algbw:6.2f}  {busbw:6.2f}      0",
            "# Out of bounds values : 0 OK",
            f"# Avg bus bandwidth    : {busbw:.3f} ",
            "#",
        ]
        with open(os.path.join(HERE, name), "w") as out:
            out.write("\n".join(lines) + "\n")
        written.append(name)
    print("\n".join(sorted(written)))


if __name__ == "__main__":
    main()
