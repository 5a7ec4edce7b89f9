// Planner speed (make bench). Target (issue: foundation): plan of a 131,072-GPU spec including
// cabling.csv under 2 s on a 2-core machine; peak memory is measured by bench/peak_memory.sh.
#include <benchmark/benchmark.h>

#include "plan/plan.h"
#include "report/plan_report.h"
#include "spec/spec.h"

namespace {

gf::LoadedSpec load(const char* name) {
  auto s = gf::load_spec(std::string(GPUFABRIC_SOURCE_DIR) + "/" + name);
  if (!s) throw std::runtime_error(gf::format_diagnostics(s.errors()));
  return *s;
}

void BM_SpecLoad(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(load("examples/seed-70b-1024.yaml"));
}
BENCHMARK(BM_SpecLoad)->Unit(benchmark::kMicrosecond);

// Plan + every output file's content, as `gpufabric plan -o` produces it.
void plan_all(benchmark::State& state, const char* spec) {
  const auto s = load(spec);
  size_t bytes = 0;
  long long links = 0;
  for (auto _ : state) {
    auto p = gf::make_plan(s.spec, s.catalog);
    const std::string csv = gf::cabling_csv(*p, s.catalog);
    const std::string json = gf::plan_json(*p).dump(2);
    const std::string md = gf::plan_markdown(*p);
    bytes = csv.size() + json.size() + md.size();
    links = p->link_total;
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["gpus"] = static_cast<double>(s.spec.gpus());
  state.counters["links"] = static_cast<double>(links);
  state.counters["output_MB"] = static_cast<double>(bytes) / 1e6;
}

void BM_Plan1k(benchmark::State& state) { plan_all(state, "examples/seed-70b-1024.yaml"); }
void BM_Plan16k(benchmark::State& state) { plan_all(state, "examples/roce-16k.yaml"); }
void BM_Plan131kClos3(benchmark::State& state) { plan_all(state, "bench/specs/ib-131k.yaml"); }
// 1,048,576 GPUs (issue: simulator fidelity): plan with every output <= 10 s.
void BM_Plan1MClos3(benchmark::State& state) { plan_all(state, "bench/specs/ib-1m.yaml"); }
void BM_Plan1MDragonfly(benchmark::State& state) { plan_all(state, "bench/specs/roce-1m.yaml"); }
void BM_Plan131kDragonfly(benchmark::State& state) {
  plan_all(state, "bench/specs/roce-131k-qm.yaml");
}
BENCHMARK(BM_Plan1k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Plan16k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Plan131kClos3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Plan131kDragonfly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Plan1MClos3)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Plan1MDragonfly)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
