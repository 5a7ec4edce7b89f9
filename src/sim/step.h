// The training step: compute from model FLOPs, communication of every parallel dimension
// simulated on the fabric with all its groups at once, overlap as the framework does it, and
// what the step time means for time and cost to train.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "plan/plan.h"
#include "sim/compute.h"
#include "sim/goodput.h"
#include "sim/memory.h"
#include "sim/nccl_cost.h"
#include "sim/step_overlap.h"
#include "spec/pipeline.h"
#include "spec/spec.h"
#include "topo/fabric.h"

namespace gf {

/// One kind of communication in a step.
struct StepComm {
  std::string kind;    ///< tp_allreduce, cp_allgather, ep_alltoall, pp_sendrecv, dp_allreduce, ...
  double bytes = 0;    ///< per collective (nccl-tests size)
  double count = 0;    ///< collectives per step
  double total_s = 0;  ///< time if nothing overlapped
  double exposed_s = 0;  ///< on the critical path
  double busbw_gbs = 0;  ///< at `bytes`
  int group_size = 0;
  std::string bottleneck;
  int channels = 0;  ///< NCCL channels (thread blocks, SMs) one call runs on
  Op op = Op::kAllReduce;
  /// The groups it ran in, GPU ids in the fabric's numbering (ring order; pairs for sendrecv):
  /// what sim/jobs.h puts on the fabric beside other jobs' traffic.
  std::vector<std::vector<int>> groups;
  /// Its stream (sim/step_overlap.h) and how the other streams' traffic on the same links
  /// slowed it: every call `concurrency_factor` times longer in total_s (1: it met nobody, or
  /// the step ran without concurrency), exposed_s what its compute window still leaves of the
  /// longer calls; the times it had alone on the fabric; the kinds of the other streams whose
  /// network flows crossed its links.
  CommStream stream = CommStream::kCompute;
  double concurrency_factor = 1;
  double alone_total_s = 0, alone_exposed_s = 0;
  std::vector<std::string> shares_links_with;
};

/// A constraint of the spec checked against the step.
struct ConstraintCheck {
  std::string name;
  double limit = 0, value = 0;
  bool pass = true;
  bool given = false;  ///< the spec's constraints set the limit (else gpufabric's default)
};
/// A constraint as step and sweep name it: "max_comm_fraction: 0.369 (limit 0.3)", the limit
/// said to be the default where the spec set none.
std::string constraint_text(const ConstraintCheck& c);

/// One pipeline stage's compute per microbatch (the critical stage sets the pipeline's pace).
struct StageTime {
  int layers = 0;
  double load = 0;  ///< work in transformer layers: its layers plus the output layer's share
  double forward_s = 0, backward_s = 0;
};

/// What one step costs and what it implies.
/// A layout needing more than this share of the GPU's memory gets a note: what the memory model
/// leaves out (the CUDA context, library workspaces, the allocator's fragmentation, the few
/// hundred MiB a GPU does not expose) takes a few GiB in practice.
constexpr double kMemoryTightShare = 0.95;

struct StepResult {
  long long gpus = 0;
  double microbatches = 0;
  double model_flops = 0, hardware_flops = 0;  ///< per step, all GPUs
  double compute_efficiency = 0;
  double compute_s = 0;       ///< the critical stage's compute, without the pipeline bubble
  double mean_compute_s = 0;  ///< compute averaged over the stages (what the GPUs do usefully)
  double bubble_s = 0;
  double exposed_comm_s = 0;
  /// Compute slowed by the SMs overlapped collectives take (in step_time_s).
  double overlap_slowdown_s = 0;
  double step_time_s = 0;
  double comm_fraction = 0;
  double tflops_per_gpu = 0;  ///< hardware FLOPs (recomputation counted, as Megatron reports)
  /// Model and hardware FLOPs utilisation; unknown (nullopt) without the model's FLOPs (compute
  /// time given, no layers, hidden and seq_len) or the GPU's peak at the precision.
  std::optional<double> mfu, hfu;
  double gpu_utilization = 0;
  double tokens_per_step = 0, tokens_per_s = 0;
  double steps = 0, time_to_train_s = 0, cost_to_train_usd = 0, gpu_hour_usd = 0;
  PipelineLayout pipeline;
  int virtual_pipeline = 1;       ///< model chunks per pipeline rank (interleaved schedule)
  std::vector<StageTime> stages;  ///< one per pipeline rank
  int critical_stage = 0;         ///< the slowest stage
  /// One layer's microbatch kernel by kernel (sim/compute.h); zero when computed from FLOPs.
  LayerTime kernels;
  double optimizer_s = 0;  ///< the optimizer step, once a step (in compute_s)
  StepMemory memory;
  std::vector<StepComm> comms;
  std::vector<ConstraintCheck> constraints;
  std::vector<std::string> notes;
  /// With slow nodes: the node whose stage paces the slowest pipeline (-1: none slower), that
  /// stage, its speed, and the compute (bubble included) the step gains by waiting for it.
  int straggler_node = -1, straggler_stage = -1;
  double straggler_speed = 1, straggler_s = 0;
  /// Interruptions, checkpoint/restart and the goodput over the training run (goodput.h).
  Goodput goodput;
  /// Whether the parallel dimensions' traffic ran together in overlap windows
  /// (StepOptions::concurrency), the windows, and the step time their sharing added (exposed
  /// communication, and the SMs longer hidden calls hold: in exposed_comm_s and
  /// overlap_slowdown_s).
  bool concurrency = true;
  std::vector<OverlapWindow> overlap_windows;
  double concurrency_s = 0;
};

/// How to simulate a step.
struct StepOptions {
  /// Run each window's streams together on the fabric (sim/step_overlap.h); false: every kind
  /// of communication alone, as if the others were not there (step --no-concurrency).
  bool concurrency = true;
};

/// Simulates one training step of the spec's workload on the plan's fabric. `node_speed`: per
/// node, the speed its GPUs compute at (1: nominal; empty: all nominal). The step is
/// synchronous: tensor, context and expert parallel ranks of a stage work in lockstep, so a
/// stage runs at its slowest rank's speed; a pipeline runs at its slowest stage's pace, and data
/// parallelism waits for the slowest pipeline at the gradient reduction.
/// `gpu_of_rank`: the fabric GPU each rank of the job runs on (empty: rank r on GPU r); a job
/// placed on part of the fabric (sim/jobs.h) passes its own, with `plan` giving its size.
Result<StepResult> simulate_step(const Spec& spec, const Plan& plan, const Fabric& fabric,
                                 const std::vector<double>& node_speed = {},
                                 const std::vector<int>& gpu_of_rank = {},
                                 const StepOptions& options = {});

/// A what-if of the same step: a label and its result.
struct StepScenario {
  std::string label;
  StepResult result;
};

/// The guide's "do we need 800G?": the step with NIC rate x0.5 and x2 and with 2:1
/// oversubscription (re-planned).
Result<std::vector<StepScenario>> step_sensitivity(const Spec& spec, const Catalog& catalog,
                                                   const Plan& plan,
                                                   const StepOptions& options = {});

/// The fabric of `plan` with every network link (NIC to top tier) `factor` times as fast.
Plan with_nic_rate(const Plan& plan, double factor);

}  // namespace gf
