// Simulated collective results: nccl-tests' table (so simulated and measured runs read and
// parse alike), the --explain block, and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "sim/collective.h"

namespace gf {

/// A sweep's results with what produced them.
struct SimReport {
  const Plan* plan = nullptr;
  const CollectiveModel* model = nullptr;
  double min_bytes = 0, max_bytes = 0, factor = 2;
  std::vector<SizeResult> rows;  ///< sizes as nccl-tests rounds them
};

/// nccl-tests' element count and size for a requested size (sizes round down to whole
/// elements of float, and to whole per-rank chunks for the gather-type collectives).
void nccl_tests_size(Op op, long long ranks, double requested, double& bytes, long long& count);

/// The sweep run on `model` for the sizes as nccl-tests prints them.
SimReport simulate_sweep(const Plan& plan, const CollectiveModel& model,
                         const std::vector<double>& sizes, double min_bytes, double max_bytes,
                         double factor);

std::string nccl_tests_table(const SimReport& r, bool explain);
nlohmann::json sim_json(const SimReport& r);

}  // namespace gf
