// Communication that runs at the same time. A training step's parallel dimensions do not take
// turns on the fabric: Megatron-LM issues them on different CUDA streams, and while the compute
// stream runs a layer's tensor-, context- and expert-parallel collectives, the pipeline's sends
// travel on theirs and, in the last microbatch's backward, the data-parallel gradient buckets on
// theirs. They share NIC, leaf and spine links. This models a step as a schedule of overlap
// windows (docs/step-overlap.md): per window the streams active in it and the bytes each moves;
// every window's flows run on the fabric with the exact max-min fluid model, each stream alone
// and all together, and a stream's communication is slowed by together / alone.
//
// It also holds what the step's and the jobs' concurrency share: flows tagged with the
// communication they belong to, per-tag completion, and the rule that slows a communication by a
// factor (what compute hid stays hidden). Pure: flows and figures in, figures out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/enum_names.h"
#include "plan/plan.h"
#include "sim/flow_model.h"
#include "sim/nccl_cost.h"
#include "topo/fabric.h"

namespace gf {

/// Flows of several communications on one fabric, each flow tagged with the one it belongs to.
struct TaggedFlows {
  FlowSet fs;
  std::vector<int> tag;  ///< per flow
  /// Appends flow f of `from` with its bytes times `scale`, tagged `t`.
  void copy(const FlowSet& from, int f, double scale, int t);
  /// Appends every flow of `from`, tags shifted by `tag_offset`.
  void append(const TaggedFlows& from, int tag_offset = 0);
};

/// A link of a scale-out network (NIC to the top tier), not NVLink or PCIe inside a server.
bool is_network_link(LinkClass c);

/// Whether flow f crosses at least one network link.
bool crosses_network(const Fabric& fabric, const FlowSet& fs, int f);

/// Per tag (0 .. tags - 1): the latest completion in `r` of the flows of `tf`, which are the
/// flows from `first` on of the set `r` solved (0 for a tag without flows).
std::vector<double> tag_completion(const TaggedFlows& tf, const FluidResult& r, int first,
                                   size_t tags);

/// A communication slowed by `factor` (1: untouched): its total time `factor` times longer; what
/// compute hid stays hidden (the window is the same compute), the longer rest is exposed.
struct SlowedComm {
  double total_s = 0, exposed_s = 0;
};
SlowedComm slow_comm(double total_s, double exposed_s, double factor);

/// The CUDA streams a Megatron-LM step's communication runs on.
enum class CommStream : uint8_t {
  /// TP, CP and EP collectives, in the order the layer's kernels need them; with the 1F1B
  /// schedule also the pipeline's sends, which it waits for between forwards and backwards
  kCompute,
  /// the interleaved schedule's pipeline sends and receives, overlapped with compute
  /// (p2p_communication.py: batch_isend_irecv, Megatron's overlap_p2p_comm)
  kPipeline,
  kGradients,    ///< data-parallel gradient buckets (param_and_grad_buffer.py)
  kParamGather,  ///< ZeRO-3 / FSDP parameter all-gathers, prefetched
};
inline constexpr EnumName<CommStream> kCommStreamNames[] = {
    {CommStream::kCompute, "compute"},
    {CommStream::kPipeline, "pipeline"},
    {CommStream::kGradients, "gradients"},
    {CommStream::kParamGather, "param_gather"},
};
const char* comm_stream_name(CommStream s);

/// The overlap windows of a step.
enum class OverlapWindowKind : uint8_t {
  /// One slot of 1F1B's steady state (and of warm-up and cool-down): a microbatch's forward and
  /// backward on the compute stream, its activation sent on and its gradient sent back.
  kPipelineSlot,
  /// The last microbatch's backward, when the gradient buckets reduce (overlap on).
  kGradientReduce,
};
inline constexpr EnumName<OverlapWindowKind> kOverlapWindowNames[] = {
    {OverlapWindowKind::kPipelineSlot, "pipeline_slot"},
    {OverlapWindowKind::kGradientReduce, "gradient_reduce"},
};
const char* overlap_window_name(OverlapWindowKind k);

/// One communication of the step as the windows see it.
struct ScheduledComm {
  std::string kind;  ///< StepComm::kind
  CommStream stream = CommStream::kCompute;
  Op op = Op::kAllReduce;
  std::vector<std::vector<int>> groups;  ///< fabric GPU ids (pairs {from, to} for kSendRecv)
  double bytes = 0;                      ///< per call (nccl-tests size)
  /// Calls in one occurrence of each window (indexed by OverlapWindowKind): what its flows
  /// carry there. The backward calls of a kSendRecv (`backward_calls`, part of `calls`) go the
  /// other way, from each pair's second GPU to its first.
  double calls[2] = {0, 0};
  double backward_calls[2] = {0, 0};
  /// Its calls over the whole step in each kind of window: the weights of the windows' factors.
  double step_calls[2] = {0, 0};
  /// Its calls over the step; those in no window (`count` less the step_calls) meet no other
  /// stream and keep their time (ZeRO-3's forward gathers, while no gradient is reduced).
  /// 0: the step_calls' sum.
  double count = 0;
};

/// One stream in one window.
struct WindowStream {
  CommStream stream = CommStream::kCompute;
  std::vector<std::string> kinds;  ///< its communications in the window
  double bytes = 0;                ///< payload per group moved in the window (nccl-tests sizes)
  bool network = false;            ///< some of its flows cross network links
  /// Fluid completion of its network flows alone and beside every other stream's; factor =
  /// max(1, together / alone).
  double alone_s = 0, together_s = 0, factor = 1;
};

/// One overlap window.
struct OverlapWindow {
  OverlapWindowKind kind = OverlapWindowKind::kPipelineSlot;
  std::vector<WindowStream> streams;
  bool shared = false;  ///< flows of two streams cross a common network link
};

/// Per communication: how much slower the other streams made it, and whose flows it met.
struct CommConcurrency {
  double factor = 1;                     ///< total time together / alone, over the step
  std::vector<std::string> shares_with;  ///< kinds of other streams on its links
};

/// The windows and what they did to each communication (indexed like the input).
struct StepConcurrency {
  std::vector<OverlapWindow> windows;
  std::vector<CommConcurrency> comms;
};

/// Runs every window of `comms` on the fabric: per window, each stream's flows (built as
/// GroupCollective builds them: group_flows) with the bytes of its calls there, only those that
/// cross network links; a stream alone and all streams together with the exact max-min fluid
/// model on `capacity`. In a window, a communication's factor is the completion of its flows
/// together over their completion with its own stream alone (1 where none of its network flows
/// shares a link with another stream's); over the step, the mean of its windows' factors
/// weighted by its calls in them (`step_calls`). Communications that meet nobody come out
/// exactly 1.
StepConcurrency step_concurrency(const Fabric& fabric, LoadBalancing lb,
                                 const std::vector<double>& capacity,
                                 const std::vector<ScheduledComm>& comms);

}  // namespace gf
