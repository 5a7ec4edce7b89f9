#include "config/addressing.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "config/frr.h"
#include "config/mgmt.h"
#include "topo/fabric.h"

namespace gf {
namespace {

// Addresses a leaf's host subnet holds besides its hosts: network, gateway, broadcast.
constexpr int kSubnetOverhead = 3;

// ASNs no router may take: AS_TRANS (RFC 6793), the documentation ranges (RFC 5398) and the
// last 2-byte and 4-byte ones (RFC 7300).
struct AsnRange {
  long long first, last;
  const char* what;
};
constexpr AsnRange kReservedAsns[] = {
    {0, 0, "reserved (RFC 7607)"},
    {23456, 23456, "AS_TRANS (RFC 6793)"},
    {64496, 64511, "for documentation (RFC 5398)"},
    {65535, 65535, "reserved (RFC 7300)"},
    {65536, 65551, "for documentation (RFC 5398)"},
    {4294967295LL, 4294967295LL, "reserved (RFC 7300)"},
};

// The error where [first, last], the ASNs a role's switches take from `key`, meets a reserved one.
std::optional<Diagnostic> reserved_asn_error(const char* key, const char* role, long long first,
                                             long long last) {
  for (const auto& r : kReservedAsns) {
    if (first > r.last || last < r.first) continue;
    const long long hit = std::max(first, r.first);
    return Diagnostic::at_key(
        key,
        fmt::format("the {} switches' ASNs {}-{} include {}, {}", role, first, last, hit, r.what),
        fmt::format("move {} so that its {} ASNs stay within a private range, 64512-65534 or "
                    "4200000000-4294967294 (RFC 6996)",
                    key, last - first + 1));
  }
  return std::nullopt;
}

// Hands out consecutive blocks of 2^(32-len) addresses from a pool.
class Pool {
 public:
  Pool(Ipv4Prefix p, std::string key) : p_(p), key_(std::move(key)), next_(p.addr) {}
  Result<uint32_t> take(int len) {
    const uint64_t size = uint64_t{1} << (32 - len);
    uint64_t at = (uint64_t{next_} + size - 1) / size * size;  // aligned
    const uint64_t end = uint64_t{p_.addr} + (uint64_t{1} << (32 - p_.len));
    if (at + size > end)
      return Diagnostic::at_key(key_,
                                fmt::format("{} is too small for the fabric's addresses", p_.str()),
                                "give a larger prefix");
    next_ = static_cast<uint32_t>(at + size);
    return static_cast<uint32_t>(at);
  }

