#include "sim/collective.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "common/file.h"
#include "sim/flow_model.h"
#include "sim/nccl_constants.h"

namespace gf {
namespace {

using Hop = FlowSet::Hop;
constexpr double kPayload = 1e9;  // bytes simulated; results scale linearly with size
// Above this many connections an alltoall is simulated leaf pair by leaf pair.
constexpr double kMaxAlltoallConnections = 4e6;
// Paths a leaf-pair aggregate is split over, at least (one per uplink of the source leaf).
constexpr int kAggregateWays = 16;
// Peak memory of building and solving flows over the flows' own memory (FlowSet::memory_bytes):
// a 32,768-node rail-optimized alltoall peaked at 15.2 GB (GNU time) for 8.8 GB of flows.
constexpr double kSolverMemoryFactor = 1.75;

}  // namespace

// The time an alltoall of `ranks` spends posting a send and a receive to every peer, us.
double alltoall_posting_us(long long ranks) {
  return static_cast<double>(ranks - 1) * nccl::kP2pPerPeerLatencyUs;
}

namespace {

// An alltoall's time, us: its fixed latency, then the posting or the data, whichever is longer
// (posting a send and a receive per peer overlaps the data already moving).
double alltoall_time_us(double fixed_us, long long ranks, double data_us) {
  return fixed_us + std::max(alltoall_posting_us(ranks), data_us);
}

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9e3779b97f4a7c15ULL + b + 0x632be59bd9b4e019ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

int log2_ceil(long long n) {
  int k = 0;
  while ((1LL << k) < n) ++k;
  return k;
}

// Flow construction for one collective on the first `nodes` nodes of a fabric.
struct Builder {
  const Fabric& fab;
  LoadBalancing lb;
  uint64_t seed;
  int nodes, G, R, P;
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

  int node_of(long long gpu) const { return static_cast<int>(gpu / G); }
  long long domain_first(int d) const { return 1LL * d * D; }
  int domain_size(int d) const {
    return static_cast<int>(std::min<long long>(D, ranks - domain_first(d)));
  }
  int nic_of_gpu(long long gpu) const {
    return fab.nic(node_of(gpu), fab.rail_of_gpu(static_cast<int>(gpu % G)));
  }

  void nvlink(long long a, long long b, double coef, std::vector<Hop>& out) const {
    if (a == b) return;
    out.push_back({fab.gpu_up(static_cast<int>(a)), static_cast<float>(coef)});
    out.push_back({fab.gpu_down(static_cast<int>(b)), static_cast<float>(coef)});
  }

  // NIC to NIC across the fabric, spread as the load-balancing mode does.
  bool net(int nic_a, int nic_b, int plane, uint64_t key, double coef, std::vector<Hop>& out) {
    const uint64_t h = mix(seed, key);
    auto one = [&](uint64_t hash, uint64_t spread, double c) {
      // A NIC with a port in every plane fails over to the next plane when its own is cut
      // (dual-plane fabrics halve, they do not stop).
      bool routed = false;
      for (int k = 0; k < P && !routed; ++k) {
        scratch.clear();
        routed = fab.route(nic_a, nic_b, (plane + k) % P, hash, scratch, spread);
      }
      if (!routed) return false;
      if (path_latency.size() < 64) path_latency.push_back(fab.latency_s(scratch));
      for (int l : scratch) out.push_back({l, static_cast<float>(c)});
      return true;
    };
    bool ok = true;
    const size_t start = out.size();
    switch (lb) {
      case LoadBalancing::kEcmp:
        ok = one(h, 0, coef);
        break;
      case LoadBalancing::kEcmpMultiQp:
        for (int q = 0; q < nccl::kQpsPerConnection && ok; ++q)
          ok = one(mix(h, static_cast<uint64_t>(q) + 1), 0, coef / nccl::kQpsPerConnection);
        break;
      case LoadBalancing::kAdaptive:
        for (int s = 0; s < spray_ways && ok; ++s)
          ok = one(h, static_cast<uint64_t>(s), coef / spray_ways);
        break;
    }
    if (!ok) ++unroutable;
    merge_from(out, start);
    return ok;
  }

  // Sums repeated links among out[start..] (spread paths share their first and last hops).
  static void merge_from(std::vector<Hop>& out, size_t start) {
    size_t w = start;
    for (size_t i = start; i < out.size(); ++i) {
      bool merged = false;
      for (size_t j = start; j < w && !merged; ++j)
        if (out[j].link == out[i].link) {
          out[j].coef += out[i].coef;
          merged = true;
        }
      if (!merged) out[w++] = out[i];
    }
    out.resize(w);
  }

  // GPU a to GPU b: over the scale-up domain when they share one; otherwise through the NIC on
  // b's rail (PXN: first over NVLink to the local GPU on that rail, as NCCL does).
  bool gpu_to_gpu(long long a, long long b, uint64_t key, double coef, std::vector<Hop>& out) {
    if (a / D == b / D) {
      nvlink(a, b, coef, out);
      return true;
    }
    const int rail = fab.rail_of_gpu(static_cast<int>(b % G));
    const long long proxy = 1LL * node_of(a) * G + fab.gpu_of_rail(rail);
    const long long host_b = 1LL * node_of(b) * G + fab.gpu_of_rail(rail);
    nvlink(a, proxy, coef, out);
    const int nic_a = fab.nic(node_of(a), rail), nic_b = fab.nic(node_of(b), rail);
    out.push_back({fab.pcie_to_nic(nic_a), static_cast<float>(coef)});
    // NCCL drives every port of the NIC (one per plane) with channels of its own.
    for (int k = 0; k < P; ++k)
      if (!net(nic_a, nic_b, static_cast<int>((key + k) % P), mix(key, k), coef / P, out))
        return false;
    out.push_back({fab.pcie_from_nic(nic_b), static_cast<float>(coef)});
    nvlink(host_b, b, coef, out);
    return true;
  }

