// Sweep speed (make bench). Target (issue: design-space sweep): 1,000 design points of 1,024
// GPUs each (plan + simulate + step) in <= 60 s on the 2-core machine, all cores used.
#include <benchmark/benchmark.h>

#include <thread>

#include "sweep/sweep.h"

namespace {

void BM_Sweep1000Designs1k(benchmark::State& state) {
  const std::string spec = std::string(GPUFABRIC_SOURCE_DIR) + "/examples/seed-70b-1024.yaml";
  const std::vector<gf::SweepAxis> axes{
      {"fabric.technology", {"roce", "infiniband"}},
      {"cluster.nic", {"cx7-400g", "cx8-800g"}},
      {"fabric.oversubscription", {"1", "1.5", "2", "3", "4"}},
      {"fabric.spine_headroom", {"0", "0.1", "0.2", "0.3", "0.5"}},
      {"workload.precision", {"bf16", "fp8"}},
      {"workload.compute_efficiency", {"0.3", "0.35", "0.4", "0.45", "0.5"}}};
  const long long n = gf::design_count(axes);
  const int threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  long long valid = 0;
  for (auto _ : state) {
    auto designs = gf::evaluate_designs(spec, axes, 0, n, threads, {});
    auto r = gf::summarise_sweep(axes, std::move(designs), gf::Goal::kTime, 0);
    valid = 0;
    for (const auto& d : r.designs) valid += d.ok;
    benchmark::DoNotOptimize(r.best);
  }
  state.counters["designs"] = static_cast<double>(n);
  state.counters["valid"] = static_cast<double>(valid);
}
BENCHMARK(BM_Sweep1000Designs1k)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

}  // namespace
