// Simulated collective results: nccl-tests' table (so simulated and measured runs read and
// parse alike), the --explain block, and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "sim/collective.h"
#include "sim/link_load.h"

namespace gf {

/// A sweep's results with what produced them.
struct SimReport {
  const Plan* plan = nullptr;
  const CollectiveModel* model = nullptr;
  double min_bytes = 0, max_bytes = 0, factor = 2;
  std::vector<SizeResult> rows;  ///< sizes as nccl-tests rounds them
  /// nccl-tests' own cap on -e where the GPU's memory cannot hold the buffers of max_bytes
  /// (nccl_tests_memory_max_bytes; 0: the sizes asked for fit).
  double reduced_max_bytes = 0;
};

/// The largest size, bytes, nccl-tests runs on GPUs of `gpu_memory_gib` (the catalog's
/// memory_gb, binary) without validation (-c 0, as the table's header says): a send and a
/// receive buffer of the size each, after it keeps a reserve of 1 GiB per 16 GiB (at most 4 GiB)
/// and 1 GiB more for the rest. nccl-tests lowers a larger -e to it and prints "Reducing
/// maxBytes to N due to memory limitation".
double nccl_tests_memory_max_bytes(double gpu_memory_gib);

/// nccl-tests' element count and size for a requested size (sizes round down to whole
/// elements of float, and to whole per-rank chunks for the gather-type collectives).
void nccl_tests_size(Op op, long long ranks, double requested, double& bytes, long long& count);

/// The sweep run on `model` for the sizes as nccl-tests prints them.
SimReport simulate_sweep(const Plan& plan, const CollectiveModel& model,
                         const std::vector<double>& sizes, double min_bytes, double max_bytes,
                         double factor);

std::string nccl_tests_table(const SimReport& r, bool explain);
nlohmann::json sim_json(const SimReport& r);

/// The links CSV's header line (without the newline).
extern const char* const kLinksCsvHeader;
/// The traffic per link of `t` as CSV, every directed link that carries any, hottest first
/// (rank, ends as cabling.csv names them, tier, direction, capacity, bytes, mean and peak
/// utilisation, flows), streamed row by row.
void write_links_csv(std::ostream& out, const Fabric& fabric, const LinkNames& names,
                     const CollectiveTraffic& t);
/// Per tier: links busy of all, bytes, mean and largest utilisation; and the hottest `top`
/// links. Text lines start with "# " (they follow nccl-tests' table).
std::string links_text(const Fabric& fabric, const LinkNames& names, const CollectiveTraffic& t,
                       int top = 5);
nlohmann::json links_json(const Fabric& fabric, const LinkNames& names, const CollectiveTraffic& t,
                          int top = 10);

}  // namespace gf
