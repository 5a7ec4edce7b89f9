#include "sim/flow_builder.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>

namespace gf {
namespace {

// What the Simple protocol achieves on a class of link: the model's figure, or the one a
// calibration profile measured on the cluster.
double efficiency(LinkClass c, const CalibrationProfile& profile, GpuGeneration generation) {
  switch (c) {
    case LinkClass::kScaleUp:
      return profile.scaleup_efficiency.value_or(scale_up_simple_efficiency(generation));
    case LinkClass::kPcie:
      return 1.0;  // already net of PCIe overheads in the fabric
    default:
      return profile.network_efficiency.value_or(nccl::kNetworkSimpleEfficiency);
  }
}

}  // namespace

std::vector<double> simple_capacities(const Fabric& fab, const Plan& plan) {
  return simple_capacities(fab, plan.calibration, generation_of(plan.gpu));
}

std::vector<double> simple_capacities(const Fabric& fab, const CalibrationProfile& profile,
                                      GpuGeneration generation) {
  std::vector<double> cap(fab.links().size());
  for (size_t l = 0; l < cap.size(); ++l) {
    const Link& k = fab.links()[l];
    cap[l] = k.failed ? 0 : k.bytes_per_s * efficiency(k.cls, profile, generation);
  }
  return cap;
}

void solve_flows(const Fabric& fab, const FlowSet& fs, const std::vector<double>& capacity,
                 double payload, AlgorithmModel& m, LinkLoad* keep, bool whole_pieces) {
  solve_rates(fab, fs, capacity, payload, m, keep);
  m.ecmp_collision = collision_factor(fab, fs, whole_pieces);
}

void solve_rates(const Fabric& fab, const FlowSet& fs, const std::vector<double>& capacity,
                 double payload, AlgorithmModel& m, LinkLoad* keep) {
  const FluidResult r = run_fluid(fs, capacity);
  if (keep) keep->add(fs, r, fab.links().size());
  m.flows = fs.size();
  m.seconds_per_byte = r.time_s / payload;
  if (r.bottleneck_link >= 0) {
    const LinkClass cls = fab.links()[r.bottleneck_link].cls;
    m.bottleneck = link_class_name(cls);
    m.network_paced = cls != LinkClass::kScaleUp;
    double util = 0;
    int busy = 0;
    for (size_t l = 0; l < r.load_Bps.size(); ++l)
      if (r.load_Bps[l] > 0 && fab.links()[l].cls == cls) {
        util += capacity[l] > 0 ? r.load_Bps[l] / capacity[l] : 0;
        ++busy;
      }
    m.bottleneck_utilization = busy ? util / busy : 0;
  }
}

double collision_factor(const Fabric& fab, const FlowSet& fs, bool parts) {
  const auto& links = fab.links();
  // Groups: leaf-spine up, leaf-spine down, spine-core up, spine-core down. A link belongs to
  // its lower-tier switch, which could have spread its bytes in that group over all of its
  // links there (the down links: the switches above choose, but each of them reaches this
  // switch by its own links).
  auto group = [&](const Link& k) {
    if (k.failed || (k.cls != LinkClass::kLeafSpine && k.cls != LinkClass::kSpineCore)) return -1;
    const bool up = fab.tier(k.from) < fab.tier(k.to);
    return (k.cls == LinkClass::kSpineCore ? 2 : 0) + (up ? 0 : 1);
  };
  auto owner = [&](const Link& k) { return fab.tier(k.from) < fab.tier(k.to) ? k.from : k.to; };
  std::vector<double> bytes(links.size(), 0);
  std::vector<int8_t> group_of(links.size());
  for (size_t l = 0; l < links.size(); ++l) group_of[l] = static_cast<int8_t>(group(links[l]));
  // With `parts`, the piece per group: a flow's least on any one of the group's links is one of
  // its pieces (where several met on a link, that link shows their sum); the largest over flows.
  double piece[4] = {0, 0, 0, 0};
  for (int f = 0; f < fs.size(); ++f) {
    double least[4] = {0, 0, 0, 0};
    for (const auto* h = fs.begin(f); h != fs.end(f); ++h) {
      const double b = fs.bytes(f) * h->coef;
      bytes[h->link] += b;
      if (const int g = group_of[h->link]; parts && g >= 0 && b > 0)
        least[g] = least[g] > 0 ? std::min(least[g], b) : b;
    }
    for (int g = 0; g < 4; ++g) piece[g] = std::max(piece[g], least[g]);
  }
  // Per switch and group: its bytes and its links there.
  const size_t slots = static_cast<size_t>(fab.vertices()) * 4;
  std::vector<double> sum(slots, 0);
  std::vector<int> count(slots, 0);
  double hottest[4] = {0, 0, 0, 0};
  for (size_t l = 0; l < links.size(); ++l)
    if (const int g = group_of[l]; g >= 0) {
      const size_t slot = static_cast<size_t>(owner(links[l])) * 4 + static_cast<size_t>(g);
      sum[slot] += bytes[l];
      ++count[slot];
      hottest[g] = std::max(hottest[g], bytes[l]);
    }
  // What the hottest link would carry were every switch to spread its bytes evenly over its
  // links of the group: a perfect spread, the same reference whatever the load balancing, so
  // flows too few or too large to spread (one QP alone on one of a switch's 8 links) count as
  // the loss they are against spraying. Traffic that some switches carry more of than others
  // (a tree's inner nodes, cross-unit traffic) is no collision: each switch is held to its own
  // even share. Pieces no load balancing splits further (adaptive routing's parts, the model's
  // own grain, as real switches move packets; an in-network reduction's flow to its switch)
  // round the share up to whole pieces (hop coefficients are floats: a share a float's rounding
  // above whole pieces is whole).
  double ideal[4] = {0, 0, 0, 0};
  for (size_t slot = 0; slot < slots; ++slot)
    if (count[slot] > 0) {
      const int g = static_cast<int>(slot % 4);
      double even = sum[slot] / count[slot];
      if (piece[g] > 0) even = std::ceil(even / piece[g] * (1 - 1e-6)) * piece[g];
      ideal[g] = std::max(ideal[g], even);
    }
  // No switch-to-switch link carries anything (one node, one leaf): no factor to give.
  double worst = 0;
  for (int g = 0; g < 4; ++g)
    if (hottest[g] > 0 && ideal[g] > 0) worst = std::max({worst, 1.0, hottest[g] / ideal[g]});
  return worst;
}

FlowBuilder::FlowBuilder(const Fabric& fabric, LoadBalancing mode, uint64_t hash_seed,
                         int node_count)
    : fab(fabric),
      lb(mode),
      seed(hash_seed),
      nodes(node_count),
      G(fabric.gpus_per_node()),
      R(fabric.nics_per_node()),
      P(fabric.planes()),
      ranks(1LL * node_count * fabric.gpus_per_node()),
      D(static_cast<int>(std::max<long long>(1, std::min<long long>(fabric.domain_gpus(), ranks)))),
      domains(static_cast<int>((ranks + D - 1) / D)) {}

void FlowBuilder::pcie_to(int nic, double coef, std::vector<Hop>& out) const {
  if (const int shared = fab.gpu_pcie_to_nic(nic); shared >= 0)
    out.push_back({shared, static_cast<float>(coef)});
  out.push_back({fab.pcie_to_nic(nic), static_cast<float>(coef)});
}

void FlowBuilder::pcie_from(int nic, double coef, std::vector<Hop>& out) const {
  out.push_back({fab.pcie_from_nic(nic), static_cast<float>(coef)});
  if (const int shared = fab.gpu_pcie_from_nic(nic); shared >= 0)
    out.push_back({shared, static_cast<float>(coef)});
}

void FlowBuilder::nvlink(long long a, long long b, double coef, std::vector<Hop>& out) const {
  if (a == b) return;
  out.push_back({fab.gpu_up(static_cast<int>(a)), static_cast<float>(coef)});
  out.push_back({fab.gpu_down(static_cast<int>(b)), static_cast<float>(coef)});
}

// NIC to NIC across the fabric, spread as the load-balancing mode does. The connection's QP
// numbers come from its key and the run's seed (drivers hand them out; they differ per run).
bool FlowBuilder::net(int nic_a, int nic_b, int plane, uint64_t key, double coef,
                      std::vector<Hop>& out) {
  const uint64_t h = mix_key(seed, key) & 0xFFFFFFFFFFFFULL;
  const bool adaptive = splits_flows();
  if (adaptive && route_load.size() != fab.links().size()) route_load.assign(fab.links().size(), 0);
  auto one = [&](uint64_t hash, uint64_t spread, double c) {
    // A NIC with a port in every plane fails over to the next plane when its own is cut
    // (dual-plane fabrics halve, they do not stop).
    bool routed = false;
    for (int k = 0; k < P && !routed; ++k) {
      scratch.clear();
      routed = adaptive ? fab.route_least_loaded(nic_a, nic_b, (plane + k) % P, route_load, c, seed,
                                                 scratch)
                        : fab.route(nic_a, nic_b, (plane + k) % P, hash, scratch, spread);
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
      // NCCL creates a connection's QPs one after another: consecutive QP numbers at both ends,
      // so each QP has a UDP source port (and a path) of its own.
      for (int q = 0; q < nccl::kQpsPerConnection && ok; ++q)
        ok = one(next_qp(h, q), 0, coef / nccl::kQpsPerConnection);
      break;
    case LoadBalancing::kAdaptive:
    case LoadBalancing::kSpray:
      // The flow's packets in `spray_ways` parts, each sent by every switch over its
      // least-loaded equal port (route_least_loaded); a NIC that sprays its packets over the
      // fabric's paths spreads them as evenly.
      for (int s = 0; s < spray_ways && ok; ++s)
        ok = one(h, static_cast<uint64_t>(s), coef / spray_ways);
      break;
  }
  if (!ok) ++unroutable;
  merge_from(out, start);
  return ok;
}

// Sums repeated links among out[start..] (spread paths share their first and last hops), in
// one pass: merge_slot holds, per link, where it already is in `out` (-1: not yet).
void FlowBuilder::merge_from(std::vector<Hop>& out, size_t start) {
  if (merge_slot.size() != fab.links().size()) merge_slot.assign(fab.links().size(), -1);
  size_t w = start;
  for (size_t i = start; i < out.size(); ++i) {
    int32_t& slot = merge_slot[static_cast<size_t>(out[i].link)];
    if (slot >= 0) {
      out[static_cast<size_t>(slot)].coef += out[i].coef;
    } else {
      slot = static_cast<int32_t>(w);
      out[w++] = out[i];
    }
  }
  out.resize(w);
  for (size_t i = start; i < w; ++i) merge_slot[static_cast<size_t>(out[i].link)] = -1;
}

// GPU a to GPU b: over the scale-up domain when they share one; otherwise through the NIC on
// b's rail (PXN: first over NVLink to the local GPU on that rail, as NCCL does).
bool FlowBuilder::gpu_to_gpu(long long a, long long b, uint64_t key, double coef,
                             std::vector<Hop>& out) {
  if (a / D == b / D) {
    nvlink(a, b, coef, out);
    return true;
  }
  // PXN: over NVLink to the local GPU on b's rail, out of its NIC. PCIe cards have none (NCCL
  // forwards through a peer GPU only over NVLink): a's own x16 link and NIC, b's NIC and link.
  const bool pxn = !fab.host_pcie();
  const int rail = fab.rail_of_gpu(static_cast<int>(b % G));
  const int rail_a = pxn ? rail : fab.rail_of_gpu(static_cast<int>(a % G));
  const long long proxy = 1LL * node_of(a) * G + fab.gpu_of_rail(rail);
  const long long host_b = 1LL * node_of(b) * G + fab.gpu_of_rail(rail);
  if (pxn)
    nvlink(a, proxy, coef, out);
  else
    out.push_back({fab.gpu_up(static_cast<int>(a)), static_cast<float>(coef)});
  const int nic_a = fab.nic(node_of(a), rail_a), nic_b = fab.nic(node_of(b), rail);
  pcie_to(nic_a, coef, out);
  // NCCL drives every port of the NIC (one per plane) with channels of its own.
  for (int k = 0; k < P; ++k)
    if (!net(nic_a, nic_b, static_cast<int>((key + k) % P), mix_key(key, k), coef / P, out))
      return false;
  pcie_from(nic_b, coef, out);
  if (pxn)
    nvlink(host_b, b, coef, out);
  else
    out.push_back({fab.gpu_down(static_cast<int>(b)), static_cast<float>(coef)});
  return true;
}

// Alltoall: every GPU sends S/N to every other. Across domains NCCL's PXN funnels all of a
// node's traffic for GPU d through one connection (the local GPU on d's rail to d), split over
// its channels; the G pairs sharing a connection have equal rates by symmetry, so each
// connection is one flow whose network hops carry G pairs. Scale-up hops are added for the
// first domain only: every domain loads its NVLink alike.
void FlowBuilder::alltoall(FlowSet& fs) {
  if (1.0 * nodes * ranks * nccl::kRingChannelsPerNic * (fab.host_pcie() ? R : 1) >
      kMaxAlltoallConnections) {
    alltoall_by_leaf(fs);
    return;
  }
  const double pair_bytes = kPayload / static_cast<double>(ranks);
  const int ch = nccl::kRingChannelsPerNic;
  std::vector<Hop> path;
  const int saved_ways = spray_ways;
  spray_ways = nccl::kSprayWaysP2p;
  std::vector<int> rail_gpus(static_cast<size_t>(R), 0);  // a node's GPUs on each rail
  for (int g = 0; g < G; ++g) ++rail_gpus[static_cast<size_t>(fab.rail_of_gpu(g))];
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
      if (fab.host_pcie()) {
        // PCIe cards, no PXN: each of the node's NICs carries its own GPUs' pairs to d, each
        // GPU over its own x16 link, into d's NIC and x16 link.
        for (int r = 0; r < R; ++r) {
          const int k = rail_gpus[static_cast<size_t>(r)];
          if (k == 0) continue;
          const int src = fab.nic(node, r);
          for (int c = 0; c < ch; ++c) {
            path.clear();
            if (dom == 0)
              for (int g = 0; g < G; ++g)
                if (fab.rail_of_gpu(g) == r)
                  path.push_back({fab.gpu_up(static_cast<int>(first + g)), 1.0f});
            pcie_to(src, k, path);
            const uint64_t key = mix_key(mix_key(mix_key(first, r), d), c);
            if (!net_every_plane(src, nic_b, static_cast<int>(key % P), key, k, path)) continue;
            pcie_from(nic_b, k, path);
            if (d / D == 0)
              path.push_back({fab.gpu_down(static_cast<int>(d)), static_cast<float>(k)});
            fs.add(pair_bytes / ch, path);
          }
        }
        continue;
      }
      for (int c = 0; c < ch; ++c) {
        path.clear();
        if (dom == 0)
          for (int g = 0; g < G; ++g) nvlink(first + g, proxy, 1.0, path);
        pcie_to(nic_a, G, path);
        const uint64_t key = mix_key(mix_key(proxy, d), c);
        if (!net_every_plane(nic_a, nic_b, static_cast<int>(key % P), key, G, path)) continue;
        pcie_from(nic_b, G, path);
        if (d / D == 0) nvlink(host_d, d, G, path);
        fs.add(pair_bytes / ch, path);
      }
    }
  }
  spray_ways = saved_ways;
}

