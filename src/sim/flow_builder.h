// Collectives as flows: which flows each of NCCL's algorithms puts on which links of the fabric
// graph (rings and trees over the scale-up domains and the NICs, NVLS through the NVSwitch,
// CollNet to the switches that reduce, PXN for point-to-point), spread over paths as the
// load-balancing mode does. collective.cc runs them with the max-min flow model (flow_model.h).
// Internal to the sim layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/collective.h"
#include "sim/flow_model.h"
#include "sim/link_load.h"
#include "sim/nccl_constants.h"
#include "topo/fabric.h"

namespace gf {

/// Bytes each algorithm's flows move in the model; results scale linearly with size.
constexpr double kPayload = 1e9;
/// Above this many connections an alltoall is simulated leaf pair by leaf pair.
constexpr double kMaxAlltoallConnections = 4e6;
/// The most QP routes alltoall_by_leaf hashes one by one (~0.7 us each): beyond, ECMP and
/// multi-QP connections of a leaf pair are split over its ways by one multinomial draw (the
/// distribution ideal per-connection hashes give at the source leaf's uplinks).
constexpr double kMaxHashedAlltoallRoutes = 8e6;
/// The shares of `n` connections over `k` ways when each picks one uniformly and
/// independently (an ideal ECMP hash): one multinomial draw, seeded (deterministic).
std::vector<double> multinomial_shares(long long n, int k, uint64_t seed);
/// Paths a leaf-pair aggregate is split over, at least (one per uplink of the source leaf).
constexpr int kAggregateWays = 16;
/// Peak memory of building and solving flows over the flows' own memory
/// (FlowSet::memory_bytes): a 32,768-node rail-optimized alltoall peaked at 15.2 GB (GNU time)
/// for 8.8 GB of flows.
constexpr double kSolverMemoryFactor = 1.75;

/// A 64-bit mix of two keys (splitmix64's finaliser): the ECMP hash input of a flow.
inline uint64_t mix_key(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9e3779b97f4a7c15ULL + b + 0x632be59bd9b4e019ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// splitmix64's generator: the next number of the sequence `state` seeds, the same on every
/// platform (the standard library's engines and shuffles are not).
inline uint64_t splitmix64_next(uint64_t& state) {
  state += 0x9e3779b97f4a7c15ULL;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// splitmix64 as a uniform random bit generator for <random>'s distributions.
struct SplitMix64 {
  using result_type = uint64_t;
  uint64_t state;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() { return splitmix64_next(state); }
};

/// QP `q` after the QP `qp` (24-bit local and remote QP numbers, local in the low bits): both
/// ends' numbers advance by q.
inline uint64_t next_qp(uint64_t qp, int q) {
  const uint64_t l = ((qp & 0xFFFFFF) + static_cast<uint64_t>(q)) & 0xFFFFFF;
  const uint64_t r = (((qp >> 24) & 0xFFFFFF) + static_cast<uint64_t>(q)) & 0xFFFFFF;
  return l | r << 24;
}

/// Link capacities as the Simple protocol uses them: raw bytes/s times what Simple achieves on
/// each class of link (the generation's on NVLink, scale_up_simple_efficiency; the network's,
/// nccl_constants.h; or the calibration profile's measured efficiency of the class); failed
/// links carry nothing.
std::vector<double> simple_capacities(const Fabric& fab, const CalibrationProfile& profile,
                                      GpuGeneration generation);
/// The same for a plan: its calibration profile and its GPUs' generation.
std::vector<double> simple_capacities(const Fabric& fab, const Plan& plan);

/// Adaptive routing or spraying: flows are split into parts over the least-loaded ports.
inline bool splits_flows(LoadBalancing lb) {
  return lb == LoadBalancing::kAdaptive || lb == LoadBalancing::kSpray;
}

/// Runs `fs` on links of `capacity` (max-min fair sharing to completion) and fills `m` with
/// seconds per payload byte, the bottleneck link class, its utilisation and the ECMP collision
/// factor (`whole_pieces`: its flows go in pieces no load balancing splits further, adaptive
/// routing's parts or in-network reduction's flows to their switch: collision_factor's `parts`).
/// With `keep`, the flows' traffic per link is added to it (link_load.h).
void solve_flows(const Fabric& fab, const FlowSet& fs, const std::vector<double>& capacity,
                 double payload, AlgorithmModel& m, LinkLoad* keep = nullptr,
                 bool whole_pieces = false);
/// solve_flows without the ECMP collision factor, which depends on the flows' routes and bytes
/// alone: what solving the same flows again on other capacities needs
/// (CollectiveModel::relink).
void solve_rates(const Fabric& fab, const FlowSet& fs, const std::vector<double>& capacity,
                 double payload, AlgorithmModel& m, LinkLoad* keep = nullptr);

/// The ECMP collision factor of `fs`: how much hotter the most loaded switch-to-switch link is
/// than it would be were every switch to spread its own bytes perfectly evenly over its links,
/// whatever the load balancing. Per group (leaf-spine up, leaf-spine down, spine-core up,
/// spine-core down; failed links left out), a switch's even share is its bytes over its links
/// there (a link belongs to its lower-tier switch); the factor is the group's hottest link over
/// the largest such share, the largest over the groups. With `parts`, the flows' pieces are as
/// fine as any load balancing could make them (adaptive routing's parts, the model's grain and
/// not the switches'; an in-network reduction's flow to its switch, which no path but its own
/// reaches), so shares are rounded up to whole pieces. 1: no link hotter than the busiest
/// switch's even spread; 8: a QP alone on one of 8 links where its switch's share is an eighth
/// of it, or eight QPs hashed onto one link. 0: no switch-to-switch link carries any of `fs`.
double collision_factor(const Fabric& fab, const FlowSet& fs, bool parts = false);

/// Builds the flows of one collective on the first `nodes` nodes of a fabric.
struct FlowBuilder {
  using Hop = FlowSet::Hop;

  /// The collective's ranks are the GPUs of the first `nodes` nodes of `fab`.
  FlowBuilder(const Fabric& fab, LoadBalancing lb, uint64_t seed, int nodes);

  const Fabric& fab;
  LoadBalancing lb;
  uint64_t seed;
  int nodes, G, R, P;  // nodes; GPUs, NICs (rails) and planes per node
  long long ranks;
  int D;        // GPUs per scale-up domain (within the ranks used)
  int domains;  // scale-up domains used
  int unroutable = 0;
  int spray_ways = nccl::kSprayWays;
  size_t flow_budget = 0;   // bytes the flows of one algorithm may take; 0 = no limit
  double flows_needed = 0;  // bytes an over-budget algorithm was estimated to need; 0 = unknown
  bool over_budget = false;
  std::vector<double> path_latency;  // sample node-to-node path latencies
  std::vector<int32_t> scratch;
  std::vector<double> link_bytes;  // per link: routes counted by hash_connections
  /// Per link: the flows' coefficients adaptive routing has put on it (route_least_loaded),
  /// for the flow set being built; new_flow_set() clears it. Coefficients weigh as bytes would:
  /// the flows one builder method adds to a set carry equal bytes (a ring's channels, a tree's,
  /// an alltoall's connections, one group_flows call's groups).
  std::vector<double> route_load;
  std::vector<int32_t> merge_slot;  // per link: its place in the path merge_from builds
  bool splits_flows() const { return gf::splits_flows(lb); }
  /// Starts the flows of another algorithm: adaptive routing balances each set alone.
  void new_flow_set() { route_load.clear(); }
  std::vector<int32_t> touched;

  int node_of(long long gpu) const { return static_cast<int>(gpu / G); }
  long long domain_first(int d) const { return 1LL * d * D; }
  int domain_size(int d) const {
    return static_cast<int>(std::min<long long>(D, ranks - domain_first(d)));
  }
  int nic_of_gpu(long long gpu) const {
    return fab.nic(node_of(gpu), fab.rail_of_gpu(static_cast<int>(gpu % G)));
  }
  /// NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (0: NCCL's own count).
  int min_channels = 0, max_channels = 0;
  /// CollNet is on and its chain graph's intra-node rate exceeds the network's (a scale-up
  /// domain of several GPUs): the communicator adds half its channels (kept_channels).
  bool collnet_channels = false;
  /// NCCL's MAXCHANNELS of the release run (the most channels a communicator may have).
  int channel_limit = nccl::kMaxChannels;
  /// Across domains, NCCL's search graph's channels (ring_graph_channels_across); 0: one a NIC.
  int net_graph_channels = 0;
  /// The topology search's channels for rings and trees (tuning.cc's graphs[a]->nChannels):
  /// across domains the graph above, inside one half of NCCL's NVLink count; the communicator
  /// duplicates them.
  int ring_graph_channels() const {
    if (domains > 1 && net_graph_channels > 0) return net_graph_channels;
    return (domains > 1 ? R * nccl::kRingChannelsPerNic : nccl::kIntraDomainChannels) /
           nccl::kCommChannelsPerGraphChannel;
  }
  int tree_graph_channels() const {
    if (domains > 1 && net_graph_channels > 0) return net_graph_channels;
    return (domains > 1 ? R * nccl::kTreeChannelsPerNic : nccl::kIntraDomainChannels) /
           nccl::kCommChannelsPerGraphChannel;
  }
  /// The channels NCCL_MAX_NCHANNELS keeps of the duplicated graph's (before
  /// NCCL_MIN_NCHANNELS copies them): channel c runs as channel c % kept, and channel k < kept
  /// on the graph channel k % graph channels (connect.cc@v2.29.7-1:356-365 copyChannels,
  /// 445-453 the duplicated half), at most MAXCHANNELS.
  int kept_channels(int graph) const {
    int c = graph * nccl::kCommChannelsPerGraphChannel;
    // CollNet on, more than one GPU a node: half the channels again, copies of the first ones
    // (connect.cc@v2.29.7-1:457-462), before NCCL_MAX/MIN_NCHANNELS (:483-492).
    if (collnet_channels) c = std::min(channel_limit, c + c / 2);
    if (max_channels > 0) c = std::min(c, max_channels);
    return std::clamp(c, 1, channel_limit);
  }
  /// The communicator's channels: those kept, copied up to NCCL_MIN_NCHANNELS
  /// (connect.cc@v2.29.7-1:483-492, v2.18.6-1:413-414), at most MAXCHANNELS.
  int comm_channels(int graph) const {
    return std::min(std::max(kept_channels(graph), min_channels), channel_limit);
  }
  int ring_channels() const { return comm_channels(ring_graph_channels()); }
  /// NCCL's p2p channels inside one domain: nccl::kDomainP2pChannels, NCCL_MAX_NCHANNELS
  /// below it and NCCL_MIN_NCHANNELS above it (the communicator's channels, which p2p rounds up
  /// to a power of two: domain_p2p_split), at most MAXCHANNELS.
  int domain_p2p_channels() const {
    int c = nccl::kDomainP2pChannels;
    if (max_channels > 0) c = std::min(c, max_channels);
    return std::clamp(std::max(c, min_channels), 1, channel_limit);
  }
  int tree_channels() const { return comm_channels(tree_graph_channels()); }

  void nvlink(long long a, long long b, double coef, std::vector<Hop>& out) const;
  /// GPU memory to NIC `nic` over PCIe (the GPU's shared x16 link first where it has several
  /// NICs), and back.
  void pcie_to(int nic, double coef, std::vector<Hop>& out) const;
  void pcie_from(int nic, double coef, std::vector<Hop>& out) const;

  /// NIC to NIC across the fabric, spread as the load-balancing mode does.
  bool net(int nic_a, int nic_b, int plane, uint64_t key, double coef, std::vector<Hop>& out);
  /// One connection from NIC to NIC over every plane, `coef` / planes on each from `plane` on:
  /// NCCL merges a NIC's ports (one a plane) into one device and spreads each connection's data
  /// over them (NCCL_IB_MERGE_NICS). Plane k's part is keyed mix_key(key, k), one plane's `key`.
  bool net_every_plane(int nic_a, int nic_b, int plane, uint64_t key, double coef,
                       std::vector<Hop>& out);

  /// Sums repeated links among out[start..] (spread paths share their first and last hops).
  void merge_from(std::vector<Hop>& out, size_t start);

  /// GPU a to GPU b: over the scale-up domain when they share one; otherwise through the NIC on
  /// b's rail (PXN: first over NVLink to the local GPU on that rail, as NCCL does).
  bool gpu_to_gpu(long long a, long long b, uint64_t key, double coef, std::vector<Hop>& out);

  /// Alltoall: every GPU sends S/N to every other. Across domains NCCL's PXN funnels all of a
  /// node's traffic for GPU d through one connection (the local GPU on d's rail to d), split over
  /// its channels; the G pairs sharing a connection have equal rates by symmetry, so each
  /// connection is one flow whose network hops carry G pairs. Scale-up hops are added for the
  /// first domain only: every domain loads its NVLink alike.
  void alltoall(FlowSet& fs);

  /// Alltoall at scale: the connections between the NICs of one leaf and those of another
  /// (same rail and plane) are one flow. NIC links count the pairs that cross them; between the
  /// leaves each link carries the share of the connections the switches hashed onto it (ECMP,
  /// multi-QP: every connection and QP hashed), or an even share over the equal paths (adaptive,
  /// spray). Scale-up links of the first domain carry their share in a flow of their own.
  /// Rails spread alike between the same leaves (no rail optimization) are one flow per pair.
  void alltoall_by_leaf(FlowSet& fs);

  /// Hashes every connection between the `rail` NICs of `src` and `dst` nodes on `plane` (each
  /// QP in multi-QP) at every switch; appends the links between the leaves, each with its share
  /// of `total`. False when one has no path.
  bool hash_connections(const std::vector<int>& src, const std::vector<int>& dst, int rail,
                        int plane, double total, std::vector<Hop>& out);

  /// The memory alltoall_by_leaf's flows take, estimated before they are made: one flow per
  /// pair of leaves on a rail and plane, each with its ways' hops between the leaves (two per
  /// tier above the leaves) and the NIC hops of one source and one destination NIC.
  double alltoall_by_leaf_bytes() const;

  /// Whether no NIC or PCIe link of `nodes`' NICs on `rail` and `plane` has failed.
  bool nic_links_intact(const std::vector<int>& nodes, int rail, int plane) const;

  /// One hop between the entry GPUs of two domains, through their NICs on one rail and plane.
  /// `rail`: the channel's, where a GPU owns several NICs (more NICs than GPUs in a node); -1:
  /// the GPU's own.
  bool domain_hop(long long from_gpu, long long to_gpu, int plane, uint64_t key,
                  std::vector<Hop>& out, int rail = -1);
  /// The NIC `gpu` sends through on `rail`: the rail's own if the GPU owns it, else its first.
  int nic_on_rail(long long gpu, int rail) const {
    return rail >= 0 && fab.gpu_of_rail(rail) == static_cast<int>(gpu % G)
               ? fab.nic(node_of(gpu), rail)
               : nic_of_gpu(gpu);
  }

  /// Where channel c enters domain d: the GPU on its rail, on a node chosen round-robin.
  long long entry_gpu(int d, int rail, int c) const;

  /// Ring channels: every hop of channel c's ring in one flow (the slowest hop paces it).
  void ring(double bytes_per_hop_total, FlowSet& fs);

  /// NCCL's double binary tree over domains: parent of rank r in tree t (shifted for t = 1).
  int tree_parent(int r, int t) const;

  /// Tree channels: chain in each domain (up and down), tree edges between domains.
  void tree(FlowSet& fs);

  /// NVLS: every GPU of a domain sends and receives (1 + 1/m) x S through the NVSwitch, which
  /// reduces and multicasts; one flow per domain (the switch works on all GPUs at once).
  void nvls_intra(FlowSet& fs);
  /// NVLS all_gather (`gather`) or reduce_scatter inside the first domain: the switch
  /// replicates each GPU's multicast store to every GPU, or reads and reduces every GPU's copy
  /// of a shard for the GPU that loads it.
  void nvls_gather_intra(FlowSet& fs, bool gather);

  /// Inter-domain trees over every rail, each carrying its share of the payload.
  void nvls_tree_inter(FlowSet& fs);

  /// CollNet/SHARP: reduce-scatter and all-gather inside each domain over NVLink; every NIC
  /// sends its shard to the switches, which reduce, and receives the result.
  bool collnet(FlowSet& fs);

  /// CollNet Direct all_gather / reduce_scatter: each head's NIC takes its node's shards of its
  /// rail to the in-network tree and back (as all_reduce's network part); inside the node the
  /// heads hand every GPU the others' shards over NVLink, (m - 1)/m x S each way.
  bool collnet_gather(FlowSet& fs, bool gather);
  bool collnet_phases(FlowSet& fs, int phases, double send = 1, double recv = 1);
  /// CollNet's NVLink part alone: `phases` of (m - 1)/m x S each way a GPU's link.
  void collnet_intra(FlowSet& fs, int phases);

  /// CollNet's network part alone: every NIC to its rail's reduction root and back (NVLS over
  /// CollNet runs it beside nvls_intra). `send` and `recv`: the NIC's share each way of its
  /// rail's 1/R of the payload (gather_shares).
  bool collnet_network(FlowSet& fs, double send = 1, double recv = 1);
  /// all_gather: a NIC sends only its own GPU's shard, 1/nodes of its rail's data, and receives
  /// the rail's whole (device/all_gather.h@v2.29.7-1:370-377; the network's multicast returns
  /// its own shard too); reduce_scatter the mirror. {send, recv}.
  std::pair<double, double> gather_shares(bool gather) const {
    const double own = 1.0 / std::max(1, nodes);
    return gather ? std::pair{own, 1.0} : std::pair{1.0, own};
  }
};

}  // namespace gf