  // Alltoall: every GPU sends S/N to every other. Across domains NCCL's PXN funnels all of a
  // node's traffic for GPU d through one connection (the local GPU on d's rail to d), split over
  // its channels; the G pairs sharing a connection have equal rates by symmetry, so each
  // connection is one flow whose network hops carry G pairs. Scale-up hops are added for the
  // first domain only: every domain loads its NVLink alike.
  void alltoall(FlowSet& fs) {
    if (1.0 * nodes * ranks * nccl::kRingChannelsPerNic > kMaxAlltoallConnections) {
      alltoall_by_leaf(fs);
      return;
    }
    const double pair_bytes = kPayload / static_cast<double>(ranks);
    const int ch = nccl::kRingChannelsPerNic;
    std::vector<Hop> path;
    const int saved_ways = spray_ways;
    spray_ways = nccl::kSprayWaysP2p;
    for (int node = 0; node < nodes; ++node) {
      const long long first = 1LL * node * G;
      const int dom = static_cast<int>(first / D);
      for (long long d = 0; d < ranks; ++d) {
        if (d / D == dom) {
          if (dom != 0 || d >= first + G) continue;
          for (int g = 0; g < G; ++g)  // pairs inside the first domain, from this node
            if (first + g != d) {
              path.clear();
              nvlink(first + g, d, 1.0, path);
              fs.add(pair_bytes, path);
            }
          continue;
        }
        const int rail = fab.rail_of_gpu(static_cast<int>(d % G));
        const long long proxy = first + fab.gpu_of_rail(rail);
        const long long host_d = d / G * G + fab.gpu_of_rail(rail);
        const int nic_a = fab.nic(node, rail), nic_b = fab.nic(node_of(d), rail);
        for (int c = 0; c < ch; ++c) {
          path.clear();
          if (dom == 0)
            for (int g = 0; g < G; ++g) nvlink(first + g, proxy, 1.0, path);
          path.push_back({fab.pcie_to_nic(nic_a), static_cast<float>(G)});
          const uint64_t key = mix(mix(proxy, d), c);
          if (!net(nic_a, nic_b, static_cast<int>(key % P), key, G, path)) continue;
          path.push_back({fab.pcie_from_nic(nic_b), static_cast<float>(G)});
          if (d / D == 0) nvlink(host_d, d, G, path);
          fs.add(pair_bytes / ch, path);
        }
      }
    }
    spray_ways = saved_ways;
  }

  // Alltoall at scale: the connections between the NICs of one leaf and those of another
  // (same rail and plane) are one flow. NIC links count the pairs that cross them; between the
  // leaves the traffic is spread over up to kAggregateWays paths. Scale-up links of the first
  // domain carry their share in a flow of their own.
  void alltoall_by_leaf(FlowSet& fs) {
    const double pair_bytes = kPayload / static_cast<double>(ranks);
    if (flow_budget > 0) {
      const double need = alltoall_by_leaf_bytes();
      if (need > static_cast<double>(flow_budget)) {
        over_budget = true;
        flows_needed = need;
        return;
      }
    }
    std::vector<Hop> path;
    {
      const int m = domain_size(0);
      const double coef = (m - 1.0) / m;  // what each GPU moves over NVLink, PXN included
      for (int g = 0; g < m && m > 1; ++g) {
        path.push_back({fab.gpu_up(g), static_cast<float>(coef)});
        path.push_back({fab.gpu_down(g), static_cast<float>(coef)});
      }
      if (!path.empty()) fs.add(kPayload, path);
    }
    // NICs by (plane, rail, leaf).
    std::map<std::tuple<int, int, int>, std::vector<int>> groups;
    for (int node = 0; node < nodes; ++node)
      for (int rail = 0; rail < R; ++rail)
        for (int plane = 0; plane < P; ++plane)
          groups[{plane, rail, fab.leaf_of_nic(fab.nic(node, rail), plane)}].push_back(node);
    const double gpr = static_cast<double>(G) / R / P;  // pairs per NIC pair and plane
    std::vector<uint32_t> turn(fab.round_robin_slots(), 0);
    // Ordinal of each leaf among the leaves of its (plane, rail).
    std::map<std::tuple<int, int, int>, int> ordinal;
    {
      std::map<std::pair<int, int>, int> next;
      for (const auto& kv : groups)
        ordinal[kv.first] = next[{std::get<0>(kv.first), std::get<1>(kv.first)}]++;
    }
    for (const auto& [ka, src] : groups)
      for (const auto& [kb, dst] : groups) {
        if (std::get<0>(ka) != std::get<0>(kb) || std::get<1>(ka) != std::get<1>(kb)) continue;
        const int plane = std::get<0>(ka), rail = std::get<1>(ka);
        // Pairs from each source NIC: G GPUs x (GPUs on this rail of each destination node).
        const double per_src = G * gpr * static_cast<double>(dst.size());
        const double per_dst = G * gpr * static_cast<double>(src.size());
        path.clear();
        // Every NIC of a leaf carries the same share of these pairs, so while none of their
        // links failed one stands for all in the max-min sharing (the same rates and per-link
        // loads, far fewer hops); otherwise each is kept, as any may be a failed one.
        const size_t n_src = nic_links_intact(src, rail, plane) ? 1 : src.size();
        const size_t n_dst = nic_links_intact(dst, rail, plane) ? 1 : dst.size();
        for (size_t i = 0; i < n_src; ++i) {
          const int nic = fab.nic(src[i], rail);
          path.push_back({fab.pcie_to_nic(nic), static_cast<float>(per_src)});
          path.push_back({fab.nic_to_leaf(nic, plane), static_cast<float>(per_src)});
        }
        for (size_t i = 0; i < n_dst; ++i) {
          const int nic = fab.nic(dst[i], rail);
          path.push_back({fab.leaf_to_nic(nic, plane), static_cast<float>(per_dst)});
          path.push_back({fab.pcie_from_nic(nic), static_cast<float>(per_dst)});
        }
        // Same node pairs excluded: a node does not use its NIC to reach itself.
        const double conns = static_cast<double>(src.size()) * dst.size();
        const double total = G * gpr * conns;
        // At least one way per uplink of the source leaf, so that the round-robin covers all
        // of them: with fewer, a leaf pair used half the spines and the spine-core links were
        // loaded unevenly (1,024 nodes: 27 GB/s instead of 47).
        const int leaf_ups = fab.up_degree(std::get<2>(ka));
        const int ways =
            static_cast<int>(std::min<double>(std::max(kAggregateWays, leaf_ups), conns));
        bool ok = true;
        const size_t between = path.size();
        // Thousands of connections join two leaves, more than there are paths between them, so
        // per-flow hashing evens out (relative spread ~ sqrt(paths / connections)): the ways
        // take the equal paths round-robin at every switch, in every load-balancing mode.
        // The source leaf starts the pair at (A + B) x ways, so that for every destination the
        // sources arrive over different spines (a Latin square of uplink blocks).
        turn[static_cast<size_t>(std::get<2>(ka))] =
            static_cast<uint32_t>((ordinal[ka] + ordinal[kb]) * ways);
        for (int w = 0; w < ways && ok; ++w) {
          const int a = src[static_cast<size_t>(w) % src.size()];
          const int b2 = dst[(static_cast<size_t>(w) / src.size()) % dst.size()];
          scratch.clear();
          ok = fab.route_round_robin(fab.nic(a, rail), fab.nic(b2, rail), plane, turn, scratch);
          for (int l : scratch) path.push_back({l, static_cast<float>(total / ways)});
        }
        if (!ok) ++unroutable;
        // The NIC links were counted per NIC above; keep only the hops between the leaves.
        path.erase(std::remove_if(path.begin() + static_cast<long>(between), path.end(),
                                  [&](const Hop& h) {
                                    return fab.links()[h.link].cls == LinkClass::kNicLeaf;
                                  }),
                   path.end());
        if (ok) fs.add(pair_bytes, path);
      }
  }