// The mean connections a way from which a multinomial draw takes its normal approximation:
// counts n/k + sqrt(n/k) (z_w - mean z) (the multinomial's covariance for large n/k, skew
// 1/sqrt(n/k) <= 0.32 from here). Below it every connection picks its way, as a hash does.
constexpr double kNormalSharesMinMean = 10;

std::vector<double> multinomial_shares(long long n, int k, uint64_t seed) {
  const size_t K = static_cast<size_t>(std::max(1, k));
  std::vector<double> share(K, 1.0 / static_cast<double>(K));
  if (k <= 1 || n <= 0) return share;
  SplitMix64 rng{seed};
  const double mean = static_cast<double>(n) / k;
  if (mean < kNormalSharesMinMean) {
    std::fill(share.begin(), share.end(), 0.0);
    for (long long i = 0; i < n; ++i) share[rng() % K] += 1.0 / static_cast<double>(n);
    return share;
  }
  std::normal_distribution<double> z;
  double zbar = 0;
  for (size_t w = 0; w < K; ++w) zbar += (share[w] = z(rng));
  zbar /= static_cast<double>(K);
  double sum = 0;
  for (size_t w = 0; w < K; ++w)
    sum += (share[w] = std::max(0.0, mean + std::sqrt(mean) * (share[w] - zbar)));
  for (double& x : share) x /= sum;
  return share;
}

