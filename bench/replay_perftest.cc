// Replay speed (make bench). Target (issue 17): a 1 GB PyTorch profiler trace replays in <= 30 s
// and <= 1 GiB. The trace is generated once into a temporary file in Kineto's format (the
// fixtures' format: tests/data/replay/README.md): rank 0 of a tp=8, dp=128 job on
// examples/seed-70b-1024.yaml, 80 layers a step, per layer forward and backward each a TP
// all-gather and reduce-scatter between 20 compute kernels, then the DP gradient all-reduce
// beside the last backward kernels; as many ProfilerSteps as make 1 GB. Each iteration reads the
// whole file (streamed) and replays the last step. GPUFABRIC_BENCH_TRACE=PATH keeps the trace
// there (bench/peak_memory.sh then measures `gpufabric replay` on it);
// GPUFABRIC_BENCH_TRACE_BYTES=N writes about N bytes instead.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "plan/plan.h"
#include "sim/replay.h"
#include "spec/spec.h"
#include "topo/fabric.h"
#include "verify/trace_readers.h"

namespace {

constexpr double kTargetBytes = 1e9;
constexpr int kLayers = 80;
constexpr int kComputePerHalf = 10;  // compute kernels between a TP collective pair

struct TraceFile {
  std::string path;
  bool keep = false;
  double bytes = 0;
  long long kernels = 0;
  int steps = 0;

  TraceFile() {
    if (const char* p = std::getenv("GPUFABRIC_BENCH_TRACE")) {
      path = p;
      keep = true;
    } else {
      path = (std::filesystem::temp_directory_path() /
              ("gf_bench_trace_" + std::to_string(getpid()) + ".json"))
                 .string();
    }
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path);
    std::string buf;
    buf.reserve(1 << 22);
    auto flush = [&] {
      std::fwrite(buf.data(), 1, buf.size(), f);
      bytes += static_cast<double>(buf.size());
      buf.clear();
    };
    buf += "\n  {\n    \"schemaVersion\": 1,\n    \"deviceProperties\": [\n    ],";
    buf +=
        "\n      \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 1024, "
        "\"pg_count\": 2, \"pg_config\": [], \"nccl_version\": \"2.21.5\"},";
    buf += "\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1733011200000000000,";
    buf += "\n  \"traceEvents\": [";
    long long ts = 1000000000, ext = 1, corr = 1;  // nanoseconds
    auto t = [](long long ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); };
    auto kernel = [&](const char* name, int stream, long long dur, const std::string& extra) {
      fmt::format_to(
          std::back_inserter(buf),
          "\n  {{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{}\", \"pid\": 0, "
          "\"tid\": {},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      "
          "\"External id\": {},\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
          "      \"stream\": {}, \"correlation\": {},\n      \"registers per thread\": "
          "96,\n      \"shared memory\": 0,\n      \"blocks per SM\": 2.000000,\n      "
          "\"warps per SM\": 16.000000,\n      \"grid\": [264, 1, 1],\n      \"block\": "
          "[256, 1, 1],\n      \"est. achieved occupancy %\": 25{}\n    }}\n  }},",
          name, stream, t(ts), t(dur), ext, stream, corr++, extra);
      ++kernels;
    };
    auto coll = [&](const char* cname, const char* kname, long long in, long long out, int size,
                    const char* pg, const char* desc, const std::string& ranks, int stream,
                    long long dur) {
      const std::string meta = fmt::format(
          "\"Collective name\": \"{}\", \"In msg nelems\": {}, \"Out msg nelems\": {}, \"Group "
          "size\": {}, \"dtype\": \"BFloat16\"",
          cname, in, out, size);
      const std::string pgm = fmt::format(
          "\"Process Group Name\": \"{}\", \"Process Group Description\": \"{}\", \"Process "
          "Group Ranks\": \"{}\"",
          pg, desc, ranks);
      fmt::format_to(std::back_inserter(buf),
                     "\n  {{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
                     "\"record_param_comms\", \"pid\": 4242, \"tid\": 4242,\n    \"ts\": {}, "
                     "\"dur\": 28.000,\n    \"args\": {{\n      \"External id\": {},\"Record "
                     "function id\": 0, \"Ev Idx\": {}, {}, {}, \"Rank\": 0\n    }}\n  }},",
                     t(ts - 40000), ext, ext, meta, pgm);
      kernel(kname, stream, dur, ", " + meta + ", " + pgm);
      ++ext;
    };
    const std::string tp_ranks = "[0, 1, 2, 3, 4, 5, 6, 7]";
    std::string dp_ranks = "[0";
    for (int i = 1; i < 30; ++i) dp_ranks += fmt::format(", {}", 8 * i);
    dp_ranks += ", ...]";  // Kineto cuts the list after 30 ranks
    const char* gemm =
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
        "segment_k_off_kernel__5x_cublas";
    double target = kTargetBytes;
    if (const char* b = std::getenv("GPUFABRIC_BENCH_TRACE_BYTES")) target = std::atof(b);
    while (bytes + static_cast<double>(buf.size()) < target) {
      const long long step_start = ts;
      for (int layer = 0; layer < kLayers; ++layer)
        for (int half = 0; half < 2; ++half) {  // forward, backward
          coll("_allgather_base",
               "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 4194304,
               33554432, 8, "1", "TENSOR_MODEL_PARALLEL_GROUP", tp_ranks, 20, 310000);
          ts += 312000;
          for (int k = 0; k < kComputePerHalf; ++k) {
            kernel(gemm, 7, 180000, "");
            ext += 1;
            ts += 182000;
          }
          coll("_reduce_scatter_base",
               "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
               33554432, 4194304, 8, "1", "TENSOR_MODEL_PARALLEL_GROUP", tp_ranks, 20, 305000);
          ts += 308000;
        }
      kernel(gemm, 7, 9000000, "");
      coll("allreduce",
           "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 314572800,
           314572800, 128, "2", "DATA_PARALLEL_GROUP", dp_ranks, 24, 11000000);
      ts += 12004000;
      kernel(gemm, 7, 1500000, "");
      ts += 1600000;
      fmt::format_to(std::back_inserter(buf),
                     "\n  {{\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                     "\"ProfilerStep#{}\", \"pid\": 4242, \"tid\": 4242,\n    \"ts\": {}, \"dur\": "
                     "{}\n  }},",
                     steps + 1, t(step_start - 500000), t(ts - step_start + 500000));
      ++steps;
      if (buf.size() > (1 << 21)) flush();
    }
    buf +=
        "\n  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    "
        "\"pid\": \"\", \"tid\": \"\", \"ts\": " +
        t(ts) + "\n  }\n  ],\n  \"traceName\": \"bench.pt.trace.json\"\n}";
    flush();
    std::fclose(f);
  }
  ~TraceFile() {
    if (!keep) std::remove(path.c_str());
  }
};

