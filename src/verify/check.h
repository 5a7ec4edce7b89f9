// `check`: real measurements (nccl-tests, perftest, iperf3) compared with what the simulator
// expects of the planned fabric.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/diag.h"
#include "plan/plan.h"
#include "verify/parsers.h"

namespace gf {

// What check accepts below the simulated bus bandwidth by default (--tolerance), and where
// diagnose --spec finds a run below the plan, fraction. gpufabric's choice: the simulator's
// worst-case target at large sizes on published runs it was not fitted to (15 %); it misses it
// on one bare-metal cluster (up to 32 % optimistic: gpufabric calibrate
// data/calibration/nccl-public.csv), so a run below it is a lead to follow, not proof.
constexpr double kDefaultBusbwTolerance = 0.15;

// The guide (§5.1): RDMA bandwidth near line rate, "400G link -> >= ~380 Gbps".
constexpr double kRdmaLineRateShare = 0.95;
// perftest and iperf3 measure one port: above its line rate by more than the printed figures'
// rounding, the figure is not one port's (check, diagnose and the acceptance's link tests).
constexpr double kAbovePortLineRateShare = 1.01;

/// What check makes of a judged figure: within the tolerance, under it, faster than the plan's
/// links can carry (the spec is not this cluster's, or the output was edited), or a nccl-tests
/// row that counted wrong results.
enum class CheckMark { kOk, kBelow, kAbove, kWrong };

/// One compared figure.
struct CheckRow {
  std::string file, collective, what;
  double bytes = 0, measured = 0, expected = 0, ratio = 0;
  CheckMark mark = CheckMark::kOk;
  bool ok() const { return mark == CheckMark::kOk; }
  std::string note{};
  bool judged = true;  ///< compared with the tolerance; false for rows shown for context only
  /// nccl-tests rows: what the expectation runs, as NCCL would choose it on the planned fabric
  /// ("nvls/Simple", "ring/LL128"; "+SHARP" where it reduces in the switches); "" for others.
  std::string expected_as{};
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

/// "pass", "fail" or "nothing judged", as check --json writes it.
const char* check_verdict_name(CheckVerdict v);
nlohmann::json check_json(const CheckResult& r);
std::string check_text(const CheckResult& r);

}  // namespace gf