// Alltoall at scale: the connections between the NICs of one leaf and those of another
// (same rail and plane) are one flow. NIC links count the pairs that cross them; between the
// leaves the traffic is spread over up to kAggregateWays paths. Scale-up links of the first
// domain carry their share in a flow of their own.
void FlowBuilder::alltoall_by_leaf(FlowSet& fs) {
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
  // Whether a NIC's port in a plane is up: NCCL merges a NIC's ports into one device and sends
  // over the ports still active (net_ib/init.cc@v2.29.7-1:280), so a NIC whose port in a plane is
  // cut sends its share of that plane over its others. With a plane cut somewhere, each NIC's
  // live planes are found once, a bit a plane (fabric.planes: at most 8).
  const bool planes_cut = fab.any_failed() && P > 1;
  std::vector<uint8_t> live;  // per node x rail
  if (planes_cut) {
    const auto& links = fab.links();
    live.assign(static_cast<size_t>(nodes) * R, 0);
    for (int node = 0; node < nodes; ++node)
      for (int rail = 0; rail < R; ++rail)
        for (int plane = 0; plane < P; ++plane) {
          const int nic = fab.nic(node, rail);
          const int up = fab.nic_to_leaf(nic, plane), down = fab.leaf_to_nic(nic, plane);
          if (up >= 0 && down >= 0 && !links[static_cast<size_t>(up)].failed &&
              !links[static_cast<size_t>(down)].failed)
            live[static_cast<size_t>(node) * R + rail] |= static_cast<uint8_t>(1u << plane);
        }
  }
  auto planes_of = [&](int node, int rail) { return live[static_cast<size_t>(node) * R + rail]; };
  // NICs by (plane, rail, leaf): those whose port in the plane is up.
  std::map<std::tuple<int, int, int>, std::vector<int>> groups;
  for (int node = 0; node < nodes; ++node)
    for (int rail = 0; rail < R; ++rail)
      for (int plane = 0; plane < P; ++plane)
        if (!planes_cut || (planes_of(node, rail) >> plane & 1))
          groups[{plane, rail, fab.leaf_of_nic(fab.nic(node, rail), plane)}].push_back(node);
  const double gpr = static_cast<double>(G) / R / P;  // pairs per NIC pair and plane
  // A connection's share of a plane where both its NICs' ports are up: 1 / P while the planes are
  // whole, else one over the planes both still have (it is carried only where both are up).
  auto plane_share = [&](int a, int b, int rail) {
    if (!planes_cut) return 1.0 / P;
    const int common =
        std::popcount(static_cast<unsigned>(planes_of(a, rail) & planes_of(b, rail)));
    return common > 0 ? 1.0 / common : 0.0;
  };
  // ECMP and multi-QP hash every connection (each QP) while that stays affordable; beyond
  // kMaxHashedAlltoallRoutes they are spread evenly as adaptive routing spreads them.
  const double qp_routes = 1.0 * nodes * nodes * R * std::max(1, G / R) *
                           nccl::kRingChannelsPerNic *
                           (lb == LoadBalancing::kEcmpMultiQp ? nccl::kQpsPerConnection : 1);
  const bool hashed = (lb == LoadBalancing::kEcmp || lb == LoadBalancing::kEcmpMultiQp) &&
                      qp_routes <= kMaxHashedAlltoallRoutes;
  std::vector<uint32_t> turn(fab.round_robin_slots(), 0);
  // Ordinal of each leaf among the leaves of its (plane, rail).
  std::map<std::tuple<int, int, int>, int> ordinal;
  {
    std::map<std::pair<int, int>, int> next;
    for (const auto& kv : groups)
      ordinal[kv.first] = next[{std::get<0>(kv.first), std::get<1>(kv.first)}]++;
  }
  // The flow of one leaf pair on one rail and plane into `path` (NIC hops first, then the hops
  // between the leaves from `between` on); false when a connection has no path.
  size_t between = 0;
  auto pair_path = [&](const std::tuple<int, int, int>& ka, const std::vector<int>& src,
                       const std::tuple<int, int, int>& kb, const std::vector<int>& dst,
                       size_t copies = 1) {
    const int plane = std::get<0>(ka), rail = std::get<1>(ka);
    // Pairs from each source NIC: G GPUs x (GPUs on this rail of each destination node).
    const double per_src = G * gpr * static_cast<double>(dst.size());
    const double per_dst = G * gpr * static_cast<double>(src.size());
    path.clear();
    // Every NIC of a leaf carries the same share of these pairs, so while none of their
    // links failed one stands for all in the max-min sharing (the same rates and per-link
    // loads, far fewer hops); otherwise each is kept, as any may be a failed one. With a plane
    // cut somewhere each NIC carries its own connections' shares of this plane (plane_share).
    const size_t n_src = !planes_cut && nic_links_intact(src, rail, plane) ? 1 : src.size();
    const size_t n_dst = !planes_cut && nic_links_intact(dst, rail, plane) ? 1 : dst.size();
    const double pairs_per_share = static_cast<double>(G) * G / R;  // GPU pairs a NIC pair has
    auto shares_with = [&](int node, const std::vector<int>& others) {
      double sum = 0;
      for (int o : others) sum += plane_share(node, o, rail);
      return sum;
    };
    double total = 0;
    for (size_t i = 0; i < n_src; ++i) {
      const int nic = fab.nic(src[i], rail);
      const double coef = planes_cut ? pairs_per_share * shares_with(src[i], dst) : per_src;
      total += coef;
      pcie_to(nic, coef, path);
      path.push_back({fab.nic_to_leaf(nic, plane), static_cast<float>(coef)});
    }
    for (size_t i = 0; i < n_dst; ++i) {
      const int nic = fab.nic(dst[i], rail);
      const double coef = planes_cut ? pairs_per_share * shares_with(dst[i], src) : per_dst;
      path.push_back({fab.leaf_to_nic(nic, plane), static_cast<float>(coef)});
      pcie_from(nic, coef, path);
    }
    // Same node pairs excluded: a node does not use its NIC to reach itself.
    const double conns = static_cast<double>(src.size()) * dst.size();
    if (!planes_cut) total = G * gpr * conns;
    bool ok = true;
    between = path.size();
    if (hashed) {
      // Every connection (and each of its QPs) is hashed at every switch, as the switches
      // would; the leaf pair's flow carries the bytes each link got.
      ok = hash_connections(src, dst, rail, plane, total, path);
    } else {
      // Adaptive routing and spraying spread every connection over the equal paths evenly:
      // the ways take them round-robin at every switch. The source leaf starts the pair at
      // (A + B) x ways, so that for every destination the sources arrive over different
      // spines (a Latin square of uplink blocks). At least one way per uplink of the source
      // leaf, so that the round-robin covers all of them.
      const int leaf_ups = fab.up_degree(std::get<2>(ka));
      const int ways =
          static_cast<int>(std::min<double>(std::max(kAggregateWays, leaf_ups), conns));
      turn[static_cast<size_t>(std::get<2>(ka))] =
          static_cast<uint32_t>((ordinal[ka] + ordinal[kb]) * ways);
      // ECMP beyond the routes it can afford to hash one by one: the connections still hash
      // independently, so the ways get a multinomial share of them (each connection's ideal
      // hash picks one of `ways` at 1/ways), drawn here instead of hashing each. Rails merged
      // into this flow (`copies`) share its leaves and ways: their connections are drawn
      // together. Adaptive routing and spraying keep the even split.
      std::vector<double> share(static_cast<size_t>(ways), 1.0 / ways);
      if (lb == LoadBalancing::kEcmp || lb == LoadBalancing::kEcmpMultiQp) {
        const double routes_here =
            conns * std::max(1, G / R) * nccl::kRingChannelsPerNic / P *
            (lb == LoadBalancing::kEcmpMultiQp ? nccl::kQpsPerConnection : 1) *
            static_cast<double>(copies);
        share = multinomial_shares(
            static_cast<long long>(std::llround(routes_here)), ways,
            mix_key(seed,
                    mix_key(mix_key(rail, plane), mix_key(std::get<2>(ka), std::get<2>(kb)))));
      }
      for (int w = 0; w < ways && ok; ++w) {
        const int a = src[static_cast<size_t>(w) % src.size()];
        const int b2 = dst[(static_cast<size_t>(w) / src.size()) % dst.size()];
        scratch.clear();
        ok = fab.route_round_robin(fab.nic(a, rail), fab.nic(b2, rail), plane, turn, scratch);
        // The route's first and last links are the NICs': counted per NIC above.
        const float bytes = static_cast<float>(total * share[static_cast<size_t>(w)]);
        for (size_t i = 1; i + 1 < scratch.size(); ++i) path.push_back({scratch[i], bytes});
      }
      return ok;
    }
    // The NIC links were counted per NIC above; keep only the hops between the leaves.
    path.erase(std::remove_if(
                   path.begin() + static_cast<long>(between), path.end(),
                   [&](const Hop& h) { return fab.links()[h.link].cls == LinkClass::kNicLeaf; }),
               path.end());
    return ok;
  };
  // The leaves of each (plane, rail) with their nodes, in the order of `groups`.
  using Leaves = std::vector<std::pair<std::tuple<int, int, int>, const std::vector<int>*>>;
  std::vector<Leaves> rails;  // plane-major, as `groups` is ordered
  for (const auto& kv : groups) {
    if (rails.empty() || std::get<0>(rails.back()[0].first) != std::get<0>(kv.first) ||
        std::get<1>(rails.back()[0].first) != std::get<1>(kv.first))
      rails.emplace_back();
    rails.back().push_back({kv.first, &kv.second});
  }
  // All the flows of one rail, in `groups` order.
  auto add_rail = [&](const Leaves& leaves) {
    for (const auto& [ka, src] : leaves)
      for (const auto& [kb, dst] : leaves) {
        const bool ok = pair_path(ka, *src, kb, *dst);
        if (!ok) ++unroutable;
        if (ok) fs.add(pair_bytes, path);
      }
  };
  // Whether two rails of a plane have the same leaves holding the same nodes, over NIC links
  // alike (so the one's flows are the other's with its NICs swapped in).
  auto same_nodes = [&](const Leaves& a, const Leaves& b) {
    if (a.size() != b.size() || std::get<0>(a[0].first) != std::get<0>(b[0].first)) return false;
    const int plane = std::get<0>(a[0].first);
    const int ra = std::get<1>(a[0].first), rb = std::get<1>(b[0].first);
    const auto& links = fab.links();
    auto alike = [&](int la, int lb) {
      return links[static_cast<size_t>(la)].bytes_per_s ==
                 links[static_cast<size_t>(lb)].bytes_per_s &&
             links[static_cast<size_t>(la)].cls == links[static_cast<size_t>(lb)].cls;
    };
    for (size_t j = 0; j < a.size(); ++j) {
      if (std::get<2>(a[j].first) != std::get<2>(b[j].first) || *a[j].second != *b[j].second)
        return false;
      for (int node : *a[j].second) {
        const int na = fab.nic(node, ra), nb = fab.nic(node, rb);
        // Rails whose NICs share their GPU's PCIe link load it together: not one flow.
        if (fab.gpu_pcie_to_nic(na) >= 0 && fab.gpu_pcie_to_nic(na) == fab.gpu_pcie_to_nic(nb))
          return false;
        if (!alike(fab.pcie_to_nic(na), fab.pcie_to_nic(nb)) ||
            !alike(fab.pcie_from_nic(na), fab.pcie_from_nic(nb)) ||
            !alike(fab.nic_to_leaf(na, plane), fab.nic_to_leaf(nb, plane)) ||
            !alike(fab.leaf_to_nic(na, plane), fab.leaf_to_nic(nb, plane)))
          return false;
      }
    }
    return true;
  };
  // How many rails from rail i on (1 or more) hold the same nodes on the same leaves.
  auto run_at = [&](size_t i) {
    size_t run = 1;
    if (!hashed && !fab.any_failed())
      while (i + run < rails.size() && same_nodes(rails[i], rails[i + run])) ++run;
    return run;
  };
  {  // the flows' room up front, as merged rails take it (no copy as the flow set grows)
    const size_t between_hops = fab.has_core() ? 4 : 2;
    size_t flows = 0, hops = 0;
    for (size_t i = 0; i < rails.size(); i += run_at(i))
      for (const auto& [ka, src] : rails[i]) {
        const size_t ways =
            static_cast<size_t>(std::max(kAggregateWays, fab.up_degree(std::get<2>(ka))));
        flows += rails[i].size();
        hops += rails[i].size() * (4 + ways * between_hops);
      }
    fs.reserve(fs.size() + flows, fs.hop_count() + hops);
  }
  for (size_t i = 0; i < rails.size();) {
    // Rails of one plane whose leaves hold the same nodes (no rail optimization) make the same
    // round-robin calls between the leaves, and take the same turns when the first rail moved
    // every counter by a multiple of the choices it has. Those rails' flows of a leaf pair then
    // have equal rates by symmetry and are one flow, with the NIC hops of the first rail (its
    // NICs stand for the others') and the hops between the leaves once per rail; the counters
    // are advanced as the skipped rails would have advanced them.
    const size_t run = run_at(i);
    if (run < 2) {
      add_rail(rails[i++]);
      continue;
    }
    const std::vector<uint32_t> turn_before = turn;
    const int flows_before = fs.size();
    const float copies = static_cast<float>(run);
    bool ok = true;
    for (const auto& [ka, src] : rails[i])
      for (const auto& [kb, dst] : rails[i]) {
        ok = pair_path(ka, *src, kb, *dst, run) && ok;
        for (size_t h = between; h < path.size(); ++h) path[h].coef *= copies;
        fs.add(pair_bytes, path);
      }
    // The other rails make the same calls; each choice repeats when every counter moved by a
    // multiple of the choices it has (its period), without wrapping. A leaf's counter starts
    // afresh at each of its pairs.
    bool repeats = ok;
    for (size_t v = 0; v < turn.size() && repeats; ++v) {
      const uint64_t moved = turn[v] - turn_before[v];
      if (moved == 0 ||
          (v < static_cast<size_t>(fab.vertices()) && fab.tier(static_cast<int>(v)) == 1))
        continue;
      const uint64_t period = fab.round_robin_period(v);
      repeats = period > 0 && moved % period == 0 &&
                turn[v] + (run - 1) * moved <= std::numeric_limits<uint32_t>::max();
    }
    if (!repeats) {  // route the rail again, its flows one by one
      fs.truncate(flows_before);
      turn = turn_before;
      add_rail(rails[i++]);
      continue;
    }
    for (size_t v = 0; v < turn.size(); ++v)
      turn[v] += static_cast<uint32_t>(run - 1) * (turn[v] - turn_before[v]);
    i += run;
  }
}

