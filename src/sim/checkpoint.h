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
  /// converged only: one data-parallel all-reduce alone and while the checkpoint is written on
  /// the same NIC links, and the write's time while it shares them.
  double allreduce_alone_s = 0, allreduce_shared_s = 0, write_shared_s = 0;
  double allreduce_share = 1;  ///< fraction of its NIC bandwidth the all-reduce keeps
  double step_cost_s = 0;      ///< step time added while a checkpoint is being written
};

/// The DP all-reduce that competes with the checkpoint on the NICs: the bytes each NIC sends in
/// one (a ring moves 2(n-1)/n of the buffer), its time alone, and how much of it compute hides.
struct DpTraffic {
  double nic_bytes = 0;
  double alone_s = 0;
  double exposed_s = 0;
};

/// The closed-form DP traffic when no step was simulated: the gradients of one model replica
/// (params x dp_bytes_per_param / (tp x pp)), ring-reduced over dp ranks, at NIC line rate.
DpTraffic nominal_dp_traffic(const Plan& plan, const WorkloadSpec& w);

/// The DP traffic of a simulated step: its data-parallel gradient reduction (dp_allreduce or
/// dp_reduce_scatter_all_gather, each rank sending 2(n-1)/n of every buffer; ZeRO-3's
/// dp_reduce_scatter, (n-1)/n); nic_bytes 0 when the step has none.
DpTraffic step_dp_traffic(const StepResult& step, const Plan& plan);

/// The checkpoint of `w` on `plan`'s networks (plan.networks set: its storage network; with
/// isolation: vlan, the compute NICs shared with `dp`). Pure.
CheckpointEstimate checkpoint_estimate(const Plan& plan, const WorkloadSpec& w,
                                       const DpTraffic& dp);

}  // namespace gf