 private:
  Ipv4Prefix p_;
  std::string key_;
  uint32_t next_;
};

// The longest prefix whose block holds `n` addresses.
int prefix_len_holding(uint64_t n) {
  int len = 32;
  while (len > 0 && (uint64_t{1} << (32 - len)) < n) --len;
  return len;
}

// The prefix length of a leaf's host subnet: its hosts, network, gateway and broadcast.
int host_subnet_len(long long hosts) {
  return prefix_len_holding(static_cast<uint64_t>(hosts + kSubnetOverhead));
}

// What blocks of the given prefix lengths take from a pool that starts at `start`, handed out
// in order and each aligned to its size (Pool::take): the end minus the start.
uint64_t blocks_span(uint32_t start, const std::vector<int>& lens) {
  uint64_t next = start;
  for (const int len : lens) {
    const uint64_t size = uint64_t{1} << (32 - len);
    next = (next + size - 1) / size * size + size;
  }
  return next - start;
}

// The error where the ASNs of `leaves` leaves and `spines` spines overlap each other or meet a
// reserved one: leaves from asn_leaf, one each; in clos2 the spines share asn_spine; in clos3 the
// cores share it and each pod's spines take asn_spine + 1 + pod (RFC 7938 §5.2).
std::optional<Diagnostic> asn_error(const Topology& topo, const AddressingSpec& spec,
                                    long long leaves, long long spines) {
  const long long spines_per_pod = std::max(1, topo.spines_per_pod);
  if (topo.kind == TopologyKind::kClos3 &&
      spec.asn_leaf <= spec.asn_spine + 1 + spines / spines_per_pod &&
      spec.asn_leaf + leaves > spec.asn_spine)
    return Diagnostic::at_key("addressing.asn_leaf", "leaf ASNs overlap the spines' ASNs",
                              "leave room above asn_spine for one ASN per pod");
  if (topo.kind != TopologyKind::kClos3 && spec.asn_leaf <= spec.asn_spine &&
      spec.asn_leaf + leaves > spec.asn_spine)
    return Diagnostic::at_key("addressing.asn_leaf", "leaf ASNs overlap asn_spine");
  // No ASN handed out may be one the registries reserve.
  const long long spine_last = topo.kind == TopologyKind::kClos3
                                   ? spec.asn_spine + (spines - 1) / spines_per_pod + 1
                                   : spec.asn_spine;
  if (auto e = reserved_asn_error("addressing.asn_spine", "spine", spec.asn_spine, spine_last))
    return e;
  if (leaves > 0)
    if (auto e = reserved_asn_error("addressing.asn_leaf", "leaf", spec.asn_leaf,
                                    spec.asn_leaf + leaves - 1))
      return e;
  return std::nullopt;
}

// "1 switch", "6 switches".
std::string count_of(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// The error where pool `key` (prefix `p`) cannot hold `need` addresses for `what`, counted from
// the pool's start; `aligned_need`: what they take from a start aligned to any block, which sizes
// the prefix the hint names.
std::optional<Diagnostic> pool_error(const char* key, const Ipv4Prefix& p, uint64_t need,
                                     uint64_t aligned_need, const std::string& what) {
  const uint64_t size = uint64_t{1} << (32 - p.len);
  if (need <= size) return std::nullopt;
  const int len = prefix_len_holding(aligned_need);
  const uint64_t block = uint64_t{1} << (32 - len);
  const auto base = static_cast<uint32_t>(uint64_t{p.addr} / block * block);
  return Diagnostic::at_key(key,
                            fmt::format("{} holds {}; {} take {}", p.str(),
                                        count_of(size, "address", "addresses"), what, need),
                            fmt::format("give it a /{} or larger, e.g. {}/{}, apart from the "
                                        "other pools",
                                        len, ipv4_str(base), len));
}

// The errors of what `n` takes from the fabric's pools (`lo`, `ln`, `hs`: the spec's loopbacks,
// links and hosts) and of its ASNs, in key order: loopbacks, links, ASNs, hosts.
std::vector<Diagnostic> needs_errors(const Topology& topo, const AddressingSpec& spec,
                                     const Ipv4Prefix& lo, const Ipv4Prefix& ln,
                                     const Ipv4Prefix& hs, const AddressNeeds& n) {
  std::vector<Diagnostic> errs;
  const auto switches = static_cast<uint64_t>(n.switches);
  const auto slash31s = 2 * static_cast<uint64_t>(n.routed_links);
  if (auto e = pool_error("addressing.loopbacks", lo, switches, switches,
                          "the loopbacks of " + count_of(switches, "switch", "switches")))
    errs.push_back(*e);
  if (auto e = pool_error("addressing.links", ln, slash31s, slash31s,
                          "the /31s of " + count_of(static_cast<uint64_t>(n.routed_links),
                                                    "routed link", "routed links")))
    errs.push_back(*e);
  if (auto e = asn_error(topo, spec, static_cast<long long>(n.host_lens.size()), n.spines))
    errs.push_back(*e);
  if (auto e = pool_error("addressing.hosts", hs, blocks_span(hs.addr, n.host_lens),
                          blocks_span(0, n.host_lens),
                          "the host subnets of " + count_of(n.host_lens.size(), "leaf", "leaves")))
    errs.push_back(*e);
  return errs;
}

// The same for the spec's pools, the fabric's needs counted without building an address
// (address_needs); none where the fabric has no IP plan or a pool is no prefix (the spec's
// validation names it).
std::vector<Diagnostic> fabric_pool_errors(const Plan& plan, const Catalog& catalog,
                                           const AddressingSpec& spec) {
  if (plan.technology != Technology::kRoce || plan.topo.kind == TopologyKind::kDragonfly) return {};
  auto lo = parse_prefix(spec.loopbacks), ln = parse_prefix(spec.links),
       hs = parse_prefix(spec.hosts);
  if (!lo || !ln || !hs) return {};
  return needs_errors(plan.topo, spec, *lo, *ln, *hs,
                      address_needs(plan, catalog, spec.unnumbered));
}

}  // namespace

AddressNeeds address_needs(const Plan& plan, const Catalog& catalog, bool unnumbered) {
  AddressNeeds out;
  if (plan.technology != Technology::kRoce || plan.topo.kind == TopologyKind::kDragonfly)
    return out;
  // The switches as plan_addresses meets them in the cabling (a switch is its tier, plane and
  // number there, as its name is), leaves first; each leaf's host ports.
  std::map<std::tuple<int, int, long long>, size_t> leaf_at;
  std::vector<long long> leaf_hosts;
  std::set<std::tuple<int, int, long long>> upper;
  auto leaf = [&](int plane, long long index) -> long long& {
    auto [it, fresh] = leaf_at.emplace(std::tuple{0, plane, index}, leaf_hosts.size());
    if (fresh) leaf_hosts.push_back(0);
    return leaf_hosts[it->second];
  };
  for_each_link(
      plan, catalog,
      [&](const CableRun& r) {
        switch (r.kind) {
          case LinkKind::kNodeLeaf:
            ++leaf(r.plane, r.b_index);
            break;
          case LinkKind::kLeafSpine:
            leaf(r.plane, r.a_index);
            upper.emplace(1, r.plane, r.b_index);
            ++out.routed_links;
            break;
          case LinkKind::kSpineCore:
            upper.emplace(1, r.plane, r.a_index);
            upper.emplace(2, r.plane, r.b_index);
            ++out.routed_links;
            break;
          default:
            break;
        }
      },
      false);
  out.switches = static_cast<long long>(leaf_hosts.size() + upper.size());
  out.spines = static_cast<long long>(
      std::count_if(upper.begin(), upper.end(), [](const auto& k) { return std::get<0>(k) == 1; }));
  if (unnumbered) out.routed_links = 0;
  out.host_lens.reserve(leaf_hosts.size());
  for (const long long h : leaf_hosts) out.host_lens.push_back(host_subnet_len(h));
  return out;
}

std::vector<Diagnostic> address_pool_errors(const Plan& plan, const Catalog& catalog,
                                            const Spec& spec) {
  std::vector<Diagnostic> errs = fabric_pool_errors(plan, catalog, spec.addressing);
  if (plan.networks && spec.networks) {
    auto nets = plan_network_addresses(plan, spec);
    if (!nets)
      for (const auto& d : nets.errors()) errs.push_back(d);
  }
  return errs;
}

Diagnostic addressing_diagnostic(const Spec& spec, const Diagnostic& d) {
  const std::string& k = d.key;
  const bool pool =
      k == "addressing.loopbacks" || k == "addressing.links" || k == "addressing.hosts" ||
      (k.rfind("networks.", 0) == 0 && k.size() > 7 && k.compare(k.size() - 7, 7, ".subnet") == 0);
  if (!pool || spec.where.count(k)) return spec.at(d.key, d.message, d.hint);
  return spec.at(d.key, "the default " + d.message,
                 fmt::format("{} is not in the spec: write it there; {}", d.key, d.hint));
}

std::string ipv4_str(uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

std::string Ipv4Prefix::str() const { return ipv4_str(addr) + "/" + std::to_string(len); }

Result<Ipv4Prefix> parse_prefix(const std::string& text) {
  if (!is_ipv4_prefix(text))
    return Diagnostic::error(fmt::format("'{}' is not an IPv4 prefix", text));
  unsigned a = 0, b = 0, c = 0, d = 0, len = 0;
  std::sscanf(text.c_str(), "%u.%u.%u.%u/%u", &a, &b, &c, &d, &len);
  return Ipv4Prefix{(a << 24) | (b << 16) | (c << 8) | d, static_cast<int>(len)};
}

const SwitchAddress* AddressPlan::find(const std::string& name) const {
  for (const auto& s : switches)
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<SwitchPort> AddressPlan::ports_of(const std::string& name) const {
  std::vector<SwitchPort> out;
  for (const auto& l : links) {
    if (l.a_device == name) out.push_back({l.a_port, l.b_device, l.b_port, l.a_ip, l.b_ip, true});
    if (l.b_device == name) out.push_back({l.b_port, l.a_device, l.a_port, l.b_ip, l.a_ip, false});
  }
  return out;
}

const HostSubnet* AddressPlan::subnet_of(const std::string& name) const {
  for (const auto& s : subnets)
    if (s.leaf == name) return &s;
  return nullptr;
}

std::vector<NodeRails> AddressPlan::nodes() const {
  std::vector<NodeRails> out;
  std::map<std::string, size_t> index;
  for (const auto& h : hosts) {
    auto [it, added] = index.emplace(h.node, out.size());
    if (added) out.push_back({h.node, {}});
    out[it->second].rails.push_back(&h);
  }
  return out;
}

Result<AddressPlan> plan_addresses(const Plan& plan, const Catalog& catalog,
                                   const AddressingSpec& spec) {
  if (plan.technology != Technology::kRoce)
    return Diagnostic::at_key(
        "fabric.technology",
        fmt::format("{} has no IP fabric to address", technology_name(plan.technology)),
        "InfiniBand is configured through its subnet manager");
  if (plan.topo.kind == TopologyKind::kDragonfly)
    return Diagnostic::at_key("fabric.topology",
                              "addressing of dragonfly fabrics is not supported yet",
                              "plan clos2 or clos3 for routed configurations");
  auto lo = parse_prefix(spec.loopbacks), ln = parse_prefix(spec.links),
       hs = parse_prefix(spec.hosts);
  if (!lo || !ln || !hs) return Diagnostic::at_key("addressing", "a pool is not an IPv4 prefix");
  AddressPlan out;
  out.unnumbered = spec.unnumbered;
  out.host_pool = *hs;
  out.mgmt_netdev = spec.mgmt_netdev;
  // One pass over the cabling: switches by role in first-seen order, routed links, host ports.
  std::map<std::string, size_t> index;
  std::vector<CableRun> routed, hosts;
  std::map<std::string, int> hosts_per_leaf;
  auto add_switch = [&](const std::string& name, const char* role) {
    if (index.emplace(name, out.switches.size()).second) out.switches.push_back({name, role, 0, 0});
  };
  for_each_link(plan, catalog, [&](const CableRun& r) {
    switch (r.kind) {
      case LinkKind::kNodeLeaf:
        add_switch(r.b_device, "leaf");
        ++hosts_per_leaf[r.b_device];
        hosts.push_back(r);
        break;
      case LinkKind::kLeafSpine:
        add_switch(r.a_device, "leaf");
        add_switch(r.b_device, "spine");
        routed.push_back(r);
        break;
      case LinkKind::kSpineCore:
        add_switch(r.a_device, "spine");
        add_switch(r.b_device, "core");
        routed.push_back(r);
        break;
      default:
        break;  // appliances sit on the management network
    }
  });
  // Each switch's ECMP hash seed, as the simulator's fabric derives it from its position, so a
  // configured switch hashes with the seed it was simulated with.
  {
    int k = 0;
    for_each_compute_switch(plan, [&](const std::string& name, bool) {
      const SwitchPosition at = switch_position(plan.topo, k++);
      if (auto it = index.find(name); it != index.end())
        out.switches[it->second].ecmp_seed =
            ecmp_hash_seed(plan.ecmp_seed, at.plane, at.tier, at.index);
    });
  }
  std::stable_sort(
      out.switches.begin(), out.switches.end(), [](const SwitchAddress& a, const SwitchAddress& b) {
        auto rank = [](const std::string& r) { return r == "leaf" ? 0 : r == "spine" ? 1 : 2; };
        return rank(a.role) < rank(b.role);
      });
  // What the fabric takes, from this pass (address_needs counts the same without names): every
  // pool and ASN checked before any is handed out, as plan checks them.
  AddressNeeds needs;
  needs.switches = static_cast<long long>(out.switches.size());
  needs.routed_links = spec.unnumbered ? 0 : static_cast<long long>(routed.size());
  for (const auto& s : out.switches) {
    if (s.role == "leaf") needs.host_lens.push_back(host_subnet_len(hosts_per_leaf[s.name]));
    if (s.role == "spine") ++needs.spines;
  }
  if (auto errs = needs_errors(plan.topo, spec, *lo, *ln, *hs, needs); !errs.empty()) return errs;
  // ASNs (RFC 7938 §5.2): one per leaf; spines share one in clos2; in clos3 the cores share
  // asn_spine and each pod's spines share asn_spine + pod.
  Pool loopbacks(*lo, "addressing.loopbacks");
  int leaf_no = 0;
  const int spines_per_pod = std::max(1, plan.topo.spines_per_pod);
  int spine_no = 0;
  for (auto& s : out.switches) {
    if (s.role == "leaf") {
      s.asn = spec.asn_leaf + leaf_no++;
    } else if (s.role == "spine") {
      s.asn = plan.topo.kind == TopologyKind::kClos3
                  ? spec.asn_spine + 1 + spine_no / spines_per_pod
                  : spec.asn_spine;
      ++spine_no;
    } else {
      s.asn = spec.asn_spine;
    }
    auto ip = loopbacks.take(32);
    if (!ip) return ip.errors();
    s.loopback = *ip;
  }
  // A /31 per routed link (RFC 3021), even address on the lower tier.
  Pool links(*ln, "addressing.links");
  for (const auto& r : routed) {
    RoutedLink l{r.a_device, r.b_device, r.a_port_no, r.b_port_no, 0, 0};
    if (!spec.unnumbered) {
      auto ip = links.take(31);
      if (!ip) return ip.errors();
      l.a_ip = *ip;
      l.b_ip = *ip + 1;
    }
    out.links.push_back(l);
  }
  // One subnet per leaf, sized to its host ports: gateway first, hosts in port order.
  Pool subnets(*hs, "addressing.hosts");
  std::map<std::string, size_t> subnet_of;
  size_t leaf_index = 0;  // needs.host_lens holds the leaves' lengths in this order
  for (const auto& s : out.switches) {
    if (s.role != "leaf") continue;
    const int len = needs.host_lens[leaf_index++];
    auto net = subnets.take(len);
    if (!net) return net.errors();
    subnet_of[s.name] = out.subnets.size();
    out.subnets.push_back({s.name, {*net, len}, *net + 1});
  }
  std::map<std::string, uint32_t> next_host;
  for (const auto& r : hosts) {
    const HostSubnet& sn = out.subnets[subnet_of[r.b_device]];
    uint32_t& next = next_host.emplace(r.b_device, sn.gateway + 1).first->second;
    const size_t port = static_cast<size_t>(r.rail) * std::max(1, plan.topo.planes) + r.plane;
    HostAddress h;
    h.node = r.a_device;
    h.nic = r.a_port;
    h.leaf = r.b_device;
    h.netdev = port < spec.host_netdevs.size() ? spec.host_netdevs[port] : r.a_port;
    h.rdma_device = port < spec.host_rdma_devices.size() ? spec.host_rdma_devices[port]
                                                         : fmt::format("mlx5_{}", port);
    h.rail = r.rail;
    h.plane = r.plane;
    h.port = static_cast<int>(port);
    h.leaf_port = r.b_port_no;
    h.ip = next++;
    h.prefix_len = sn.prefix.len;
    h.gateway = sn.gateway;
    out.hosts.push_back(std::move(h));
  }
  return out;
}

std::string ip_plan_csv(const Plan& plan, const AddressPlan& a) {
  auto port = [&plan](int p) { return frr_port_name(plan, p); };
  std::string out = "kind,device,interface,address,peer_device,peer_interface,asn\n";
  for (const auto& s : a.switches)
    out += fmt::format("loopback,{},lo,{}/32,,,{}\n", s.name, ipv4_str(s.loopback), s.asn);
  for (const auto& l : a.links) {
    const std::string a_ip = a.unnumbered ? "unnumbered" : ipv4_str(l.a_ip) + "/31";
    const std::string b_ip = a.unnumbered ? "unnumbered" : ipv4_str(l.b_ip) + "/31";
    out += fmt::format("link,{},{},{},{},{},\n", l.a_device, port(l.a_port), a_ip, l.b_device,
                       port(l.b_port));
    out += fmt::format("link,{},{},{},{},{},\n", l.b_device, port(l.b_port), b_ip, l.a_device,
                       port(l.a_port));
  }
  for (const auto& s : a.subnets)
    out +=
        fmt::format("host-gateway,{},hosts,{}/{},,,\n", s.leaf, ipv4_str(s.gateway), s.prefix.len);
  for (const auto& h : a.hosts)
    out += fmt::format("host,{},{},{}/{},{},{},\n", h.node, h.netdev, ipv4_str(h.ip), h.prefix_len,
                       h.leaf, port(h.leaf_port));
  return out;
}

}  // namespace gf