// Hashes every connection from the NICs on `rail` of `src` nodes to those of `dst` nodes on
// `plane` (PXN: one per destination GPU on that rail and channel; each QP of it in multi-QP)
// and appends the links between the leaves with the share of `total` each carries.
bool FlowBuilder::hash_connections(const std::vector<int>& src, const std::vector<int>& dst,
                                   int rail, int plane, double total, std::vector<Hop>& out) {
  const int ch = nccl::kRingChannelsPerNic;
  const int gpus_on_rail = std::max(1, G / R);
  const int qps = lb == LoadBalancing::kEcmpMultiQp ? nccl::kQpsPerConnection : 1;
  if (link_bytes.size() != fab.links().size()) link_bytes.assign(fab.links().size(), 0);
  touched.clear();
  long long routes = 0;
  for (int a : src)
    for (int b : dst) {
      if (a == b) continue;
      const int nic_a = fab.nic(a, rail), nic_b = fab.nic(b, rail);
      for (int g = 0; g < gpus_on_rail; ++g)
        for (int c = 0; c < ch; ++c) {
          // Connections of this NIC pair on this plane (others take the other planes).
          if (P > 1 && (g * ch + c) % P != plane) continue;
          const uint64_t h =
              mix_key(seed, mix_key(mix_key(nic_a, 1LL * nic_b * G + g), c)) & 0xFFFFFFFFFFFFULL;
          for (int q = 0; q < qps; ++q) {
            scratch.clear();
            if (!fab.route(nic_a, nic_b, plane, next_qp(h, q), scratch)) return false;
            ++routes;
            for (size_t i = 1; i + 1 < scratch.size(); ++i) {
              const int32_t l = scratch[i];
              if (link_bytes[static_cast<size_t>(l)] == 0) touched.push_back(l);
              link_bytes[static_cast<size_t>(l)] += 1;
            }
          }
        }
    }
  for (int32_t l : touched) {
    if (routes > 0)
      out.push_back({l, static_cast<float>(total * link_bytes[static_cast<size_t>(l)] /
                                           static_cast<double>(routes))});
    link_bytes[static_cast<size_t>(l)] = 0;
  }
  touched.clear();
  return true;
}

