// Accuracy against published measurements: each row of a calibration CSV (the format of
// data/calibration/nccl-public.csv) becomes a spec of the same hardware, is simulated, and
// is compared with the published figure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/diag.h"

namespace gf {

/// One published point and what the simulator makes of it.
struct CalibrationPoint {
  int line = 0;  ///< line in the CSV
  std::string source, hardware, collective, algorithm;
  std::string set;           ///< "fit" (constants may be set from it) or "test" (unseen)
  std::string source_group;  ///< the source of the run: a "(same ...)" row takes the row above's
  std::string
      algorithm_group;  ///< ring, tree, nvls, nvls_tree, collnet, pat, p2p or auto, as published
  std::string band;     ///< "small" (< 1 MiB), "mid" (1-16 MiB), "large" (>= 32 MiB), "between"
  int nodes = 0, gpus_per_node = 0;
  std::string nic;  ///< catalog id used
  double bytes = 0;
  /// "busbw" (GB/s), "busbw_per_nic" (GB/s), "latency" (us, below 1 MiB) or "time" (us, a
  /// published time at 1 MiB or more, judged as the bandwidth it implies)
  std::string kind;
  double published = 0;  ///< midpoint of a published range
  double published_lo = 0, published_hi = 0;
  double simulated = 0;
  std::string simulated_algorithm, simulated_protocol;
  /// Relative error of the bandwidth (for "latency": of the time): (simulated - published) /
  /// published, with a "time" row's times turned into the bandwidth they imply.
  double error = 0;
  double ratio = 1;    ///< max(sim/pub, pub/sim) of the compared figure, >= 1
  bool large = false;  ///< bytes >= 32 MiB: judged on bandwidth
  /// The cluster as the model sees it, less the NCCL release and the size: GPU, nodes x GPUs,
  /// NICs, fabric, in-network reduction, the NCCL variables the run set and nccl-tests' -g
  /// ("B200 8 x 8, 8 x 400G InfiniBand"). Rows of one label, collective and algorithm differ to
  /// the model only by size and release.
  std::string inputs;
};

/// A row that was not simulated, and why.
struct SkippedRow {
  int line = 0;
  std::string set, source, reason;
};

/// Median and worst of a group of points: |error| for bandwidth bands, the ratio for "small".
struct ErrorStats {
  int count = 0;
  double median = 0, worst = 0;
};

/// The errors of the points of one set that share a collective, an algorithm and a size band
/// (an empty collective or algorithm means all of them).
struct GroupStats {
  std::string collective, algorithm, band;
  ErrorStats stats;
};

/// One accuracy target of the fidelity issue, judged on one set.
struct TargetCheck {
  std::string name;  ///< e.g. "large median |error|"
  std::string band;  ///< small, mid or large
  double limit = 0;  ///< a fraction for bandwidth bands, a factor for "small"
  double measured = 0;
  int count = 0;  ///< points it was judged on; 0: not judged
  bool pass = false;
};

/// Runs that different sources measured on the same inputs (CalibrationPoint::inputs, collective,
/// algorithm group and size band): how far apart they came out against the model. Each run is
/// one source's rows of the group, summed up as the median of model / measured (bandwidth; the
/// time below 1 MiB, as the band is judged). The floor is the least worst error one factor on
/// the model, shared by the group, can reach over the runs; a model that tells the runs apart by
/// their sizes or releases is not bound by it.
struct SpreadRun {
  std::string source, set;  ///< the source group; "fit", "test" or "fit, test"
  int first_line = 0, rows = 0;
  double model_over_measured = 1;  ///< median over the run's rows
  int test_rows = 0;               ///< of them in the test set
  double test_model_over_measured = 1;  ///< median over those
};
struct SpreadGroup {
  std::string inputs, collective, algorithm, band;
  std::vector<SpreadRun> runs;  ///< two or more, from different sources
  /// mid and large: (q_max - q_min) / (q_max + q_min), the least worst |error| of f x model over
  /// the runs' q = model / measured; small: sqrt(q_max / q_min), the least worst time ratio.
  double floor = 0;
  /// The same over the runs' test rows alone (0: fewer than two runs have test rows): what the
  /// test set's worst-case targets are up against, since the fit rows are not judged.
  double test_floor = 0;
  bool has_test = false;  ///< some run has test rows
};

/// One half of the data: its points' errors, grouped, and the targets judged on them.
struct SetSummary {
  std::string set;  ///< "fit" or "test"
  int points = 0, skipped = 0;
  ErrorStats small, mid, large;           ///< all collectives and algorithms together
  std::vector<GroupStats> groups;         ///< per collective x algorithm x band
  std::vector<GroupStats> source_groups;  ///< per source (collective = the source) x band
  std::vector<TargetCheck> targets;
  bool pass = false;  ///< some target judged, and every judged target met
};

/// The accuracy summary: every point, what was skipped, and the two sets' errors apart.
struct CalibrationSummary {
  std::vector<CalibrationPoint> points;
  std::vector<std::string> skipped;  ///< rows without a figure to compare, and why (as text)
  std::vector<SkippedRow> skipped_rows;
  double median_abs_error_large = 0, max_abs_error_large = 0;  ///< over both sets
  double worst_latency_ratio = 1;  ///< max(sim/pub, pub/sim) over latency points, both sets
  SetSummary fit, test;
  std::vector<SpreadGroup> spread;  ///< widest floor first
  bool has_set_column = false;  ///< false: every row was read as "fit"
  bool pass = false;            ///< the test set's targets (test.pass)
};

/// The targets on the test set (issue "Simulator fidelity", section "Validation that means
/// something"): large messages median |error| <= 5 % and none over 15 %; 1-16 MiB median
/// <= 15 %; small-message latency within 1.5x.
constexpr double kTargetLargeMedian = 0.05;
constexpr double kTargetLargeWorst = 0.15;
constexpr double kTargetMidMedian = 0.15;
constexpr double kTargetSmallRatio = 1.5;

/// Reads the CSV text (`file` for messages) and simulates every row with a figure. The `set`
/// column (fit|test) is optional: a file without it is read as all fit. A `set` other than fit
/// or test is an error at its line. `memory_bytes` (0: no limit) bounds what one row's
/// simulation may take, as load_and_plan bounds a spec's: a row beyond it is an error at its
/// line naming the figure, not memory exhausted.
Result<CalibrationSummary> calibrate(const std::string& csv_text, const std::string& file,
                                     double memory_bytes = 0);

/// Every point per set, the summary and the targets.
std::string calibration_table(const CalibrationSummary& s);
/// The summary and the targets only, per set (what the README shows).
std::string calibration_summary_table(const CalibrationSummary& s);

/// Training runs (the format of data/calibration/training-public.csv): each becomes a spec
/// of the same model, parallelism and hardware; the step model's per-GPU TFLOP/s or iteration
/// time is compared with the published one. Limit: 15 % each, judged on the test rows.
constexpr double kTrainingLimit = 0.15;
struct TrainingPoint {
  int line = 0;
  std::string source, params, kind;  ///< kind: "tflops_per_gpu" or "iteration_s"
  long long gpus = 0;
  int tp = 1, pp = 1, dp = 1;
  double published = 0, simulated = 0, error = 0;
  double memory_bytes = 0, hbm_bytes = 0;  ///< the peak stage's need per GPU, and the GPU's HBM
  /// The `set` column, as in nccl-public.csv: "fit" (constants may be set from it; blank reads
  /// as fit), "test" (kept unseen: the verdict), or "report" (simulated and printed with its
  /// error, judged by neither: a layout the source does not publish in full).
  std::string set;
  bool gated() const { return set != "report"; }
};
struct TrainingCalibration {
  std::vector<TrainingPoint> points;
  int fit_points = 0, test_points = 0;
  double max_abs_error_fit = 0, max_abs_error_test = 0;
  double median_abs_error_fit = 0, median_abs_error_test = 0;
  double max_abs_error_reported = 0;  ///< over the "report" rows
  bool pass = false;                  ///< test rows present and all within kTrainingLimit
};
Result<TrainingCalibration> calibrate_training(const std::string& csv_text,
                                               const std::string& file);
std::string training_table(const TrainingCalibration& t);
nlohmann::json training_json(const TrainingCalibration& t);
/// True when the CSV header is that of training runs rather than collective measurements.
bool is_training_csv(const std::string& csv_text);
nlohmann::json calibration_json(const CalibrationSummary& s);

}  // namespace gf
