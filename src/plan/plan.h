// The planner: technology and topology choice, switch sizing, cabling, bill of materials.
// Pure: a validated spec and a catalog in, a Plan out.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "plan/bom.h"
#include "plan/networks.h"
#include "spec/spec.h"

namespace gf {

/// One tier-structured fabric plane, sized. All counts are per plane unless named `total`.
struct Topology {
  TopologyKind kind = TopologyKind::kSingle;
  int tiers = 1;
  bool rail_optimized = true;
  int planes = 1;
  double oversubscription = 1.0;   ///< as built: leaf down ports / up ports
  double lane_gbps = 0;            ///< speed of every fabric port in the plane
  int radix = 0;                   ///< switch ports at lane_gbps
  int rails = 1;                   ///< NICs per node = rails
  int leaf_down = 0, leaf_up = 0;  ///< ports per leaf
  int nodes_per_unit = 0;          ///< scalable unit
  /// The unit the spec asks (or a leaf allows); nodes_per_unit is smaller where the appliances'
  /// ports take node slots.
  int unit_slots = 0;
  int leaves_per_unit = 0;
  int units = 0;
  int leaves = 0, spines = 0, cores = 0;  ///< per plane
  int spine_down = 0, spine_up = 0;       ///< ports per spine used downwards / upwards
  /// clos3: uplinks of each spine of the last pod, fewer than spine_up when that pod is only
  /// partly filled (1:1 at the spine: as many uplinks as its leaves' links down).
  int last_pod_spine_up = 0;
  int pods = 0, units_per_pod = 0, spines_per_pod = 0;  ///< clos3 and dragonfly (pods = groups)
  int core_groups = 0, cores_per_group = 0;             ///< clos3: core group per spine index
  int global_links_per_pair = 0;                        ///< dragonfly
  long long node_leaf_links = 0, leaf_spine_links = 0, spine_core_links = 0;  ///< per plane
  long long max_endpoints = 0;  ///< what this kind and switch reach per plane
  /// The same once growth takes the top tier's headroom (fabric.spine_headroom keeps those
  /// ports free for it): what the fabric reaches without a new tier.
  long long max_endpoints_grown = 0;
  /// Growth's step (fabric.scalable_unit, else the nodes a leaf holds) and the leaves it takes:
  /// how free ports of the top tier turn into nodes (clos2 and clos3).
  int grow_nodes = 0, grow_leaves = 1;
};

/// An option the planner evaluated (technology x switch), for the reasoning.
struct Candidate {
  Technology technology = Technology::kRoce;
  std::string switch_id, topology;  ///< topology: the kind's name, "" when it cannot be built
  int tiers = 0, switches = 0;
  double network_capex_usd = 0, network_power_w = 0;
  bool chosen = false;
  std::string note;  ///< why it cannot be used, if so
};

/// Which tiers a link joins.
enum class LinkKind : uint8_t { kNodeLeaf, kApplianceLeaf, kLeafSpine, kSpineCore, kGlobal };
inline constexpr EnumName<LinkKind> kLinkKindNames[] = {
    {LinkKind::kNodeLeaf, "node-leaf"},
    {LinkKind::kApplianceLeaf, "appliance-leaf"},
    {LinkKind::kLeafSpine, "leaf-spine"},
    {LinkKind::kSpineCore, "spine-core"},
    {LinkKind::kGlobal, "global"}};
inline const char* link_kind_name(LinkKind k) { return name_of(kLinkKindNames, k); }

/// One physical link of the cabling plan. Indices are per plane: a node, leaf, spine or core
/// number counted from 0 in the order the names count from 1.
struct CableRun {
  LinkKind kind = LinkKind::kNodeLeaf;
  int plane = 0;
  long long a_index = 0, b_index = 0;  ///< node or switch numbers (a is the lower tier)
  int rail = 0;                        ///< NIC index on the node (node-leaf links)
  int a_port_no = 0, b_port_no = 0;    ///< switch ports from 1; 0 for a host port
  // Names, filled only when asked for (they cost time at 100k-GPU scale).
  std::string a_device, a_port, b_device, b_port, cable, length_class;
};

/// The plan of a cluster's scale-out fabric.
struct Plan {
  std::string name;
  long long gpus = 0;
  int nodes = 0, gpus_per_node = 0, nics_per_node = 0;
  GpuModel gpu;
  /// A node's GPUs are linked directly, without NVSwitch (cluster.scaleup_board; auto: the
  /// catalog's direct-link board of gpus_per_node GPUs): no NVLink SHARP.
  bool scaleup_direct = false;
  /// The hosts are x86 with AMD CPUs (cluster.host_cpu: amd), which NCCL's tuner rates apart
  /// from Intel's across nodes (CostShape::host_amd).
  bool host_amd = false;
  Nic nic;
  Switch sw;
  Technology technology = Technology::kRoce;
  std::string technology_reason;
  std::string switch_reason;
  LoadBalancing load_balancing = LoadBalancing::kEcmp;    ///< resolved
  EcmpSeedPolicy ecmp_seed = EcmpSeedPolicy::kPerSwitch;  ///< fabric.ecmp_hash.seed
  NcclRelease nccl = kNewestNccl;                         ///< cluster.nccl
  bool nccl_given = false;            ///< the spec named cluster.nccl (else the newest, by default)
  CalibrationProfile calibration;     ///< the spec's `calibration:` profile (identity without one)
  bool in_network_reduction = false;  ///< resolved
  int appliance_ports = 0;
  Topology topo;
  int leaf_total = 0, spine_total = 0, core_total = 0, switch_total = 0;
  long long node_leaf_total = 0, leaf_spine_total = 0, spine_core_total = 0, link_total = 0;
  /// Both directions across a half/half cut: the least that a tier carries, where a leaf carries
  /// up no more than its endpoints fill of its uplinks (a dragonfly's halves are whole groups).
  double bisection_gbps = 0;
  double spine_ports_free_fraction = 0;  ///< of the top tier's ports, for growth (seed §8)
  long long max_nodes_same_tiers = 0;    ///< growth limit without adding a tier
  Bom bom;  ///< the compute fabric and its servers; the other networks have their own
  /// The other networks (spec networks:), sized; absent without a networks: section.
  std::optional<NetworksPlan> networks;
  std::vector<Candidate> candidates;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};

/// A spec file read, validated and planned: what most commands start from.
struct PlannedSpec {
  Spec spec;
  Catalog catalog;
  Plan plan;
};

/// Peak memory of planning, per node, bytes: `plan -o` on roce-16k-like specs of 8,192 and
/// 32,768 nodes peaked at 34 and 101 MB (GNU time, Release build), outputs held in memory
/// included: ~2.8 KB a node, rounded up.
constexpr double kPlanBytesPerNode = 3 * 1024;
/// Peak memory of building the fabric graph and simulating a ring-family collective, per GPU,
/// bytes: `simulate -b 1G -e 1G` (GNU time, Release build, 2026-12-02) peaked at 290 MB on
/// bench/specs/ib-131k.yaml (131,072 GPUs, adaptive routing: its flows' parts and per-link
/// loads), 241 MB on it under ECMP and 248 MB on roce-131k-qm.yaml; 2.16 GiB on ib-1m.yaml:
/// ~2.2 KB a GPU, rounded up. Alltoall at scale needs more; its flows are budgeted in sim.
constexpr double kSimBytesPerGpu = 2.5 * 1024;
/// Memory a command needs for a cluster of `nodes` x `gpus_per_node`: planning, and building the
/// fabric and simulating when `simulates`.
double estimated_memory_bytes(long long nodes, int gpus_per_node, bool simulates);

/// What load_and_plan may use. `memory_bytes` (0: no limit): a spec whose command would need
/// more (estimated_memory_bytes) is refused before planning, with the figures, at cluster.nodes.
struct LoadLimits {
  double memory_bytes = 0;
  bool simulates = false;
};
Result<PlannedSpec> load_and_plan(const std::string& path, const LoadLimits& limits = {});
/// What `limits` leave to a simulation's flows (SimOptions::memory_budget_bytes) once `fabrics`
/// fabric graphs of `nodes` x `gpus_per_node` are built (estimated_memory_bytes each); 0 where
/// the limits set none.
size_t flows_budget_bytes(const LoadLimits& limits, long long nodes, int gpus_per_node,
                          int fabrics = 1);

/// Plans the fabric of a validated spec. Errors point into the spec (e.g. a topology that
/// cannot hold the cluster).
Result<Plan> make_plan(const Spec& spec, const Catalog& catalog);

/// Whether `nic`'s ports, split over `planes`, meet `sw`'s lanes as the planner checks them: on
/// InfiniBand, whose links run the same lanes at the same rate at both ends, the switch's SerDes
/// must reach the NIC's lane rate; Ethernet optics carry gearboxes, and the planner runs a
/// dual-port card's whole rate as one link, so neither is checked (true).
bool nic_meets_switch_lanes(const Nic& nic, const Switch& sw, Technology tech, int planes);

/// Sizes one plane of `kind` for `nodes` x `rails` endpoints on switches of `radix` ports.
/// nullopt when the topology cannot hold them.
std::optional<Topology> size_topology(TopologyKind kind, int nodes, int rails, int radix,
                                      double lane_gbps, const FabricSpec& fabric,
                                      int appliance_ports);

/// Node `n`'s name (0-based) as cabling.csv and the configurations name it: node001 ...
std::string node_name(const Plan& plan, long long n);

/// Endpoints on each leaf of one plane, in leaf order, as the cabling plan places them: the nodes'
/// ports unit by unit (rail-optimized) or whole nodes a leaf (top of rack), then `appliance_ports`
/// on the last leaves' free down ports. A single switch is one leaf.
std::vector<int> leaf_endpoints(const Topology& t, long long nodes, int appliance_ports);

/// Every link of the plan, in a deterministic order with deterministic names and ports.
/// `visit` is called once per link (131k GPUs: ~400k links, so no vector is built).
void for_each_link(const Plan& plan, const Catalog& catalog,
                   const std::function<void(const CableRun&)>& visit, bool with_names = true);
/// The compute fabric's switches by name (`top_tier`: a spine of clos2, the switch of single).
void for_each_compute_switch(
    const Plan& plan, const std::function<void(const std::string& name, bool top_tier)>& visit);
/// The same links as CSV text with a header row, every network's links included; the last
/// column, `network`, names the network of each link (compute, storage, inband, oob).
std::string cabling_csv(const Plan& plan, const Catalog& catalog);

/// Bill of materials of a sized plan (fills plan.bom).
void build_bom(Plan& plan, const Catalog& catalog);

/// Cable length class of each link kind and the medium it gets (for BOM and cabling).
struct LinkMedium {
  std::string length_class;  ///< rack (<= 3 m) | row (<= 30 m) | hall (> 30 m)
  double length_m = 0;
  const CablePart* cable = nullptr;        ///< dac or aoc; nullptr when optical
  /// Links one `cable` carries: a switch cage's ports at the link speed (a splitter to that many
  /// NICs; between two switches, one cable of the cage's speed), 1 where a cage is one port.
  int links_per_cable = 1;
  const CablePart* xcvr_end = nullptr;     ///< transceiver on a single-port end
  /// Links one `xcvr_end` serves: 1, or at a NIC whose port `fabric.planes` splits, the planes
  /// (one transceiver of the port's full speed, its lanes broken out by the fibre).
  int links_per_end = 1;
  const CablePart* xcvr_switch = nullptr;  ///< transceiver on a switch end (twin-port aware)
  const CablePart* fibre = nullptr;
  std::string label() const;  ///< e.g. "aoc-400g" or "xcvr-2x400g-sr8+fibre"
};
/// The medium for one kind of link (appliances are cabled as nodes, global links as spine-core).
LinkMedium link_medium(const Plan& plan, const Catalog& catalog, LinkKind link_kind);

}  // namespace gf