// The memory alltoall_by_leaf's flows take, estimated before they are made: one flow per
// pair of leaves on a rail and plane, each with its ways' hops between the leaves (two per
// tier above the leaves) and the NIC hops of one source and one destination NIC.
double FlowBuilder::alltoall_by_leaf_bytes() const {
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
bool FlowBuilder::nic_links_intact(const std::vector<int>& nodes, int rail, int plane) const {
  if (!fab.any_failed()) return true;
  const auto& links = fab.links();
  for (int n : nodes) {
    const int nic = fab.nic(n, rail);
    for (int l : {fab.pcie_to_nic(nic), fab.nic_to_leaf(nic, plane), fab.leaf_to_nic(nic, plane),
                  fab.pcie_from_nic(nic), fab.gpu_pcie_to_nic(nic), fab.gpu_pcie_from_nic(nic)})
      if (l >= 0 && links[static_cast<size_t>(l)].failed) return false;
  }
  return true;
}

// NCCL merges the ports of a NIC (one a plane) into one device of their summed speed and spreads
// each connection's data over their QPs (NCCL_IB_MERGE_NICS, default 1: transport/net_ib.cc@
// v2.22.3-1:346, 456-560; net_ib/init.cc@v2.29.7-1:25), so each plane carries its share.
bool FlowBuilder::net_every_plane(int nic_a, int nic_b, int plane, uint64_t key, double coef,
                                  std::vector<Hop>& out) {
  bool ok = true;
  for (int k = 0; k < P && ok; ++k)
    ok = net(nic_a, nic_b, (plane + k) % P, P > 1 ? mix_key(key, k) : key, coef / P, out);
  return ok;
}

// One hop between the entry GPUs of two domains, through their NICs on one rail, over every
// plane from `plane` on (net_every_plane).
bool FlowBuilder::domain_hop(long long from_gpu, long long to_gpu, int plane, uint64_t key,
                             std::vector<Hop>& out, int rail) {
  const int na = nic_on_rail(from_gpu, rail), nb = nic_on_rail(to_gpu, rail);
  // PCIe cards reach the NIC over their own x16 link (Fabric::host_pcie).
  if (fab.host_pcie()) out.push_back({fab.gpu_up(static_cast<int>(from_gpu)), 1.0f});
  pcie_to(na, 1.0, out);
  const bool ok = net_every_plane(na, nb, plane, key, 1.0, out);
  pcie_from(nb, 1.0, out);
  if (fab.host_pcie()) out.push_back({fab.gpu_down(static_cast<int>(to_gpu)), 1.0f});
  return ok;
}

// Where channel c enters domain d: the GPU on its rail, on a node chosen round-robin.
long long FlowBuilder::entry_gpu(int d, int rail, int c) const {
  const int nodes_in = std::max(1, domain_size(d) / G);
  const int node = (c / R) % nodes_in;
  return domain_first(d) + 1LL * node * G + fab.gpu_of_rail(rail);
}

// Ring channels: every hop of channel c's ring in one flow (the slowest hop paces it).
void FlowBuilder::ring(double bytes_per_hop_total, FlowSet& fs) {
  const int C = ring_channels(), kept = kept_channels(ring_graph_channels());
  std::vector<Hop> path;
  for (int c = 0; c < C; ++c) {
    path.clear();
    const int k = c % kept;  // the channel it copies (NCCL_MIN_NCHANNELS)
    const int rail = k % R, plane = (k / R) % P;
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
        // The ring leaves from its last GPU in the domain; on an NVLink board that GPU shares
        // the entry GPU's PCIe switch, so the entry's NIC stands for it; PCIe cards send over
        // their own x16 link (domain_hop), so the last GPU's counts.
        const long long exit = fab.host_pcie() ? first + (e - first + m - 1) % m : e;
        domain_hop(exit, entry_gpu(next, rail, c), plane, mix_key(c, d), path, rail);
      }
    }
    fs.add(bytes_per_hop_total / C, path);
  }
}