  // The memory alltoall_by_leaf's flows take, estimated before they are made: one flow per
  // pair of leaves on a rail and plane, each with its ways' hops between the leaves (two per
  // tier above the leaves) and the NIC hops of one source and one destination NIC.
  double alltoall_by_leaf_bytes() const {
    std::map<std::tuple<int, int>, std::set<int>> leaves;  // (plane, rail) -> leaves
    for (int node = 0; node < nodes; ++node)
      for (int rail = 0; rail < R; ++rail)
        for (int plane = 0; plane < P; ++plane)
          leaves[{plane, rail}].insert(fab.leaf_of_nic(fab.nic(node, rail), plane));
    const double hops_between = fab.has_core() ? 4 : 2;
    double flows = 0, hops = 0;
    for (const auto& [key, set] : leaves)
      for (int leaf : set) {
        const double pairs = static_cast<double>(set.size());
        const double ways = std::max(kAggregateWays, fab.up_degree(leaf));
        flows += pairs;
        hops += pairs * (ways * hops_between + 4);
      }
    return kSolverMemoryFactor * static_cast<double>(FlowSet::memory_bytes(
                                     static_cast<size_t>(flows), static_cast<size_t>(hops)));
  }

  // Whether no NIC or PCIe link of `nodes`' NICs on `rail` and `plane` has failed.
  bool nic_links_intact(const std::vector<int>& nodes, int rail, int plane) const {
    if (!fab.any_failed()) return true;
    const auto& links = fab.links();
    for (int n : nodes) {
      const int nic = fab.nic(n, rail);
      for (int l : {fab.pcie_to_nic(nic), fab.nic_to_leaf(nic, plane), fab.leaf_to_nic(nic, plane),
                    fab.pcie_from_nic(nic)})
        if (l >= 0 && links[static_cast<size_t>(l)].failed) return false;
    }
    return true;
  }

  // One hop between the entry GPUs of two domains, through their NICs on one rail and plane.
  bool domain_hop(long long from_gpu, long long to_gpu, int plane, uint64_t key,
                  std::vector<Hop>& out) {
    const int na = nic_of_gpu(from_gpu), nb = nic_of_gpu(to_gpu);
    out.push_back({fab.pcie_to_nic(na), 1.0f});
    const bool ok = net(na, nb, plane, key, 1.0, out);
    out.push_back({fab.pcie_from_nic(nb), 1.0f});
    return ok;
  }

  // Where channel c enters domain d: the GPU on its rail, on a node chosen round-robin.
  long long entry_gpu(int d, int rail, int c) const {
    const int nodes_in = std::max(1, domain_size(d) / G);
    const int node = (c / R) % nodes_in;
    return domain_first(d) + 1LL * node * G + fab.gpu_of_rail(rail);
  }

  // Ring channels: every hop of channel c's ring in one flow (the slowest hop paces it).
  void ring(double bytes_per_hop_total, FlowSet& fs) {
    const int C = domains > 1 ? R * nccl::kRingChannelsPerNic : nccl::kIntraDomainChannels;
    std::vector<Hop> path;
    for (int c = 0; c < C; ++c) {
      path.clear();
      const int rail = c % R, plane = (c / R) % P;
      for (int d = 0; d < domains; ++d) {
        const long long first = domain_first(d);
        const int m = domain_size(d);
        const long long e = domains > 1 ? entry_gpu(d, rail, c) : first + (c % m);
        // Through every GPU of the domain: in one domain the ring closes over NVLink; across
        // domains the last GPU sends through the entry GPU's NIC, which NCCL's ring search puts
        // on the same PCIe switch (GPUDirect, no NVLink hop). Domains are alike, so the first
        // stands for all on the scale-up links it alone uses.
        const int hops = domains > 1 ? m - 1 : m;
        for (int k = 0; k < hops && m > 1 && d == 0; ++k)
          nvlink(first + (e - first + k) % m, first + (e - first + k + 1) % m, 1.0, path);
        if (domains > 1) {
          const int next = (d + 1) % domains;
          domain_hop(e, entry_gpu(next, rail, c), plane, mix(c, d), path);
        }
      }
      fs.add(bytes_per_hop_total / C, path);
    }
  }

