// The fabric graph of a plan: GPUs, scale-up domains, NICs and every switch of every plane,
// joined by directed links with a capacity and a latency; and equal-cost multipath routing.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "catalog/catalog.h"
#include "plan/plan.h"

namespace gf {

/// What a link joins; reports name bottlenecks by this class.
enum class LinkClass : uint8_t {
  kScaleUp,    ///< GPU <-> NVSwitch (NVLink) or Infinity Fabric
  kPcie,       ///< host side of a NIC (GPU <-> NIC)
  kNicLeaf,    ///< NIC <-> leaf
  kLeafSpine,  ///< leaf <-> spine
  kSpineCore,  ///< spine <-> core (3 tiers)
  kGlobal,     ///< spine <-> spine between dragonfly groups
};
const char* link_class_name(LinkClass c);

/// RoCE v2's UDP destination port (IANA): the same on every packet, so it adds no entropy.
constexpr uint16_t kRoceV2UdpPort = 4791;

/// The header fields a switch hashes to choose among equal next hops: RoCE v2's 5-tuple (the
/// protocol, UDP, is the same for every flow and is left out).
struct FlowTuple {
  uint32_t src_ip = 0, dst_ip = 0;
  uint16_t src_port = 0, dst_port = kRoceV2UdpPort;
};

/// The UDP source port a RoCE v2 NIC puts on a QP's packets, from the QP numbers of both ends,
/// as Linux computes it (include/rdma/ib_verbs.h: rdma_calc_flow_label, then
/// rdma_flow_label_to_udp_sport): 0xC000 to 0xFFFF. This port is a connection's entropy.
uint16_t roce_udp_source_port(uint32_t local_qpn, uint32_t remote_qpn);

/// A stable IPv4 address per NIC port, standing for the address plan's (config/addressing): in
/// 10.0.0.0/8, the plane in bits 21-23 and the NIC in the low 21 bits.
uint32_t nic_ipv4(int nic, int plane);

/// The ECMP hash seed of a switch (tier 1 leaf, 2 spine, 3 core; `index` counts the switches of
/// that tier in its plane from 0), the value the generated switch configurations set:
/// - per_switch: 1,000,000 x tier + 100,000 x plane + index + 1, one per switch of a plane;
/// - per_tier: SONiC's defaults by role (sonic-buildimage dockers/docker-orchagent/
///   switch.json.j2): 10 for leaves (LeafRouter), 25 for spines (SpineRouter), 40 for cores
///   (FabricSpineRouter);
/// - same: 0 everywhere (the tiers polarize).
uint32_t ecmp_hash_seed(EcmpSeedPolicy policy, int plane, int tier, int index);

/// A compute switch's plane, tier (1 leaf, 2 spine, 3 core) and index within its tier and plane.
struct SwitchPosition {
  int plane = 0, tier = 1, index = 0;
};
/// The position of the k-th compute switch in the fabric's order (plane by plane: its leaves,
/// spines, cores), which for_each_compute_switch (plan/plan.h) follows too.
SwitchPosition switch_position(const Topology& t, int k);

/// One switch's ECMP hash: the Toeplitz hash (Microsoft's RSS specification, "Verifying the RSS
/// Hash Calculation"; the hash NICs compute for receive-side scaling) of src IP, dst IP, src
/// port, dst port, under a 128-bit key expanded from the switch's seed (splitmix64); the next
/// hop is the hash modulo the number of equal next hops. Like the CRCs switch ASICs use it is
/// linear in the header bits: switches with one key pick the same bucket for the same flow,
/// so the flows a leaf sent to one spine all leave that spine by one uplink when the spine
/// hashes with the leaf's key; a different key is a different linear map and spreads them.
class EcmpHash {
 public:
  static EcmpHash from_seed(uint32_t seed);
  /// From the first 128 bits of a Toeplitz key, big-endian (k0 then k1).
  static EcmpHash from_key(uint64_t k0, uint64_t k1);
  uint32_t operator()(const FlowTuple& t) const {
    const uint64_t hi = static_cast<uint64_t>(t.src_ip) << 32 | t.dst_ip;
    const uint32_t lo = static_cast<uint32_t>(t.src_port) << 16 | t.dst_port;
    uint32_t h = 0;
    for (int p = 0; p < 16; ++p) h ^= table_[p * 16 + ((hi >> (60 - 4 * p)) & 0xF)];
    for (int p = 0; p < 8; ++p) h ^= table_[(16 + p) * 16 + ((lo >> (28 - 4 * p)) & 0xF)];
    return h;
  }

