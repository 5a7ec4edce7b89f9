#!/usr/bin/env python3
"""Writes the replay fixtures from the tools' own format strings (see README.md here).

Kineto: libkineto/src/output_json.cpp (ChromeTraceLogger::handleTraceStart, metadataToJSON,
handleActivity, finalizeTrace); the kernel's args from CuptiActivity.cpp's metadataJson; the
record_param_comms args from PyTorch's saveNcclMeta (torch/csrc/profiler/util.cpp). NCCL:
src/debug.cc's prefix, src/enqueue.cc's COLL line, src/init.cc's Init COMPLETE line.
Run from this folder: python3 gen_fixtures.py
"""

BASE_NS = 1733011200000000000


def ns_ts(ns):  # Kineto >= 2023-06: "{}.{:03}" of nanoseconds
    return f"{ns // 1000}.{ns % 1000:03}"


def us_ts(ns):  # Kineto before: whole microseconds
    return f"{ns // 1000}"


def header(dist=None):
    out = "\n  {\n    \"schemaVersion\": 1,"
    out += ("\n    \"deviceProperties\": [\n      {\n      \"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", "
            "\"totalGlobalMem\": 84929347584,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n"
            "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
            "      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
            "      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 233472,\n"
            "      \"numSms\": 132, \"sharedMemPerBlockOptin\": 232448\n    }\n    ],")
    if dist:
        out += f"\n      \"distributedInfo\": {dist},"
    out += f"\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {BASE_NS},\n  \"traceEvents\": ["
    return out


def event(cat, name, pid, tid, ts_ns, dur_ns, args, fmt_ts):
    a = f",\n    \"args\": {{\n      {args}\n    }}" if args else ""
    return (f"\n  {{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {pid}, \"tid\": {tid},"
            f"\n    \"ts\": {fmt_ts(ts_ns)}, \"dur\": {fmt_ts(dur_ns)}{a}\n  }},")


def kernel_args(ext, stream, corr, grid, block):
    return (f"\"External id\": {ext},\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
            f"      \"stream\": {stream}, \"correlation\": {corr},\n      \"registers per thread\": 96,\n"
            f"      \"shared memory\": 0,\n      \"blocks per SM\": {grid / 132:.6f},\n"
            f"      \"warps per SM\": {grid * block / 32 / 132:.6f},\n      \"grid\": [{grid}, 1, 1],\n"
            f"      \"block\": [{block}, 1, 1],\n      \"est. achieved occupancy %\": 5")


def footer(end_ns, fmt_ts, name):
    return (f"\n  {{\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", "
            f"\"ts\": {fmt_ts(end_ns)}\n  }}\n  ],\n  \"traceName\": \"{name}\"\n}}")


def ranks_text(r):
    return "\"[" + ", ".join(str(x) for x in r) + "]\""


