// The spec: what the user wants to build (cluster, fabric), what it carries (workload) and
// what it must achieve (constraints). Parsed from YAML, validated against the catalog.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "common/enum_names.h"
#include "spec/calibration_profile.h"

namespace gf {

/// Where a key was written, so later checks can point at it.
struct SourceLoc {
  int line = 0, column = 0;  ///< 1-based
};

/// The NCCL releases whose tuner terms are modelled (sim/nccl_constants.h has a table of each,
/// from its own tag: v2.18.6-1, v2.20.5-1, v2.21.5-1, v2.24.3-1, v2.26.6-1, v2.27.7-1, v2.28.7-1,
/// v2.28.9-1, v2.29.7-1 and v2.30.7-1).
enum class NcclRelease {
  kV2_18,
  kV2_20,
  kV2_21,
  kV2_24,
  kV2_26,
  kV2_27,
  kV2_28_7,
  kV2_28,
  kV2_29,
  kV2_30
};
inline constexpr EnumName<NcclRelease> kNcclReleaseNames[] = {
    {NcclRelease::kV2_18, "2.18"},     {NcclRelease::kV2_20, "2.20"},
    {NcclRelease::kV2_21, "2.21"},     {NcclRelease::kV2_24, "2.24"},
    {NcclRelease::kV2_26, "2.26"},     {NcclRelease::kV2_27, "2.27"},
    {NcclRelease::kV2_28_7, "2.28.7"}, {NcclRelease::kV2_28, "2.28"},
    {NcclRelease::kV2_29, "2.29"},     {NcclRelease::kV2_30, "2.30"}};
inline constexpr NcclRelease kNewestNccl = NcclRelease::kV2_30;
inline const char* nccl_release_name(NcclRelease r) { return name_of(kNcclReleaseNames, r); }
/// Which table a printed version runs, as help texts and errors say it.
inline constexpr const char* kNcclVersionTables =
    "up to 2.18 run the 2.18 table, 2.19-2.20 the 2.20 one, 2.21-2.22 the 2.21 one, 2.23-2.24 the "
    "2.24 one, 2.25-2.26 the 2.26 one, 2.28.0-2.28.7 the 2.28.7 one, 2.29 its own, later 2.x ones "
    "the "
    "newest";
/// The modelled release whose tuner terms an NCCL version runs with: a table's own name
/// (kNcclReleaseNames), or a version as NCCL prints it (2.24.3, 2.29.7+cuda12.9), by
/// kNcclVersionTables (sim/nccl_constants.h says what each table differs in); a 2.28 without a
/// patch level is 2.28.9. nullopt for text that is no 2.x version.
std::optional<NcclRelease> nccl_release_of_version(const std::string& version);

/// How a node's GPUs reach each other over NVLink (cluster.scaleup_board): through NVSwitch, or
/// linked directly on a small board (HGX H100 4-GPU), which has no NVLink SHARP. auto: the
/// catalog's board for the GPUs a node (its direct_board_gpus, else the switch).
enum class ScaleupBoard { kAuto, kNvswitch, kDirect };
inline constexpr EnumName<ScaleupBoard> kScaleupBoardNames[] = {
    {ScaleupBoard::kAuto, "auto"},
    {ScaleupBoard::kNvswitch, "nvswitch"},
    {ScaleupBoard::kDirect, "direct"}};

/// The x86 hosts' CPU vendor (cluster.host_cpu), which NCCL's tuner reads across nodes: AMD
/// hosts get a lower LL bandwidth cap and a longer network post overhead (tuning.cc@v2.29.7-1:
/// 215-220, 253-255). auto: Intel on x86 (NVIDIA's DGX hosts), Grace where the catalog says so.
enum class HostCpuVendor { kAuto, kIntel, kAmd };
inline constexpr EnumName<HostCpuVendor> kHostCpuVendorNames[] = {
    {HostCpuVendor::kAuto, "auto"}, {HostCpuVendor::kIntel, "intel"}, {HostCpuVendor::kAmd, "amd"}};

/// The compute side: servers, GPUs and scale-out NICs.
struct ClusterSpec {
  std::string gpu;                 ///< catalog id
  int nodes = 0;                   ///< derived from `gpus` when only that is given
  int gpus_per_node = 0;           ///< 0: the catalog's value for the GPU
  std::string nic;                 ///< catalog id of the backend NIC
  int nics_per_node = 0;           ///< 0: one per GPU (rail-optimized)
  long long gpus_requested = 0;    ///< `gpus:` as written (0 when `nodes:` was used)
  NcclRelease nccl = kNewestNccl;  ///< the NCCL release the collectives run with
  bool nccl_given = false;         ///< cluster.nccl written in the spec (else the newest)
  ScaleupBoard scaleup_board = ScaleupBoard::kAuto;  ///< cluster.scaleup_board
  HostCpuVendor host_cpu = HostCpuVendor::kAuto;     ///< cluster.host_cpu
};

/// The scale-out network technology.
enum class Technology { kInfiniband, kRoce };
inline constexpr EnumName<Technology> kTechnologyNames[] = {{Technology::kInfiniband, "infiniband"},
                                                            {Technology::kRoce, "roce"}};
inline const char* technology_name(Technology t) { return name_of(kTechnologyNames, t); }
/// "InfiniBand" or "RoCE v2", as people write them.
inline const char* technology_title(Technology t) {
  return t == Technology::kInfiniband ? "InfiniBand" : "RoCE v2";
}

/// The shape of one fabric plane.
enum class TopologyKind { kSingle, kClos2, kClos3, kDragonfly };
inline constexpr EnumName<TopologyKind> kTopologyKindNames[] = {
    {TopologyKind::kSingle, "single"},
    {TopologyKind::kClos2, "clos2"},
    {TopologyKind::kClos3, "clos3"},
    {TopologyKind::kDragonfly, "dragonfly"}};
inline const char* topology_kind_name(TopologyKind k) { return name_of(kTopologyKindNames, k); }

/// How traffic is spread over equal-cost paths: per-flow ECMP hashing, ECMP over several QPs
/// per connection (NCCL_IB_QPS_PER_CONNECTION), adaptive routing (per-packet or flowlet choice
/// by the switch), or packet spraying by the NIC.
enum class LoadBalancing { kEcmp, kEcmpMultiQp, kAdaptive, kSpray };
inline constexpr EnumName<LoadBalancing> kLoadBalancingNames[] = {
    {LoadBalancing::kEcmp, "ecmp"},
    {LoadBalancing::kEcmpMultiQp, "ecmp-multi-qp"},
    {LoadBalancing::kAdaptive, "adaptive"},
    {LoadBalancing::kSpray, "spray"}};
inline const char* load_balancing_name(LoadBalancing lb) {
  return name_of(kLoadBalancingNames, lb);
}

/// Which ECMP hash seed each switch gets (fabric.ecmp_hash.seed): its own (per_switch), one per
/// tier (per_tier: every leaf alike, every spine alike, ...), or one for all (same). Switches
/// that share a seed and hash the same fields make the same choice for the same flow, so two
/// tiers with one seed polarize (topo/fabric.h, ecmp_hash_seed).
enum class EcmpSeedPolicy { kPerSwitch, kPerTier, kSame };
inline constexpr EnumName<EcmpSeedPolicy> kEcmpSeedPolicyNames[] = {
    {EcmpSeedPolicy::kPerSwitch, "per_switch"},
    {EcmpSeedPolicy::kPerTier, "per_tier"},
    {EcmpSeedPolicy::kSame, "same"}};
inline const char* ecmp_seed_policy_name(EcmpSeedPolicy p) {
  return name_of(kEcmpSeedPolicyNames, p);
}

/// The scale-out fabric to plan; an empty optional is "auto": the planner decides.
struct FabricSpec {
  std::optional<Technology> technology;  ///< auto | infiniband | roce
  std::optional<TopologyKind> topology;  ///< auto | single | clos2 | clos3 | dragonfly
  bool rail_optimized = true;
  std::string switch_id = "auto";
  double oversubscription = 1.0;  ///< leaf down:up bandwidth
  int planes = 1;
  int scalable_unit = 0;                        ///< nodes per unit; 0 = auto (one leaf per rail)
  double spine_headroom = 0.0;                  ///< fraction of spine ports left free for growth
  std::optional<LoadBalancing> load_balancing;  ///< auto | ecmp | ecmp-multi-qp | adaptive | spray
  std::optional<bool> in_network_reduction;     ///< auto | on | off
  int appliance_ports = 0;  ///< leaf ports taken by fabric-management appliances (e.g. UFM)
  EcmpSeedPolicy ecmp_seed = EcmpSeedPolicy::kPerSwitch;  ///< fabric.ecmp_hash.seed
};

/// Activation recomputation (Korthikanti et al., "Reducing Activation Recomputation in Large
/// Transformer Models", 2022): none, selective (attention's core recomputed), full (every layer).
enum class Recompute { kNone, kSelective, kFull };
inline constexpr EnumName<Recompute> kRecomputeNames[] = {
    {Recompute::kNone, "none"}, {Recompute::kSelective, "selective"}, {Recompute::kFull, "full"}};

/// How the data-parallel gradients are reduced: hierarchically (inside the node over NVLink,
/// then across nodes) or flat (every hop of one ring on the network).
enum class DpCollective { kHierarchical, kFlat };
inline constexpr EnumName<DpCollective> kDpCollectiveNames[] = {
    {DpCollective::kHierarchical, "hierarchical"}, {DpCollective::kFlat, "flat"}};

/// What the plan optimises: time to solution or cost.
enum class Goal { kTime, kCost };
inline constexpr EnumName<Goal> kGoalNames[] = {{Goal::kTime, "time"}, {Goal::kCost, "cost"}};
inline const char* goal_name(Goal g) { return name_of(kGoalNames, g); }

/// The feed-forward block: GPT's two matrices around a GeLU (4h wide by default), or the gated
/// SwiGLU of Llama (three matrices; Shazeer, "GLU Variants Improve Transformer", 2020).
enum class MlpKind { kGelu, kSwiglu };
inline constexpr EnumName<MlpKind> kMlpKindNames[] = {{MlpKind::kGelu, "gelu"},
                                                      {MlpKind::kSwiglu, "swiglu"}};
/// How attention's core runs: one fused kernel that never writes the scores (FlashAttention,
/// Dao et al. 2022/2023), or Megatron-LM's batched GEMMs around a fused softmax kernel, which
/// write the s x s scores and probabilities to HBM (the kernels of Korthikanti et al. 2022).
enum class AttentionKernel { kFlash, kUnfused };
inline constexpr EnumName<AttentionKernel> kAttentionKernelNames[] = {
    {AttentionKernel::kFlash, "flash"}, {AttentionKernel::kUnfused, "unfused"}};

/// A transformer model's shape.
struct ModelSpec {
  double params = 0;  ///< parameters (70B = 7e10)
  int layers = 0, hidden = 0, heads = 0, seq_len = 0, vocab = 0, experts = 0, top_k = 0;
  int ffn_hidden = 0;  ///< the MLP's inner width; 0: 4 x hidden (gelu), 8/3 x hidden (swiglu)
  int kv_heads = 0;    ///< key/value heads (grouped-query attention); 0: as many as heads
  MlpKind mlp = MlpKind::kGelu;
  AttentionKernel attention = AttentionKernel::kFlash;
  double dropout = 0;  ///< hidden and attention dropout probability (GPT-3-era runs: 0.1)
  /// MoE routing: the busiest expert-parallel rank's routed tokens over the mean (1: even), and
  /// the expert capacity factor (Megatron-LM's --moe-expert-capacity-factor: tokens beyond
  /// capacity x the mean are dropped; 0: no dropping).
  double expert_imbalance = 1, capacity_factor = 0;
  /// The load the busiest expert rank carries relative to an even split.
  double expert_load() const {
    return capacity_factor > 0 ? std::min(expert_imbalance, capacity_factor) : expert_imbalance;
  }
};

/// How ranks are split; 0 for dp means "the rest".
struct ParallelismSpec {
  int tp = 1, pp = 1, dp = 0, ep = 1, cp = 1, zero = 0;
};

/// What the fabric carries during training.
struct WorkloadSpec {
  ModelSpec model;
  Precision precision = Precision::kBf16;
  ParallelismSpec parallelism;
  int global_batch = 0;  ///< sequences per step; 0 = unknown
  int micro_batch = 1;
  Recompute recompute = Recompute::kSelective;
  bool sequence_parallel = true;
  int virtual_pipeline = 1;
  /// Transformer layers on the first and the last pipeline stage (Megatron-LM's
  /// --decoder-first/last-pipeline-num-layers); 0: placed as spec/pipeline.h says.
  int first_stage_layers = 0, last_stage_layers = 0;
  double compute_efficiency = 0;  ///< 0 = catalog default
  double compute_time_s = 0;      ///< 0 = computed from FLOPs
  double steps = 0;               ///< 0 with tokens = 0: unknown
  double tokens = 0;
  bool overlap = true;      ///< DP gradient reduction overlapped with backward
  bool tp_overlap = false;  ///< TP collectives overlapped with their GEMMs (--tp-comm-overlap)
  DpCollective dp_collective = DpCollective::kHierarchical;
  /// `grad_reduce`: the type the gradients are accumulated and data-parallel reduced in
  /// (Megatron-LM's main-grad buffer, --grad-reduce-in-bf16; FSDP's reduce_dtype); nullopt:
  /// the framework's default, grad_reduce_precision().
  std::optional<Precision> grad_reduce;
  double checkpoint_interval_s = 0;  ///< compute between checkpoints; 0 = Daly's optimum
};

/// The type a workload's gradients are accumulated in and reduced across data-parallel ranks
/// in: `grad_reduce` where the spec gives it, else Megatron-LM's default for the precision:
/// fp32 for bf16 (and fp8, whose weights are bf16) and fp32 training, the 16-bit type itself
/// for fp16 (megatron/training/arguments.py@d98e8a64dd:1195-1217: bf16 sets
/// accumulate_allreduce_grads_in_fp32 unless --grad-reduce-in-bf16, fp16 leaves it off;
/// megatron/core/distributed/param_and_grad_buffer.py:924 makes the buffer that dtype).
/// torchtitan's FSDP reduces in fp32 by default as well (mixed_precision_reduce: float32).
Precision grad_reduce_precision(const WorkloadSpec& w);

/// How a job's nodes are chosen from those no other job holds: `packed` takes them in order,
/// filling one scalable unit before the next; `spread` takes one node from each unit in turn
/// (round-robin); `random` draws them with a seeded shuffle (the job's `seed:`).
enum class Placement { kPacked, kSpread, kRandom };
inline constexpr EnumName<Placement> kPlacementNames[] = {
    {Placement::kPacked, "packed"}, {Placement::kSpread, "spread"}, {Placement::kRandom, "random"}};
inline const char* placement_name(Placement p) { return name_of(kPlacementNames, p); }
/// What to suggest for `word`, no placement: the nearest ("did you mean ...?"), else the three.
std::string placement_hint(const std::string& word);

/// The most jobs one `jobs:` section lists: a bound on the work (every pair of jobs can meet on
/// a link), far above the handful a cluster's scheduler runs at once on one fabric.
constexpr int kMaxJobs = 64;

/// The most trace files one job names: one per traced rank of a job the fabric can hold is far
/// more than anyone records (a profiler run keeps a few ranks), and each is read whole.
constexpr int kMaxJobTraceFiles = 1024;

/// One job of the spec's `jobs:` section: a workload of its own on part of the cluster, described
/// (`workload:`) or recorded (`trace:`, replayed as `gpufabric replay` does).
struct JobSpec {
  std::string name;
  WorkloadSpec workload;
  /// `trace:` as written (relative to the spec's folder): one or more ranks' profiler traces or
  /// NCCL logs of one run; empty for a described workload.
  std::vector<std::string> trace_files;
  /// The same files as load_spec found them (joined to the spec's folder); parse_spec leaves
  /// them as written.
  std::vector<std::string> trace_paths;
  std::string trace_step;        ///< `step:` of a trace job: ProfilerStep#N; "": the last complete
  int nodes = 0;                 ///< derived from `gpus` when only that is given
  long long gpus_requested = 0;  ///< `gpus:` as written (0 when `nodes:` was used)
  /// nullopt: an explicit node list (`nodes_listed`, cabling.csv names).
  std::optional<Placement> placement = Placement::kPacked;
  std::vector<std::string> nodes_listed;
  uint64_t seed = 1;  ///< placement: random
  std::string key;    ///< "jobs[2]": where messages point
};

/// What the plan must achieve.
struct ConstraintsSpec {
  Goal goal = Goal::kTime;
  double budget_usd = 0;  ///< 0 = no budget
  double max_comm_fraction = 0.3;
  double min_gpu_utilization = 0.8;
  /// Whether the spec gave each limit (false: gpufabric's default above).
  bool max_comm_fraction_given = false, min_gpu_utilization_given = false;
};

/// The placeholder of addressing.mgmt_netdev: not an interface any host has, so NCCL stops
/// with "no socket interface found" rather than bootstrap over a rail.
inline constexpr const char* kMgmtNetdevPlaceholder = "mgmt0";
/// addressing.cumulus_version's default: the newest release with NVUE's on/off booleans.
inline constexpr const char* kDefaultCumulusVersion = "5.14";
/// The oldest Cumulus Linux 5.x minor release accepted (NVUE's `link breakout 2x` is 5.4.0's).
inline constexpr int kOldestCumulusMinor = 4;

/// The IP and ASN plan of a routed fabric (RoCE). Pools are IPv4 prefixes.
struct AddressingSpec {
  std::string loopbacks = "10.0.0.0/16";  ///< a /32 per switch
  std::string links = "10.1.0.0/16";      ///< a /31 per routed switch-to-switch link
  std::string hosts = "10.128.0.0/9";     ///< a subnet per leaf (rail), sized to its ports
  long long asn_spine = 65000;            ///< spines (clos2); cores (clos3)
  long long asn_leaf = 65100;             ///< the first leaf's; each leaf has its own
  bool unnumbered = false;                ///< BGP unnumbered (IPv6 link-local) instead of /31s
  /// The OS names of a node's rail ports, in cabling order (NIC 0 plane 1, NIC 0 plane 2, NIC 1,
  /// ...): the netdevs (`ibdev2netdev`) and RDMA devices. Empty: nicN and mlx5_N.
  std::vector<std::string> host_netdevs, host_rdma_devices;
  /// A node's management interface: NCCL's and Gloo's bootstrap sockets and torchrun's
  /// rendezvous run over it, never over a rail. kMgmtNetdevPlaceholder until the spec names it.
  std::string mgmt_netdev = kMgmtNetdevPlaceholder;
  /// The Cumulus Linux release the NVUE commands are written for: 5.4 or later (the
  /// `link breakout 2x` syntax); from 5.15 NVUE writes enabled/disabled and `ipv4 address`.
  std::string cumulus_version = kDefaultCumulusVersion;
};

/// How the training (compute) network is kept apart from storage and management traffic
/// (guide §7: "its own physical network or a VLAN"): physical (storage and in-band management
/// get their own NIC ports and switches) or vlan (storage traffic rides the compute fabric's
/// ports on its own VLAN, converged, and shares their bandwidth with the collectives).
enum class Isolation { kPhysical, kVlan };
inline constexpr EnumName<Isolation> kIsolationNames[] = {{Isolation::kPhysical, "physical"},
                                                          {Isolation::kVlan, "vlan"}};
inline const char* isolation_name(Isolation i) { return name_of(kIsolationNames, i); }

/// A network's VLAN and IPv4 subnet (configs: the hosts' and switches' management addresses).
struct NetAddressing {
  int vlan = 0;
  std::string subnet;
};

/// The most storage servers a plan holds (networks.storage.storage_nodes, or as derived from
/// target_bandwidth): 65,536, ten times the largest parallel file systems in service, so that a
/// typo cannot make the cabling plan of millions of ports.
constexpr int kMaxStorageNodes = 65536;

/// networks.storage: the servers' storage NIC ports to the storage servers. Zero and empty
/// values are "from the catalog's server" (GpuModel::networks) or derived.
struct StorageNetSpec {
  bool enabled = true;
  std::string nic;                 ///< catalog id of the storage NIC; empty: the server's
  int ports_per_node = 0;          ///< storage ports per GPU node; 0: the server's
  double port_gbps = 0;            ///< 0: the NIC's port rate
  int storage_nodes = 0;           ///< storage servers; 0: sized from target_gbs_per_node
  double target_gbs_per_node = 0;  ///< GB/s each GPU node must reach; 0: the server's
  int storage_node_ports =
      8;  ///< ports of one storage server (estimate: an all-flash appliance, 8 x 200G)
  std::string switch_id = "auto";
  double oversubscription = 1.0;  ///< storage leaf down:up
  NetAddressing addressing{30, "10.64.0.0/16"};
};

/// networks.inband: the in-band management (and provisioning, user access) network.
struct InbandNetSpec {
  bool enabled = true;
  int ports_per_node = 0;  ///< 0: the server's
  double port_gbps = 0;    ///< 0: the server's
  std::string switch_id = "auto";
  NetAddressing addressing{20, "10.32.0.0/16"};
};

/// networks.oob: the out-of-band network: every server's BMC, every switch's management port
/// and the racks' PDUs.
struct OobNetSpec {
  bool enabled = true;
  std::string switch_id = "auto";
  int nodes_per_rack = 4;  ///< GPU servers per rack (DGX SuperPOD: 32 per SU in 8 racks)
  int pdus_per_rack = 2;   ///< metered PDUs per rack, each with a management port
  NetAddressing addressing{10, "10.16.0.0/16"};
};

/// The spec's `networks:` section: the cluster's networks besides the compute fabric.
struct NetworksSpec {
  Isolation isolation = Isolation::kPhysical;
  StorageNetSpec storage;
  InbandNetSpec inband;
  OobNetSpec oob;
};

/// A validated spec.
/// The largest cluster a spec may describe: 2^24 GPUs (16.7M, sixteen times the largest being
/// built) on at most 2^21 nodes; GPUs and NICs per node at most 1,024 (an NVL576 rack is 576).
constexpr long long kMaxSpecGpus = 1LL << 24;
constexpr long long kMaxSpecNodes = 1LL << 21;
constexpr long long kMaxSpecPerNode = 1024;

/// The longest `name:` accepted (characters): it titles reports and tables.
constexpr std::size_t kMaxSpecNameChars = 128;

/// The most training steps a workload's `steps:` (and `estimate --steps`) may name: 10^12, far
/// beyond any run (Llama 3 405B trained for ~1.2M steps).
constexpr double kMaxSpecSteps = 1e12;
/// The most tokens a workload's `tokens:` may name: 10^18, some 64,000 times Llama 3's 15.6T
/// (Llama 3 paper, section 3.1); at Llama 3's 16M tokens a step, well under kMaxSpecSteps.
constexpr double kMaxSpecTokens = 1e18;

struct Spec {
  std::string name;  ///< as the user wrote it (any one-line UTF-8 text)
  std::string path;  ///< the file it came from
  ClusterSpec cluster;
  FabricSpec fabric;
  std::optional<WorkloadSpec> workload;
  ConstraintsSpec constraints;
  AddressingSpec addressing;
  /// `networks:`; absent: the plan is the compute fabric alone, as before the section existed.
  std::optional<NetworksSpec> networks;
  /// `jobs:`: several jobs sharing the fabric (sim/jobs.h); empty when the section is absent.
  std::vector<JobSpec> jobs;
  std::vector<std::string> catalog_files;  ///< as written (relative to the spec's folder)
  /// `calibration:` as written (relative to the spec's folder); "" when absent.
  std::string calibration_file;
  /// The profile it names, read by load_spec (parse_spec reads only the path).
  std::optional<CalibrationProfile> calibration;
  std::map<std::string, SourceLoc> where;  ///< key path -> position in the file

