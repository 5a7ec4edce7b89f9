// The memory one GPU needs to train: weights, gradients, optimizer states, the activations the
// pipeline schedule keeps in flight, and NCCL's buffers, against the GPU's HBM.
#pragma once

#include <string>
#include <vector>

#include "spec/pipeline.h"
#include "spec/spec.h"

namespace gf {

// Parameters one ZeRO-3 gather fetches: DeepSpeed's stage3_prefetch_bucket_size, 5e7 (public
// ZeRO-3 configurations set 50000000, e.g. a ds_config_zero3.json found by the search tool;
// the DeepSpeed documentation's default as recalled, not checked against DeepSpeed's source
// here; HF Transformers' "auto" sets 0.9 x hidden^2 instead, 1.4e8 at hidden 12288).
inline constexpr double kZero3BucketParams = 5e7;

/// What one GPU of one pipeline stage holds at its peak, in bytes.
struct StageMemory {
  int stage = 0;
  int layers = 0;
  double params_bytes = 0, gradients_bytes = 0, optimizer_bytes = 0;
  double activations_bytes = 0;  ///< every microbatch in flight at the schedule's peak
  double nccl_bytes = 0;
  /// ZeRO-3: the weights of the units gathered whole at once (the one computing and the one
  /// prefetched) and one unit's whole gradients before their reduce-scatter; 0 otherwise
  double gathered_bytes = 0;
  double in_flight_microbatches = 0;  ///< whole-stage microbatches whose activations are kept
  double total_bytes() const {
    return params_bytes + gradients_bytes + optimizer_bytes + activations_bytes + nccl_bytes +
           gathered_bytes;
  }
};

/// The per-GPU footprint of a training layout, stage by stage, and whether it fits.
struct StepMemory {
  std::vector<StageMemory> stages;
  int peak_stage = 0;                 ///< the stage that needs the most
  double hbm_bytes = 0;               ///< the GPU's memory
  double activation_layer_bytes = 0;  ///< one layer, one microbatch, as kept for the backward
  double bytes_per_param = 0;         ///< weights + gradients + optimizer, before sharding
  bool fits = true;
  const StageMemory& peak() const { return stages[peak_stage]; }
};

/// Bytes per parameter a checkpoint holds: the weights and the optimizer states (Megatron-LM's
/// distributed checkpoint saves both; gradients are not saved), e.g. 2 + 12 = 14 for bf16 Adam.
double checkpoint_bytes_per_param(Precision precision);

/// Bytes of one weight as the distributed optimizer's all-gather and ZeRO-3's gathers move it:
/// 16-bit (fp8 GEMMs keep bf16 weights) or fp32.
double weight_bytes(const WorkloadSpec& w);

/// How many times ZeRO-3 gathers the weights a microbatch: before each module's forward and
/// backward, and its recomputed forward under full recomputation (which re-runs the hooks).
double zero3_gather_passes(const WorkloadSpec& w);

/// Microbatches a step runs on each data-parallel rank: the global batch over micro_batch x dp,
/// at least one (one when the spec gives no global batch).
double microbatches_per_step(const WorkloadSpec& w);

/// Bytes a parameter of the gradients as the data-parallel ranks reduce them: in the type they
/// are reduced in (grad_reduce_precision).
double gradient_reduce_bytes(const WorkloadSpec& w);

/// Bytes a parameter the once-a-step data-parallel reduction of ZeRO-0 and -1 moves as one
/// all-reduce: the gradients (gradient_reduce_bytes); with ZeRO-1 (the distributed optimizer) a
/// reduce-scatter of them and an all-gather of the weights, each half a ring all-reduce, so the
/// all-reduce that stands for both moves the mean of the two. ZeRO-2 and -3 reduce-scatter every
/// microbatch instead, which no one all-reduce stands for.
double dp_bytes_per_param(const WorkloadSpec& w);

/// The ZeRO stage the data-parallel gradients run as. ZeRO-2 under a pipeline schedule (pp > 1
/// and more than one microbatch) runs as FSDP runs it there: torch.distributed.pipelining keeps
/// the gradients whole until the last microbatch's backward and reduces once (schedules.py:
/// gradient sync on the last backward only), ZeRO-1's memory and traffic; DeepSpeed's pipeline
/// refuses ZeRO-2 (runtime/pipe/engine.py). Llama 3 405B ran so: FSDP without resharding, pp 16
/// (arXiv 2407.21783 §3.3.2). Otherwise the spec's stage.
int dp_zero(const WorkloadSpec& w);

/// Why a layout does not fit, as step, sweep, jobs and the report say it: "pipeline stage 2
/// needs 94.3 GiB per GPU, the h100-sxm has 80.0 GiB" (stages from 1, as the text names them).
std::string memory_shortfall(const StepMemory& m, const std::string& gpu);

/// What makes a layout that does not fit fit, as every command that says so advises.
inline constexpr const char* kMemoryRemedy =
    "more tp, pp or ZeRO sharding, recomputation or a smaller micro_batch";

/// The memory of `w` split as `layout` says, `microbatches` per step, on a GPU of `hbm_bytes`.
/// `expert_params` is the part of model.params in MoE experts (sharded over ep).
StepMemory step_memory(const WorkloadSpec& w, const PipelineLayout& layout, double microbatches,
                       double expert_params, double hbm_bytes);

}  // namespace gf