// NCCL's double binary tree over domains: parent of rank r in tree t (shifted for t = 1).
int FlowBuilder::tree_parent(int r, int t) const {
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
void FlowBuilder::tree(FlowSet& fs) {
  const int graph = tree_graph_channels(), C = tree_channels(), kept = kept_channels(graph);
  std::vector<Hop> path;
  for (int c = 0; c < C; ++c) {
    path.clear();
    const int k = c % kept;  // the channel it copies (NCCL_MIN_NCHANNELS)
    // Both trees on every graph channel; NCCL_MAX_NCHANNELS below the duplicated count keeps
    // the first tree's channels, over the graph channels (so every NIC) first.
    const bool all = kept >= graph * nccl::kCommChannelsPerGraphChannel;
    const int g = all ? k / 2 : k % graph;
    const int rail = g % R, t = all ? k % 2 : (k / graph) % 2, plane = (g / R) % P;
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
      domain_hop(entry[d], entry[parent], plane, mix_key(c, 2 * d), path, rail);      // up
      domain_hop(entry[parent], entry[d], plane, mix_key(c, 2 * d + 1), path, rail);  // down
    }
    fs.add(kPayload / C, path);
  }
}

// NVLS: the switch reads every GPU's S for the heads' reductions (multimem.ld_reduce) and
// writes the heads' results into every GPU (multimem.st): S up and S down a GPU's link, and a
// head also takes its 1/h share of the result down and stores it up, (1 + 1/h) x S. The heads
// are the domain's GPUs up to NCCL_MAX_NVLS_ARITY (nvls_heads; 32 of an NVL72 rack's 72); one
// flow per domain (the switch works on all GPUs at once).
void FlowBuilder::nvls_intra(FlowSet& fs) {
  std::vector<Hop> path;
  for (int d = 0; d < std::min(domains, 1); ++d) {  // the first domain stands for all
    path.clear();
    const int m = domain_size(d);
    const int heads = std::min(m, nccl::kMaxNvlsArity);
    for (int k = 0; k < m; ++k) {
      const int g = static_cast<int>(domain_first(d) + k);
      const float coef = k < heads ? 1.0f + 1.0f / static_cast<float>(heads) : 1.0f;
      path.push_back({fab.gpu_up(g), coef});
      path.push_back({fab.gpu_down(g), coef});
    }
    fs.add(kPayload, path);
  }
}