class Trace:
    """One rank's step: compute on stream 7, TP collectives on stream 20, DP on stream 24."""

    def __init__(self, new, rank):
        self.new, self.rank, self.ev, self.ext, self.corr = new, rank, [], 100, 5000
        self.fmt = ns_ts if new else us_ts

    def compute(self, name, ts, dur, stream=7):
        self.corr += 1
        self.ext += 1
        self.ev.append(event("kernel", name, 0, stream, ts, dur,
                             kernel_args(self.ext, stream, self.corr, 264, 256), self.fmt))

    def coll(self, cname, kname, nelems_in, nelems_out, gsize, pg, ts, dur, stream):
        self.ext += 1
        self.corr += 1
        ext = self.ext
        # The CPU op: PyTorch's saveNcclMeta values (strings quoted with fmt "\"{}\"").
        meta = (f"\"Record function id\": 0, \"Ev Idx\": {ext - 1}, \"Collective name\": \"{cname}\", "
                f"\"dtype\": \"BFloat16\", \"In msg nelems\": {nelems_in}, \"Out msg nelems\": {nelems_out}, "
                f"\"Group size\": {gsize}")
        if self.new:
            name, desc, ranks = pg
            meta += (f", \"Global rank start\": {ranks[0]}, \"Global rank stride\": "
                     f"{ranks[1] - ranks[0] if len(ranks) > 1 else 1}, \"Process Group Name\": \"{name}\", "
                     f"\"Process Group Description\": \"{desc}\", \"Process Group Ranks\": {ranks_text(ranks)}, "
                     f"\"Rank\": {self.rank}")
        cpu_ts = ts - 40_000
        self.ev.append(event("cpu_op", "record_param_comms", 4242, 4242, cpu_ts, 28_000,
                             f"\"External id\": {ext},{meta}", self.fmt))
        args = kernel_args(ext, stream, self.corr, 24, 576)
        if self.new:  # Kineto >= 2024 copies the name, sizes and group onto the kernel
            name, desc, ranks = pg
            args += (f", \"Collective name\": \"{cname}\", \"In msg nelems\": {nelems_in}, "
                     f"\"Out msg nelems\": {nelems_out}, \"Group size\": {gsize}, \"dtype\": \"BFloat16\"")
            args += f", \"Process Group Name\": \"{name}\""
            args += f", \"Process Group Description\": \"{desc}\""
            args += f", \"Process Group Ranks\": {ranks_text(ranks)}"
        else:  # Kineto of 2023: sizes and dtype only, no leading space
            args += (f",\"In msg nelems\": {nelems_in}, \"Out msg nelems\": {nelems_out}, "
                     f"\"Group size\": {gsize}, \"dtype\": \"BFloat16\"")
        self.ev.append(event("kernel", kname, 0, stream, ts, dur, args, self.fmt))

    def step(self, name, ts, dur):
        self.ev.append(event("user_annotation", name, 4242, 4242, ts, dur,
                             f"\"External id\": {self.ext + 1000}, \"Ev Idx\": 0", self.fmt))

    def text(self, dist, end_ns, trace_name):
        return header(dist) + "".join(self.ev) + footer(end_ns, self.fmt, trace_name)


AR_NEW = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
AR_OLD = "ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclDevComm*, unsigned long, ncclWork*)"
AG_NEW = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
RS_NEW = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
AG_OLD = "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"
RS_OLD = "ncclKernel_ReduceScatter_RING_LL_Sum_bfloat16(ncclDevComm*, unsigned long, ncclWork*)"
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
FLASH = "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)"

WORLD = list(range(16))
TP0 = list(range(8))
DP0 = [0, 8]
PGS = {"world": ("0", "default_pg", WORLD), "tp": ("1", "TENSOR_MODEL_PARALLEL_GROUP", TP0),
       "dp": ("2", "DATA_PARALLEL_GROUP", DP0)}
DIST = ("{\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 16, \"pg_count\": 3, \"pg_config\": ["
        "{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": 16, "
        "\"ranks\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]}, "
        "{\"pg_name\": \"1\", \"pg_desc\": \"TENSOR_MODEL_PARALLEL_GROUP\", \"backend_config\": \"cuda:nccl\", "
        "\"pg_size\": 8, \"ranks\": [0, 1, 2, 3, 4, 5, 6, 7]}, "
        "{\"pg_name\": \"2\", \"pg_desc\": \"DATA_PARALLEL_GROUP\", \"backend_config\": \"cuda:nccl\", "
        "\"pg_size\": 2, \"ranks\": [0, 8]}], \"nccl_version\": \"2.21.5\"}")


def training_step(t, step0, n):
    """Two steps of a tp=8, dp=2 job: per layer a TP all-gather and reduce-scatter between GEMMs,
    then the DP gradient all-reduce overlapped with the last backward GEMMs."""
    us = 1000
    for s in range(n):
        base = step0 + s * 40_000 * us
        t.step(f"ProfilerStep#{s + 1}", base - 500 * us, 40_000 * us)
        ts = base
        ag, rs = (AG_NEW, RS_NEW) if t.new else (AG_OLD, RS_OLD)
        for layer in range(4):
            t.coll("_allgather_base", ag, 4194304, 33554432, 8, PGS["tp"], ts, 310 * us, 20)
            ts += 312 * us
            t.compute(GEMM, ts, 2400 * us)
            ts += 2403 * us
            t.compute(FLASH, ts, 1800 * us)
            ts += 1802 * us
            t.coll("_reduce_scatter_base", rs, 33554432, 4194304, 8, PGS["tp"], ts, 305 * us, 20)
            ts += 308 * us
        # Backward with the gradient all-reduce (300M bf16 elements) beside it on stream 24.
        t.compute(GEMM, ts, 9000 * us)
        t.coll("allreduce", AR_NEW if t.new else AR_OLD, 314572800, 314572800, 2, PGS["dp"],
               ts + 1000 * us, 11000 * us, 24)
        t.compute(GEMM, ts + 12004 * us, 1500 * us)  # the optimizer waits for the gradients


