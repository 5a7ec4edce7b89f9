#include "sim/collective.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "common/file.h"
#include "sim/flow_builder.h"
#include "sim/flow_model.h"
#include "sim/nccl_constants.h"

namespace gf {

// NCCL's table row for the GPU, by its architecture (the catalog's `arch`, else its NVLink:
// 3 is Ampere, 4 Hopper, 5 Blackwell). AMD's Infinity Fabric GPUs run RCCL, whose tables are
// NCCL's; Hopper's row stands for them (an approximation).
GpuGeneration generation_of(const GpuModel& gpu) {
  switch (gpu.arch) {
    case GpuArch::kAmpere:
      return GpuGeneration::kAmpere;
    case GpuArch::kBlackwell:
      return GpuGeneration::kBlackwell;
    case GpuArch::kHopper:
      break;
  }
  return GpuGeneration::kHopper;
}

namespace {

// Why an algorithm has no path after failures: its in-network reduction's tree (a plane's SHARP
// tree no longer reaching every rank's NIC) or the ranks themselves cut apart.
std::string no_path_reason(bool in_network) {
  return in_network ? "no path: failed parts leave its SHARP reduction tree short of some ranks' "
                      "NICs"
                    : "no path: failed links cut the ranks apart";
}

// The share by which NCCL's point-to-point channels must fall short of the links' rate to be
// named the bottleneck (below it the two are the same within the flows' rounding).
constexpr double kChannelBoundShare = 0.05;

using Hop = FlowSet::Hop;

// A calibration profile's algorithm factors are indexed as Algorithm is numbered.
constexpr bool profile_algorithms_match() {
  if (std::size(kAlgorithmNames) != kProfileAlgorithms) return false;
  for (int i = 0; i < kProfileAlgorithms; ++i)
    if (static_cast<int>(kAlgorithmNames[i].value) != i ||
        std::string_view(kAlgorithmNames[i].name) != kProfileAlgorithmNames[i])
      return false;
  return true;
}
static_assert(profile_algorithms_match(), "spec/calibration_profile.h lists sim's algorithms");

// The NICs local to one GPU and one NIC's rate, as NCCL's p2p channel count reads them
// (getLocalNetCountByBw, topo.cc@v2.29.7-1:1626-1652): a GPU's own NICs, or the one it shares.
void p2p_nics_of(const Plan& plan, int& nics, double& GBps) {
  if (plan.nics_per_node <= 0 || plan.gpus_per_node <= 0 || plan.nic.rate_gbps <= 0) return;
  nics = std::max(1, plan.nics_per_node / plan.gpus_per_node);
  GBps = plan.nic.rate_gbps / 8;
}

// One NVLink's rate each way, GB/s: NVLink 3 and 4 run 50 GB/s a link both ways together (A100:
// 12 links, 600 GB/s; H100: 18, 900 GB/s), NVLink 5 twice that (B200: 18, 1,800 GB/s): NVIDIA's
// A100, H100 and Blackwell datasheets.
constexpr double kNvlink34LinkGBs = 25.0;
constexpr double kNvlink5LinkGBs = 50.0;

// A GPU's NVLinks to its switches, from its catalog rate each way (CostShape::nvlinks; 0 for
// Infinity Fabric).
int nvlinks_of(const GpuModel& gpu) {
  double link = 0;
  switch (gpu.scaleup_tech) {
    case ScaleUpTech::kNvlink3:
    case ScaleUpTech::kNvlink4:
      link = kNvlink34LinkGBs;
      break;
    case ScaleUpTech::kNvlink5:
      link = kNvlink5LinkGBs;
      break;
    case ScaleUpTech::kInfinityFabric:
    case ScaleUpTech::kPcie:
      return 0;
  }
  return gpu.scaleup_gbs_per_gpu > 0 ? static_cast<int>(std::lround(gpu.scaleup_gbs_per_gpu / link))
                                     : 0;
}

// The plan's GPUs sit on Grace hosts (CostShape::host_grace).
bool host_grace(const Plan& plan) { return plan.gpu.host_cpu == HostCpu::kGrace; }

// The plan's NVLink domain spans several nodes' trays (NVL72: 72 GPUs, 4 a tray), so its paths
// cross the rack's switch trays (CostShape::nvlink_across_trays).
bool nvlink_across_trays(const Plan& plan) {
  return plan.gpu.scaleup_domain_gpus > plan.gpu.gpus_per_node;
}

// The plan's NICs hang off the CPU its GPUs reach over NVLink-C2C (CostShape::nic_via_cpu_c2c).
bool nic_via_cpu_c2c(const Plan& plan) {
  return plan.nic.rate_gbps > 0 && plan.gpu.nic_attach == NicAttach::kCpuC2c;
}

// A calibration profile's terms on one algorithm's cost: its bandwidth factor, the latency the
// cluster adds to each NVLink step, and to each network step and the time to each network
// message (only where the ranks span several domains; the messages only where the scale-out
// links pace the flows).
void apply_profile(const CalibrationProfile& prof, Algorithm a, bool network_paced,
                   CostShape& s) {
  s.bandwidth_factor = prof.algorithm_factor[static_cast<int>(a)];
  s.nvlink_hop_us = prof.nvlink_step_latency_us;
  if (s.domains > 1) s.net_hop_us += prof.network_step_latency_us;
  if (s.domains > 1 && network_paced) s.network_message_us = prof.network_message_us;
}

// `cap` with the scale-up links' capacity times `share` (NVLS's efficiency there).
std::vector<double> scale_up_capacities(const Fabric& fab, std::vector<double> cap, double share) {
  if (share != 1)
    for (size_t l = 0; l < cap.size(); ++l)
      if (fab.links()[l].cls == LinkClass::kScaleUp) cap[l] *= share;
  return cap;
}

// The mean of the sampled node-to-node path latencies, us (0 when none was sampled).
double mean_hop_latency_us(const std::vector<double>& samples_s) {
  if (samples_s.empty()) return 0;
  double s = 0;
  for (double x : samples_s) s += x;
  return s / static_cast<double>(samples_s.size()) * 1e6;
}

}  // namespace

std::vector<double> size_sweep(double lo, double hi, double factor) {
  std::vector<double> out;
  if (lo <= 0) lo = 1;
  if (factor <= 1) factor = 2;
  for (double s = lo; s <= hi * (1 + 1e-12) && out.size() < kMaxSweepSizes; s *= factor)
    out.push_back(s);
  return out;
}

Result<CollectiveModel> CollectiveModel::build(const Fabric& fab, const Plan& plan,
                                               const SimOptions& o) {
  CollectiveModel cm;
  cm.op_ = o.op;
  cm.forced_algorithm_ = o.algorithm;
  cm.forced_protocol_ = o.protocol;
  cm.gpus_per_thread_ = std::max(1, o.gpus_per_thread);
  cm.iters_ = std::max(1, o.iters);
  cm.seed_ = o.seed;
  cm.keeps_flows_ = o.keep_flows && !o.link_load_of;
  p2p_nics_of(plan, cm.p2p_local_nics_, cm.p2p_nic_GBps_);
  const int nodes = o.nodes > 0 ? o.nodes : fab.nodes();
  if (nodes > fab.nodes())
    return Diagnostic::flag(
        "--nodes", fmt::format("the fabric has {} nodes; cannot run on {}", fab.nodes(), nodes),
        fmt::format("use --nodes 1 to {}", fab.nodes()));
  cm.load_balancing_ = o.load_balancing.value_or(plan.load_balancing);
  FlowBuilder b(fab, cm.load_balancing_, o.seed, nodes);
  b.flow_budget = o.memory_budget_bytes;
  b.min_channels = o.min_channels;
  b.max_channels = o.max_channels;
  cm.ranks_ = b.ranks;
  cm.host_issue_us_ = host_issue_us(o.op, cm.ranks_, cm.gpus_per_thread_);
  cm.nodes_ = nodes;
  cm.domains_ = b.domains;
  cm.domain_gpus_ = b.D;
  cm.nccl_ = o.nccl.value_or(plan.nccl);
  cm.generation_ = generation_of(plan.gpu);
  cm.simple_buffer_bytes_ = o.buffsize_bytes;
  cm.host_grace_ = host_grace(plan);
  cm.host_amd_ = plan.host_amd;
  cm.nvlink_across_trays_ = nvlink_across_trays(plan);
  cm.scaleup_pcie_ = fab.host_pcie();
  cm.nvlinks_ = nvlinks_of(plan.gpu);
  b.channel_limit = release_max_channels(cm.nccl_);
  if (plan.nic.rate_gbps > 0) {
    const double nic_GBps = plan.nic.rate_gbps / 8;
    const int pcie_gen = std::min(plan.gpu.pcie_gen, plan.nic.pcie_gen);
    cm.nic_path_GBps_ = nic_path_GBps(nic_GBps, pcie_gen);
    cm.nic_via_cpu_c2c_ = nic_via_cpu_c2c(plan);
    b.net_graph_channels = ring_graph_channels_across(fab.nics_per_node(), fab.gpus_per_node(),
                                                      nic_GBps, pcie_gen, cm.generation_);
  }
  // Why the fabric runs no CollNet, whatever the operation ("": it does).
  const std::string fabric_cn_no =
      !plan.in_network_reduction                   ? "in-network reduction is off"
      : plan.sw.in_network_reduction.empty()       ? "the switches cannot reduce"
      : b.domains < 2                              ? "needs several nodes"
      : plan.topo.kind == TopologyKind::kDragonfly ? "no reduction tree on dragonfly"
                                                   : "";
  // CollNet on (NCCL_COLLNET_ENABLE with a reducing fabric) across domains of several GPUs,
  // whose NVLink outruns the NICs: the communicator's channels grow by half (connect.cc).
  b.collnet_channels = fabric_cn_no.empty() && b.D > 1;
  cm.ring_channels_ = b.ring_channels();
  cm.domain_p2p_channels_ = b.domain_p2p_channels();
  cm.ring_graph_channels_ = b.ring_graph_channels();
  cm.collnet_nics_ = fab.nics_per_node();
  cm.ring_same_channels_ = ring_same_channels(b.domains, b.D, fab.nics_per_node());
  cm.profile_ = o.calibration ? *o.calibration : plan.calibration;
  cm.tree_channels_ = b.tree_channels();
  cm.tree_graph_channels_ = b.tree_graph_channels();
  if (b.ranks < 2) {
    // The --nodes the user gave, else the spec's own cluster (a flag never given is no answer).
    if (o.nodes > 0)
      return Diagnostic::flag("--nodes", "a collective needs at least 2 GPUs",
                              "use more nodes or GPUs per node");
    return Diagnostic::error("the cluster has 1 GPU: a collective needs at least 2",
                             "give the spec more (cluster.nodes or cluster.gpus_per_node)");
  }

  const std::vector<double> cap = simple_capacities(fab, cm.profile_, cm.generation_);
  const bool multi = b.domains > 1;
  // A node of a direct-link board (HGX H100 4-GPU: Plan::scaleup_direct) has no NVSwitch, so
  // no multicast: NCCL prints "NVLS multicast support is not available" and runs 0 NVLS
  // channels (transport/nvls.cc@v2.24.3-1:166-172; Snellius' 2 x 4 H100, nccl-public.csv).
  const bool switchless = plan.scaleup_direct;
  const bool nvls_hw = plan.gpu.nvls && b.D > 1 && !switchless;
  const double nvls_eff = nvls_link_share(cm.generation_);
  const double N = static_cast<double>(b.ranks);

  if (o.link_load_of) {
    cm.link_load_.emplace();
    cm.link_load_->algorithm = *o.link_load_of;
    cm.link_load_->payload_bytes = kPayload;
  }
  // Only the algorithm whose traffic per link is kept, when one is.
  auto skipped = [&](Algorithm a) { return o.link_load_of && a != *o.link_load_of; };
  LinkLoad* keep = cm.link_load_ ? &*cm.link_load_ : nullptr;
  // The algorithms whose all_reduce goes through the in-network reduction: CollNet Direct and
  // Chain, and NVLS across domains (set below, once it is known whether NVLS runs over CollNet).
  bool nvls_over_collnet = false;
  auto in_network = [&](Algorithm a) {
    return o.op == Op::kAllReduce && (a == Algorithm::kCollNet || a == Algorithm::kCollNetChain ||
                                      (a == Algorithm::kNvls && nvls_over_collnet));
  };
  double collnet_net_spb = -1;  // not solved yet
  // CollNet all_reduce's NVLink part alone: Chain's fill, and the rate NCCL's tuner gives it.
  // Flows kept for relink, within SimOptions::kept_flows_budget_bytes: past it none are kept.
  size_t kept_bytes = 0;
  auto room_for = [&](const FlowSet& fs) {
    if (!cm.keeps_flows_) return false;
    kept_bytes += FlowSet::memory_bytes(static_cast<size_t>(fs.size()), fs.hop_count());
    if (o.kept_flows_budget_bytes > 0 && kept_bytes > o.kept_flows_budget_bytes) cm.forget_flows();
    return cm.keeps_flows_;
  };
  // A part solved alone (CollNet's), its index in kept_alone_; -1 where it is not kept.
  auto keep_alone = [&](FlowSet& fs) {
    if (!room_for(fs)) return -1;
    cm.kept_alone_.push_back(std::move(fs));
    return static_cast<int>(cm.kept_alone_.size() - 1);
  };
  auto collnet_intra_rate = [&](AlgorithmModel& m, int& kept) {
    FlowSet intra(b.flow_budget);
    b.new_flow_set();
    AlgorithmModel alone;
    b.collnet_intra(intra, 2);
    if (intra.size() > 0) {
      solve_flows(fab, intra, cap, kPayload, alone, nullptr);
      m.intra_seconds_per_byte = alone.seconds_per_byte;
      kept = keep_alone(intra);
    }
  };
  int collnet_net_kept = -1;
  auto model = [&](Algorithm a, std::string why_not, auto&& fill) {
    AlgorithmModel m;
    m.algorithm = a;
    if (why_not.empty() && skipped(a)) why_not = "not modelled (traffic per link of another)";
    if (!why_not.empty()) {
      m.unavailable_reason = why_not;
      cm.models_.push_back(m);
      return;
    }
    FlowSet fs(b.flow_budget);
    b.new_flow_set();
    b.unroutable = 0;
    b.path_latency.clear();
    KeptModel kept;
    kept.model = cm.models_.size();
    kept.in_network = in_network(a);
    const double payload = fill(fs, kept.scale_up_share);
    if (fs.over_budget() || b.over_budget) {
      b.over_budget = true;
      return;  // build reports it
    }
    m.unroutable = b.unroutable;
    m.available = true;
    // In-network reduction's flows go to their switch whatever the load balancing: whole.
    solve_flows(fab, fs, scale_up_capacities(fab, cap, kept.scale_up_share), payload, m, keep,
                b.splits_flows() || in_network(a));
    m.net_hop_latency_us = mean_hop_latency_us(b.path_latency);
    // The NICs' path alone, which the in-network operations lengthen: the same flows for every
    // algorithm that has it, solved once.
    if (in_network(a)) {
      if (collnet_net_spb < 0) {
        FlowSet net(b.flow_budget);
        b.new_flow_set();
        AlgorithmModel alone;
        collnet_net_spb = 0;
        if (b.collnet_network(net)) {
          solve_flows(fab, net, cap, kPayload, alone, nullptr);
          collnet_net_spb = alone.seconds_per_byte;
          collnet_net_kept = keep_alone(net);
        }
      }
      m.network_seconds_per_byte = collnet_net_spb;
      kept.network_alone = collnet_net_kept;
    }
    if (a == Algorithm::kCollNetChain || (a == Algorithm::kCollNet && o.op == Op::kAllReduce))
      collnet_intra_rate(m, kept.intra_alone);
    if (room_for(fs)) {
      kept.payload = payload;
      kept.steps.push_back(std::move(fs));
      cm.kept_.push_back(std::move(kept));
    }
    if (!std::isfinite(m.seconds_per_byte) || m.seconds_per_byte <= 0 || m.unroutable > 0) {
      m.available = false;
      m.unavailable_reason = no_path_reason(kept.in_network);
    }
    cm.models_.push_back(m);
  };

  const Op op = o.op;
  const bool reduce_all = op == Op::kAllReduce;
  const bool ring_ops = !is_point_to_point(op);
  const double ring_factor = ring_traffic_factor(op, b.ranks);
  model(Algorithm::kRing, ring_ops ? "" : "not used for this operation", [&](FlowSet& fs, auto&) {
    b.ring(kPayload * ring_factor, fs);
    return kPayload;
  });
  model(Algorithm::kTree, reduce_all ? "" : "all_reduce only", [&](FlowSet& fs, auto&) {
    b.tree(fs);
    return kPayload;  // tree's x.92 is NCCL's cost term (nccl_cost.cc)
  });
  // CollNet (SHARP) runs all_reduce, and from NCCL 2.19 all_gather and reduce_scatter as
  // CollNet Direct when every GPU has a NIC of its own (tuning.cc@v2.29.7-1:275-278, 325-343:
  // "AllGather/ReduceScatter requires 1:1 GPU:NIC"; v2.18.6-1:168-169 keeps them to Ring).
  const bool gather_op = op == Op::kAllGather || op == Op::kReduceScatter;
  // Why neither CollNet nor NVLS runs this operation in this release ("": both may).
  const std::string op_no =
      !reduce_all && !gather_op                      ? "all_reduce, all_gather, reduce_scatter only"
      : gather_op && cm.nccl_ == NcclRelease::kV2_18 ? "all_gather/reduce_scatter need NCCL 2.19+"
                                                     : "";
  const std::string cn_no = !op_no.empty()          ? op_no
                            : !fabric_cn_no.empty() ? fabric_cn_no
                            : b.D > nccl::kCollNetMaxLocalRanks
                                ? fmt::format(
                                      "NCCL runs CollNet with at most {} GPUs a node "
                                      "(NCCL_MAX_DIRECT_ARITY + 1); a scale-up domain "
                                      "here has {}",
                                      nccl::kCollNetMaxLocalRanks, b.D)
                            : gather_op && fab.nics_per_node() < fab.gpus_per_node()
                                ? "all_gather/reduce_scatter need a NIC per GPU (NCCL: 1:1 GPU:NIC)"
                                : "";
  // NVLS runs all_reduce, and from NCCL 2.19 all_gather and reduce_scatter too (the same lines).
  const std::string nvls_no =
      !op_no.empty()   ? op_no
      : !o.nvls_enable ? "disabled (NCCL_NVLS_ENABLE=0)"
      : gather_op && b.D > nccl::kNvlsMaxLocalRanks
          ? fmt::format(
                "NCCL runs NVLS all_gather/reduce_scatter with at "
                "most {} GPUs a node (NCCL_MAX_NVLS_ARITY); a "
                "scale-up domain here has {}",
                nccl::kNvlsMaxLocalRanks, b.D)
      : !nvls_hw ? (fab.host_pcie() ? "PCIe cards have no NVLink switch"
                    : switchless    ? fmt::format("the {}-GPU board links its GPUs directly, "
                                                     "without an NVLink switch",
                                                  plan.gpus_per_node)
                                    : "the GPU's scale-up switch has no NVLink SHARP")
                 : "";
  // Across scale-up domains NCCL runs NVLS only over CollNet and disables it otherwise
  // (tuning.cc@v2.29.7-1:468-472, enqueue.cc@v2.29.7-1:1915): NVLS Tree is NVLS across nodes
  // without CollNet. Over CollNet (all_reduce.h@v2.29.7-1, RunWorkColl NVLS with nNodes > 1):
  // the switch reduces each node's data to its heads, every head's NIC takes its share to the
  // in-network reduction and back, the switch multicasts the sum. all_gather and reduce_scatter
  // need a CollNet plugin with iallgather / ireducescatter and no more GPUs a node than CollNet
  // heads (tuning.cc@v2.29.7-1:325-343; cn_no's NIC per GPU). There each GPU is its rail's head
  // ("NVLS + IB SHARP", device/all_gather.h@v2.29.7-1:319-395): it sends its shard to the
  // network's all-gather and multicasts what its rail receives into every GPU of the node, the
  // one-node NVLS all_gather's loads on NVLink; reduce_scatter is the mirror.
  const bool nvls_collnet = multi && cn_no.empty();
  nvls_over_collnet = nvls_collnet && reduce_all;
  model(Algorithm::kNvls,
        nvls_no.empty() && multi && !nvls_collnet
            ? std::string(
                  gather_op ? "across scale-up domains NCCL runs NVLS all_gather/reduce_scatter "
                              "only through CollNet (SHARP) with a NIC per GPU: " +
                                  cn_no + "; without CollNet NCCL disables it"
                            : "across scale-up domains NCCL runs NVLS only with CollNet (SHARP): " +
                                  cn_no + "; without CollNet NCCL disables it: see nvls_tree")
            : nvls_no,
        [&](FlowSet& fs, double& scale_up_share) {
          scale_up_share = nvls_eff;
          if (gather_op)
            b.nvls_gather_intra(fs, op == Op::kAllGather);
          else
            b.nvls_intra(fs);
          const auto [send, recv] =
              gather_op ? b.gather_shares(op == Op::kAllGather) : std::pair{1.0, 1.0};
          if (nvls_collnet && !b.collnet_network(fs, send, recv))
            b.unroutable = std::max(1, b.unroutable);
          return kPayload;
        });
  // From v2.28 NCCL's tuner skips NVLS Tree on fewer than 2 heads, one a NIC with a GPU of its
  // own (nvls_tree_min_heads): a node of one NIC.
  const int nvls_tree_heads = nvls_heads(cm.shape(Algorithm::kNvlsTree));
  model(
      Algorithm::kNvlsTree,
      !reduce_all                 ? "all_reduce only"
      : nvls_no.empty() && !multi ? "needs several scale-up domains"
      : nvls_no.empty() && nvls_tree_heads < nvls_tree_min_heads(cm.nccl_)
          ? fmt::format("NCCL {} runs NVLS Tree on {} heads or more, a NIC with a GPU each: "
                        "this node has {}",
                        nccl_release_name(cm.nccl_), nvls_tree_min_heads(cm.nccl_), nvls_tree_heads)
          : nvls_no,
      [&](FlowSet& fs, double& scale_up_share) {
        scale_up_share = nvls_eff;
        b.nvls_intra(fs);
        b.nvls_tree_inter(fs);
        return kPayload;
      });
  model(Algorithm::kCollNet, cn_no, [&](FlowSet& fs, auto&) {
    if (gather_op)
      b.collnet_gather(fs, op == Op::kAllGather);
    else
      b.collnet(fs);
    return kPayload;  // CollNet Direct's factors are NCCL's cost terms (nccl_cost.cc)
  });
  // CollNet Chain (all_reduce only, tuning.cc@v2.29.7-1:273-278): each channel's chain moves
  // what Direct's scatter and gather move, 2(m - 1)/m x S a GPU's link each way, and its head's
  // NIC takes the channel's share to the in-network reduction: the same links at the same
  // loads; the chain's chunks and per-NIC operations are its cost terms (nccl_cost.cc).
  // Its flows are Direct's, so Direct's solution stands for them where it has one.
  const std::string chain_no = reduce_all ? cn_no : "all_reduce only";
  int direct = -1;  // Direct's index in models_ where it is available
  for (size_t i = 0; i < cm.models_.size(); ++i)
    if (cm.models_[i].algorithm == Algorithm::kCollNet && cm.models_[i].available)
      direct = static_cast<int>(i);
  if (chain_no.empty() && direct >= 0 && !skipped(Algorithm::kCollNetChain)) {
    AlgorithmModel chain = cm.models_[static_cast<size_t>(direct)];
    chain.algorithm = Algorithm::kCollNetChain;  // its NVLink part alone is Direct's too
    if (cm.keeps_flows_) {
      KeptModel copy;
      copy.model = cm.models_.size();
      copy.copy_of = direct;
      cm.kept_.push_back(std::move(copy));
    }
    cm.models_.push_back(std::move(chain));
  } else {
    model(Algorithm::kCollNetChain, chain_no, [&](FlowSet& fs, auto&) {
      b.collnet(fs);
      return kPayload;
    });
  }
  // PAT: log-depth all_gather / reduce_scatter; NCCL uses it with one GPU per node.
  // NCCL (2.23+) runs PAT with one GPU per node; forced, it runs anywhere.
  const std::string pat_no =
      (op != Op::kAllGather && op != Op::kReduceScatter) ? "all_gather and reduce_scatter only"
      : !release_has_pat(cm.nccl_)
          ? fmt::format("NCCL {} has no PAT (2.23 and later)", nccl_release_name(cm.nccl_))
      : (fab.gpus_per_node() > 1 && o.algorithm != Algorithm::kPat)
          ? "NCCL uses PAT with one GPU per node (tuning.cc@v2.29.7-1:207; NCCL_PAT_ENABLE=1 "
            "runs it anyway, as --algo pat does)"
          : "";
  {
    AlgorithmModel m;
    m.algorithm = Algorithm::kPat;
    if (!pat_no.empty() || skipped(Algorithm::kPat)) {
      m.unavailable_reason = pat_no.empty() ? "not modelled (traffic per link of another)" : pat_no;
    } else {
      // Steps run one after another: step k moves min(2^k, N - 2^k) chunks of S/N to rank i+2^k.
      double t = 0;
      b.unroutable = 0;
      std::vector<Hop> path;
      KeptModel kept;
      kept.model = cm.models_.size();
      kept.pat = true;
      kept.payload = kPayload;
      for (long long dist = 1; dist < b.ranks; dist *= 2) {
        FlowSet fs(b.flow_budget);
        b.new_flow_set();
        const double chunks = static_cast<double>(std::min<long long>(dist, b.ranks - dist));
        for (long long i = 0; i < b.ranks; ++i) {
          path.clear();
          b.gpu_to_gpu(i, (i + dist) % b.ranks, mix_key(i, dist), 1.0, path);
          fs.add(kPayload * chunks / N, path);
        }
        AlgorithmModel step;
        solve_flows(fab, fs, cap, kPayload, step, keep, b.splits_flows());
        t += step.seconds_per_byte;
        m.bottleneck = step.bottleneck;
        m.bottleneck_utilization = step.bottleneck_utilization;
        m.ecmp_collision = std::max(m.ecmp_collision, step.ecmp_collision);
        m.flows += step.flows;
        if (room_for(fs)) kept.steps.push_back(std::move(fs));
      }
      m.seconds_per_byte = t;
      m.available = std::isfinite(t) && t > 0;
      m.unroutable = b.unroutable;
      if (cm.keeps_flows_ && m.available) cm.kept_.push_back(std::move(kept));
    }
    cm.models_.push_back(m);
  }
  // Point-to-point: alltoall sends S/N to every peer; sendrecv S to the next rank.
  model(Algorithm::kP2p, ring_ops ? "alltoall and sendrecv only" : "", [&](FlowSet& fs, auto&) {
    std::vector<Hop> path;
    if (op == Op::kSendRecv) {
      for (long long i = 0; i < b.ranks; ++i) {
        path.clear();
        b.gpu_to_gpu(i, (i + 1) % b.ranks, mix_key(i, 1), 1.0, path);
        fs.add(kPayload, path);
      }
      return kPayload;
    }
    b.alltoall(fs);
    return kPayload;
  });
  if (b.over_budget)
    return Diagnostic::error(
        b.flows_needed > 0
            ? fmt::format("{} on {} GPUs needs about {} of memory for its flows; {} is available",
                          op_name(op), b.ranks, human_bytes(b.flows_needed),
                          human_bytes(static_cast<double>(o.memory_budget_bytes)))
            : fmt::format("{} on {} GPUs needs more than the {} of memory available for its flows",
                          op_name(op), b.ranks,
                          human_bytes(static_cast<double>(o.memory_budget_bytes))),
        "simulate part of the fabric (--nodes N) or use a machine with more memory");
  return cm;
}

Result<CollectiveTraffic> collective_traffic(const Fabric& fab, const Plan& plan,
                                             const SimOptions& o, const CollectiveModel& model,
                                             double bytes) {
  CollectiveTraffic t;
  t.op = model.op();
  t.bytes = bytes;
  t.at = model.at(bytes);
  if (!std::isfinite(t.at.time_us) || t.at.time_us <= 0)
    return Diagnostic::error(
        fmt::format("{} cannot run on every rank here: no traffic per link", op_name(t.op)));
  t.seconds = t.at.time_us * 1e-6;
  SimOptions keep = o;
  keep.link_load_of = t.at.algorithm;
  auto m = CollectiveModel::build(fab, plan, keep);
  if (!m) return m.errors();
  t.load = *m->link_load();
  return t;
}

GroupFlows group_flows(const Fabric& fab, LoadBalancing lb, Op op,
                       const std::vector<std::vector<int>>& groups, double payload, FlowSet& fs,
                       uint64_t seed) {
  GroupFlows out;
  if (groups.empty() || groups[0].size() < 2) return out;
  const int size = static_cast<int>(groups[0].size());
  FlowBuilder b(fab, lb, seed, fab.nodes());
  const double n = size;
  const double factor = op == Op::kAlltoall ? (n - 1) / n : ring_traffic_factor(op, size);
  std::vector<Hop> path;
  bool seen_local = false;
  int domains_max = 1;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& g = groups[gi];
    int doms = 1;
    for (size_t i = 1; i < g.size(); ++i) doms += (g[i] / b.D != g[i - 1] / b.D) ? 1 : 0;
    bool local = true;
    for (int x : g) local = local && x / b.D == g[0] / b.D;
    domains_max = std::max(domains_max, local ? 1 : doms);
    if (local) {  // one domain stands for all groups that stay inside theirs
      if (seen_local && g[0] / b.D != groups[0][0] / b.D) continue;
      seen_local = true;
    }
    const uint64_t gkey = mix_key(0x5eed, gi);
    if (op == Op::kSendRecv) {
      path.clear();
      if (b.gpu_to_gpu(g[0], g[1], gkey, 1.0, path)) fs.add(payload, path);
      continue;
    }
    if (op == Op::kAlltoall) {
      for (size_t i = 0; i < g.size(); ++i)
        for (size_t j = 0; j < g.size(); ++j) {
          if (i == j) continue;
          path.clear();
          if (b.gpu_to_gpu(g[i], g[j], mix_key(gkey, i * g.size() + j), 1.0, path))
            fs.add(payload / n, path);
        }
      continue;
    }
    if (local) {  // a ring inside one domain, several channels over NVLink
      const int C = 4;
      for (int c = 0; c < C; ++c) {
        path.clear();
        for (size_t i = 0; i < g.size(); ++i) b.nvlink(g[i], g[(i + 1) % g.size()], 1.0, path);
        fs.add(payload * factor / C, path);
      }
      continue;
    }
    // Across domains, as NCCL lays rings: the group's GPUs in each domain form a segment;
    // channel c enters every segment at its (c mod k)-th GPU and leaves through that GPU's NIC
    // (the last GPU of the segment sends through it, PCIe-local), so channels use every NIC the
    // group has in a node. Two channels per NIC.
    std::vector<std::pair<size_t, size_t>> segs;  // [begin, end) in g
    for (size_t i = 0; i < g.size(); ++i)
      if (i == 0 || g[i] / b.D != g[i - 1] / b.D)
        segs.push_back({i, i + 1});
      else
        segs.back().second = i + 1;
    // The rails the group's GPUs sit on, in order of first use: the NICs its channels take in
    // turn (every domain's, so that a group starting partway through a node, on one of its
    // NICs, still runs the channels its other domains' NICs carry).
    std::vector<int> rail_list;
    for (size_t i = 0; i < g.size(); ++i) {
      const int r = fab.rail_of_gpu(g[i] % b.G);
      if (std::find(rail_list.begin(), rail_list.end(), r) == rail_list.end())
        rail_list.push_back(r);
    }
    const int rails = std::max<int>(1, static_cast<int>(rail_list.size()));
    // Each segment's GPUs by rail (their places in the segment), found once.
    std::vector<std::vector<std::vector<size_t>>> on_rail(
        segs.size(), std::vector<std::vector<size_t>>(rail_list.size()));
    for (size_t si = 0; si < segs.size(); ++si)
      for (size_t i = segs[si].first; i < segs[si].second; ++i) {
        const int r = fab.rail_of_gpu(g[i] % b.G);
        const auto at = std::find(rail_list.begin(), rail_list.end(), r) - rail_list.begin();
        on_rail[si][static_cast<size_t>(at)].push_back(i - segs[si].first);
      }
    // Channel c enters a segment at a GPU on rail c mod rails, the (c / rails)-th of that
    // rail's GPUs there: the channels alternate over the NICs, so with fewer channels than GPUs
    // (two NICs under eight GPUs: four channels) every NIC still carries its two.
    auto entry = [&](size_t si, int c) -> size_t {
      const auto& on = on_rail[si][static_cast<size_t>(c % rails)];
      if (on.empty()) return static_cast<size_t>(c) % (segs[si].second - segs[si].first);
      return on[static_cast<size_t>(c / rails) % on.size()];
    };
    const int C = rails * nccl::kRingChannelsPerNic;
    out.channels = std::max(out.channels, C);
    std::vector<size_t> entries(segs.size());
    for (int c = 0; c < C; ++c) {
      path.clear();
      const int plane = (c / rails) % b.P;
      for (size_t si = 0; si < segs.size(); ++si) entries[si] = entry(si, c);
      for (size_t si = 0; si < segs.size(); ++si) {
        const auto [s0, s1] = segs[si];
        const size_t len = s1 - s0, r0 = entries[si];
        for (size_t j = 0; j + 1 < len; ++j)
          b.nvlink(g[s0 + (r0 + j) % len], g[s0 + (r0 + j + 1) % len], 1.0, path);
        const size_t next = (si + 1) % segs.size();
        const long long next_entry = g[segs[next].first + entries[next]];
        // The ring leaves from its last GPU in the segment: on an NVLink board that GPU shares
        // the entry GPU's PCIe switch, so the entry's NIC stands for it; PCIe cards send over
        // their own x16 link, so the last GPU's counts (as FlowBuilder::ring).
        const size_t exit = fab.host_pcie() ? (r0 + len - 1) % len : r0;
        b.domain_hop(g[s0 + exit], next_entry, plane, mix_key(gkey, c * segs.size() + si), path);
      }
      fs.add(payload * factor / C, path);
    }
  }
  out.domains = domains_max;
  out.unroutable = b.unroutable;
  out.hop_latency_us = mean_hop_latency_us(b.path_latency);
  return out;
}