  int gpus() const { return cluster.nodes * cluster.gpus_per_node; }
  /// A diagnostic pointing at `key` in this spec's file.
  Diagnostic at(const std::string& key, const std::string& message,
                const std::string& hint = "") const;
};

/// A spec together with the catalog it was validated against.
struct LoadedSpec {
  Spec spec;
  Catalog catalog;
};

/// Parses spec YAML text (`file` names it in messages). Checks syntax, keys, types and units;
/// does not look at the catalog.
Result<Spec> parse_spec(const std::string& text, const std::string& file);
/// Checks a parsed spec against the catalog: ids exist, counts fit the hardware; fills defaults
/// that come from the catalog (gpus_per_node, nics_per_node, nodes from gpus).
std::vector<Diagnostic> validate_spec(Spec& spec, const Catalog& catalog);
/// A spec key set from outside the file: "cluster.nodes" = "256".
struct KeyOverride {
  std::string key, value;
};

/// True for "a.b.c.d/len" with its host bits zero.
bool is_ipv4_prefix(const std::string& s);

/// Reads the file, loads the built-in catalog plus the spec's `catalog:` files, and validates.
/// `overrides` replace (or add) keys before parsing, so they are checked like the file's own;
/// messages then name the file with the overrides, e.g. "spec.yaml [cluster.nodes=256]".
Result<LoadedSpec> load_spec(const std::string& path,
                             const std::vector<KeyOverride>& overrides = {});

}  // namespace gf