  // NCCL's double binary tree over domains: parent of rank r in tree t (shifted for t = 1).
  int tree_parent(int r, int t) const {
    const int n = domains;
    const int x = t == 0 ? r : (r + n - 1) % n;  // tree 1: ranks shifted by one
    if (x == 0) return -1;
    int bit = 1;
    while (!(bit & x)) bit <<= 1;
    int up = (x ^ bit) | (bit << 1);
    if (up >= n) up = x ^ bit;
    return t == 0 ? up : (up + 1) % n;
  }

  // Tree channels: chain in each domain (up and down), tree edges between domains.
  void tree(FlowSet& fs) {
    const int C = domains > 1 ? R * nccl::kTreeChannelsPerNic : nccl::kIntraDomainChannels;
    std::vector<Hop> path;
    for (int c = 0; c < C; ++c) {
      path.clear();
      const int rail = (c / 2) % R, t = c % 2, plane = (c / 2 / R) % P;
      std::vector<long long> entry(domains);
      for (int d = 0; d < domains; ++d) {
        const long long first = domain_first(d);
        const int m = domain_size(d);
        entry[d] = domains > 1 ? entry_gpu(d, rail, c) : first + (c % m);
        for (int k = 0; k + 1 < m && d == 0; ++k) {  // first domain stands for all
          const long long a = first + (entry[d] - first + k) % m;
          const long long b = first + (entry[d] - first + k + 1) % m;
          nvlink(a, b, 1.0, path);  // reduce up the chain
          nvlink(b, a, 1.0, path);  // broadcast down
        }
      }
      for (int d = 0; d < domains; ++d) {
        const int parent = tree_parent(d, t);
        if (parent < 0) continue;
        domain_hop(entry[d], entry[parent], plane, mix(c, 2 * d), path);      // up
        domain_hop(entry[parent], entry[d], plane, mix(c, 2 * d + 1), path);  // down
      }
      fs.add(kPayload / C, path);
    }
  }

  // NVLS: every GPU of a domain sends and receives (1 + 1/m) x S through the NVSwitch, which
  // reduces and multicasts; one flow per domain (the switch works on all GPUs at once).
  void nvls_intra(FlowSet& fs) {
    std::vector<Hop> path;
    for (int d = 0; d < std::min(domains, 1); ++d) {  // the first domain stands for all
      path.clear();
      const int m = domain_size(d);
      const double coef = 1.0 + 1.0 / m;
      for (int k = 0; k < m; ++k) {
        const int g = static_cast<int>(domain_first(d) + k);
        path.push_back({fab.gpu_up(g), static_cast<float>(coef)});
        path.push_back({fab.gpu_down(g), static_cast<float>(coef)});
      }
      fs.add(kPayload, path);
    }
  }

  // Inter-domain trees over every rail, each carrying its share of the payload.
  void nvls_tree_inter(FlowSet& fs) {
    const int C = R * nccl::kTreeChannelsPerNic;
    std::vector<Hop> path;
    for (int c = 0; c < C; ++c) {
      path.clear();
      const int rail = c % R, t = (c / R) % 2, plane = (c / R / 2) % P;
      for (int d = 0; d < domains; ++d) {
        const int parent = tree_parent(d, t);
        if (parent < 0) continue;
        const long long a = entry_gpu(d, rail, c), b = entry_gpu(parent, rail, c);
        domain_hop(a, b, plane, mix(c, 2 * d), path);
        domain_hop(b, a, plane, mix(c, 2 * d + 1), path);
      }
      fs.add(kPayload / C, path);
    }
  }

