// Collectives as NCCL builds them, run on the fabric graph: which flows each algorithm puts on
// which links, how long they take when they share the links max-min fairly, and the latency
// NCCL's own cost model charges. Pure: a fabric and options in, a model out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/diag.h"
#include "plan/plan.h"
#include "sim/flow_model.h"
#include "sim/link_load.h"
#include "sim/nccl_constants.h"
#include "sim/nccl_cost.h"
#include "topo/fabric.h"

namespace gf {

/// NCCL's table row for the GPU (its tuning tables are per generation), by its scale-up
/// interconnect: NVLink 3 Ampere, 4 Hopper, 5 Blackwell; Infinity Fabric takes Hopper's row.
GpuGeneration generation_of(const GpuModel& gpu);

/// What to simulate.
struct SimOptions {
  Op op = Op::kAllReduce;
  std::optional<Algorithm> algorithm;           ///< nullopt: choose as NCCL would
  std::optional<Protocol> protocol;             ///< nullopt: choose as NCCL would
  int nodes = 0;                                ///< first N nodes of the fabric; 0 = all
  std::optional<LoadBalancing> load_balancing;  ///< nullopt: the plan's
  std::optional<NcclRelease> nccl;              ///< nullopt: the plan's (cluster.nccl)
  uint64_t seed = 1;                            ///< ECMP hash seed
  /// The cluster's measured factors (spec calibration:); nullopt: the plan's. calibrate --fit
  /// sets it to try each candidate on one plan.
  std::optional<CalibrationProfile> calibration;
  /// Memory the flows of one algorithm may take, bytes (0: no limit); beyond it build returns
  /// an error with the figure instead of exhausting the machine.
  size_t memory_budget_bytes = 0;
  /// Keep the traffic per link of this algorithm's flows (link_load()); the other algorithms
  /// are then not modelled (collective_traffic() builds such a model beside the full one).
  std::optional<Algorithm> link_load_of;
  /// GPUs one host thread drives (nccl-tests -g): back-to-back calls are then at least this
  /// many host issues apart (nccl::kHostIssueUsPerGpu).
  int gpus_per_thread = 1;
  /// Calls timed back to back, as nccl-tests -n: a broadcast or reduce on one channel pipelines
  /// across them (back_to_back_chain); 1 times one call alone.
  int iters = nccl::kNcclTestsIters;
  /// NCCL_NVLS_ENABLE: false takes NVLS and NVLS Tree out of NCCL's choice (and refuses them).
  bool nvls_enable = true;
  /// NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS: the communicator's channels for rings and trees
  /// (and so its point-to-point channels) at least / at most this many; 0: NCCL's own.
  int min_channels = 0;
  int max_channels = 0;
  /// NCCL_BUFFSIZE: the Simple protocol's buffer a connection, bytes (0: NCCL's 4 MiB); a step
  /// is an eighth of it (CostShape::simple_buffer_bytes).
  double buffsize_bytes = 0;
  /// Keep every algorithm's flows in the model, so that CollectiveModel::relink can solve them
  /// again under other link efficiencies without routing them again (calibrate --fit tries
  /// many). The model then holds all of them at once: up to one flow budget an algorithm.
  bool keep_flows = false;
  /// With keep_flows: the memory the kept flows may take, bytes (0: no limit). Once they would
  /// pass it the model keeps none (forget_flows) and builds on as without keep_flows, so that a
  /// build never holds more than this and the one flow set it is solving.
  size_t kept_flows_budget_bytes = 0;
};

/// The bandwidth side of one algorithm on this fabric: seconds per byte with Simple, and why.
struct AlgorithmModel {
  Algorithm algorithm = Algorithm::kRing;
  bool available = false;
  std::string unavailable_reason;
  double seconds_per_byte = 0;  ///< Simple protocol, payload bytes (nccl-tests "size")
  /// CollNet, and NVLS over it: the NICs' path to the in-network reduction alone (0: none).
  double network_seconds_per_byte = 0;
  /// CollNet all_reduce (Direct and Chain): its NVLink part alone (0: not solved).
  double intra_seconds_per_byte = 0;
  double net_hop_latency_us = 0;      ///< fabric latency of one node-to-node hop
  std::string bottleneck;             ///< link class that paced the slowest flow
  double bottleneck_utilization = 0;  ///< mean load/capacity of that class's busy links
  /// The slowest flow was paced by a scale-out link (PCIe to the NIC, the NIC, the switches):
  /// a network message's own time (CalibrationProfile::network_message_us) lengthens the call.
  bool network_paced = false;
  /// collision_factor (flow_builder.h): 1 = spread evenly; 0 = no switch-to-switch traffic.
  double ecmp_collision = 0;
  int flows = 0;
  int unroutable = 0;  ///< flows with no surviving path (failed links)
};

/// One message size's result, as nccl-tests reports it plus the explanation.
struct SizeResult {
  double bytes = 0;
  double time_us = 0, algbw_gbs = 0, busbw_gbs = 0;
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  double latency_us = 0;  ///< the fixed part of time_us
  std::string bottleneck;
  double bottleneck_utilization = 0;
  double ecmp_collision = 0;  ///< as AlgorithmModel::ecmp_collision (0: no switch traffic)
  /// What the time model finds faster than NCCL's pick by more than kFasterChoiceShare (NCCL's
  /// tuner chooses by its own estimate; NCCL_ALGO / NCCL_PROTO would force it): only where
  /// neither was forced. `faster_time_us` 0: none.
  Algorithm faster_algorithm = Algorithm::kRing;
  Protocol faster_protocol = Protocol::kSimple;
  double faster_time_us = 0;
  /// Where the calls timed back to back pipeline down the chain (back_to_back_chain): one call
  /// alone, us (nccl-tests -n 1); 0 where they do not.
  double alone_us = 0;
  /// The channels the call runs on and the threads a channel moves data with, as NCCL's enqueue
  /// gives them at this size (PipelineRun; threads 0 where not modelled): add_call_shape.
  int channels = 0, threads = 0;
};
/// How much faster another (algorithm, protocol) must be to be reported: 20 %, above the time
/// model's own error at mid sizes (median 7.2 % on the test set from 1 to 16 MiB, `calibrate`),
/// so that what is reported is the model's finding rather than its noise.
inline constexpr double kFasterChoiceShare = 0.20;

/// A collective on a fabric, simulated once per algorithm; sizes are then cheap.
class CollectiveModel {
 public:
  static Result<CollectiveModel> build(const Fabric& fabric, const Plan& plan,
                                       const SimOptions& options);
  SizeResult at(double bytes) const;
  /// Fills `r`'s faster choice (SizeResult::faster_*), for a row at() gave: apart from at(),
  /// which the fit, the sweep and the step call on every size, since only reports show it.
  void add_faster_choice(SizeResult& r) const;
  /// Fills `r`'s channels and threads (SizeResult::channels, threads), for a row at() gave:
  /// apart from at() for the same reason, only reports show them.
  void add_call_shape(SizeResult& r) const;
  /// Time of one (algorithm, protocol) at a size; infinity when not available.
  double time_us(Algorithm a, Protocol p, double bytes) const;
  /// Time of `a` at a size with the protocol NCCL's tuner picks for it (as NCCL_ALGO forced
  /// alone runs it); infinity when not available.
  double time_us(Algorithm a, double bytes) const;
  long long ranks() const { return ranks_; }
  int nodes() const { return nodes_; }
  int domains() const { return domains_; }
  Op op() const { return op_; }
  NcclRelease nccl() const { return nccl_; }                ///< whose tuner terms the costs use
  int gpus_per_thread() const { return gpus_per_thread_; }  ///< nccl-tests -g
  int iters() const { return iters_; }                      ///< nccl-tests -n
  uint64_t seed() const { return seed_; }                   ///< SimOptions::seed
  /// The communicator's channels (comm->nChannels): its rings', CollNet's and p2p's count.
  int comm_channels() const { return ring_channels_; }
  const std::vector<AlgorithmModel>& algorithms() const { return models_; }
  /// NCCL's topology search graph that its tuner reads for `a` (ring: ring_search_graph; NVLS
  /// Tree: nvls_search_graph), not known for the others or where gpufabric does not know it.
  SearchGraph search_graph(Algorithm a) const;
  LoadBalancing load_balancing() const { return load_balancing_; }
  /// The traffic per link of SimOptions::link_load_of; nullptr when none was kept.
  const LinkLoad* link_load() const { return link_load_ ? &*link_load_ : nullptr; }
  /// The calibration profile the costs use (SimOptions::calibration, else the plan's).
  const CalibrationProfile& calibration() const { return profile_; }
  /// Takes `p`'s algorithm factors, network step latency and network message time without
  /// simulating the flows again
  /// (calibrate --fit tries many); the link efficiencies stay those the model was built with.
  void recalibrate(const CalibrationProfile& p);
  /// Takes all of `p`, its link efficiencies too: the kept flows (SimOptions::keep_flows) are
  /// solved again on the links' new capacities without being routed again (their routes do not
  /// depend on the links' rates), so the model is the one `build` would give with
  /// `calibration = p` on the same fabric. False, and nothing changed, without kept flows.
  bool relink(const Fabric& fabric, const CalibrationProfile& p);
  /// Memory the kept flows take, bytes (0 without SimOptions::keep_flows).
  size_t kept_flow_bytes() const;
  /// Frees the kept flows: relink then returns false.
  void forget_flows();