 private:
  std::array<uint32_t, 24 * 16> table_{};  ///< per input nibble and value: its key windows XORed
};

/// A directed link.
struct Link {
  int32_t from = 0, to = 0;  ///< vertex ids
  double bytes_per_s = 0;    ///< capacity in this direction
  double latency_s = 0;      ///< propagation + serialisation of one hop (switch latency included)
  LinkClass cls = LinkClass::kScaleUp;
  bool failed = false;
};

/// The graph. Vertex ids: GPUs first (node * gpus_per_node + g), then scale-up domains, NICs
/// (node * nics_per_node + rail), then switches plane by plane (leaves, spines, cores).
class Fabric {
 public:
  /// Builds the graph of `plan` from its cabling (the same links cabling.csv lists).
  static Fabric build(const Plan& plan, const Catalog& catalog);

  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int nics_per_node() const { return rails_; }
  int planes() const { return planes_; }
  int domain_gpus() const { return domain_gpus_; }  ///< GPUs per scale-up domain
  long long gpus() const { return 1LL * nodes_ * gpus_per_node_; }
  const std::vector<Link>& links() const { return links_; }

  int gpu(int node, int g) const { return node * gpus_per_node_ + g; }
  int domain_of_gpu(int gpu) const { return gpu / domain_gpus_; }
  int nic(int node, int rail) const { return node * rails_ + rail; }
  /// The NIC nearest GPU g of its node (GPUs share NICs evenly when there are fewer NICs).
  int rail_of_gpu(int g) const { return g * rails_ / gpus_per_node_; }
  /// A GPU attached to NIC `rail` (the first of those that share it; with more NICs than GPUs
  /// the GPU that owns it).
  int gpu_of_rail(int rail) const {
    return rails_ <= gpus_per_node_ ? (rail * gpus_per_node_ + rails_ - 1) / rails_
                                    : rail * gpus_per_node_ / rails_;
  }

  // Link ids of host-side hops.
  int gpu_up(int gpu) const { return gpu_up_[gpu]; }      ///< GPU -> scale-up switch
  int gpu_down(int gpu) const { return gpu_down_[gpu]; }  ///< scale-up switch -> GPU
  int pcie_to_nic(int nic) const { return pcie_up_[nic]; }
  int pcie_from_nic(int nic) const { return pcie_down_[nic]; }
  /// With more NICs than GPUs in a node, the GPU's own x16 link into the PCIe switch its NICs
  /// hang off, which all of its NICs' GPUDirect traffic crosses (GPU -> switch, and back);
  /// -1 where a GPU has one NIC (its NIC's link above is then the whole PCIe path).
  int gpu_pcie_to_nic(int nic) const { return gpu_pcie_up_.empty() ? -1 : gpu_pcie_up_[nic]; }
  /// The GPUs are PCIe cards (ScaleUpTech::kPcie): a GPU's one x16 link (gpu_up / gpu_down) is
  /// its path to the other GPUs of its node and to the NICs alike, which hang off the host's
  /// PCIe fabric (the domain's vertex); NCCL runs no PXN between them (it needs NVLink).
  bool host_pcie() const { return host_pcie_; }
  int gpu_pcie_from_nic(int nic) const { return gpu_pcie_down_.empty() ? -1 : gpu_pcie_down_[nic]; }
  int nic_to_leaf(int nic, int plane) const { return nic_up_[nic * planes_ + plane]; }
  int leaf_to_nic(int nic, int plane) const { return nic_down_[nic * planes_ + plane]; }

