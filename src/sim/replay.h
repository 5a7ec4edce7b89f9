// Replay of a recorded training step on a planned fabric. A trace (PyTorch profiler, NCCL_DEBUG
// log; read in verify/trace_readers) is rebuilt as a dependency graph: every GPU kernel waits
// for the one before it on its stream, and, where its stream stood idle, for the kernel on
// another stream that ended just before it started (an event wait) or else for the host (a gap
// kept as recorded). The process groups are mapped onto the fabric's GPUs, every collective is
// simulated there with the collective simulator (GroupCollective: all the parallel groups of
// that kind at once, so that they contend), the compute keeps its recorded durations, and the
// graph is scheduled again. Pure: traces and a fabric in, times out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "plan/plan.h"
#include "sim/link_load.h"
#include "sim/nccl_cost.h"
#include "spec/spec.h"
#include "topo/fabric.h"

namespace gf {

/// A process group (a communicator) as a trace names it.
struct TracedGroup {
  std::string name;        ///< PyTorch's process group name ("0", "3"), or NCCL's commId
  std::string desc;        ///< PyTorch's description ("default_pg", "DATA_PARALLEL_GROUP"), if any
  int size = 0;            ///< ranks in the group
  std::vector<int> ranks;  ///< its global ranks in order; empty when the trace does not say
};

/// One collective call as the trace recorded it.
struct TracedCollective {
  std::string name;      ///< as recorded: "allreduce", "_allgather_base", "AllReduce", ...
  std::optional<Op> op;  ///< nullopt: an operation the simulator does not model (kept as recorded)
  double bytes = 0;      ///< nccl-tests size (all_gather, reduce_scatter, alltoall: total)
  int group = -1;        ///< index into TracedRank::groups; -1 unknown
  int line = 0;          ///< the file's line that records it (NCCL logs); 0 unknown
};

/// One GPU activity on a stream: a compute kernel (or copy), or a collective's kernel.
struct TracedKernel {
  double start_us = 0, dur_us = 0;
  int32_t stream = 0;       ///< the trace's stream (Kineto: tid of the GPU row; NCCL: the call's)
  int32_t collective = -1;  ///< index into TracedRank::collectives; -1 = compute
};

/// A step window: ProfilerStep#N as the trace marks it.
struct TracedStep {
  std::string name;  ///< "ProfilerStep#12"
  double start_us = 0, end_us = 0;
};

/// What one file says about one rank.
struct TracedRank {
  std::string file;
  std::string format;  ///< "kineto" or "nccl-log" and the release it matched, for the report
  int rank = -1;       ///< global rank; -1 unknown
  int world = 0;       ///< world size, if the file says (distributedInfo, the largest comm)
  std::string host;    ///< NCCL logs: the host, for the rank-to-node map
  int cuda_dev = -1;   ///< NCCL logs: the local GPU (cudaDev of ncclCommInitRank)
  bool timed = true;   ///< false for NCCL logs: no durations, only the calls in order
  std::vector<TracedGroup> groups;
  std::vector<TracedCollective> collectives;
  std::vector<TracedKernel> kernels;  ///< in start order
  std::vector<TracedStep> steps;      ///< in time order; empty: the whole trace is one step
  std::vector<std::string> notes;     ///< what the reader could not use, once per kind
};

/// The parallel layout, when the user gives it (0: infer from the groups).
struct ReplayLayout {
  int tp = 0, pp = 0, dp = 0;
};

struct ReplayOptions {
  ReplayLayout layout;
  std::optional<std::string> step;              ///< "ProfilerStep#12"; default: the last complete
  std::optional<LoadBalancing> load_balancing;  ///< nullopt: the plan's
  bool links = false;                           ///< keep the step's traffic per link
  /// The fabric GPU each rank of the job runs on (rank r: gpu_of_rank[r]); empty: rank r on GPU
  /// r, as torchrun and mpirun number a job that fills the fabric from its first node. A job
  /// placed on part of the fabric (sim/jobs.h) passes its own; its size bounds the world.
  std::vector<int> gpu_of_rank;
};

/// How a traced group landed on the fabric.
struct GroupMapping {
  std::string name, desc;
  int size = 0;
  int first_rank = 0, stride = 1;  ///< the group's ranks: first, first+stride, ...
  int siblings = 1;                ///< groups of this kind that run at once (simulated together)
  std::string role;                ///< tp, pp, dp, world, or "group"
  std::string source;              ///< "trace ranks", "--tp/--pp/--dp", "inferred from size"
};

/// One kind of collective of one group: its calls summed over the step.
struct CollectiveBreakdown {
  std::string group, op;  ///< group name, operation (all_reduce, ... or the recorded name)
  int calls = 0;
  double bytes = 0;  ///< summed nccl-tests size
  double recorded_s = 0, simulated_s = 0;
  double recorded_exposed_s = 0, predicted_exposed_s = 0;  ///< not hidden behind compute
  bool simulated = true;  ///< false: kept as recorded (an operation the simulator lacks)
  double busbw_gbs = 0;   ///< simulated, at the calls' mean size
  /// The fabric GPUs of every group of this kind that ran the calls at once (pairs for
  /// sendrecv: a pipeline's neighbours); empty when kept as recorded. The step's traffic is
  /// `bytes` over each of them (sim/jobs.h runs it beside other jobs').
  std::vector<std::vector<int>> gpu_groups;
};

/// One schedule of the step: its time and how it splits.
struct StepTimes {
  double step_s = 0;
  double compute_s = 0;       ///< union of compute kernels' busy time (the critical rank)
  double exposed_comm_s = 0;  ///< collectives' time not overlapped by compute
  double other_s = 0;         ///< neither: host gaps, launch latency
};

struct ReplayResult {
  int world = 0;         ///< ranks of the job
  int traced_ranks = 0;  ///< how many ranks' traces were given
  std::string step;      ///< the replayed window's name ("" : the whole trace)
  long long kernels = 0, collectives = 0;
  bool timed = true;    ///< the traces carry durations (false: NCCL logs only)
  StepTimes recorded;   ///< as the trace has it (timed only)
  StepTimes predicted;  ///< collectives simulated on this fabric, compute as recorded
  std::vector<GroupMapping> groups;
  std::vector<CollectiveBreakdown> breakdown;
  std::vector<std::string> notes;
  std::optional<LinkLoad> load;  ///< with ReplayOptions::links: bytes per link over the step
};

/// Replays `ranks` (one or more ranks' traces of the same job) on `fabric`. Errors: traces that
/// disagree (different worlds, a group's calls that do not match), a world larger than the
/// fabric, a layout that does not fit the groups.
Result<ReplayResult> replay_step(const std::vector<TracedRank>& ranks, const Plan& plan,
                                 const Fabric& fabric, const ReplayOptions& options);

/// The step replayed on one of the spec's alternatives: the same spec re-planned with one key
/// changed (replay's --oversubscription), beside the planned fabric's.
struct ReplayAlternative {
  std::string label;    ///< "2:1 oversubscription"
  std::string kind;     ///< "oversubscription"
  double asked = 0;     ///< the value asked for (R of R:1)
  double built = 0;     ///< what the re-planned fabric has (leaf down:up ports as built)
  std::string fabric;   ///< the re-planned fabric in words (fabric_shape)
  ReplayResult result;  ///< the replay there
};

/// A plan's fabric in a few words for a row of alternatives: "clos2, 16 leaves, 8 spines, 1.00:1
/// as built" (leaves and spines per plane).
std::string fabric_shape(const Plan& plan);

/// The spec re-planned at `ratio`:1 leaf oversubscription with the plan's switch, technology and
/// topology (chosen again when that topology cannot be built at the ratio: step_sensitivity
/// re-plans its 2:1 so), and `ranks` replayed on it with `options`. Pure.
Result<ReplayAlternative> replay_at_oversubscription(const std::vector<TracedRank>& ranks,
                                                     const Spec& spec, const Catalog& catalog,
                                                     const Plan& plan, double ratio,
                                                     const ReplayOptions& options);

/// The global ranks of a group given as PyTorch prints them, possibly cut short (Kineto keeps
/// the first entries of a long list and ends it with "..."): the first `known` ranks, extended by
/// their stride to `size`. Empty when fewer than two are known and size > 1.
std::vector<int> complete_ranks(const std::vector<int>& known, int size);

/// Bytes of one element of a PyTorch dtype as c10::toString writes it ("BFloat16", "Float",
/// ...); 0 when unknown.
double torch_dtype_bytes(const std::string& dtype);

/// The simulator's operation for a collective's recorded name: PyTorch's c10d names
/// ("allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced", "all_to_allv", "send"),
/// NCCL's ("AllReduce", "AlltoAll", "Send") and kernel names ("ncclDevKernel_AllGather_RING_LL").
std::optional<Op> collective_op(const std::string& name);

}  // namespace gf
