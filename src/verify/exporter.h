// Fabric metrics in the Prometheus text format: RDMA port and congestion counters, interface
// state, PFC pauses, where reality differs from the plan, and the last check's results.
// Conventions follow node_exporter: snake_case, units in names, _total for counters.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "plan/plan.h"
#include "topo/fabric.h"

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

/// What keeps the exporter from starting, checked before it serves: `sysfs` (and `ethtool_dir`
/// when given) not a folder, a `baseline_file` that cannot be read or is not `gpufabric check
/// --json` output, a `node` that is not in the plan. Each diagnostic's key is the exporter's flag
/// (--sysfs, --ethtool-dir, --baseline, --node); empty when the exporter can start.
std::vector<Diagnostic> validate_exporter_options(const ExporterOptions& o);

/// A source one scrape could not use, and why.
struct SkippedSource {
  std::string source;  ///< a file's path, "ethtool statistics of IF", "baseline FILE", "node N"
  std::string reason;
};

/// The sources that failed in the previous scrape, so that a failing source is logged when it
/// starts failing and when it recovers instead of on every scrape. One scrape at a time per state.
class SourceHealth {
 public:
  /// The log lines for one scrape's skips: "skipped SOURCE: REASON" for each source that was not
  /// failing before, "SOURCE recovered" for each that was and is no longer skipped (not one of a
  /// device devices_now() found gone: it did not recover).
  std::vector<std::string> update(const std::vector<SkippedSource>& skipped);
  /// The RDMA ports of the scrape's devices, remembered: a device gone since an earlier scrape
  /// (a NIC that fell off the bus, a driver unloaded) keeps its ports' series, down, and a
  /// skipped source. Returns the ports of the devices in `seen` no longer present.
  std::map<std::string, std::set<std::string>> devices_now(
      const std::map<std::string, std::set<std::string>>& seen);

 private:
  std::set<std::string> failing_;  ///< the sources skipped in the previous scrape
  std::map<std::string, std::set<std::string>> ports_;  ///< device -> its ports, ever seen
  std::set<std::string> gone_;  ///< the devices devices_now() last found gone
};

/// One scrape: the metrics text. Unreadable, oversized or malformed sources are skipped, never a
/// failed scrape (gpufabric_exporter_skipped_sources counts them); `health` turns the skips into
/// the lines appended to `log`. Every file is read with a limit (read_file_bounded), so a counter
/// that is a device or an endless file cannot hang the scrape.
std::string collect_metrics(const ExporterOptions& o, SourceHealth& health,
                            std::vector<std::string>& log);
/// One scrape with a fresh state: every skip adds a line to `log` (--once, tests).
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

/// What a NIC port sees at the planned load, from the packet-level run of the spec's default
/// pattern (qos/engine.h kQosDefaultPattern, kQosDefaultBytes) with the QoS the configurations
/// set: the most of each counter one NIC port counted, per second of the run.
struct QosAlertBasis {
  std::string traffic, settings;  ///< the run, in qos's words
  double run_s = 0;
  double pause_rx_per_s = 0;    ///< PFC pause frames a NIC received (ethtool rx_prio3_pause)
  double ecn_marked_per_s = 0;  ///< ECN-marked RoCE packets a NIC received (np_ecn_marked_...)
  double cnp_sent_per_s = 0;    ///< CNPs a NIC sent (np_cnp_sent)
  /// Full-MTU RoCE packets a NIC port receives a second at its line rate: the scale of the ECN
  /// and CNP rules' floor (0: kAlertFloorPerS alone).
  double line_packets_per_s = 0;
};
/// The run behind the thresholds; an error (why there is none) when the fabric is not RoCE or
/// out of the packet engine's range.
Result<QosAlertBasis> qos_alert_basis(const Plan& plan, const Catalog& catalog, const Fabric& fab);
/// An alert fires at this many times the planned load's rate (an estimate: the run is one job's
/// heaviest collective on every NIC at once; twice that is traffic the plan did not expect).
constexpr double kAlertOverPlannedRate = 2;
/// And never below this many events a second (an estimate: under one a second, a 5-minute rate
/// is a few hundred events, the noise of a job starting).
constexpr double kAlertFloorPerS = 1;
/// ECN marks and CNPs are DCQCN working, not a fault: a healthy fabric under training load
/// marks some packets on every port that shares a queue. Their rules never fire below this
/// share of the full-MTU packets a port receives at its line rate (an estimate: 1 in 10,000 of
/// a 400G port's ~12M packets a second, 1,200 a second, is far below the marking DCQCN's ramp
/// makes of a congested queue, and far above a quiet one).
constexpr double kEcnAlertFloorShare = 1e-4;
/// The threshold for a counter whose planned rate is `planned_per_s`; `floor_per_s` is the least
/// (kAlertFloorPerS unless the counter's own is higher).
double alert_threshold(double planned_per_s, double floor_per_s = kAlertFloorPerS);
/// The fixed thresholds of the RoCE storm rules (pause frames a NIC port receives, CNPs it
/// handles, a second): gpufabric's choices of "far beyond a healthy fabric", raised to
/// kAlertOverPlannedRate x the packet-level run's alert_threshold where that is higher.
constexpr double kPauseStormPerS = 1000;
constexpr double kCnpSurgePerS = 100000;

/// Prometheus alerting rules (YAML) and a Grafana dashboard (JSON) for these metrics. With
/// `qos`, the RoCE congestion rules' thresholds come from its packet-level run, each with a
/// comment saying so; without, `qos_absent` (why there is none) is written as a comment.
std::string prometheus_rules(const Plan& plan, const std::optional<QosAlertBasis>& qos = {},
                             const std::string& qos_absent = "");
nlohmann::json grafana_dashboard(const Plan& plan);

}  // namespace gf
