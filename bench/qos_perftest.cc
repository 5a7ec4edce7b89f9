// Packet-level engine speed (make bench). Targets (issue 18): >= 20 M events per second on one
// core; a 64-GPU alltoall of 64 MiB per rank at packet level <= 30 s. Each iteration routes the
// flows and simulates from scratch on a fabric built once.
#include <benchmark/benchmark.h>

#include "plan/plan.h"
#include "qos/engine.h"
#include "spec/spec.h"
#include "topo/fabric.h"

namespace {

void qos_run(benchmark::State& state, const char* spec, gf::QosPattern pattern, int senders,
             double bytes) {
  auto s = gf::load_spec(std::string(GPUFABRIC_SOURCE_DIR) + "/" + spec);
  if (!s) throw std::runtime_error(gf::format_diagnostics(s.errors()));
  auto p = gf::make_plan(s->spec, s->catalog);
  if (!p) throw std::runtime_error(gf::format_diagnostics(p.errors()));
  const gf::Fabric fab = gf::Fabric::build(*p, s->catalog);
  auto t = gf::qos_traffic(*p, fab, pattern, senders, bytes);
  if (!t) throw std::runtime_error(gf::format_diagnostics(t.errors()));
  long long events = 0;
  double sim_s = 0;
  for (auto _ : state) {
    const gf::QosResult r = gf::run_qos(*p, s->catalog, fab, t->flows, gf::QosSettings{});
    events += r.events;
    sim_s = r.time_s;
    benchmark::DoNotOptimize(r.throughput_Bps);
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["simulated_ms"] = sim_s * 1e3;
}

// The 64-GPU lab (8 nodes x 8 H100, 2 x 400G NICs each): nccl-tests alltoall -b 64M.
void BM_QosAlltoall64Gpu64MiB(benchmark::State& state) {
  qos_run(state, "examples/roce-lab-64.yaml", gf::QosPattern::kAlltoall, 0, 64.0 * 1024 * 1024);
}
BENCHMARK(BM_QosAlltoall64Gpu64MiB)->Unit(benchmark::kSecond)->Iterations(1);

// A permutation of the same fabric's NICs, 64 MiB each: events per second of the engine.
void BM_QosPermutationEvents(benchmark::State& state) {
  qos_run(state, "examples/roce-lab-64.yaml", gf::QosPattern::kPermutation, 0, 64.0 * 1024 * 1024);
}
BENCHMARK(BM_QosPermutationEvents)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