  // CollNet/SHARP: reduce-scatter and all-gather inside each domain over NVLink; every NIC
  // sends its shard to the switches, which reduce, and receives the result.
  bool collnet(FlowSet& fs) {
    std::vector<Hop> path;
    for (int d = 0; d < std::min(domains, 1); ++d) {  // the first domain stands for all
      path.clear();
      const long long first = domain_first(d);
      const int m = domain_size(d);
      for (int k = 0; k < m && m > 1; ++k) nvlink(first + k, first + (k + 1) % m, 1.0, path);
      fs.add(kPayload * 2.0 * (m - 1) / m, path);
    }
    for (int rail = 0; rail < R; ++rail) {
      const int plane = rail % P;
      const int root = fab.reduction_root(plane, rail);
      if (root < 0) return false;
      path.clear();
      std::vector<int> seen_leaves;
      for (int node = 0; node < nodes; ++node) {
        const int nic = fab.nic(node, rail);
        path.push_back({fab.pcie_to_nic(nic), 1.0f});
        path.push_back({fab.pcie_from_nic(nic), 1.0f});
        const int leaf = fab.leaf_of_nic(nic, plane);
        scratch.clear();
        if (!fab.route_to_switch(nic, plane, root, mix(seed, nic), scratch)) {
          ++unroutable;
          continue;
        }
        // The NIC's own link both ways; above the leaf one aggregated stream per leaf.
        path.push_back({scratch[0], 1.0f});
        path.push_back({Fabric::reverse(scratch[0]), 1.0f});
        if (std::find(seen_leaves.begin(), seen_leaves.end(), leaf) != seen_leaves.end()) continue;
        seen_leaves.push_back(leaf);
        for (size_t i = 1; i < scratch.size(); ++i) {
          path.push_back({scratch[i], 1.0f});
          path.push_back({Fabric::reverse(scratch[i]), 1.0f});
        }
      }
      fs.add(kPayload / R, path);
    }
    return true;
  }
};

double efficiency(LinkClass c) {
  switch (c) {
    case LinkClass::kScaleUp:
      return nccl::kScaleUpSimpleEfficiency;
    case LinkClass::kPcie:
      return 1.0;  // already net of PCIe overheads in the fabric
    default:
      return nccl::kNetworkSimpleEfficiency;
  }
}

// Runs the flows and turns the result into seconds per payload byte plus the explanation.
void finish(const Fabric& fab, const FlowSet& fs, const std::vector<double>& capacity,
            double payload, AlgorithmModel& m) {
  const FluidResult r = run_fluid(fs, capacity);
  m.flows = fs.size();
  m.seconds_per_byte = r.time_s / payload;
  if (r.bottleneck_link >= 0) {
    const LinkClass cls = fab.links()[r.bottleneck_link].cls;
    m.bottleneck = link_class_name(cls);
    double util = 0;
    int busy = 0;
    for (size_t l = 0; l < r.load_Bps.size(); ++l)
      if (r.load_Bps[l] > 0 && fab.links()[l].cls == cls) {
        util += capacity[l] > 0 ? r.load_Bps[l] / capacity[l] : 0;
        ++busy;
      }
    m.bottleneck_utilization = busy ? util / busy : 0;
  }
  double max_up = 0, sum_up = 0;
  int n_up = 0;
  for (size_t l = 0; l < r.load_Bps.size(); ++l)
    if (r.load_Bps[l] > 0 && fab.is_uplink(static_cast<int>(l))) {
      max_up = std::max(max_up, r.load_Bps[l]);
      sum_up += r.load_Bps[l];
      ++n_up;
    }
  m.ecmp_collision = n_up ? max_up / (sum_up / n_up) : 1.0;
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::kAllReduce:
      return "all_reduce";
    case Op::kAllGather:
      return "all_gather";
    case Op::kReduceScatter:
      return "reduce_scatter";
    case Op::kAlltoall:
      return "alltoall";
    case Op::kBroadcast:
      return "broadcast";
    case Op::kReduce:
      return "reduce";
    case Op::kSendRecv:
      return "sendrecv";
  }
  return "?";
}
const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kNvlsTree:
      return "nvls_tree";
    case Algorithm::kCollNet:
      return "collnet";
    case Algorithm::kPat:
      return "pat";
    case Algorithm::kP2p:
      return "p2p";
  }
  return "?";
}
const char* protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return "LL";
    case Protocol::kLL128:
      return "LL128";
    case Protocol::kSimple:
      return "Simple";
  }
  return "?";
}
std::vector<std::string> op_names() {
  return {"all_reduce", "all_gather", "reduce_scatter", "alltoall",
          "broadcast",  "reduce",     "sendrecv"};
}
std::optional<Op> parse_op(const std::string& s) {
  for (Op o : {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kAlltoall, Op::kBroadcast,
               Op::kReduce, Op::kSendRecv})
    if (s == op_name(o)) return o;
  return std::nullopt;
}
std::optional<Algorithm> parse_algorithm(const std::string& s) {
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kNvls, Algorithm::kNvlsTree,
                      Algorithm::kCollNet, Algorithm::kPat, Algorithm::kP2p})
    if (s == algorithm_name(a)) return a;
  if (s == "sharp") return Algorithm::kCollNet;
  return std::nullopt;
}
std::optional<Protocol> parse_protocol(const std::string& s) {
  std::string l;
  for (char c : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (l == "ll") return Protocol::kLL;
  if (l == "ll128") return Protocol::kLL128;
  if (l == "simple") return Protocol::kSimple;
  return std::nullopt;
}

double bus_factor(Op op, long long n) {
  const double N = static_cast<double>(n);
  switch (op) {
    case Op::kAllReduce:
      return n > 1 ? 2 * (N - 1) / N : 0;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAlltoall:
      return n > 1 ? (N - 1) / N : 0;
    default:
      return 1;
  }
}

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
  const int nodes = o.nodes > 0 ? o.nodes : fab.nodes();
  if (nodes > fab.nodes())
    return Diagnostic{"",
                      0,
                      0,
                      "--nodes",
                      fmt::format("the fabric has {} nodes; cannot run on {}", fab.nodes(), nodes),
                      fmt::format("use --nodes 1 to {}", fab.nodes())};
  cm.load_balancing_ = o.load_balancing.empty() ? plan.load_balancing : o.load_balancing;
  Builder b{fab,
            parse_load_balancing(cm.load_balancing_),
            o.seed,
            nodes,
            fab.gpus_per_node(),
            fab.nics_per_node(),
            fab.planes(),
            1LL * nodes * fab.gpus_per_node(),
            0,
            0};
  b.D = static_cast<int>(std::min<long long>(fab.domain_gpus(), b.ranks));
  b.domains = static_cast<int>((b.ranks + b.D - 1) / b.D);
  b.flow_budget = o.memory_budget_bytes;
  cm.ranks_ = b.ranks;
  cm.nodes_ = nodes;
  cm.domains_ = b.domains;
  cm.domain_gpus_ = b.D;
  if (b.ranks < 2)
    return Diagnostic{"",
                      0,
                      0,
                      "--nodes",
                      "a collective needs at least 2 GPUs",
                      "use more nodes or GPUs per node"};

  // Raw capacities scaled by what the Simple protocol achieves on each class of link.
  std::vector<double> cap(fab.links().size());
  for (size_t l = 0; l < cap.size(); ++l) {
    const Link& k = fab.links()[l];
    cap[l] = k.failed ? 0 : k.bytes_per_s * efficiency(k.cls);
  }
  const bool multi = b.domains > 1;
  const bool nvls_hw = plan.gpu.nvls && b.D > 1;
  const double nvls_eff = plan.gpu.scaleup_tech == "nvlink5" ? nccl::kNvlsEfficiencyBlackwell
                                                             : nccl::kNvlsEfficiencyHopper;
  const double N = static_cast<double>(b.ranks);

  auto model = [&](Algorithm a, const std::string& why_not, auto&& fill) {
    AlgorithmModel m;
    m.algorithm = a;
    if (!why_not.empty()) {
      m.unavailable_reason = why_not;
      cm.models_.push_back(m);
      return;
    }
    FlowSet fs(b.flow_budget);
    b.unroutable = 0;
    b.path_latency.clear();
    std::vector<double> c = cap;
    const double payload = fill(fs, c);
    if (fs.over_budget() || b.over_budget) {
      b.over_budget = true;
      return;  // build reports it
    }
    m.unroutable = b.unroutable;
    m.available = true;
    finish(fab, fs, c, payload, m);
    if (!b.path_latency.empty()) {
      double s = 0;
      for (double x : b.path_latency) s += x;
      m.net_hop_latency_us = s / b.path_latency.size() * 1e6;
    }
    if (!std::isfinite(m.seconds_per_byte) || m.seconds_per_byte <= 0 || m.unroutable > 0) {
      m.available = false;
      m.unavailable_reason = "no path: failed links cut the ranks apart";
    }
    cm.models_.push_back(m);
  };

  const Op op = o.op;
  const bool reduce_all = op == Op::kAllReduce;
  const bool ring_ops = op != Op::kAlltoall && op != Op::kSendRecv;
  // Ring: traffic per rank per payload byte, by operation.
  const double ring_factor = op == Op::kAllReduce                                 ? 2 * (N - 1) / N
                             : (op == Op::kAllGather || op == Op::kReduceScatter) ? (N - 1) / N
                                                                                  : 1.0;
  model(Algorithm::kRing, ring_ops ? "" : "not used for this operation", [&](FlowSet& fs, auto&) {
    b.ring(kPayload * ring_factor, fs);
    return kPayload;
  });
  model(Algorithm::kTree, reduce_all ? "" : "all_reduce only", [&](FlowSet& fs, auto&) {
    b.tree(fs);
    return kPayload * nccl::kTreeFactor;
  });
  const std::string nvls_no = !reduce_all ? "all_reduce only"
                              : !nvls_hw  ? "the GPU's scale-up switch has no NVLink SHARP"
                                          : "";
  model(Algorithm::kNvls,
        nvls_no.empty() && multi ? "one scale-up domain only; see nvls_tree" : nvls_no,
        [&](FlowSet& fs, std::vector<double>& c) {
          for (size_t l = 0; l < c.size(); ++l)
            if (fab.links()[l].cls == LinkClass::kScaleUp) c[l] *= nvls_eff;
          b.nvls_intra(fs);
          return kPayload;
        });
  model(Algorithm::kNvlsTree,
        nvls_no.empty() && !multi ? "needs several scale-up domains" : nvls_no,
        [&](FlowSet& fs, std::vector<double>& c) {
          for (size_t l = 0; l < c.size(); ++l)
            if (fab.links()[l].cls == LinkClass::kScaleUp) c[l] *= nvls_eff;
          b.nvls_intra(fs);
          b.nvls_tree_inter(fs);
          return kPayload;
        });
  const std::string cn_no = !reduce_all                            ? "all_reduce only"
                            : !plan.in_network_reduction           ? "in-network reduction is off"
                            : plan.sw.in_network_reduction.empty() ? "the switches cannot reduce"
                            : !multi                               ? "needs several nodes"
                            : plan.topo.kind == "dragonfly" ? "no reduction tree on dragonfly"
                                                            : "";
  model(Algorithm::kCollNet, cn_no, [&](FlowSet& fs, auto&) {
    b.collnet(fs);
    return kPayload * nccl::kCollNetFactor;
  });
  // PAT: log-depth all_gather / reduce_scatter; NCCL uses it with one GPU per node.
  // NCCL (2.23+) runs PAT with one GPU per node; forced, it runs anywhere.
  const std::string pat_no = (op != Op::kAllGather && op != Op::kReduceScatter)
                                 ? "all_gather and reduce_scatter only"
                             : (fab.gpus_per_node() > 1 && o.algorithm != Algorithm::kPat)
                                 ? "NCCL uses PAT with one GPU per node"
                                 : "";
  {
    AlgorithmModel m;
    m.algorithm = Algorithm::kPat;
    if (!pat_no.empty()) {
      m.unavailable_reason = pat_no;
    } else {
      // Steps run one after another: step k moves min(2^k, N - 2^k) chunks of S/N to rank i+2^k.
      double t = 0;
      b.unroutable = 0;
      std::vector<Hop> path;
      for (long long dist = 1; dist < b.ranks; dist *= 2) {
        FlowSet fs(b.flow_budget);
        const double chunks = static_cast<double>(std::min<long long>(dist, b.ranks - dist));
        for (long long i = 0; i < b.ranks; ++i) {
          path.clear();
          b.gpu_to_gpu(i, (i + dist) % b.ranks, mix(i, dist), 1.0, path);
          fs.add(kPayload * chunks / N, path);
        }
        AlgorithmModel step;
        finish(fab, fs, cap, kPayload, step);
        t += step.seconds_per_byte;
        m.bottleneck = step.bottleneck;
        m.bottleneck_utilization = step.bottleneck_utilization;
        m.ecmp_collision = std::max(m.ecmp_collision, step.ecmp_collision);
        m.flows += step.flows;
      }
      m.seconds_per_byte = t;
      m.available = std::isfinite(t) && t > 0;
      m.unroutable = b.unroutable;
    }
    cm.models_.push_back(m);
  }
  // Point-to-point: alltoall sends S/N to every peer; sendrecv S to the next rank.
  model(Algorithm::kP2p, ring_ops ? "alltoall and sendrecv only" : "", [&](FlowSet& fs, auto&) {
    std::vector<Hop> path;
    if (op == Op::kSendRecv) {
      for (long long i = 0; i < b.ranks; ++i) {
        path.clear();
        b.gpu_to_gpu(i, (i + 1) % b.ranks, mix(i, 1), 1.0, path);
        fs.add(kPayload, path);
      }
      return kPayload;
    }
    b.alltoall(fs);
    return kPayload;
  });
  if (b.over_budget)
    return Diagnostic{
        "",
        0,
        0,
        "",
        b.flows_needed > 0
            ? fmt::format("{} on {} GPUs needs about {} of memory for its flows; {} is available",
                          op_name(op), b.ranks, human_bytes(b.flows_needed),
                          human_bytes(static_cast<double>(o.memory_budget_bytes)))
            : fmt::format("{} on {} GPUs needs more than the {} of memory available for its flows",
                          op_name(op), b.ranks,
                          human_bytes(static_cast<double>(o.memory_budget_bytes))),
        "simulate part of the fabric (--nodes N) or use a machine with more memory"};
  return cm;
}

