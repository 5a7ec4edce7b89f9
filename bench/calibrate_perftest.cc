// calibrate --fit on a cluster's nccl-tests outputs (make bench): the README's example, the
// use3a-ss B200 cluster's 19 files (its sendrecv run and all_reduce ring, tree and NVLS Tree at
// 2 to 46 nodes), fitted and cross-validated leaving each file out in turn. Each run's flows are
// routed once and solved again for every link efficiency the descent tries
// (CollectiveModel::relink); the counters are the fitted network efficiency and the runs.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/file.h"
#include "plan/plan.h"
#include "verify/calibration_fit.h"
#include "verify/parsers.h"

namespace {

void BM_CalibrateFitB200Use3a19Files(benchmark::State& state) {
  const std::string dir = std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/calfit/";
  auto planned = gf::load_and_plan(dir + "use3a-ss.yaml");
  if (!planned) throw std::runtime_error(gf::format_diagnostics(planned.errors()));
  std::vector<std::string> names{dir + "nccl-sendrecv-8node-79941.out"};
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("use3a-ss-2026-05-02-all_reduce-", 0) == 0) names.push_back(e.path().string());
  }
  std::vector<gf::ToolOutput> files;
  for (const auto& n : names) {
    auto text = gf::read_file_bounded(n, gf::kMaxToolOutputBytes);
    if (!text) throw std::runtime_error(gf::format_diagnostics(text.errors()));
    gf::ToolOutput t{n, *text, gf::OutputKind::kUnknown};
    t.kind = gf::detect_output_kind(t.text);
    files.push_back(std::move(t));
  }
  auto runs = gf::read_fit_runs(planned->plan, files, {});
  if (!runs) throw std::runtime_error(gf::format_diagnostics(runs.errors()));
  for (auto _ : state) {
    auto r = gf::fit_calibration(planned->plan, planned->catalog, *runs, {});
    if (!r) throw std::runtime_error(gf::format_diagnostics(r.errors()));
    state.counters["network_efficiency"] = r->profile.network_efficiency.value_or(0);
    state.counters["runs"] = static_cast<double>(runs->size());
    benchmark::DoNotOptimize(r.ok());
  }
}
BENCHMARK(BM_CalibrateFitB200Use3a19Files)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
