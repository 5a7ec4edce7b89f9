// The planning guide's closed-form calculator (seed §1, §3.2): how much a gradient
// synchronisation moves, how long it takes on a link, and its share of the step.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"

namespace gf {

/// What the user asks the calculator.
struct EstimateInput {
  double params = 0;               ///< model parameters
  Precision precision = Precision::kBf16;
  long long gpus = 0;
  double link_bits_per_s = 0;    ///< per-GPU scale-out link
  double link_efficiency = 1.0;  ///< usable fraction of the line rate (the guide uses 1)
  double compute_time_s = 0;     ///< 0: not given
  double comm_time_s = 0;        ///< 0: computed; else a measured/assumed collective time
  double steps = 0;              ///< 0: not given
  std::string collective = "all_reduce";
};

/// The calculator's answer; field names match the `estimate --json` contract.
struct Estimate {
  double params = 0;
  double bytes_per_param = 0;
  long long gpus = 0;
  std::string collective;
  double payload_bytes = 0;         ///< params x bytes/param
  double traffic_factor = 0;        ///< exact per-GPU factor, 2(N-1)/N for all_reduce
  double traffic_bytes = 0;         ///< payload x traffic_factor: bytes each GPU sends
  double traffic_bytes_simple = 0;  ///< the factor's limit for many GPUs x payload: the guide's
                                    ///< rule 2 x params x bytes/param for all_reduce, 1 x else
  double link_bytes_per_s = 0;      ///< usable link bandwidth
  double link_bits_per_s = 0;       ///< the line rate it is a share of
  double link_efficiency = 1;       ///< that share
  double comm_time_s = 0;
  double comm_time_simple_s = 0;  ///< with that limit's factor (the guide's 2 for all_reduce)
  bool comm_time_given = false;   ///< --comm-time: comm_time_s is the user's, not computed
  /// With a given time and a link rate too: what the link takes (exact factor, guide's rule).
  double link_comm_time_s = 0, link_comm_time_simple_s = 0;
  double compute_time_s = 0;
  double comm_fraction = 0;  ///< comm / (comm + compute), no overlap; 0 without compute
  double steps = 0;
  double comm_hours = 0;   ///< communication time over all steps
  double total_hours = 0;  ///< (comm + compute) over all steps
  /// What the guide's arithmetic leaves out that the step model counts.
  std::vector<std::string> notes;
};

/// Bytes each rank sends per byte of payload, by collective (ring algorithms).
double traffic_factor(const std::string& collective, long long ranks);
/// That factor as a formula of N: "2(N-1)/N", "(N-1)/N" or "1".
const char* traffic_factor_formula(const std::string& collective);
/// Its limit for many GPUs: 2 for all_reduce (the guide's rule of thumb), 1 for the others.
double traffic_factor_limit(const std::string& collective);
/// The collectives the calculator knows.
const std::vector<std::string>& estimate_collectives();

Result<Estimate> estimate(const EstimateInput& in);

}  // namespace gf