 private:
  /// The communicator `a` runs on, for NCCL's cost terms (nccl_cost.h).
  CostShape shape(Algorithm a) const;
  /// The bandwidth side of `a`, nullptr when it was not modelled or is not available.
  const AlgorithmModel* available(Algorithm a) const;
  Op op_ = Op::kAllReduce;
  long long ranks_ = 0;
  int nodes_ = 0, domains_ = 0, domain_gpus_ = 0;
  int ring_channels_ = 16, tree_channels_ = 16;
  int domain_p2p_channels_ = 0;  ///< NCCL's p2p channels inside one domain (CostShape)
  int ring_graph_channels_ = 8, tree_graph_channels_ = 8;  ///< the search graph's (tuner caps)
  int collnet_nics_ = 0;  ///< NICs a node (CostShape::collnet_nics)
  double nic_path_GBps_ = 0;  ///< a GPU's path to its NIC as NCCL rates it (CostShape)
  int nvlinks_ = 0;           ///< a GPU's NVLinks to its switches (CostShape)
  double simple_buffer_bytes_ = 0;  ///< NCCL_BUFFSIZE (SimOptions::buffsize_bytes; CostShape)
  bool host_grace_ = false;         ///< the GPUs' host is Grace (CostShape)
  bool host_amd_ = false;           ///< the GPUs' hosts are AMD x86 (CostShape)
  bool nvlink_across_trays_ = false;  ///< the NVLink domain spans nodes (CostShape)
  bool scaleup_pcie_ = false;         ///< the GPUs of a domain meet over PCIe (CostShape)
  bool nic_via_cpu_c2c_ = false;  ///< the NIC hangs off the CPU across C2C (CostShape)
  bool ring_same_channels_ = false;  ///< CostShape::ring_same_channels
  NcclRelease nccl_ = kNewestNccl;
  GpuGeneration generation_ = GpuGeneration::kHopper;
  std::optional<Algorithm> forced_algorithm_;
  std::optional<Protocol> forced_protocol_;
  double host_issue_us_ = 0;  ///< the floor of a back-to-back call: the host's issue time
  int p2p_local_nics_ = 0;    ///< NICs local to a GPU (CostShape::p2p_local_nics)
  double p2p_nic_GBps_ = 0;
  int gpus_per_thread_ = 1;
  int iters_ = 1;  ///< SimOptions::iters
  uint64_t seed_ = 1;
  std::vector<AlgorithmModel> models_;
  LoadBalancing load_balancing_ = LoadBalancing::kEcmp;
  std::optional<LinkLoad> link_load_;
  CalibrationProfile profile_;
  /// SimOptions::keep_flows: what each solved model's rates came from.
  struct KeptModel {
    size_t model = 0;            ///< index in models_
    std::vector<FlowSet> steps;  ///< its flows; PAT's one set a step, whose times add up
    double payload = 0;          ///< payload bytes the flows carry
    double scale_up_share = 1;   ///< NVLS's efficiency on the scale-up links' capacity
    bool pat = false;            ///< PAT: the last step names the bottleneck, no network pacing
    int network_alone = -1;      ///< index in kept_alone_ of CollNet's NIC path alone, or -1
    int intra_alone = -1;        ///< index in kept_alone_ of CollNet's NVLink part alone, or -1
    int copy_of = -1;            ///< CollNet Chain: Direct's solution (models_ index), or -1
    bool in_network = false;     ///< its all_reduce goes through the in-network reduction
  };
  bool keeps_flows_ = false;
  std::vector<KeptModel> kept_;
  std::vector<FlowSet> kept_alone_;
};

/// One collective's traffic per link: the algorithm NCCL picks at a size (as `model`, built with
/// the same options, chose it) with its flows' load on every link, and the collective's time.
struct CollectiveTraffic {
  /// What the traffic is where it is not one collective at one size (a replayed step's calls):
  /// named in its place; empty for a collective (op, bytes, at).
  std::string label;
  Op op = Op::kAllReduce;
  double bytes = 0;    ///< nccl-tests size
  double seconds = 0;  ///< the collective's time at that size (latency included)
  SizeResult at;
  LinkLoad load;
};

/// Builds the flows of the algorithm `model` picks at `bytes` again, keeping their traffic per
/// link (one more algorithm simulated; the memory of one LinkLoad).
Result<CollectiveTraffic> collective_traffic(const Fabric& fabric, const Plan& plan,
                                             const SimOptions& options,
                                             const CollectiveModel& model, double bytes);

/// What group_flows built: the channels of a ring across domains (0: none), the most scale-up
/// domains one group spans, flows with no surviving path, the mean sampled hop latency.
struct GroupFlows {
  int channels = 0, domains = 1, unroutable = 0;
  double hop_latency_us = 0;
};

/// The flows GroupCollective::build runs for `groups` (GPU ids in ring order; pairs for
/// kSendRecv), `payload` bytes of nccl-tests size in each group, appended to `fs`: rings over
/// NCCL's channels, alltoall as every pair, sendrecv as one flow. Groups inside one scale-up
/// domain are built for the first such domain only. `seed` mixes into every connection's ECMP
/// hash (as its QP numbers and addresses would): another job's connections hash apart.
GroupFlows group_flows(const Fabric& fabric, LoadBalancing lb, Op op,
                       const std::vector<std::vector<int>>& groups, double payload, FlowSet& fs,
                       uint64_t seed = 1);

/// A collective run by many groups of GPUs at once (every DP group, every TP group, ...), as a
/// training step runs them: the groups share the fabric, so their flows contend.
class GroupCollective {
 public:
  /// `groups` lists GPU ids (Fabric numbering) in ring order. For kSendRecv each group is a
  /// pair {from, to}. Groups that lie inside one scale-up domain are simulated for the first
  /// such domain only (they are alike and do not meet on shared links). With `keep`, the flows'
  /// traffic per link is added to it (for kPayload bytes of payload, flow_builder.h).
  /// `comm_ranks`: the NCCL communicator's ranks where they outnumber a group's (a pipeline's
  /// sends run on its whole group's communicator, whose size sets each send's channels:
  /// domain_p2p_split, p2p_op_channels); 0: the group's.
  static Result<GroupCollective> build(const Fabric& fabric, const Plan& plan, Op op,
                                       const std::vector<std::vector<int>>& groups,
                                       std::optional<LoadBalancing> load_balancing = {},
                                       LinkLoad* keep = nullptr, int comm_ranks = 0);
  /// Seconds for one collective of `bytes` (nccl-tests size) in every group, the best
  /// protocol chosen.
  double seconds(double bytes) const;
  /// Bus bandwidth at a size, GB/s.
  double busbw_gbs(double bytes) const;
  /// The channels NCCL runs one call of `bytes` on: one thread block, so one SM, each
  /// (enqueue.cc@v2.29.7-1:1682, the kernel's grid is the channel count).
  int channels(double bytes) const;
  int group_size() const { return size_; }
  const std::string& bottleneck() const { return bottleneck_; }