Result<GroupCollective> GroupCollective::build(const Fabric& fab, const Plan& plan, Op op,
                                               const std::vector<std::vector<int>>& groups,
                                               std::optional<LoadBalancing> lb, LinkLoad* keep,
                                               int comm_ranks) {
  GroupCollective gc;
  gc.op_ = op;
  gc.comm_ranks_ = comm_ranks;
  if (groups.empty() || groups[0].size() < 2)
    return Diagnostic::error("a group collective needs groups of at least 2 GPUs");
  gc.size_ = static_cast<int>(groups[0].size());
  const std::vector<double> cap = simple_capacities(fab, plan);
  FlowSet fs;
  const LoadBalancing mode = lb.value_or(plan.load_balancing);
  const GroupFlows g = group_flows(fab, mode, op, groups, kPayload, fs);
  if (g.channels > 0) gc.channels_ = g.channels;
  AlgorithmModel m;
  solve_flows(fab, fs, cap, kPayload, m, keep, splits_flows(mode));
  if (keep) keep->payload_bytes = kPayload;
  gc.seconds_per_byte_ = m.seconds_per_byte;
  gc.bottleneck_ = m.bottleneck;
  gc.network_paced_ = m.network_paced;
  gc.domains_ = g.domains;
  gc.ring_same_channels_ =
      ring_same_channels(g.domains, gc.size_ / std::max(1, g.domains), fab.nics_per_node());
  gc.nccl_ = plan.nccl;
  p2p_nics_of(plan, gc.p2p_local_nics_, gc.p2p_nic_GBps_);
  gc.generation_ = generation_of(plan.gpu);
  gc.nic_via_cpu_c2c_ = nic_via_cpu_c2c(plan);
  gc.host_grace_ = host_grace(plan);
  gc.host_amd_ = plan.host_amd;
  gc.nvlink_across_trays_ = nvlink_across_trays(plan);
  gc.scaleup_pcie_ = fab.host_pcie();
  gc.hop_latency_us_ = g.hop_latency_us;
  gc.profile_ = plan.calibration;
  if (!std::isfinite(gc.seconds_per_byte_) || g.unroutable > 0)
    return Diagnostic::error("failed links cut a group apart");
  return gc;
}

