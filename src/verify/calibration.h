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
  int nodes = 0, gpus_per_node = 0;
  std::string nic;  ///< catalog id used
  double bytes = 0;
  std::string kind;      ///< "busbw" (GB/s), "busbw_per_nic" (GB/s) or "latency" (us)
  double published = 0;  ///< midpoint of a published range
  double published_lo = 0, published_hi = 0;
  double simulated = 0;
  std::string simulated_algorithm, simulated_protocol;
  double error = 0;    ///< (simulated - published) / published
  bool large = false;  ///< bytes >= 32 MiB: judged on bandwidth
};

/// The accuracy summary with the thresholds.
struct CalibrationSummary {
  std::vector<CalibrationPoint> points;
  std::vector<std::string> skipped;  ///< rows without a figure to compare, and why
  double median_abs_error_large = 0, max_abs_error_large = 0;
  double worst_latency_ratio = 1;  ///< max(sim/pub, pub/sim) over latency points
  bool pass = false;
};

/// Thresholds: large messages median |error| <= 10 % and none over 25 %; small-message
/// latency within 2x.
constexpr double kCalibrationMedianLimit = 0.10;
constexpr double kCalibrationMaxLimit = 0.25;
constexpr double kCalibrationLatencyFactor = 2.0;

/// Reads the CSV text (`file` for messages) and simulates every row with a figure.
Result<CalibrationSummary> calibrate(const std::string& csv_text, const std::string& file);

std::string calibration_table(const CalibrationSummary& s);

/// Training runs (the format of data/calibration/training-public.csv): each becomes a spec
/// of the same model, parallelism and hardware; the step model's per-GPU TFLOP/s or iteration
/// time is compared with the published one. Limit: 15 % each.
constexpr double kTrainingLimit = 0.15;
struct TrainingPoint {
  int line = 0;
  std::string source, params, kind;  ///< kind: "tflops_per_gpu" or "iteration_s"
  long long gpus = 0;
  int tp = 1, pp = 1, dp = 1;
  double published = 0, simulated = 0, error = 0;
  double memory_bytes = 0, hbm_bytes = 0;  ///< the peak stage's need per GPU, and the GPU's HBM
  /// The `set` column: "" or "check" rows are held to kTrainingLimit; "report" rows are
  /// simulated and printed with their error, not held to it (layouts the model does not yet
  /// capture, e.g. an unpublished interleaving depth).
  std::string set;
  bool gated() const { return set != "report"; }
};
struct TrainingCalibration {
  std::vector<TrainingPoint> points;
  double max_abs_error = 0;           ///< over the gated rows
  double max_abs_error_reported = 0;  ///< over the "report" rows
  bool pass = false;
};
Result<TrainingCalibration> calibrate_training(const std::string& csv_text,
                                               const std::string& file);
std::string training_table(const TrainingCalibration& t);
/// True when the CSV header is that of training runs rather than collective measurements.
bool is_training_csv(const std::string& csv_text);
nlohmann::json calibration_json(const CalibrationSummary& s);

}  // namespace gf