def kineto_fixtures():
    new = Trace(True, 0)
    training_step(new, 10_000_000_000, 2)
    with open("kineto-torch2.5-tp8-dp2-rank0.json", "w") as f:
        f.write(new.text(DIST, 10_000_000_000 + 80_000_000_000, "/tmp/trace/rank0.pt.trace.json"))
    old = Trace(False, 0)
    training_step(old, 10_000_000_000, 2)
    with open("kineto-torch2.1-tp8-dp2-rank0.json", "w") as f:
        f.write(old.text(None, 10_000_000_000 + 80_000_000_000, "/tmp/trace/rank0.pt.trace.json"))
    # One all-reduce of 512 MiB (bf16) on the 16-rank world between two compute kernels.
    one = Trace(True, 0)
    us = 1000
    t0 = 5_000_000_000
    one.step("ProfilerStep#1", t0 - 50 * us, 3000 * us)
    one.compute(GEMM, t0 + 100 * us, 1000 * us)
    one.coll("allreduce", AR_NEW, 268435456, 268435456, 16, PGS["world"], t0 + 1102 * us, 800 * us, 20)
    one.compute(GEMM, t0 + 1905 * us, 500 * us)
    with open("kineto-one-allreduce.json", "w") as f:
        f.write(one.text(DIST.replace("\"pg_count\": 3", "\"pg_count\": 1"), t0 + 3000 * us,
                         "/tmp/trace/one.pt.trace.json"))


def nccl_line(host, pid, tid, dev, msg):
    return f"{host}:{pid}:{tid} [{dev}] NCCL INFO {msg}\n"


def nccl_logs():
    for release, init_fn, version in (("2.18.6", "", "NCCL version 2.18.6+cuda12.2"),
                                      ("2.29.7", "ncclCommInitRankConfig ", "NCCL version 2.29.7+cuda13.0")):
        lines = [version + "\n"]
        procs = [("node001", 51234, 0, 0), ("node002", 61234, 0, 8)]  # host, pid, dev, world rank
        comms = {}
        for host, pid, dev, rank in procs:
            world = f"0x{0x55d4a3c0 + rank * 0x1000:x}"
            tp = f"0x{0x55d4b3c0 + rank * 0x1000:x}"
            comms[rank] = (world, tp)
            lines.append(nccl_line(host, pid, pid + 65, dev, f"{init_fn}comm {world} rank {rank} nranks 16 "
                                   f"cudaDev {dev} nvmlDev {dev} busId 18000 commId 0x7c1e4f3b2a9d8e61 - Init COMPLETE"))
            if release == "2.18.6":
                lines.append(nccl_line(host, pid, pid + 66, dev, f"comm {tp} rank 0 nranks 8 cudaDev {dev} "
                                       f"nvmlDev {dev} busId 18000 commId 0x{0x1a2b3c4d5e6f7080 + rank:x} - Init COMPLETE"))
            else:
                lines.append(nccl_line(host, pid, pid + 66, dev, f"ncclCommSplit comm {tp} rank 0 nranks 8 cudaDev "
                                       f"{dev} nvmlDev {dev} busId 18000 parent {world} childCount 1 color {rank // 8} "
                                       f"key 0 - Init COMPLETE"))
        op = 0
        for i in range(4):
            for host, pid, dev, rank in procs:
                world, tp = comms[rank]
                for name, count in (("AllGather", 4194304), ("ReduceScatter", 4194304)):
                    lines.append(nccl_line(host, pid, pid, dev, f"{name}: opCount {op:x} sendbuff 0x7f2a40000000 "
                                           f"recvbuff 0x7f2a48000000 count {count} datatype 9 op 0 root 0 comm {tp} "
                                           f"[nranks=8] stream 0x55d4a120"))
            op += 2
        for host, pid, dev, rank in procs:
            world, tp = comms[rank]
            lines.append(nccl_line(host, pid, pid, dev, f"AllReduce: opCount 0 sendbuff 0x7f2b00000000 recvbuff "
                                   f"0x7f2b00000000 count 268435456 datatype 9 op 0 root 0 comm {world} "
                                   f"[nranks=16] stream 0x55d4a180"))
        with open(f"nccl-{release}-coll.log", "w") as f:
            f.writelines(lines)


kineto_fixtures()
nccl_logs()
