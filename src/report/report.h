// `gpufabric report`: computes everything the HTML report shows for a planned spec (the
// collective model, the step and its sensitivity, failure rows) and renders the page with its
// companion files.
#pragma once

#include <vector>

#include "common/diag.h"
#include "common/output.h"
#include "plan/plan.h"
#include "report/html_report.h"
#include "verify/check.h"
#include "verify/parsers.h"

namespace gf {

/// A measured nccl-tests run to overlay: its points, and what it ran (collective, nodes) so the
/// report can draw the simulated curve for the same job beside it.
struct MeasuredRun {
  BusbwSeries series;
  std::string file;  ///< for error messages
  std::string op;    ///< "all_reduce", ... ("" = all_reduce)
  int nodes = 0;
};

/// A parsed nccl-tests output as a run to overlay, named after `file`.
MeasuredRun measured_run(const NcclTestsRun& run, const std::string& file, int gpus_per_node);

/// The report's files, in order: report.html, step.json (when the spec has a workload),
/// plan.json, plan.md, bom.csv, cabling.csv, simulate.json. Each measured run is overlaid on the
/// bus-bandwidth chart with the simulated curve of the same collective on the same number of
/// nodes (a 2-node run is not compared with the whole cluster). A run larger than the plan or of
/// an unknown collective is an error naming its file. With `with_configs`, every configuration
/// `gpufabric configs` writes goes under configs/, linked from a Configurations section.
/// A non-empty `gpufabric_version` (the build that makes the report, given by the caller) is
/// recorded in report.html and under plan.json's "gpufabric_version" key.
/// A RoCE fabric in the packet engine's range also gets qos.json (the QoS section's run).
Result<std::vector<OutputFile>> make_report(const PlannedSpec& planned,
                                            const std::vector<MeasuredRun>& measured,
                                            bool with_configs = false,
                                            const std::string& gpufabric_version = "",
                                            const std::optional<CheckResult>& measured_check = {});

/// The files a report writes only for some specs (step.json, jobs.json, qos.json, configs/) that
/// lie in `dir` though `files` does not write them: an earlier report's, left as they were
/// (nothing gpufabric did not write this run is removed), which the caller names.
std::vector<std::string> stale_report_outputs(const std::string& dir,
                                              const std::vector<OutputFile>& files);

}  // namespace gf