  /// Appends to `path` the links from NIC `src` to NIC `dst` on `plane`, each switch choosing
  /// among its equal next hops by its own ECMP hash of `flow` (hash_at). Returns false when no
  /// path survives failed links.
  /// `spread` enumerates different equal-cost paths for the same flow: at each hop with n
  /// choices its next base-n digit is added to the hashed choice (adaptive routing, spraying);
  /// when fewer remain than a hop has choices, the rest is scrambled for the next hops.
  bool route(int src_nic, int dst_nic, int plane, const FlowTuple& flow, std::vector<int32_t>& path,
             uint64_t spread = 0) const;
  /// The same for a QP: the NICs' addresses and the UDP source port of QP numbers taken from
  /// `qp` (24 bits each end).
  bool route(int src_nic, int dst_nic, int plane, uint64_t qp, std::vector<int32_t>& path,
             uint64_t spread = 0) const {
    return route(src_nic, dst_nic, plane, qp_tuple(src_nic, dst_nic, plane, qp), path, spread);
  }
  /// The 5-tuple of a QP between two NICs (see route).
  static FlowTuple qp_tuple(int src_nic, int dst_nic, int plane, uint64_t qp) {
    return {nic_ipv4(src_nic, plane), nic_ipv4(dst_nic, plane),
            roce_udp_source_port(static_cast<uint32_t>(qp & 0xFFFFFF),
                                 static_cast<uint32_t>((qp >> 24) & 0xFFFFFF)),
            kRoceV2UdpPort};
  }
  /// What switch vertex `v` hashes `flow` to (its seed's EcmpHash).
  uint32_t hash_at(int v, const FlowTuple& flow) const {
    return hashes_[static_cast<size_t>(hash_of_[v])](flow);
  }
  /// Tier of a vertex: 0 host side, 1 leaf, 2 spine, 3 core.
  int tier(int v) const { return tier_[v]; }
  /// Like route(), but every switch hands out its equal next hops round-robin (`turn` holds one
  /// counter per vertex, kept by the caller across calls): many routes then load the equal
  /// paths exactly evenly, as packet spraying or many hashed connections do on average.
  bool route_round_robin(int src_nic, int dst_nic, int plane, std::vector<uint32_t>& turn,
                         std::vector<int32_t>& path) const;
  /// Like route(), but every switch sends the route over the equal next hop that carries the
  /// least so far, as adaptive routing sends each flowlet to its least-loaded port (NVIDIA
  /// Spectrum-X and InfiniBand adaptive routing: the egress port with the shortest queue);
  /// `load` holds what each link carries (one entry a link, kept by the caller across calls)
  /// and gets `weight` added on every link of the route. Ties go to the first equal next hop
  /// from a place `ties` and the switch choose, so routes of equal weight take the next hops in
  /// turn, and flow sets balanced apart (another job's) do not all start on the same port.
  bool route_least_loaded(int src_nic, int dst_nic, int plane, std::vector<double>& load,
                          double weight, uint64_t ties, std::vector<int32_t>& path) const;
  /// The least common multiple of the numbers of equal next hops that round-robin counter
  /// `slot` chooses among, over every destination leaf (1 where it never chooses; 0 when too
  /// large to matter): a counter moved by a multiple of it chooses as before.
  uint64_t round_robin_period(size_t slot) const;
  int vertices() const { return static_cast<int>(tier_.size()); }
  /// Counters route_round_robin() needs: one per vertex, and one per (core, destination pod).
  size_t round_robin_slots() const {
    return tier_.size() + static_cast<size_t>(cores_) * planes_ * std::max(1, pods_);
  }
  /// The link in the opposite direction (links are built in pairs).
  static int reverse(int link) { return link ^ 1; }
  /// Sum of link latencies along a path, seconds.
  double latency_s(const std::vector<int32_t>& path) const;
  /// The NIC -> ... -> switch path to the switch vertex `sw` (in-network reduction roots).
  bool route_to_switch(int src_nic, int plane, int sw, uint64_t hash,
                       std::vector<int32_t>& path) const;

  /// Vertex of leaf `i` of a plane, and the leaf a NIC plugs into.
  /// The first switch vertex; host-side vertices (GPUs, scale-up switches, NICs, PCIe
  /// switches) come before it.
  int first_switch_vertex() const { return switch_base_; }
  /// The first link built from the cabling plan; host-side links come before it, in pairs.
  int first_cable_link() const { return first_cable_link_; }
  int leaf_vertex(int plane, int i) const { return switch_base_ + plane * per_plane_ + i; }
  int spine_vertex(int plane, int i) const {
    return switch_base_ + plane * per_plane_ + leaves_ + i;
  }
  int core_vertex(int plane, int i) const {
    return switch_base_ + plane * per_plane_ + leaves_ + spines_ + i;
  }
  int leaf_of_nic(int nic, int plane) const { return nic_leaf_[nic * planes_ + plane]; }
  /// Links from a switch to the tier above.
  int up_degree(int v) const { return static_cast<int>(up_[v].size()); }
  /// Whether the fabric has a core tier (three tiers of switches).
  bool has_core() const { return cores_ > 0; }
  /// Whether any link has been failed (fail_link).
  bool any_failed() const { return any_failed_; }
  /// Top-tier switch used as the in-network reduction root for a rail (spine or core). With
  /// failed parts, the first of the rail's candidates that reaches every leaf of the NICs of the
  /// communicator's nodes, the fabric's first `nodes` (0: all of them).
  int reduction_root(int plane, int rail, int nodes = 0) const;
  bool is_uplink(int link) const {
    const auto c = links_[link].cls;
    return (c == LinkClass::kLeafSpine || c == LinkClass::kSpineCore) &&
           tier_[links_[link].from] < tier_[links_[link].to];
  }