Algorithm GroupCollective::algorithm() const {
  // NCCL runs a group's alltoall and sendrecv as point-to-point, the rest as rings.
  return is_point_to_point(op_) ? Algorithm::kP2p : Algorithm::kRing;
}

CostShape GroupCollective::cost_shape() const {
  CostShape s{op_,   size_,       domains_, size_ / std::max(1, domains_), hop_latency_us_,
              nccl_, generation_, channels_};
  // A send's channels are counted over its communicator's ranks (NCCL halves a peer's channels
  // by nRanks), not the pair's.
  if (comm_ranks_ > size_) s.ranks = comm_ranks_;
  s.p2p_local_nics = p2p_local_nics_;
  s.p2p_nic_GBps = p2p_nic_GBps_;
  s.ring_same_channels = ring_same_channels_;
  s.nic_via_cpu_c2c = nic_via_cpu_c2c_;
  s.host_grace = host_grace_;
  s.host_amd = host_amd_;
  s.nvlink_across_trays = nvlink_across_trays_;
  s.scaleup_pcie = scaleup_pcie_;
  apply_profile(profile_, algorithm(), network_paced_, s);
  return s;
}

double GroupCollective::seconds(double bytes) const {
  if (bytes <= 0) return 0;
  // The protocol NCCL's tuner picks, at the time its pipeline then takes.
  return pick_protocol(algorithm(), cost_shape(), seconds_per_byte_, bytes).time_us * 1e-6;
}