Result<GroupCollective> GroupCollective::build(const Fabric& fab, const Plan& plan, Op op,
                                               const std::vector<std::vector<int>>& groups,
                                               const std::string& lb_name) {
  GroupCollective gc;
  gc.op_ = op;
  if (groups.empty() || groups[0].size() < 2)
    return Diagnostic{"", 0, 0, "", "a group collective needs groups of at least 2 GPUs", ""};
  gc.size_ = static_cast<int>(groups[0].size());
  const std::string lb = lb_name.empty() ? plan.load_balancing : lb_name;
  Builder b{fab,
            parse_load_balancing(lb),
            1,
            fab.nodes(),
            fab.gpus_per_node(),
            fab.nics_per_node(),
            fab.planes(),
            fab.gpus(),
            fab.domain_gpus(),
            0};
  b.domains = static_cast<int>((b.ranks + b.D - 1) / b.D);
  std::vector<double> cap(fab.links().size());
  for (size_t l = 0; l < cap.size(); ++l) {
    const Link& k = fab.links()[l];
    cap[l] = k.failed ? 0 : k.bytes_per_s * efficiency(k.cls);
  }
  const double n = gc.size_;
  const double factor = op == Op::kAllReduce ? 2 * (n - 1) / n
                        : (op == Op::kAllGather || op == Op::kReduceScatter || op == Op::kAlltoall)
                            ? (n - 1) / n
                            : 1.0;
  FlowSet fs;
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
    const uint64_t gkey = mix(0x5eed, gi);
    if (op == Op::kSendRecv) {
      path.clear();
      if (b.gpu_to_gpu(g[0], g[1], gkey, 1.0, path)) fs.add(kPayload, path);
      continue;
    }
    if (op == Op::kAlltoall) {
      for (size_t i = 0; i < g.size(); ++i)
        for (size_t j = 0; j < g.size(); ++j) {
          if (i == j) continue;
          path.clear();
          if (b.gpu_to_gpu(g[i], g[j], mix(gkey, i * g.size() + j), 1.0, path))
            fs.add(kPayload / n, path);
        }
      continue;
    }
    if (local) {  // a ring inside one domain, several channels over NVLink
      const int C = 4;
      for (int c = 0; c < C; ++c) {
        path.clear();
        for (size_t i = 0; i < g.size(); ++i) b.nvlink(g[i], g[(i + 1) % g.size()], 1.0, path);
        fs.add(kPayload * factor / C, path);
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
    size_t k = 1;
    for (const auto& sg : segs) k = std::max(k, sg.second - sg.first);
    int rails = 0;
    {
      std::vector<uint8_t> used(static_cast<size_t>(b.R), 0);
      for (size_t i = segs[0].first; i < segs[0].second; ++i)
        used[static_cast<size_t>(fab.rail_of_gpu(g[i] % b.G))] = 1;
      for (uint8_t u : used) rails += u;
    }
    const int C = std::max(1, rails) * nccl::kRingChannelsPerNic;
    for (int c = 0; c < C; ++c) {
      path.clear();
      const int plane = (c / std::max(1, rails)) % b.P;
      for (size_t si = 0; si < segs.size(); ++si) {
        const auto [s0, s1] = segs[si];
        const size_t len = s1 - s0, r0 = static_cast<size_t>(c) % len;
        for (size_t j = 0; j + 1 < len; ++j)
          b.nvlink(g[s0 + (r0 + j) % len], g[s0 + (r0 + j + 1) % len], 1.0, path);
        const auto [n0, n1] = segs[(si + 1) % segs.size()];
        const long long next_entry = g[n0 + static_cast<size_t>(c) % (n1 - n0)];
        b.domain_hop(g[s0 + r0], next_entry, plane, mix(gkey, c * segs.size() + si), path);
      }
      fs.add(kPayload * factor / C, path);
    }
  }
  AlgorithmModel m;
  finish(fab, fs, cap, kPayload, m);
  gc.seconds_per_byte_ = m.seconds_per_byte;
  gc.bottleneck_ = m.bottleneck;
  gc.domains_ = domains_max;
  if (!b.path_latency.empty()) {
    double sum = 0;
    for (double x : b.path_latency) sum += x;
    gc.hop_latency_us_ = sum / b.path_latency.size() * 1e6;
  }
  if (!std::isfinite(gc.seconds_per_byte_) || b.unroutable > 0)
    return Diagnostic{"", 0, 0, "", "failed links cut a group apart", ""};
  return gc;
}

double GroupCollective::seconds(double bytes) const {
  if (bytes <= 0) return 0;
  const long long N = size_;
  const int nd = domains_;
  double best = std::numeric_limits<double>::infinity();
  for (int p = 0; p < nccl::kNumProtos; ++p) {
    double lat = 0, factor = 1;
    if (op_ == Op::kAlltoall || op_ == Op::kSendRecv) {
      if (p != nccl::kSimple) continue;
      const double one = nd > 1 ? nccl::kHwLatencyUs[nccl::kNet][nccl::kRing][p] + hop_latency_us_
                                : nccl::kHwLatencyUs[nccl::kNvlink][nccl::kRing][p];
      lat = nccl::kP2pBaseLatencyUs + one;
      if (op_ == Op::kAlltoall) {
        best = std::min(best, alltoall_time_us(lat, N, bytes * seconds_per_byte_ * 1e6) * 1e-6);
        continue;
      }
    } else {
      const long long steps = op_ == Op::kAllReduce ? 2 * (N - 1) : N - 1;
      const long long inter = nd <= 1 ? 0 : (op_ == Op::kAllReduce ? 2 * (nd - 1) : nd - 1);
      lat = nccl::kBaseLatencyUs[nccl::kRing][p] +
            (steps - inter) * nccl::kHwLatencyUs[nccl::kNvlink][nccl::kRing][p] +
            inter * (nccl::kHwLatencyUs[nccl::kNet][nccl::kRing][p] + hop_latency_us_);
      factor = p == nccl::kSimple  ? 1.0
               : p == nccl::kLL128 ? nccl::kRingLL128Factor
                                   : nccl::kRingLLFactor;
    }
    best = std::min(best, lat * 1e-6 + bytes * seconds_per_byte_ / factor);
  }
  return best;
}

double GroupCollective::busbw_gbs(double bytes) const {
  const double t = seconds(bytes);
  return t > 0 ? bytes / t / 1e9 * bus_factor(op_, size_) : 0;
}

double CollectiveModel::protocol_factor(Algorithm a, Protocol p) const {
  if (p == Protocol::kSimple) return 1.0;
  if (a == Algorithm::kRing)
    return p == Protocol::kLL128
               ? nccl::kRingLL128Factor
               : (domains_ > 1 || op_ == Op::kAllReduce ? nccl::kRingLLFactor
                                                        : nccl::kRingLLFactorIntra);
  if (a == Algorithm::kTree)
    return p == Protocol::kLL128 ? nccl::kTreeLL128Factor : nccl::kTreeLLFactor;
  return 0;  // NVLS, CollNet, PAT and p2p run Simple only
}

double CollectiveModel::latency_us(Algorithm a, Protocol p) const {
  const AlgorithmModel* m = nullptr;
  for (const auto& x : models_)
    if (x.algorithm == a) m = &x;
  const double hop = m ? m->net_hop_latency_us : 0;
  const long long N = ranks_;
  const int n = domains_;
  const int dg = domain_gpus_;
  const int pi = static_cast<int>(p);
  auto hw = [&](nccl::Hw h, nccl::Algo al) { return nccl::kHwLatencyUs[h][al][pi]; };
  switch (a) {
    case Algorithm::kRing: {
      const long long steps = op_ == Op::kAllReduce                                  ? 2 * (N - 1)
                              : (op_ == Op::kAllGather || op_ == Op::kReduceScatter) ? N - 1
                                                                                     : N;
      const long long inter = n <= 1 ? 0 : op_ == Op::kAllReduce ? 2 * (n - 1) : n - 1;
      double intra = hw(nccl::kNvlink, nccl::kRing);
      if (n > 1 && p == Protocol::kLL) intra *= 1.8;  // NCCL tuning.cc
      return nccl::kBaseLatencyUs[nccl::kRing][pi] + (steps - inter) * intra +
             inter * (hw(nccl::kNet, nccl::kRing) + hop);
    }
    case Algorithm::kTree: {
      double intra = hw(nccl::kNvlink, nccl::kTree);
      if (n > 1 && p == Protocol::kLL) intra *= 1.8;
      return nccl::kBaseLatencyUs[nccl::kTree][pi] +
             2 * ((dg - 1) * intra + log2_ceil(n) * (hw(nccl::kNet, nccl::kTree) + hop));
    }
    case Algorithm::kNvls:
      return hw(nccl::kNvlink, nccl::kNvls);
    case Algorithm::kNvlsTree:
      return hw(nccl::kNvlink, nccl::kNvlsTree) +
             2 * log2_ceil(n) * (hw(nccl::kNet, nccl::kNvlsTree) + hop);
    case Algorithm::kCollNet:
      return hw(nccl::kNvlink, nccl::kCollNetDirect) + hw(nccl::kNet, nccl::kCollNetDirect) +
             2 * hop;
    case Algorithm::kPat:
      return nccl::kBaseLatencyUs[nccl::kPat][pi] +
             log2_ceil(N) *
                 ((n > 1 ? hw(nccl::kNet, nccl::kPat) : hw(nccl::kNvlink, nccl::kPat)) + hop);
    case Algorithm::kP2p: {
      const double one = n > 1 ? hw(nccl::kNet, nccl::kRing) + hop : hw(nccl::kNvlink, nccl::kRing);
      return nccl::kP2pBaseLatencyUs + one;  // an alltoall's posting: alltoall_time_us
    }
  }
  return 0;
}

double CollectiveModel::time_us(Algorithm a, Protocol p, double bytes) const {
  for (const auto& m : models_) {
    if (m.algorithm != a) continue;
    if (!m.available) return std::numeric_limits<double>::infinity();
    const double f = protocol_factor(a, p);
    if (f <= 0) return std::numeric_limits<double>::infinity();
    const double data_us = bytes * m.seconds_per_byte / f * 1e6;
    if (a == Algorithm::kP2p && op_ == Op::kAlltoall)
      return alltoall_time_us(latency_us(a, p), ranks_, data_us);
    return latency_us(a, p) + data_us;
  }
  return std::numeric_limits<double>::infinity();
}

SizeResult CollectiveModel::at(double bytes) const {
  SizeResult r;
  r.bytes = bytes;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& m : models_) {
    if (!m.available) continue;
    if (forced_algorithm_ && m.algorithm != *forced_algorithm_) continue;
    for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
      if (forced_protocol_ && p != *forced_protocol_) continue;
      const double t = time_us(m.algorithm, p, bytes);
      if (t < best) {
        best = t;
        r.algorithm = m.algorithm;
        r.protocol = p;
        // The fixed part: what is left of the time without the data (an alltoall's posting
        // counts only where it outlasts the data).
        r.latency_us = t - bytes * m.seconds_per_byte / protocol_factor(m.algorithm, p) * 1e6;
        r.bottleneck = m.bottleneck;
        r.bottleneck_utilization = m.bottleneck_utilization;
        r.ecmp_collision = m.ecmp_collision;
      }
    }
  }
  r.time_us = best;
  if (std::isfinite(best) && best > 0) {
    r.algbw_gbs = bytes / (best * 1e-6) / 1e9;
    r.busbw_gbs = r.algbw_gbs * bus_factor(op_, ranks_);
    if (r.latency_us > 0.5 * best) r.bottleneck = "latency";
  }
  return r;
}

}  // namespace gf
