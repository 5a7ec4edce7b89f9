// Report speed (make bench). Target (issue: HTML report): the report of a 16,384-GPU spec is
// computed and rendered in <= 3 s and is <= 5 MB. Each iteration loads, plans, simulates and
// renders from scratch; the `bytes` counter is the size of report.html.
#include <benchmark/benchmark.h>

#include "plan/plan.h"
#include "report/report.h"

namespace {

void BM_Report16k(benchmark::State& state) {
  const std::string path = std::string(GPUFABRIC_SOURCE_DIR) + "/examples/roce-16k.yaml";
  size_t bytes = 0;
  for (auto _ : state) {
    auto planned = gf::load_and_plan(path);
    if (!planned) throw std::runtime_error(gf::format_diagnostics(planned.errors()));
    auto files = gf::make_report(*planned, {});
    if (!files) throw std::runtime_error(gf::format_diagnostics(files.errors()));
    bytes = files->front().second.size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Report16k)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