  /// Marks a link failed (both directions of a cable fail together: call it for each).
  void fail_link(int id);
  /// Fails every link touching a vertex.
  void fail_vertex(int v);
  /// Sets a link's capacity in its direction (a port trained at a lower speed, a degraded
  /// switch): routing is unchanged, the flows over it share less.
  void set_capacity(int id, double bytes_per_s) { links_[id].bytes_per_s = bytes_per_s; }
  /// NCCL restarted without a port that is down: NIC `nic`'s GPUs send and receive through NIC
  /// `through` of the same node instead, over its PCIe link, its ports and its leaves, which
  /// their traffic then shares (NCCL keeps only active ports as devices, transport/net_ib/
  /// init.cc@v2.29.7-1:280, and its search maps every GPU to a device it has).
  void send_through(int nic, int through);
  /// Links touching vertex `v` (either direction).
  std::vector<int32_t> links_of_vertex(int v) const;
  std::string vertex_name(int v) const;

 private:
  int add_vertex(int tier, int pod);
  int add_link(int from, int to, double bytes_per_s, double latency_s, LinkClass cls);
  // Candidate next links from switch `v` towards leaf `dst_leaf` (same plane): `out`, or
  // without failures where every uplink is one, the switch's own list of them.
  std::span<const int32_t> next_hops(int v, int dst_leaf, std::vector<int32_t>& out) const;
  void next_hops_all(int v, int dst_leaf, std::vector<int32_t>& out) const;
  // From a NIC to a NIC on one plane; `choose` picks among the equal next links at each hop.
  std::span<const int32_t> next_hops_intact(int v, int dst_leaf) const;
  template <typename Choose>
  bool walk(int src_nic, int dst_nic, int plane, std::vector<int32_t>& path, Choose&& choose) const;

  int nodes_ = 0, gpus_per_node_ = 0, rails_ = 0, planes_ = 1, domain_gpus_ = 8;
  TopologyKind kind_ = TopologyKind::kSingle;
  int switch_base_ = 0, first_cable_link_ = 0, per_plane_ = 0, leaves_ = 0, spines_ = 0, cores_ = 0;
  int spines_per_pod_ = 0, cores_per_group_ = 0;
  std::vector<Link> links_;
  std::vector<int8_t> tier_;      ///< per vertex: 0 host side, 1 leaf, 2 spine, 3 core
  std::vector<int32_t> hash_of_;  ///< per vertex: index into hashes_ (one per distinct seed)
  std::vector<EcmpHash> hashes_;
  std::vector<int32_t> pod_;  ///< per vertex: pod / group of a switch; for a core its group
  std::vector<int32_t> gpu_up_, gpu_down_, pcie_up_, pcie_down_;
  std::vector<int32_t> gpu_pcie_up_, gpu_pcie_down_;  ///< per NIC: its GPU's shared link, if any
  bool host_pcie_ = false;                            ///< host_pcie()
  std::vector<int32_t> nic_up_, nic_down_;            ///< per (nic, plane)
  std::vector<int32_t> nic_leaf_;                     ///< leaf vertex per (nic, plane)
  /// An adjacency entry: what routing needs of a link, kept contiguous per switch so that
  /// choosing among equal paths does not chase links across memory.
  struct Adj {
    int32_t link, to, to_pod;
    bool failed;
  };
  std::vector<std::vector<Adj>> up_;  ///< per switch: links to the tier above
  std::vector<int32_t> link_to_;      ///< per link: links_[l].to, packed (routing's next vertex)
  /// Per switch (vertex - switch_base_): up_'s link ids, in its order.
  std::vector<std::vector<int32_t>> up_links_;
  /// Per spine or core: down_'s link ids grouped by where they lead (a spine's by leaf, a
  /// core's by pod), each group in down_'s order; and each group's key and first entry.
  std::vector<std::vector<int32_t>> down_links_;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> down_groups_;
  /// Per switch: the first group's key when the keys run consecutively (a spine that reaches
  /// every leaf of its pod, a core every pod), so that a group is found by its offset; -1 else.
  std::vector<int32_t> dense_key0_;
  std::vector<std::vector<Adj>> down_;    ///< per switch: links to the tier below
  std::vector<std::vector<Adj>> global_;  ///< per switch: global links (dragonfly spines)
  std::vector<uint8_t> global_reach_;     ///< dragonfly: [spine index in plane * groups + group]
  int groups_ = 0;
  int pods_ = 1;
  // With failed links, a next hop counts only if it still reaches the destination leaf (as
  // routing protocols withdraw routes); answers are cached per (vertex, destination leaf).
  bool any_failed_ = false;
  bool reaches(int v, int dst_leaf) const;
  mutable std::unordered_map<uint64_t, bool> reach_cache_;
};

}  // namespace gf