// NVLS all_gather / reduce_scatter (NCCL 2.19+, device/all_gather.h and reduce_scatter.h:
// runRing's NVLS variants). All-gather: every GPU stores its 1/m of the output once to the
// multicast address (multimem.st) and the switch writes it into all m GPUs, its own included:
// S/m up, S down a GPU's link. Reduce-scatter is the mirror: a GPU's multimem.ld_reduce of its
// shard makes the switch read that shard from all m GPUs and return the sum: S up, S/m down.
// Against a ring's (m - 1)/m x S each way, the busier direction carries S: bus bandwidth
// (m - 1)/m of the link's, as NCCL's tuner has it (intraBw x (ppn - 1)/ppn,
// tuning.cc@v2.29.7-1:293-296).
void FlowBuilder::nvls_gather_intra(FlowSet& fs, bool gather) {
  std::vector<Hop> path;
  for (int d = 0; d < std::min(domains, 1); ++d) {  // the first domain stands for all
    path.clear();
    const int m = domain_size(d);
    const float shard = 1.0f / static_cast<float>(m);
    for (int k = 0; k < m; ++k) {
      const int g = static_cast<int>(domain_first(d) + k);
      path.push_back({fab.gpu_up(g), gather ? shard : 1.0f});
      path.push_back({fab.gpu_down(g), gather ? 1.0f : shard});
    }
    fs.add(kPayload, path);
  }
}

