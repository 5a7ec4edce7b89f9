#include "topo/fabric.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace gf {
namespace {

// Light in fibre and copper: ~5 ns per metre.
constexpr double kPropagationSPerM = 5e-9;
// One NVLink/NVSwitch hop, GPU to GPU (order of magnitude; NCCL's own NVLink latencies sit in
// the collective model's tables).
constexpr double kScaleUpHopLatencyS = 0.3e-6;
// PCIe crossing between GPU memory and the NIC (GPUDirect RDMA), one direction.
constexpr double kPcieHopLatencyS = 0.5e-6;
// Distances used for propagation, as the BOM's length classes (plan/bom.cc).
constexpr double kNodeLeafM = 20, kLeafSpineM = 50, kSpineCoreM = 150;
// Usable fraction of a PCIe link's raw rate after TLP/DLLP overheads.
constexpr double kPcieEfficiency = 0.9;

uint64_t mix64(uint64_t x) {
  // splitmix64 finaliser: a good, fast, deterministic hash for ECMP choices.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

uint16_t roce_udp_source_port(uint32_t lqpn, uint32_t rqpn) {
  uint64_t v = static_cast<uint64_t>(lqpn) * rqpn;  // rdma_calc_flow_label
  v ^= v >> 20;
  v ^= v >> 40;
  const uint32_t fl = static_cast<uint32_t>(v & 0xFFFFF);
  // rdma_flow_label_to_udp_sport: 14 bits, the flow label's high 6 folded in, in 0xC000+.
  return static_cast<uint16_t>(((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000);
}

uint32_t nic_ipv4(int nic, int plane) {
  return 0x0A000000u | (static_cast<uint32_t>(plane) & 7u) << 21 |
         (static_cast<uint32_t>(nic) & 0x1FFFFFu);
}

uint32_t ecmp_hash_seed(EcmpSeedPolicy policy, int plane, int tier, int index) {
  switch (policy) {
    case EcmpSeedPolicy::kPerSwitch:
      return static_cast<uint32_t>(1'000'000 * tier + 100'000 * plane + index + 1);
    case EcmpSeedPolicy::kPerTier:
      return tier <= 1 ? 10 : tier == 2 ? 25 : 40;
    case EcmpSeedPolicy::kSame:
      return 0;
  }
  return 0;
}

SwitchPosition switch_position(const Topology& t, int k) {
  const int per_plane = std::max(1, t.leaves + t.spines + t.cores);
  const int local = k % per_plane;
  SwitchPosition at;
  at.plane = k / per_plane;
  at.tier = local < t.leaves ? 1 : local < t.leaves + t.spines ? 2 : 3;
  at.index = at.tier == 1 ? local : at.tier == 2 ? local - t.leaves : local - t.leaves - t.spines;
  return at;
}

EcmpHash EcmpHash::from_seed(uint32_t seed) {
  const uint64_t k0 = mix64(seed), k1 = mix64(static_cast<uint64_t>(seed) + (1ULL << 32));
  return from_key(k0, k1);
}

EcmpHash EcmpHash::from_key(uint64_t k0, uint64_t k1) {
  // The 32-bit key window that input bit i (0 = most significant bit of the source address)
  // XORs in when set.
  auto window = [&](int i) -> uint32_t {
    if (i == 0) return static_cast<uint32_t>(k0 >> 32);
    if (i < 64) return static_cast<uint32_t>(((k0 << i) | (k1 >> (64 - i))) >> 32);
    return static_cast<uint32_t>((k1 << (i - 64)) >> 32);
  };
  EcmpHash h;
  for (int p = 0; p < 24; ++p)
    for (int v = 0; v < 16; ++v) {
      uint32_t x = 0;
      for (int b = 0; b < 4; ++b)
        if (v & (8 >> b)) x ^= window(4 * p + b);
      h.table_[static_cast<size_t>(p * 16 + v)] = x;
    }
  return h;
}

const char* link_class_name(LinkClass c) {
  switch (c) {
    case LinkClass::kScaleUp:
      return "scale-up (NVLink)";
    case LinkClass::kPcie:
      return "PCIe (GPU-NIC)";
    case LinkClass::kNicLeaf:
      return "NIC-leaf links";
    case LinkClass::kLeafSpine:
      return "leaf-spine uplinks";
    case LinkClass::kSpineCore:
      return "spine-core uplinks";
    case LinkClass::kGlobal:
      return "dragonfly global links";
  }
  return "?";
}

int Fabric::add_vertex(int tier, int pod) {
  tier_.push_back(static_cast<int8_t>(tier));
  pod_.push_back(pod);
  up_.emplace_back();
  down_.emplace_back();
  global_.emplace_back();
  return static_cast<int>(tier_.size()) - 1;
}

int Fabric::add_link(int from, int to, double bytes_per_s, double latency_s, LinkClass cls) {
  links_.push_back({from, to, bytes_per_s, latency_s, cls, false});
  return static_cast<int>(links_.size()) - 1;
}

Fabric Fabric::build(const Plan& p, const Catalog& cat) {
  Fabric f;
  const Topology& t = p.topo;
  f.nodes_ = p.nodes;
  f.gpus_per_node_ = p.gpus_per_node;
  f.rails_ = p.nics_per_node;
  f.planes_ = t.planes;
  f.kind_ = t.kind;
  // A scale-up domain spans whole nodes where the catalog's is larger than its server (NVL72: 18
  // trays of 4 GPUs), never beyond the cluster; where the server holds the whole domain (DGX:
  // 8 GPUs on their NVSwitches) it is the node, however few GPUs a node runs (2 nodes of 1 GPU
  // are 2 domains, not one).
  const bool spans_nodes = p.gpu.scaleup_domain_gpus > p.gpu.gpus_per_node;
  f.domain_gpus_ = spans_nodes ? std::max(p.gpus_per_node, std::min<int>(p.gpu.scaleup_domain_gpus,
                                                                         p.nodes * p.gpus_per_node))
                               : p.gpus_per_node;
  f.domain_gpus_ -= f.domain_gpus_ % p.gpus_per_node;
  const long long gpus = 1LL * p.nodes * p.gpus_per_node;
  const int domains = static_cast<int>((gpus + f.domain_gpus_ - 1) / f.domain_gpus_);
  const int nics = p.nodes * p.nics_per_node;
  for (long long g = 0; g < gpus; ++g) f.add_vertex(0, -1);
  const int domain_base = static_cast<int>(f.tier_.size());
  for (int d = 0; d < domains; ++d) f.add_vertex(0, -1);
  const int nic_base = static_cast<int>(f.tier_.size());
  for (int n = 0; n < nics; ++n) f.add_vertex(0, -1);
  // With more NICs than GPUs, each GPU's NICs hang off a PCIe switch it reaches over its one
  // x16 link (a vertex per GPU that owns NICs).
  // PCIe cards: the GPU's x16 link to the host (its scale-up link) carries its NIC traffic too.
  f.host_pcie_ = p.gpu.scaleup_tech == ScaleUpTech::kPcie;
  const bool shared_pcie = !f.host_pcie_ && p.nics_per_node > p.gpus_per_node;
  const int pcie_switch_base = static_cast<int>(f.tier_.size());
  if (shared_pcie)
    for (long long g = 0; g < gpus; ++g) f.add_vertex(0, -1);
  f.leaves_ = t.leaves;
  f.spines_ = t.spines;
  f.cores_ = t.cores;
  f.spines_per_pod_ = std::max(1, t.kind == TopologyKind::kClos2 ? t.spines : t.spines_per_pod);
  f.cores_per_group_ = std::max(1, t.cores_per_group);
  f.groups_ = t.kind == TopologyKind::kDragonfly ? t.pods : 0;
  f.pods_ = std::max(1, t.pods);
  f.switch_base_ = static_cast<int>(f.tier_.size());
  f.per_plane_ = t.leaves + t.spines + t.cores;
  const int leaves_per_pod = (t.kind == TopologyKind::kClos3 || t.kind == TopologyKind::kDragonfly)
                                 ? t.units_per_pod * t.leaves_per_unit
                                 : 0;
  for (int plane = 0; plane < t.planes; ++plane) {
    for (int i = 0; i < t.leaves; ++i) f.add_vertex(1, leaves_per_pod ? i / leaves_per_pod : 0);
    for (int i = 0; i < t.spines; ++i) f.add_vertex(2, i / f.spines_per_pod_);
    for (int i = 0; i < t.cores; ++i) f.add_vertex(3, i / f.cores_per_group_);
  }
  if (f.groups_) f.global_reach_.assign(static_cast<size_t>(t.spines) * f.groups_, 0);
  // Every switch's ECMP hash, one EcmpHash per distinct seed.
  f.hash_of_.assign(f.tier_.size(), -1);
  {
    std::unordered_map<uint32_t, int32_t> by_seed;
    for (int v = f.switch_base_; v < static_cast<int>(f.tier_.size()); ++v) {
      const SwitchPosition at = switch_position(t, v - f.switch_base_);
      const uint32_t seed = ecmp_hash_seed(p.ecmp_seed, at.plane, at.tier, at.index);
      auto [it, fresh] = by_seed.emplace(seed, static_cast<int32_t>(f.hashes_.size()));
      if (fresh) f.hashes_.push_back(EcmpHash::from_seed(seed));
      f.hash_of_[v] = it->second;
    }
  }

  // Host side: GPU <-> scale-up switch, GPU memory <-> NIC over PCIe.
  const double nvlink = p.gpu.scaleup_gbs_per_gpu * 1e9;
  const double pcie =
      pcie_x16_gbs(std::min(p.gpu.pcie_gen, p.nic.pcie_gen)) * 1e9 * kPcieEfficiency;
  const double gpu_pcie = pcie_x16_gbs(p.gpu.pcie_gen) * 1e9 * kPcieEfficiency;
  f.gpu_up_.resize(static_cast<size_t>(gpus));
  f.gpu_down_.resize(static_cast<size_t>(gpus));
  // A PCIe card's link is its x16 into the host, at the catalog's rate (NCCL's PCI rating),
  // a PCIe link: its NIC traffic crosses it too, and NVLink's Simple efficiency is not its.
  const LinkClass up_class = f.host_pcie_ ? LinkClass::kPcie : LinkClass::kScaleUp;
  const double up_lat = f.host_pcie_ ? kPcieHopLatencyS : kScaleUpHopLatencyS;
  for (long long g = 0; g < gpus; ++g) {
    const int dom = domain_base + static_cast<int>(g / f.domain_gpus_);
    f.gpu_up_[g] = f.add_link(static_cast<int>(g), dom, nvlink, up_lat, up_class);
    f.gpu_down_[g] = f.add_link(dom, static_cast<int>(g), nvlink, up_lat, up_class);
  }
  f.pcie_up_.resize(nics);
  f.pcie_down_.resize(nics);
  // A GPU with several NICs drives them all through its own x16 link: NCCL's topology has the
  // same shape (topo.cc@v2.29.7-1 ncclTopoAddPci: a link per PCI device to its parent switch,
  // width x speed, so the GPU's one link is on every path to its NICs), and its search spends
  // that link's bandwidth across the NICs' channels. One GPU of a 2-node, 4 x 400G RoCE run
  // measured 41 GB/s of tree all_reduce at 32 MiB (nccl-tests issue 232), not 4 NICs' rate.
  std::vector<int32_t> gpu_link_up, gpu_link_down;
  if (shared_pcie) {
    gpu_link_up.resize(static_cast<size_t>(gpus));
    gpu_link_down.resize(static_cast<size_t>(gpus));
    for (long long g = 0; g < gpus; ++g) {
      const int sw = pcie_switch_base + static_cast<int>(g);
      gpu_link_up[g] =
          f.add_link(static_cast<int>(g), sw, gpu_pcie, kPcieHopLatencyS / 2, LinkClass::kPcie);
      gpu_link_down[g] =
          f.add_link(sw, static_cast<int>(g), gpu_pcie, kPcieHopLatencyS / 2, LinkClass::kPcie);
    }
    f.gpu_pcie_up_.resize(nics);
    f.gpu_pcie_down_.resize(nics);
  }
  for (int n = 0; n < nics; ++n) {
    const int host_gpu =
        (n / p.nics_per_node) * p.gpus_per_node + f.gpu_of_rail(n % p.nics_per_node);
    // The NIC's end: the GPU itself, or the PCIe switch behind the GPU's shared link, or with
    // PCIe cards the host's PCIe fabric every GPU reaches over its own x16 link.
    const int near = f.host_pcie_  ? domain_base + static_cast<int>(host_gpu / f.domain_gpus_)
                     : shared_pcie ? pcie_switch_base + host_gpu
                                   : host_gpu;
    const double lat = shared_pcie ? kPcieHopLatencyS / 2 : kPcieHopLatencyS;
    f.pcie_up_[n] = f.add_link(near, nic_base + n, pcie, lat, LinkClass::kPcie);
    f.pcie_down_[n] = f.add_link(nic_base + n, near, pcie, lat, LinkClass::kPcie);
    if (shared_pcie) {
      f.gpu_pcie_up_[n] = gpu_link_up[host_gpu];
      f.gpu_pcie_down_[n] = gpu_link_down[host_gpu];
    }
  }
  f.first_cable_link_ = static_cast<int>(f.links_.size());
  // Fabric links from the cabling plan, so the graph is exactly what gets cabled.
  const double lane = t.lane_gbps * 1e9 / 8;
  const double sw_lat = p.sw.latency_ns * 1e-9;
  f.nic_up_.assign(static_cast<size_t>(nics) * t.planes, -1);
  f.nic_down_.assign(static_cast<size_t>(nics) * t.planes, -1);
  f.nic_leaf_.assign(static_cast<size_t>(nics) * t.planes, -1);
  auto sw = [&](int plane, LinkKind k, long long idx, bool upper) {
    // Lower end of leaf-spine is a leaf, upper a spine; of spine-core a spine and a core.
    int base = f.switch_base_ + plane * f.per_plane_;
    if (k == LinkKind::kLeafSpine) return base + (upper ? t.leaves : 0) + static_cast<int>(idx);
    if (k == LinkKind::kSpineCore)
      return base + t.leaves + (upper ? t.spines : 0) + static_cast<int>(idx);
    return base + t.leaves + static_cast<int>(idx);  // global: spine to spine
  };
  for_each_link(
      p, cat,
      [&](const CableRun& r) {
        switch (r.kind) {
          case LinkKind::kNodeLeaf: {
            const int nic = static_cast<int>(r.a_index) * p.nics_per_node + r.rail;
            const int leaf = f.leaf_vertex(r.plane, static_cast<int>(r.b_index));
            const size_t slot = static_cast<size_t>(nic) * t.planes + r.plane;
            f.nic_up_[slot] =
                f.add_link(nic_base + nic, leaf, lane, sw_lat + kNodeLeafM * kPropagationSPerM,
                           LinkClass::kNicLeaf);
            f.nic_down_[slot] = f.add_link(leaf, nic_base + nic, lane,
                                           kNodeLeafM * kPropagationSPerM, LinkClass::kNicLeaf);
            f.nic_leaf_[slot] = leaf;
            break;
          }
          case LinkKind::kApplianceLeaf:
            break;  // management traffic is not simulated
          case LinkKind::kLeafSpine:
          case LinkKind::kSpineCore: {
            const int lo = sw(r.plane, r.kind, r.a_index, false);
            const int hi = sw(r.plane, r.kind, r.b_index, true);
            const double m = r.kind == LinkKind::kLeafSpine ? kLeafSpineM : kSpineCoreM;
            const LinkClass cls =
                r.kind == LinkKind::kLeafSpine ? LinkClass::kLeafSpine : LinkClass::kSpineCore;
            const int u = f.add_link(lo, hi, lane, sw_lat + m * kPropagationSPerM, cls);
            const int d = f.add_link(hi, lo, lane, sw_lat + m * kPropagationSPerM, cls);
            f.up_[lo].push_back({u, hi, f.pod_[hi], false});
            f.down_[hi].push_back({d, lo, f.pod_[lo], false});
            break;
          }
          case LinkKind::kGlobal: {
            const int a = sw(r.plane, r.kind, r.a_index, false);
            const int b = sw(r.plane, r.kind, r.b_index, false);
            const double lat = sw_lat + kSpineCoreM * kPropagationSPerM;
            const int ab = f.add_link(a, b, lane, lat, LinkClass::kGlobal);
            const int ba = f.add_link(b, a, lane, lat, LinkClass::kGlobal);
            f.global_[a].push_back({ab, b, f.pod_[b], false});
            f.global_[b].push_back({ba, a, f.pod_[a], false});
            f.global_reach_[static_cast<size_t>(r.a_index) * f.groups_ + f.pod_[b]] = 1;
            f.global_reach_[static_cast<size_t>(r.b_index) * f.groups_ + f.pod_[a]] = 1;
            break;
          }
        }
      },
      /*with_names=*/false);
  f.link_to_.reserve(f.links_.size());
  for (const Link& k : f.links_) f.link_to_.push_back(k.to);
  // Per switch (vertex - switch_base_): its uplinks, and its links down grouped by destination.
  const size_t switches = f.tier_.size() - static_cast<size_t>(f.switch_base_);
  f.up_links_.resize(switches);
  f.down_links_.resize(switches);
  f.down_groups_.resize(switches);
  for (size_t s = 0; s < switches; ++s) {
    const size_t v = s + static_cast<size_t>(f.switch_base_);
    for (const Adj& a : f.up_[v]) f.up_links_[s].push_back(a.link);
    if (f.tier_[v] < 2) continue;
    std::vector<std::pair<int32_t, int32_t>> keyed;  // (key, link), stably sorted by key
    for (const Adj& a : f.down_[v]) keyed.push_back({f.tier_[v] == 2 ? a.to : a.to_pod, a.link});
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, link] : keyed) {
      if (f.down_groups_[s].empty() || f.down_groups_[s].back().first != key)
        f.down_groups_[s].push_back({key, static_cast<int32_t>(f.down_links_[s].size())});
      f.down_links_[s].push_back(link);
    }
  }
  f.dense_key0_.assign(switches, -1);
  for (size_t s = 0; s < switches; ++s) {
    const auto& g = f.down_groups_[s];
    bool dense = !g.empty();
    for (size_t i = 1; i < g.size() && dense; ++i)
      dense = g[i].first == g[0].first + static_cast<int32_t>(i);
    if (dense) f.dense_key0_[s] = g[0].first;
  }
  return f;
}

bool Fabric::reaches(int v, int dst_leaf) const {
  if (v == dst_leaf) return true;
  if (tier_[v] <= 1) return false;
  const uint64_t key = static_cast<uint64_t>(v) << 32 | static_cast<uint32_t>(dst_leaf);
  if (auto it = reach_cache_.find(key); it != reach_cache_.end()) return it->second;
  const int dst_pod = pod_[dst_leaf];
  bool ok = false;
  if (tier_[v] == 2 && pod_[v] == dst_pod) {
    for (const Adj& a : down_[v]) ok = ok || (!a.failed && a.to == dst_leaf);
  } else if (tier_[v] == 2 && groups_) {
    for (const Adj& a : global_[v])
      if (!ok && !a.failed && a.to_pod == dst_pod) ok = reaches(a.to, dst_leaf);
  } else if (tier_[v] == 2) {
    for (const Adj& a : up_[v])
      if (!ok && !a.failed) ok = reaches(a.to, dst_leaf);
  } else {  // core
    for (const Adj& a : down_[v])
      if (!ok && !a.failed && a.to_pod == dst_pod) ok = reaches(a.to, dst_leaf);
  }
  reach_cache_[key] = ok;
  return ok;
}

// While no link failed: a leaf, or a spine towards another pod of a Clos, may take any uplink;
// a spine of the destination's pod, or a core, any link down to it (routing's inner loop).
[[gnu::always_inline]] inline std::span<const int32_t> Fabric::next_hops_intact(
    int v, int dst_leaf) const {
  const size_t s = static_cast<size_t>(v - switch_base_);
  if (tier_[v] == 1 || (tier_[v] == 2 && pod_[v] != pod_[dst_leaf])) return up_links_[s];
  const int32_t key = tier_[v] == 2 ? dst_leaf : pod_[dst_leaf];
  const auto& g = down_groups_[s];
  const int32_t key0 = dense_key0_[s];
  const auto it =
      key0 >= 0
          ? (key >= key0 && key - key0 < static_cast<int32_t>(g.size()) ? g.begin() + (key - key0)
                                                                        : g.end())
          : std::lower_bound(g.begin(), g.end(), std::pair<int32_t, int32_t>{key, -1});
  if (it == g.end() || it->first != key) return {};
  const auto& links = down_links_[s];
  const size_t end = it + 1 == g.end() ? links.size() : static_cast<size_t>((it + 1)->second);
  return std::span<const int32_t>(links).subspan(static_cast<size_t>(it->second),
                                                 end - static_cast<size_t>(it->second));
}

std::span<const int32_t> Fabric::next_hops(int v, int dst_leaf, std::vector<int32_t>& out) const {
  if (!any_failed_ && !groups_) return next_hops_intact(v, dst_leaf);
  out.clear();
  if (any_failed_) {
    next_hops_all(v, dst_leaf, out);
    size_t w = 0;
    for (int32_t l : out)
      if (reaches(links_[l].to, dst_leaf)) out[w++] = l;
    out.resize(w);
    return out;
  }
  next_hops_all(v, dst_leaf, out);
  return out;
}

void Fabric::next_hops_all(int v, int dst_leaf, std::vector<int32_t>& out) const {
  out.clear();
  const int dst_pod = pod_[dst_leaf];
  if (tier_[v] == 1) {
    const int spine_base = switch_base_ + (v - switch_base_) / per_plane_ * per_plane_ + leaves_;
    for (const Adj& a : up_[v]) {
      if (a.failed) continue;
      if (groups_ && pod_[v] != dst_pod &&
          !global_reach_[static_cast<size_t>(a.to - spine_base) * groups_ + dst_pod])
        continue;
      out.push_back(a.link);
    }
    return;
  }
  if (tier_[v] == 2) {
    if (pod_[v] == dst_pod) {
      for (const Adj& a : down_[v])
        if (!a.failed && a.to == dst_leaf) out.push_back(a.link);
    } else if (groups_) {
      for (const Adj& a : global_[v])
        if (!a.failed && a.to_pod == dst_pod) out.push_back(a.link);
    } else {
      for (const Adj& a : up_[v])
        if (!a.failed) out.push_back(a.link);
    }
    return;
  }
  // Core: down to the spine of the destination's pod.
  for (const Adj& a : down_[v])
    if (!a.failed && a.to_pod == dst_pod) out.push_back(a.link);
}

double Fabric::latency_s(const std::vector<int32_t>& path) const {
  double s = 0;
  for (int l : path) s += links_[l].latency_s;
  return s;
}

template <typename Choose>
bool Fabric::walk(int src_nic, int dst_nic, int plane, std::vector<int32_t>& path,
                  Choose&& choose) const {
  const size_t s = static_cast<size_t>(src_nic) * planes_ + plane;
  const size_t d = static_cast<size_t>(dst_nic) * planes_ + plane;
  if (nic_up_[s] < 0 || nic_down_[d] < 0) return false;
  if (links_[nic_up_[s]].failed || links_[nic_down_[d]].failed) return false;
  path.push_back(nic_up_[s]);
  int v = nic_leaf_[s];
  const int dst_leaf = nic_leaf_[d];
  thread_local std::vector<int32_t> cand;
  const bool intact = !any_failed_ && !groups_;
  for (int hop = 0; v != dst_leaf; ++hop) {
    if (hop > 8) return false;
    const std::span<const int32_t> next =
        intact ? next_hops_intact(v, dst_leaf) : next_hops(v, dst_leaf, cand);
    if (next.empty()) return false;
    const int l = choose(v, dst_leaf, hop, next);
    path.push_back(l);
    v = link_to_[static_cast<size_t>(l)];
  }
  path.push_back(nic_down_[d]);
  return true;
}

bool Fabric::route(int src_nic, int dst_nic, int plane, const FlowTuple& flow,
                   std::vector<int32_t>& path, uint64_t spread) const {
  return walk(src_nic, dst_nic, plane, path, [&](int v, int, int, std::span<const int32_t> cand) {
    const uint64_t n = cand.size();
    const int l = cand[(hash_at(v, flow) % n + spread % n) % n];
    // The next digit for the next hop; once the spread is used up (fewer ways than
    // the hops' choices multiplied), the rest is scrambled so that ways that met at
    // this hop do not all take one link at the next.
    spread = spread >= n ? spread / n : mix64(spread);
    return l;
  });
}

bool Fabric::route_round_robin(int src_nic, int dst_nic, int plane, std::vector<uint32_t>& turn,
                               std::vector<int32_t>& path) const {
  return walk(src_nic, dst_nic, plane, path,
              [&](int v, int dst_leaf, int, std::span<const int32_t> cand) {
                // A core takes turns per destination pod: its choices differ by pod.
                size_t slot = static_cast<size_t>(v);
                if (tier_[v] == 3) {
                  const int core = (v - switch_base_) % per_plane_ - leaves_ - spines_;
                  const int plane_of = (v - switch_base_) / per_plane_;
                  slot = tier_.size() + (static_cast<size_t>(plane_of) * cores_ + core) * pods_ +
                         static_cast<size_t>(pod_[dst_leaf]);
                }
                return cand[turn[slot]++ % cand.size()];
              });
}

bool Fabric::route_least_loaded(int src_nic, int dst_nic, int plane, std::vector<double>& load,
                                double weight, uint64_t ties, std::vector<int32_t>& path) const {
  const size_t first = path.size();
  const bool ok =
      walk(src_nic, dst_nic, plane, path, [&](int v, int, int, std::span<const int32_t> cand) {
        const size_t n = cand.size(), start = mix64(ties + static_cast<uint64_t>(v)) % n;
        int best = cand[start];
        double least = load[static_cast<size_t>(best)];
        for (size_t i = 1; i < n && least > 0; ++i)
          if (const int l = cand[(start + i) % n]; load[static_cast<size_t>(l)] < least) {
            best = l;
            least = load[static_cast<size_t>(l)];
          }
        return best;
      });
  if (ok)
    for (size_t i = first; i < path.size(); ++i) load[static_cast<size_t>(path[i])] += weight;
  return ok;
}

uint64_t Fabric::round_robin_period(size_t slot) const {
  thread_local std::vector<int32_t> cand;
  uint64_t period = 1;
  auto fold = [&](int v, int dst_leaf) {
    const uint64_t n = next_hops(v, dst_leaf, cand).size();
    if (n > 0 && period > 0) period = std::lcm(period, n);
    if (period > (uint64_t{1} << 32)) period = 0;
  };
  int v = 0, pod = -1;
  if (slot < tier_.size()) {
    v = static_cast<int>(slot);
    if (tier_[v] == 0 || tier_[v] == 3) return 1;  // host side; a core counts per pod
  } else {
    const size_t k = slot - tier_.size();
    pod = static_cast<int>(k % static_cast<size_t>(pods_));
    const int core = static_cast<int>(k / static_cast<size_t>(pods_));
    v = core_vertex(core / std::max(1, cores_), core % std::max(1, cores_));
  }
  const int plane = (v - switch_base_) / per_plane_;
  for (int i = 0; i < leaves_; ++i) {
    const int leaf = leaf_vertex(plane, i);
    if (leaf != v && (pod < 0 || pod_[leaf] == pod)) fold(v, leaf);
  }
  return period;
}

bool Fabric::route_to_switch(int src_nic, int plane, int target, uint64_t hash,
                             std::vector<int32_t>& path) const {
  const size_t s = static_cast<size_t>(src_nic) * planes_ + plane;
  if (nic_up_[s] < 0 || links_[nic_up_[s]].failed) return false;
  path.push_back(nic_up_[s]);
  int v = nic_leaf_[s];
  thread_local std::vector<int32_t> cand;
  for (int hop = 0; v != target; ++hop) {
    if (hop > 4 || tier_[v] >= tier_[target]) return false;
    cand.clear();
    for (const Adj& a : up_[v]) {
      if (a.failed) continue;
      bool reaches = a.to == target;
      if (!reaches && tier_[target] == 3 && tier_[a.to] == 2) {
        // Spine s of every pod uplinks only to the cores of group s.
        const int local = (a.to - switch_base_) % per_plane_ - leaves_;
        if (local % spines_per_pod_ == pod_[target])
          for (const Adj& b : up_[a.to]) reaches = reaches || (!b.failed && b.to == target);
      }
      if (reaches) cand.push_back(a.link);
    }
    if (cand.empty()) return false;
    const int l = cand[mix64(hash + static_cast<uint64_t>(hop)) % cand.size()];
    path.push_back(l);
    v = links_[l].to;
  }
  return true;
}

int Fabric::reduction_root(int plane, int rail, int nodes) const {
  const int base = switch_base_ + plane * per_plane_;
  if (kind_ == TopologyKind::kSingle) return base;
  int first = 0, count = 0;
  if (kind_ == TopologyKind::kClos2) {
    first = base + leaves_;
    count = std::max(1, spines_);
  } else if (kind_ == TopologyKind::kClos3) {
    first = base + leaves_ + spines_;
    count = std::max(1, cores_);
  } else {
    return -1;  // dragonfly: no single tree root
  }
  const int pick = first + rail % count;
  if (!any_failed_) return pick;
  // With failed parts the Aggregation Manager builds the job's tree on a top-tier switch that still
  // reaches every leaf of the rail's NICs (SHARP 3.2.0 release notes, bug 3236363: a link failure
  // stops the jobs whose tree used it, not later ones; 3.1.0 known issue 3225401: dynamic trees
  // take other roots until all root switches are down): the rail's own root where it can, else
  // the next one that can. None can: the rail's own, which its NICs then cannot reach.
  // Only leaves a NIC still reaches: a failed leaf's nodes are cut off from the rail, not a
  // reason to keep the tree on a failed root. Only the communicator's nodes: the job's tree
  // spans its own leaves.
  std::vector<int> leaves;
  const int members = nodes > 0 ? std::min(nodes, nodes_) : nodes_;
  for (int node = 0; node < members; ++node) {
    const size_t s = static_cast<size_t>(nic(node, rail)) * planes_ + plane;
    if (nic_up_[s] < 0 || links_[nic_up_[s]].failed) continue;
    const int leaf = nic_leaf_[s];
    if (leaf >= 0 && std::find(leaves.begin(), leaves.end(), leaf) == leaves.end())
      leaves.push_back(leaf);
  }
  for (int k = 0; k < count; ++k) {
    const int v = first + (rail + k) % count;
    if (std::all_of(leaves.begin(), leaves.end(), [&](int leaf) { return reaches(v, leaf); }))
      return v;
  }
  return pick;
}

void Fabric::fail_link(int id) {
  Link& l = links_[id];
  l.failed = true;
  any_failed_ = true;
  reach_cache_.clear();
  for (auto* lists : {&up_, &down_, &global_})
    if (l.from < static_cast<int>(lists->size()))
      for (Adj& a : (*lists)[l.from])
        if (a.link == id) a.failed = true;
}

void Fabric::send_through(int nic, int through) {
  pcie_up_[nic] = pcie_up_[through];
  pcie_down_[nic] = pcie_down_[through];
  if (!gpu_pcie_up_.empty()) {
    gpu_pcie_up_[nic] = gpu_pcie_up_[through];
    gpu_pcie_down_[nic] = gpu_pcie_down_[through];
  }
  for (int p = 0; p < planes_; ++p) {
    const size_t a = static_cast<size_t>(nic) * planes_ + p;
    const size_t b = static_cast<size_t>(through) * planes_ + p;
    nic_up_[a] = nic_up_[b];
    nic_down_[a] = nic_down_[b];
    nic_leaf_[a] = nic_leaf_[b];
  }
  // The rails are no longer alike (one leaf carries two rails' traffic of this node): the
  // shortcuts that take one rail's flows for another's must not apply.
  any_failed_ = true;
  reach_cache_.clear();
}

void Fabric::fail_vertex(int v) {
  for (size_t i = 0; i < links_.size(); ++i)
    if (links_[i].from == v || links_[i].to == v) fail_link(static_cast<int>(i));
}

std::vector<int32_t> Fabric::links_of_vertex(int v) const {
  std::vector<int32_t> out;
  for (size_t l = 0; l < links_.size(); ++l)
    if (links_[l].from == v || links_[l].to == v) out.push_back(static_cast<int32_t>(l));
  return out;
}

std::string Fabric::vertex_name(int v) const {
  const long long gpus = 1LL * nodes_ * gpus_per_node_;
  if (v < gpus) return fmt::format("node{}/gpu{}", v / gpus_per_node_ + 1, v % gpus_per_node_);
  if (tier_[v] == 0) return fmt::format("host-side vertex {}", v);
  const int local = (v - switch_base_) % per_plane_, plane = (v - switch_base_) / per_plane_;
  const std::string pre = planes_ > 1 ? fmt::format("p{}-", plane + 1) : "";
  if (local < leaves_) return fmt::format("{}leaf#{}", pre, local + 1);
  if (local < leaves_ + spines_) return fmt::format("{}spine#{}", pre, local - leaves_ + 1);
  return fmt::format("{}core#{}", pre, local - leaves_ - spines_ + 1);
}

}  // namespace gf