int GroupCollective::channels(double bytes) const {
  if (bytes <= 0) return 0;
  const Algorithm a = algorithm();
  const CostShape shape = cost_shape();
  return pipeline_run(a, pick_protocol(a, shape, seconds_per_byte_, bytes).protocol, shape, bytes)
      .channels;
}

double GroupCollective::busbw_gbs(double bytes) const {
  const double t = seconds(bytes);
  return t > 0 ? bytes / t / 1e9 * bus_factor(op_, size_) : 0;
}

SearchGraph CollectiveModel::search_graph(Algorithm a) const {
  if (a == Algorithm::kRing) return ring_search_graph(shape(a));
  if (a == Algorithm::kNvlsTree) return nvls_search_graph(shape(a));
  return {};
}

CostShape CollectiveModel::shape(Algorithm a) const {
  const AlgorithmModel* model = nullptr;
  for (const auto& m : models_)
    if (m.algorithm == a) model = &m;
  const double hop = model ? model->net_hop_latency_us : 0;
  int channels = a == Algorithm::kTree ? tree_channels_ : ring_channels_;
  int graph_channels = a == Algorithm::kTree ? tree_graph_channels_ : ring_graph_channels_;
  if (a == Algorithm::kNvls || a == Algorithm::kNvlsTree) {
    graph_channels = 0;
    channels = nvls_tuning(nccl_, generation_, domains_, domain_gpus_, nic_path_GBps_,
                           !nic_via_cpu_c2c_)
                   .channels;
  }
  // NVLS across nodes runs on no more channels than the communicator has
  // (enqueue.cc@v2.29.7-1:1993-1994).
  if (a == Algorithm::kNvls && domains_ > 1) channels = std::min(channels, ring_channels_);
  CostShape s{op_, ranks_, domains_, domain_gpus_, hop, nccl_, generation_, channels};
  s.graph_channels = graph_channels;
  s.collnet_nics = collnet_nics_;
  s.nic_path_GBps = nic_path_GBps_;
  s.nvlinks = nvlinks_;
  s.simple_buffer_bytes = simple_buffer_bytes_;
  s.host_grace = host_grace_;
  s.host_amd = host_amd_;
  s.nvlink_across_trays = nvlink_across_trays_;
  s.scaleup_pcie = scaleup_pcie_;
  s.nic_via_cpu_c2c = nic_via_cpu_c2c_;
  s.ll128_forced = forced_protocol_ == Protocol::kLL128;
  if (model) {
    s.collnet_net_seconds_per_byte = model->network_seconds_per_byte;
    s.collnet_intra_seconds_per_byte = model->intra_seconds_per_byte;
  }
  s.p2p_local_nics = p2p_local_nics_;
  s.p2p_nic_GBps = p2p_nic_GBps_;
  s.domain_p2p_channels = domain_p2p_channels_;
  s.ring_same_channels = ring_same_channels_;
  s.iters = iters_;
  s.host_issue_us = host_issue_us_;
  apply_profile(profile_, a, model && model->network_paced, s);
  return s;
}

