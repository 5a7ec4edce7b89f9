// Calibrating the simulator to one cluster: from the cluster's own nccl-tests outputs, the few
// factors of the model that the data can tell apart (the share of each link class's rate the
// Simple protocol reaches, the latency each network step adds, the time each network message
// holds its connection, a bandwidth factor per algorithm)
// are fitted, each one multiplying or adding to a term the model already has, never a free
// curve. The result is a CalibrationProfile (spec/calibration_profile.h) with the fit's error
// and a cross-validated error on points left out of the fit.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "plan/plan.h"
#include "sim/nccl_constants.h"
#include "sim/nccl_cost.h"
#include "spec/calibration_profile.h"
#include "verify/parsers.h"

namespace gf {

/// What the files do not say, given on the command line.
struct FitOptions {
  int nodes = 0;  ///< nodes of the runs (0: the hosts the rank lines name, else ranks / GPUs)
  int gpus_per_node = 0;  ///< GPUs per node of such a run (0: the spec's)
  /// The NCCL_ALGO every run was forced to; nullopt: each file's own NCCL_ALGO line (NCCL_DEBUG
  /// output or the launcher's echo), else NCCL's choice.
  std::optional<Algorithm> algorithm;
  /// Folds of the k-fold cross-validation over points, used when there is one file (with two
  /// or more, each file is left out in turn).
  int folds = 5;
  /// Memory the fit may use, bytes (0: no limit): each run is built within the part of it
  /// that kept flows may not take (1 - kFitKeptFlowsShare), and its flows are kept for solving
  /// again under other link efficiencies (CollectiveModel::relink) while all the kept ones fit
  /// in kFitKeptFlowsShare of it; the others are routed again for each efficiency tried.
  double memory_bytes = 0;
};
/// The share of FitOptions::memory_bytes the runs' kept flows may take.
constexpr double kFitKeptFlowsShare = 0.5;

/// Size bands the fit and its errors are reported in (as data/calibration/README.md's):
/// small < 1 MiB (judged on time), mid 1-16 MiB, large >= 32 MiB (bandwidth), between.
constexpr double kFitSmallBelowBytes = 1024.0 * 1024;
constexpr double kFitMidUpToBytes = 16.0 * 1024 * 1024;
constexpr double kFitLargeFromBytes = 32.0 * 1024 * 1024;
const char* fit_band(double bytes);

/// A model term is fitted only where the data depend on it: moving it by the probe below changes
/// the predicted time of some fitted point by at least kFitSensitivity.
constexpr double kFitProbeFactor = 0.9;     ///< an efficiency or factor times 0.9
constexpr double kFitProbeLatencyUs = 2.0;  ///< a per-step latency plus 2 us
/// A network message's time plus 5 us: the order of the one such cost the model carries (a
/// CollNet operation's, 5.3-6.4 us: collnet_op_us); 2 us would move a 4-node all_reduce at 8 GiB by
/// under 2 %.
constexpr double kFitProbeMessageUs = 5.0;
/// The network messages' time is kept only where it fits the points of 32 MiB or more better
/// than the network efficiency alone by more than this, in mean squared log time error (1e-4:
/// a 1 % error on every point): with one message size the data cannot tell the two apart.
constexpr double kFitMessageEvidence = 1e-4;
/// A fitted message time under this is none: 0.05 us on each of a call's thousand messages is
/// 0.1 % of a 50 ms call.
constexpr double kFitMessageNegligibleUs = 0.05;
constexpr double kFitSensitivity = 0.02;    ///< 2 % of the predicted time
/// Fewest fitted points (large or small) a term needs.
constexpr int kFitMinPoints = 1;
/// A factor that ends this close to its search bound stopped there (log distance for the factors
/// that multiply, us for the times): the golden section ends within 0.2 % of it (0.618^14 of a
/// warm bracket of /1.6..x1.6), well inside these.
constexpr double kFitAtBoundLog = 0.005;
constexpr double kFitAtBoundUs = 0.5;

/// One nccl-tests file as the fit reads it.
struct FitRun {
  std::string file;
  Op op = Op::kAllReduce;
  std::optional<Algorithm> algorithm;  ///< forced; nullopt: NCCL's choice
  std::string algorithm_source;        ///< "--algo", "NCCL_ALGO in the file" or "" (NCCL chose)
  int nodes = 0, gpus_per_node = 0;
  /// As the output's banner says (nccl-tests -g and -n; the defaults where it has none).
  int gpus_per_thread = 1, iters = nccl::kNcclTestsIters;
  std::vector<NcclTestsRow> rows;
  /// The output ends as nccl-tests ends a run ('# Avg bus bandwidth' after the table); false for
  /// a log cut after a row, whose last sizes may be missing.
  bool complete = true;
};

/// One measured size, the fitted model's figure and the cross-validated one.
struct FitPoint {
  int run = 0;  ///< index into FitResult::runs
  int line = 0;
  double bytes = 0;
  std::string band;
  double measured_time_us = 0, measured_busbw_gbs = 0;
  double model_time_us = 0;  ///< before the fit (the spec's profile, none: the model's)
  double fitted_time_us = 0;
  double cv_time_us = 0;      ///< predicted by a fit that did not see this point
  std::string algorithm;      ///< what the fitted model ran (algorithm/protocol)
  bool in_objective = false;  ///< large or small: the bands the fit minimises the error of
};

/// One factor of the profile: its value, the model's, and whether the data could fit it.
struct FitParameter {
  std::string name;  ///< profile key, e.g. "network_efficiency" or "algorithms.tree"
  double model_value = 0, value = 0;
  bool fitted = false;
  std::string why;  ///< what it was fitted on, or why it was not
};

/// The errors of one collective in one band: |busbw error| (small: the time ratio, >= 1).
struct FitErrorGroup {
  std::string collective, band;
  int points = 0;
  double median = 0, worst = 0;
};

/// A run left out of the fit, and why.
struct FitSkipped {
  std::string file, why;
};

struct FitResult {
  CalibrationProfile profile;
  std::vector<FitRun> runs;         ///< the runs fitted (those given, less the skipped)
  std::vector<FitSkipped> skipped;  ///< forced to an algorithm the model does not run
  std::vector<FitPoint> points;
  std::vector<FitParameter> parameters;
  std::vector<FitErrorGroup> model_errors, fit_errors, cv_errors;
  std::string cv_method;  ///< "leave-one-file-out (N files)" or "K-fold over points"
  double objective_before = 0, objective_after = 0;  ///< mean squared log time error
};

/// Reads every file as a nccl-tests output (a file that is not one is bad input naming it) and
/// what each says about the run: collective, NCCL_ALGO, nodes and GPUs per node.
Result<std::vector<FitRun>> read_fit_runs(const Plan& plan, const std::vector<ToolOutput>& files,
                                          const FitOptions& o);

/// Fits the profile for `plan`'s fabric on `runs`, and cross-validates it.
Result<FitResult> fit_calibration(const Plan& plan, const Catalog& catalog,
                                  const std::vector<FitRun>& runs, const FitOptions& o);

/// Predicts every row of `runs` on `plan`'s fabric with `profile`: time per row, us, in order.
Result<std::vector<double>> predict_runs(const Plan& plan, const Catalog& catalog,
                                         const std::vector<FitRun>& runs,
                                         const CalibrationProfile& profile);

/// The profile file: factors, what they were fitted on, the fit's and the cross-validated
/// errors per collective and band. `spec` names the spec the fit ran on.
std::string fit_profile_yaml(const FitResult& r, const Plan& plan, const std::string& spec);
std::string fit_text(const FitResult& r);
nlohmann::json fit_json(const FitResult& r);

}  // namespace gf
