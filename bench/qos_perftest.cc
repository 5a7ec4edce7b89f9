// Packet-level engine speed (make bench). Targets (issue 18): >= 20 M events per second on one
// core; a 64-GPU alltoall of 64 MiB per rank at packet level <= 30 s. Each iteration routes the
// flows and simulates from scratch on a fabric built once.
#include <benchmark/benchmark.h>

#include "plan/plan.h"
#include "qos/collective.h"
#include "qos/engine.h"
#include "sim/collective.h"
#include "spec/spec.h"
#include "topo/fabric.h"

namespace {

void qos_run(benchmark::State& state, const char* spec, gf::QosPattern pattern, int senders,
             double bytes, const gf::QosSettings& settings = {}) {
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
    const gf::QosResult r = gf::run_qos(*p, s->catalog, fab, t->flows, settings);
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

// A 63-to-1 incast of 16 MiB each on roce-16k's first scalable unit (4 QPs a connection), under
// HPCC (an ACK with INT for every packet, the window computed on each) and, beside it, DCQCN.
void BM_QosIncastHpcc(benchmark::State& state) {
  gf::QosSettings s;
  s.cc = gf::CongestionControl::kHpcc;
  qos_run(state, "examples/roce-16k.yaml", gf::QosPattern::kIncast, 63, 16.0 * 1024 * 1024, s);
}
BENCHMARK(BM_QosIncastHpcc)->Unit(benchmark::kMillisecond)->Iterations(3);
void BM_QosIncastDcqcn(benchmark::State& state) {
  qos_run(state, "examples/roce-16k.yaml", gf::QosPattern::kIncast, 63, 16.0 * 1024 * 1024);
}
BENCHMARK(BM_QosIncastDcqcn)->Unit(benchmark::kMillisecond)->Iterations(3);

// simulate --engine packet on the 64-GPU lab: ring all_reduce from 8 B to 1 GiB by 8x (10 sizes,
// 21 M events), the flow-level model built once outside the loop.
void BM_QosPacketSweepAllReduce64Gpu(benchmark::State& state) {
  auto s = gf::load_spec(std::string(GPUFABRIC_SOURCE_DIR) + "/examples/roce-lab-64.yaml");
  if (!s) throw std::runtime_error(gf::format_diagnostics(s.errors()));
  auto p = gf::make_plan(s->spec, s->catalog);
  if (!p) throw std::runtime_error(gf::format_diagnostics(p.errors()));
  const gf::Fabric fab = gf::Fabric::build(*p, s->catalog);
  gf::SimOptions o;
  o.algorithm = gf::Algorithm::kRing;
  auto model = gf::CollectiveModel::build(fab, *p, o);
  if (!model) throw std::runtime_error(gf::format_diagnostics(model.errors()));
  std::vector<gf::PacketSizeInput> in;
  for (double b = 8; b <= 1024.0 * 1024 * 1024; b *= 8) {
    const gf::SizeResult r = model->at(b);
    in.push_back({b, r.latency_us, r.protocol, r.time_us, r.busbw_gbs});
  }
  long long events = 0;
  for (auto _ : state) {
    auto sweep = gf::packet_sweep(*p, s->catalog, fab, gf::Op::kAllReduce, 0, in, {});
    if (!sweep) throw std::runtime_error(gf::format_diagnostics(sweep.errors()));
    for (const auto& r : sweep->rows) events += r.events;
    benchmark::DoNotOptimize(sweep->rows.back().busbw_gbs);
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_QosPacketSweepAllReduce64Gpu)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
