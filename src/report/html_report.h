// One self-contained HTML report: the answer first, the topology drawn, the bill of materials,
// bus bandwidth per algorithm (with measured runs overlaid), the training step, what-if rows and
// warnings. Charts are Vega-Lite, inlined, so the page opens offline.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "report/qos_report.h"
#include "sim/link_load.h"
#include "sim/step.h"
#include "verify/check.h"

namespace gf {

/// A bus-bandwidth curve: one series of the busbw chart.
struct BusbwSeries {
  std::string name;                               ///< "ring (simulated)", "measured: run.txt"
  std::vector<std::pair<double, double>> points;  ///< bytes, busbw GB/s
  bool measured = false;                          ///< drawn dashed
};

/// A what-if row for the report.
struct ReportWhatIf {
  std::string scenario;
  double busbw_gbs = 0;  ///< all_reduce at the probe size; 0 when it cannot run
  std::string note;
  /// alltoall at the probe size (MoE's expert dispatch, the collective a lost switch-to-switch
  /// path hurts most: every node pair's bytes cross the top tier); 0 when it cannot run
  double alltoall_busbw_gbs = 0;
};

/// Everything the report shows, computed by the caller.
struct ReportInputs {
  const Plan* plan = nullptr;
  /// What check makes of the --measured runs (verify/check.h), nullopt without any: the
  /// report's answer judges them as check does.
  std::optional<CheckResult> measured_check;
  double probe_bytes = 0;
  double predicted_busbw_gbs = 0;  ///< all_reduce at probe_bytes, as NCCL would choose
  std::string predicted_algorithm;
  std::vector<BusbwSeries> busbw;
  std::optional<StepResult> step;
  std::vector<StepScenario> sensitivity;
  std::vector<ReportWhatIf> what_if;
  /// Utilisation of the links per tier for the collective at probe_bytes (link_load.h), and
  /// what it was ("all_reduce, nvls_tree, 1 GiB"); empty: no heat map.
  std::vector<TierHeat> link_heat;
  std::string link_heat_label;
  /// The default qos run (RoCE fabrics in the packet engine's range); nullopt: no QoS section,
  /// and `qos_absent` says why in the notes.
  std::optional<QosSection> qos;
  std::string qos_absent;
  /// The jobs section (report/jobs_report.h: jobs_html_section), when the spec has jobs:;
  /// empty: none.
  std::string jobs_html;
  /// Utilisation of the links per tier with every job's step traffic together, and what it
  /// was; empty: no such heat map.
  std::vector<TierHeat> jobs_heat;
  std::string jobs_heat_label;
  std::vector<std::string> files;  ///< files written beside the report, for links
  /// What configs/ holds (one line each) and its entries to link; empty without --configs.
  std::vector<std::string> config_lines, config_links;
  /// The gpufabric build that made the report ("0.1.0 (revision 2e841d9)"), shown at its foot;
  /// empty: not shown.
  std::string gpufabric_version;
};

std::string report_html(const ReportInputs& in);
/// Text made safe for HTML element content and attribute values.
std::string html_escape(const std::string& s);
/// A self-contained page: `body` (HTML) and Vega-Lite `specs` keyed by the id of the element
/// each renders into, with the charting libraries inlined and the page's self-report for the
/// browser test (data-errors on <html>; data-charts-rendered, data-chart-points and
/// data-empty-charts on <body>).
std::string chart_page(const std::string& title, const std::string& body,
                       const nlohmann::json& specs);
/// The topology diagram alone (SVG), one scalable unit expanded, the rest summarised.
std::string topology_svg(const Plan& plan);

}  // namespace gf