TraceFile& trace() {
  static TraceFile t;
  return t;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024;  // KiB on Linux
}

void BM_ReplayTrace1GB(benchmark::State& state) {
  TraceFile& t = trace();
  auto s = gf::load_spec(std::string(GPUFABRIC_SOURCE_DIR) + "/examples/seed-70b-1024.yaml");
  if (!s) throw std::runtime_error(gf::format_diagnostics(s.errors()));
  auto p = gf::make_plan(s->spec, s->catalog);
  if (!p) throw std::runtime_error(gf::format_diagnostics(p.errors()));
  const gf::Fabric fabric = gf::Fabric::build(*p, s->catalog);
  double step_s = 0;
  const double rss_before = peak_rss_mib();
  for (auto _ : state) {
    std::ifstream in(t.path, std::ios::binary);
    auto r = gf::read_kineto_trace(in, t.path);
    if (!r) throw std::runtime_error(gf::format_diagnostics(r.errors()));
    auto out = gf::replay_step({*r}, *p, fabric, {});
    if (!out) throw std::runtime_error(gf::format_diagnostics(out.errors()));
    step_s = out->predicted.step_s;  // reported below: the work cannot be dropped
  }
  state.counters["trace_gb"] = t.bytes / 1e9;
  state.counters["kernels"] = static_cast<double>(t.kernels);
  state.counters["steps"] = t.steps;
  state.counters["step_s"] = step_s;
  state.counters["peak_rss_mib"] = peak_rss_mib();
  state.counters["rss_before_mib"] = rss_before;
  state.SetBytesProcessed(static_cast<int64_t>(t.bytes) * state.iterations());
}

}  // namespace

BENCHMARK(BM_ReplayTrace1GB)->Unit(benchmark::kSecond)->Iterations(1);
