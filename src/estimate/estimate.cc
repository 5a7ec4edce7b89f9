#include "estimate/estimate.h"

#include <fmt/format.h>

namespace gf {

const std::vector<std::string>& estimate_collectives() {
  static const std::vector<std::string> k = {"all_reduce", "all_gather", "reduce_scatter",
                                             "alltoall", "broadcast"};
  return k;
}

double traffic_factor(const std::string& c, long long n) {
  const double N = static_cast<double>(n);
  if (n <= 1) return 0;
  // Ring all-reduce = reduce-scatter + all-gather: each rank sends 2(N-1)/N of the payload.
  if (c == "all_reduce") return 2 * (N - 1) / N;
  if (c == "all_gather" || c == "reduce_scatter" || c == "alltoall") return (N - 1) / N;
  if (c == "broadcast") return 1;
  return 0;
}

const char* traffic_factor_formula(const std::string& c) {
  if (c == "all_reduce") return "2(N-1)/N";
  if (c == "broadcast") return "1";
  return "(N-1)/N";
}

double traffic_factor_limit(const std::string& c) { return c == "all_reduce" ? 2.0 : 1.0; }

Result<Estimate> estimate(const EstimateInput& in) {
  std::vector<Diagnostic> errs;
  const double bpp = precision_bytes(in.precision);
  if (in.params <= 0) errs.push_back(Diagnostic::flag("--params", "must be positive, e.g. 70B"));
  if (in.gpus < 2)
    errs.push_back(Diagnostic::flag("--gpus", "needs at least 2 GPUs to communicate"));
  if (traffic_factor(in.collective, 2) == 0)
    errs.push_back(Diagnostic::flag("--collective",
                                    fmt::format("unknown collective '{}'", in.collective),
                                    did_you_mean(in.collective, estimate_collectives())));
  if (in.link_bits_per_s <= 0 && in.comm_time_s <= 0)
    errs.push_back(Diagnostic::flag("--link",
                                    "give the link rate (--link 400G or --nic cx7-400g) or "
                                    "a communication time (--comm-time)"));
  if (in.link_efficiency <= 0 || in.link_efficiency > 1)
    errs.push_back(Diagnostic::flag("--link-efficiency", "expected a fraction in (0, 1]"));
  if (!errs.empty()) return errs;

  Estimate e;
  e.params = in.params;
  e.bytes_per_param = bpp;
  e.gpus = in.gpus;
  e.collective = in.collective;
  e.payload_bytes = in.params * bpp;
  e.traffic_factor = traffic_factor(in.collective, in.gpus);
  e.traffic_bytes = e.payload_bytes * e.traffic_factor;
  // The factor for many GPUs: the guide's rule of thumb "params x bytes x 2" for the ring's
  // 2(N-1)/N; (N-1)/N's is 1.
  e.traffic_bytes_simple = e.payload_bytes * traffic_factor_limit(in.collective);
  e.link_bytes_per_s = in.link_bits_per_s / 8 * in.link_efficiency;
  e.link_bits_per_s = in.link_bits_per_s;
  e.link_efficiency = in.link_efficiency;
  if (in.comm_time_s > 0) {
    e.comm_time_s = in.comm_time_s;
    e.comm_time_simple_s = in.comm_time_s;
    e.comm_time_given = true;
    // A link given beside it is not dropped: what it would take is shown next to the time.
    if (e.link_bytes_per_s > 0) {
      e.link_comm_time_s = e.traffic_bytes / e.link_bytes_per_s;
      e.link_comm_time_simple_s = e.traffic_bytes_simple / e.link_bytes_per_s;
    }
  } else {
    e.comm_time_s = e.traffic_bytes / e.link_bytes_per_s;
    e.comm_time_simple_s = e.traffic_bytes_simple / e.link_bytes_per_s;
  }
  e.compute_time_s = in.compute_time_s;
  if (in.compute_time_s > 0) e.comm_fraction = e.comm_time_s / (e.comm_time_s + in.compute_time_s);
  e.steps = in.steps;
  // The guide counts a gradient in the training's type; Megatron-LM accumulates and reduces
  // bf16 (and fp8) training's in fp32 unless told --grad-reduce-in-bf16 (grad_reduce_precision).
  if (in.collective == "all_reduce" &&
      (in.precision == Precision::kBf16 || in.precision == Precision::kFp8))
    e.notes.push_back(fmt::format(
        "the guide counts {} B a gradient; Megatron-LM reduces {} training's gradients in fp32 "
        "by default, {:g}x these bytes (gpufabric step models it; workload.grad_reduce)",
        bpp, name_of(kPrecisionNames, in.precision), 4 / bpp));
  // A bare number is parameters: --params 70 is a 70-parameter model, which no one trains.
  constexpr double kSmallestModelParams = 1e6;
  if (in.params < kSmallestModelParams)
    e.notes.push_back(fmt::format(
        "{:g} parameters: a count without a suffix is parameters; 70B is 70 billion (K M B T)",
        in.params));
  e.comm_hours = e.comm_time_s * in.steps / 3600;
  e.total_hours = (e.comm_time_s + in.compute_time_s) * in.steps / 3600;
  return e;
}

}  // namespace gf
