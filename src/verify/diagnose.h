// Diagnosis of real measurements and logs by the guide's troubleshooting table (seed §6), the
// comparison of measurements with the simulated plan (`check`), and the local host (`doctor`).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/diag.h"
#include "plan/plan.h"
#include "verify/parsers.h"

namespace gf {

/// A tool output read from a file.
struct ToolOutput {
  std::string file;
  std::string text;
  OutputKind kind = OutputKind::kUnknown;
};

/// Where a finding comes from.
struct Evidence {
  std::string file;
  int line = 0;
  std::string text;
};

/// One problem found, with what to do about it.
struct Finding {
  std::string id;
  std::string severity;  ///< error | warning | info
  std::vector<Evidence> evidence;
  std::string cause, check, fix;
};

/// Applies every rule to every file. `line_rate_gbps` (0 = unknown) is the NIC port rate the
/// RDMA and TCP figures are judged against; with a plan, nccl-tests results are also compared
/// with the simulated expectation, and on a RoCE plan the rails named in `rail_netdevs` (the
/// spec's addressing.host_netdevs) are checked in `ip link` output: present, up, and at the
/// planned MTU. Unreadable files are errors.
Result<std::vector<Finding>> diagnose(const std::vector<ToolOutput>& files, double line_rate_gbps,
                                      const Plan* plan = nullptr, const Catalog* catalog = nullptr,
                                      const std::vector<std::string>& rail_netdevs = {});

/// One compared figure.
struct CheckRow {
  std::string file, collective, what;
  double bytes = 0, measured = 0, expected = 0, ratio = 0;
  bool ok = true;
  std::string note;
  bool judged = true;  ///< compared with the tolerance; false for rows shown for context only
};
/// A check's outcome. Nothing judged is not a pass: a run cut after its small sizes, or only
/// latency tests, says nothing about the fabric.
enum class CheckVerdict { kPass, kFail, kNothingJudged };
struct CheckResult {
  std::vector<CheckRow> rows;
  CheckVerdict verdict = CheckVerdict::kNothingJudged;
  bool pass() const { return verdict == CheckVerdict::kPass; }
};

/// Compares measurements with what the simulator expects of `plan` at the node count each
/// measurement used. `tolerance`: the fraction below expectation still accepted.
Result<CheckResult> check_measurements(const Plan& plan, const Catalog& catalog,
                                       const std::vector<ToolOutput>& files, double tolerance);

/// The local host inspected like the files: MTUs, RDMA devices, memlock, NCCL variables, and
/// nvidia-smi / ibv_devinfo output when those tools exist. `sysfs` is the root of /sys.
std::vector<Finding> doctor(const std::string& sysfs);

nlohmann::json findings_json(const std::vector<Finding>& f);
std::string findings_text(const std::vector<Finding>& f);
/// "pass", "fail" or "nothing judged", as check --json writes it.
const char* check_verdict_name(CheckVerdict v);
nlohmann::json check_json(const CheckResult& r);
std::string check_text(const CheckResult& r);

}  // namespace gf
