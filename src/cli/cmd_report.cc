// gpufabric report: the plan, its simulation and the step in one self-contained HTML page.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/resources.h"
#include "cli/version.h"
#include "common/file.h"
#include "plan/plan.h"
#include "report/report.h"
#include "verify/check.h"
#include "verify/parsers.h"

namespace gf::cli {
namespace {

struct ReportFlags {
  std::string spec, out;
  std::vector<std::string> measured;
  bool configs = false;
};

int run(const ReportFlags& f) {
  Heartbeat alive("report");
  auto loaded = load_planned_spec(f.spec, load_limits(true));
  if (!loaded) return fail(loaded.errors());
  // Measured runs first: bad files are bad input, before anything is computed or written.
  std::vector<MeasuredRun> measured;
  std::vector<ToolOutput> outputs;
  for (const auto& path : f.measured) {
    auto text = read_file_bounded(path, kMaxToolOutputBytes, "--measured");
    if (!text) return fail(text.errors());
    outputs.push_back({path, *text, OutputKind::kNcclTests});
    auto run = parse_nccl_tests(*text, path);
    if (!run) return fail(run.errors());
    // Another GPU's run is another cluster's, as check refuses it: not overlaid on this plan.
    if (auto e = device_gpu_error(*run, loaded->plan.gpu.id, path,
                                  "overlay runs of the cluster the spec describes"))
      return fail({*e});
    measured.push_back(measured_run(*run, path, loaded->plan.gpus_per_node));
  }
  // Judged as check judges them, so that the report's answer says what check would.
  std::optional<CheckResult> judged;
  if (!outputs.empty()) {
    auto c = check_measurements(loaded->plan, loaded->catalog, outputs, kDefaultBusbwTolerance);
    if (!c) return fail(c.errors());
    judged = std::move(*c);
  }
  auto files = make_report(*loaded, measured, f.configs, build_version(), judged);
  if (!files) return fail(files.errors());
  auto written = write_outputs(f.out, *files);
  if (!written) return fail(written.errors());
  for (const auto& stale : stale_report_outputs(f.out, *files))
    std::cerr << "note: " << stale
              << " is not this report's (its spec does not make it): an earlier report's, left as "
                 "it was; remove it, or write each report to a folder of its own\n";
  std::cout << "report: " << (std::filesystem::path(f.out) / "report.html").string() << "\n";
  return kExitOk;
}

}  // namespace

Command add_report(CLI::App& root) {
  auto f = std::make_shared<ReportFlags>();
  CLI::App* a = root.add_subcommand(
      "report",
      "One self-contained HTML report (topology, bill of materials, bus bandwidth, training step, "
      "what-if) with plan.md and the JSON beside it.");
  a->add_option("SPEC", f->spec, "the cluster spec (YAML)")->required();
  a->add_option("-o,--out", f->out, "folder for report.html and its companions")->required();
  a->add_option("--measured", f->measured, "nccl-tests outputs to overlay on the busbw chart");
  a->add_flag("--configs", f->configs,
              "also write every configuration `gpufabric configs` writes under configs/ and "
              "link it from a Configurations section");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
