// Fabric metrics in the Prometheus text format: RDMA port and congestion counters, interface
// state, PFC pauses, where reality differs from the plan, and the last check's results.
// Conventions follow node_exporter: snake_case, units in names, _total for counters.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "plan/plan.h"

namespace gf {

/// Where the exporter reads from.
struct ExporterOptions {
  std::string sysfs = "/sys";
  std::string ethtool_dir;  ///< recorded `ethtool -S IF` outputs as DIR/IF.txt; "" = run ethtool
  const Plan* plan = nullptr;
  const Catalog* catalog = nullptr;
  std::string node;           ///< this host's node name in the plan (cabling.csv)
  std::string baseline_file;  ///< `gpufabric check --json` output to export as the baseline
};

/// One scrape: the metrics text. Unreadable, oversized or malformed sources are skipped, never a
/// failed scrape; each skip adds a line to `log`. Every file is read with a limit
/// (read_file_bounded), so a counter that is a device or an endless file cannot hang the scrape.
std::string collect_metrics(const ExporterOptions& o, std::vector<std::string>& log);

/// One row of a `gpufabric check --json` result that measured bus bandwidth.
struct BaselineRow {
  std::string collective;
  double bytes = 0, measured_busbw_gbs = 0, expected_busbw_gbs = 0, ratio = 0;
};
/// The bus-bandwidth rows of the `gpufabric check --json` output in `path`, read with a limit;
/// rows of other measurements (e.g. ib_write_bw) are left out. Diagnostics name `path` and `key`.
Result<std::vector<BaselineRow>> read_baseline(const std::string& path,
                                               const std::string& key = "");

/// Prometheus alerting rules (YAML) and a Grafana dashboard (JSON) for these metrics.
std::string prometheus_rules(const Plan& plan);
nlohmann::json grafana_dashboard(const Plan& plan);

}  // namespace gf