void CollectiveModel::recalibrate(const CalibrationProfile& p) {
  profile_.algorithm_factor = p.algorithm_factor;
  profile_.network_step_latency_us = p.network_step_latency_us;
  profile_.nvlink_step_latency_us = p.nvlink_step_latency_us;
  profile_.network_message_us = p.network_message_us;
}

size_t CollectiveModel::kept_flow_bytes() const {
  size_t bytes = 0;
  auto add = [&](const FlowSet& fs) {
    bytes += FlowSet::memory_bytes(static_cast<size_t>(fs.size()), fs.hop_count());
  };
  for (const KeptModel& k : kept_)
    for (const FlowSet& fs : k.steps) add(fs);
  for (const FlowSet& fs : kept_alone_) add(fs);
  return bytes;
}

void CollectiveModel::forget_flows() {
  keeps_flows_ = false;
  kept_ = {};
  kept_alone_ = {};
}

bool CollectiveModel::relink(const Fabric& fab, const CalibrationProfile& p) {
  if (!keeps_flows_) return false;
  profile_ = p;
  const std::vector<double> cap = simple_capacities(fab, profile_, generation_);
  std::vector<double> alone_spb(kept_alone_.size());
  for (size_t i = 0; i < kept_alone_.size(); ++i) {
    AlgorithmModel alone;
    solve_rates(fab, kept_alone_[i], cap, kPayload, alone);
    alone_spb[i] = alone.seconds_per_byte;
  }
  for (const KeptModel& k : kept_) {
    if (k.copy_of >= 0) continue;
    AlgorithmModel& m = models_[k.model];
    const std::vector<double> c = scale_up_capacities(fab, cap, k.scale_up_share);
    double t = 0;
    for (const FlowSet& fs : k.steps) {
      AlgorithmModel part;
      solve_rates(fab, fs, c, k.payload, part);
      t += part.seconds_per_byte;
      m.bottleneck = part.bottleneck;
      m.bottleneck_utilization = part.bottleneck_utilization;
      if (!k.pat) m.network_paced = part.network_paced;
    }
    m.seconds_per_byte = t;
    if (k.network_alone >= 0) m.network_seconds_per_byte = alone_spb[k.network_alone];
    if (k.intra_alone >= 0) m.intra_seconds_per_byte = alone_spb[k.intra_alone];
    // As build decides it: PAT by its time alone, the others unroutable flows too.
    m.available = std::isfinite(t) && t > 0 && (k.pat || m.unroutable == 0);
    m.unavailable_reason = m.available || k.pat ? "" : no_path_reason(k.in_network);
  }
  for (const KeptModel& k : kept_)
    if (k.copy_of >= 0) {
      models_[k.model] = models_[static_cast<size_t>(k.copy_of)];
      models_[k.model].algorithm = Algorithm::kCollNetChain;
    }
  return true;
}