 private:
  Op op_ = Op::kAllReduce;
  int size_ = 0, domains_ = 1;
  int comm_ranks_ = 0;  ///< the communicator's ranks where more than size_ (build)
  double seconds_per_byte_ = 0;
  double hop_latency_us_ = 0;
  int channels_ = 16;  // of its ring across domains (caps are per channel); 16 inside one
  int p2p_local_nics_ = 0;
  double p2p_nic_GBps_ = 0;
  bool ring_same_channels_ = false;
  bool nic_via_cpu_c2c_ = false;  ///< the NIC hangs off the CPU across C2C (CostShape)
  bool host_grace_ = false;       ///< the GPUs' host is Grace (CostShape)
  bool host_amd_ = false;         ///< the GPUs' hosts are AMD x86 (CostShape)
  bool nvlink_across_trays_ = false;  ///< the NVLink domain spans nodes (CostShape)
  bool scaleup_pcie_ = false;         ///< the GPUs of a domain meet over PCIe (CostShape)
  NcclRelease nccl_ = kNewestNccl;
  GpuGeneration generation_ = GpuGeneration::kHopper;
  std::string bottleneck_;
  bool network_paced_ = false;  ///< as AlgorithmModel::network_paced
  CalibrationProfile profile_;  ///< the plan's
  Algorithm algorithm() const;
  CostShape cost_shape() const;
};

/// The most sizes one sweep simulates (nccl-tests -b 8 -e 8G -f 2 is 31).
constexpr int kMaxSweepSizes = 200;

/// nccl-tests sizes: from `min_bytes` to `max_bytes`, multiplying by `factor`.
std::vector<double> size_sweep(double min_bytes, double max_bytes, double factor);

/// The message size reports and sweeps quote busbw at: the guide's nccl-tests range starts at
/// 1 GiB (§5.2), where busbw reflects the fabric rather than latency.
constexpr double kQuotedBytes = 1024.0 * 1024 * 1024;

}  // namespace gf