// Inter-domain trees over every rail, each carrying its share of the payload.
void FlowBuilder::nvls_tree_inter(FlowSet& fs) {
  const int C = R * nccl::kTreeChannelsPerNic;
  std::vector<Hop> path;
  for (int c = 0; c < C; ++c) {
    path.clear();
    const int rail = c % R, t = (c / R) % 2, plane = (c / R / 2) % P;
    for (int d = 0; d < domains; ++d) {
      const int parent = tree_parent(d, t);
      if (parent < 0) continue;
      const long long a = entry_gpu(d, rail, c), b = entry_gpu(parent, rail, c);
      domain_hop(a, b, plane, mix_key(c, 2 * d), path, rail);
      domain_hop(b, a, plane, mix_key(c, 2 * d + 1), path, rail);
    }
    fs.add(kPayload / C, path);
  }
}

// CollNet/SHARP: reduce-scatter and all-gather inside each domain over NVLink (`phases` of
// (m - 1)/m x S each: all_reduce both, all_gather or reduce_scatter one); every NIC sends its
// shard to the switches, which reduce (or gather), and receives the result.
bool FlowBuilder::collnet_phases(FlowSet& fs, int phases, double send, double recv) {
  collnet_intra(fs, phases);
  return collnet_network(fs, send, recv);
}

void FlowBuilder::collnet_intra(FlowSet& fs, int phases) {
  std::vector<Hop> path;
  for (int d = 0; d < std::min(domains, 1); ++d) {  // the first domain stands for all
    path.clear();
    const long long first = domain_first(d);
    const int m = domain_size(d);
    for (int k = 0; k < m && m > 1; ++k) nvlink(first + k, first + (k + 1) % m, 1.0, path);
    fs.add(kPayload * phases * (m - 1.0) / m, path);
  }
}

bool FlowBuilder::collnet(FlowSet& fs) { return collnet_phases(fs, 2); }

bool FlowBuilder::collnet_gather(FlowSet& fs, bool gather) {
  const auto [send, recv] = gather_shares(gather);
  return collnet_phases(fs, 1, send, recv);
}

// CollNet's network part: every NIC sends its 1/R of the payload to its rail's reduction root
// and receives the sum; above the leaf one aggregated stream per leaf. A NIC's ports, one a
// plane, are one device to NCCL (domain_hop): each plane reduces its share at its own root.
bool FlowBuilder::collnet_network(FlowSet& fs, double send, double recv) {
  std::vector<Hop> path;
  for (int rp = 0; rp < R * P; ++rp) {
    const int rail = rp % R, plane = (rail + rp / R) % P;
    const int root = fab.reduction_root(plane, rail, nodes);
    if (root < 0) return false;
    path.clear();
    std::vector<int> seen_leaves;
    for (int node = 0; node < nodes; ++node) {
      const int nic = fab.nic(node, rail);
      pcie_to(nic, send, path);
      pcie_from(nic, recv, path);
      const int leaf = fab.leaf_of_nic(nic, plane);
      scratch.clear();
      if (!fab.route_to_switch(nic, plane, root, mix_key(seed, nic), scratch)) {
        ++unroutable;
        continue;
      }
      // The NIC's own link both ways; above the leaf one aggregated stream per leaf.
      path.push_back({scratch[0], static_cast<float>(send)});
      path.push_back({Fabric::reverse(scratch[0]), static_cast<float>(recv)});
      if (std::find(seen_leaves.begin(), seen_leaves.end(), leaf) != seen_leaves.end()) continue;
      seen_leaves.push_back(leaf);
      for (size_t i = 1; i < scratch.size(); ++i) {
        path.push_back({scratch[i], 1.0f});
        path.push_back({Fabric::reverse(scratch[i]), 1.0f});
      }
    }
    fs.add(kPayload / R / P, path);
  }
  return true;
}

}  // namespace gf