const AlgorithmModel* CollectiveModel::available(Algorithm a) const {
  for (const auto& m : models_)
    if (m.algorithm == a) return m.available ? &m : nullptr;
  return nullptr;
}

double CollectiveModel::time_us(Algorithm a, Protocol p, double bytes) const {
  const AlgorithmModel* m = available(a);
  return m ? collective_time_us(a, p, shape(a), m->seconds_per_byte, bytes)
           : std::numeric_limits<double>::infinity();
}

double CollectiveModel::time_us(Algorithm a, double bytes) const {
  const AlgorithmModel* m = available(a);
  return m ? pick_protocol(a, shape(a), m->seconds_per_byte, bytes, forced_protocol_).time_us
           : std::numeric_limits<double>::infinity();
}

SizeResult CollectiveModel::at(double bytes) const {
  SizeResult r;
  r.bytes = bytes;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& m : models_) {
    if (!m.available) continue;
    if (forced_algorithm_ && m.algorithm != *forced_algorithm_) continue;
    // NCCL chooses by its tuner's estimate; the call then takes the pipeline's time.
    const CostShape sh = shape(m.algorithm);
    const ProtocolPick pick =
        pick_protocol(m.algorithm, sh, m.seconds_per_byte, bytes, forced_protocol_);
    if (pick.estimate_us < best) {
      best = pick.estimate_us;
      r.time_us = pick.time_us;
      r.algorithm = m.algorithm;
      r.protocol = pick.protocol;
      r.alone_us = 0;
      if (back_to_back_chain(m.algorithm, pick.protocol, sh, bytes)) {
        CostShape one = sh;
        one.iters = 1;
        r.alone_us = std::max(host_issue_us_, collective_time_us(m.algorithm, pick.protocol, one,
                                                                 m.seconds_per_byte, bytes));
      }
      // The fixed part: what is left of the time without the data (an alltoall's posting
      // counts only where it outlasts the data).
      r.latency_us =
          pick.time_us - data_time_us(m.algorithm, pick.protocol, sh, m.seconds_per_byte, bytes);
      r.bottleneck = m.bottleneck;
      r.bottleneck_utilization = m.bottleneck_utilization;
      r.ecmp_collision = m.ecmp_collision;
      // Point-to-point runs on a peer's few channels, each at a network p2p channel's rate (or,
      // inside a Blackwell domain, a thread block's copy rate): where they carry less than the
      // links would with the protocol's own share (LL's flags halve its data), they pace the call.
      const double links_Bps = 1.0 / m.seconds_per_byte;
      const double protocol_share = pick.protocol == Protocol::kLL ? nccl::kLLDataShare : 1.0;
      if (m.algorithm == Algorithm::kP2p &&
          protocol_bandwidth(m.algorithm, pick.protocol, sh, links_Bps, bytes) <
              links_Bps * protocol_share * (1 - kChannelBoundShare)) {
        r.bottleneck = "p2p channels";
        r.bottleneck_utilization = 1;
      }
      if (block_copy_paces(m.algorithm, pick.protocol, sh, m.seconds_per_byte, bytes)) {
        r.bottleneck = "thread blocks";
        r.bottleneck_utilization = 1;
      }
      if (rack_reduce_paces(m.algorithm, pick.protocol, sh, m.seconds_per_byte, bytes)) {
        r.bottleneck = "rack NVLS reduction";
        r.bottleneck_utilization = 1;
      }
    }
  }
  if (!std::isfinite(best)) r.time_us = best;
  // nccl-tests times calls issued back to back: the host issues each on every GPU it drives.
  const bool host_bound = std::isfinite(r.time_us) && r.time_us < host_issue_us_;
  if (host_bound) {
    r.latency_us += host_issue_us_ - r.time_us;
    r.time_us = host_issue_us_;
  }
  if (std::isfinite(r.time_us) && r.time_us > 0) {
    r.algbw_gbs = bytes / (r.time_us * 1e-6) / 1e9;
    r.busbw_gbs = r.algbw_gbs * bus_factor(op_, ranks_);
    if (r.latency_us > 0.5 * r.time_us) r.bottleneck = "latency";
    if (host_bound) r.bottleneck = "host launch";
  }
  return r;
}

