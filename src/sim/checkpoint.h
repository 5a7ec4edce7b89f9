// Storage traffic on the plan: writing a checkpoint of the spec's model over the storage network,
// and, with networks.isolation: vlan, what the write costs the data-parallel all-reduce when both
// share the compute fabric's NIC links (max-min fair, the flow model's exact sharing).
#pragma once

#include <string>

#include "plan/plan.h"
#include "sim/step.h"
#include "spec/spec.h"

namespace gf {

/// One checkpoint write and, on converged ports, its interference with the collectives.
struct CheckpointEstimate {
  double bytes = 0;            ///< the whole model: params x (weights + optimizer states)
  double bytes_per_param = 0;  ///< memory.h's checkpoint_bytes_per_param
  double write_s = 0;          ///< alone on its links
  double write_Bps = 0;        ///< the rate that sets write_s
  std::string bottleneck;      ///< "GPU servers' storage ports" | "storage servers' ports" | ...
  bool converged = false;      ///< isolation: vlan: the write shares the compute NICs
  /// converged only: what the data-parallel traffic is (DpTraffic::what), the step's share of it
  /// alone and while the checkpoint is written on the same NIC links (allreduce_* keep their JSON
  /// names for a ZeRO run's reduce-scatter and gathers too), and the write's time while it
  /// shares them.
  std::string dp_traffic;

  double allreduce_alone_s = 0, allreduce_shared_s = 0, write_shared_s = 0;
  double allreduce_share = 1;  ///< fraction of its NIC bandwidth the all-reduce keeps
  double step_cost_s = 0;      ///< step time added while a checkpoint is being written
};

/// The data-parallel traffic of a step that competes with the checkpoint on the NICs: the bytes
/// each NIC sends (a ring all-reduce moves 2(n-1)/n of its buffer, a reduce-scatter or an
/// all-gather (n-1)/n), its time alone, how much of it compute leaves exposed, and what it is
/// ("the DP all-reduce", "the DP reduce-scatter and all-gather" of ZeRO-1/2, "ZeRO-3's DP
/// reduce-scatter and parameter gathers").
struct DpTraffic {
  double nic_bytes = 0;
  double alone_s = 0;
  double exposed_s = 0;
  std::string what;
};

/// What the data-parallel traffic of a run with this ZeRO stage is called (DpTraffic::what).
std::string dp_traffic_name(int zero);

/// The closed-form DP traffic when no step was simulated, at NIC line rate: the gradients of one
/// model replica (params x dp_bytes_per_param / (tp x pp)) ring-reduced over dp ranks (with
/// ZeRO-2 and -3 reduce-scattered every microbatch, ZeRO-2's weights gathered once); with
/// ZeRO-3 also its weights gathered before each microbatch's forward and backward (and its
/// recomputed forward), as the step's zero3_param_allgather. exposed_s is all of it without
/// overlap, none with it.
DpTraffic nominal_dp_traffic(const Plan& plan, const WorkloadSpec& w);

/// The DP traffic of a simulated step: its data-parallel collectives (dp_allreduce or
/// dp_reduce_scatter_all_gather, 2(n-1)/n of every buffer; ZeRO-2's and -3's dp_reduce_scatter,
/// ZeRO-2's dp_param_allgather and ZeRO-3's zero3_param_allgather, (n-1)/n; the experts'
/// alike); nic_bytes 0 when the step has none.
DpTraffic step_dp_traffic(const StepResult& step, const Plan& plan);

/// The checkpoint of `w` on `plan`'s networks (plan.networks set: its storage network; with
/// isolation: vlan, the compute NICs shared with `dp`). Pure.
CheckpointEstimate checkpoint_estimate(const Plan& plan, const WorkloadSpec& w,
                                       const DpTraffic& dp);

}  // namespace gf