void CollectiveModel::add_call_shape(SizeResult& r) const {
  if (!std::isfinite(r.time_us) || r.bytes <= 0) return;
  const PipelineRun run = pipeline_run(r.algorithm, r.protocol, shape(r.algorithm), r.bytes);
  r.channels = run.channels;
  r.threads = run.threads;
}

void CollectiveModel::add_faster_choice(SizeResult& r) const {
  // What the time model finds faster than the tuner's pick (the host's floor counted alike:
  // r.time_us has it already).
  if (forced_algorithm_ || forced_protocol_ || !std::isfinite(r.time_us) || r.bytes <= 0) return;
  auto floored = [&](double t) { return std::max(t, host_issue_us_); };
  // Only what NCCL enables unforced is offered: LL128 where its switch does not allow it
  // (ll128_by_default) rates an infinite time here, as NCCL warns that such cases "are not
  // tested and may cause silent data corruption" (tuning.cc@v2.26.6-1:427).
  double fastest = r.time_us;
  for (const auto& m : models_) {
    if (!m.available) continue;
    const CostShape sh = shape(m.algorithm);
    for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
      const double t = floored(collective_time_us(m.algorithm, p, sh, m.seconds_per_byte, r.bytes));
      if (t < fastest) {
        fastest = t;
        r.faster_algorithm = m.algorithm;
        r.faster_protocol = p;
      }
    }
  }
  if (fastest < r.time_us * (1 - kFasterChoiceShare)) r.faster_time_us = fastest;
}

}  // namespace gf
