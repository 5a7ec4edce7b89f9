#include "sim/link_load.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "plan/ports.h"

namespace gf {

void LinkLoad::add(const FlowSet& fs, const FluidResult& r, size_t links) {
  if (bytes.size() < links) {
    bytes.resize(links, 0);
    peak_Bps.resize(links, 0);
    flows.resize(links, 0);
  }
  for (int f = 0; f < fs.size(); ++f)
    for (const auto* h = fs.begin(f); h != fs.end(f); ++h) {
      bytes[h->link] += fs.bytes(f) * h->coef;
      ++flows[h->link];
    }
  for (size_t l = 0; l < r.peak_load_Bps.size() && l < links; ++l)
    peak_Bps[l] = std::max(peak_Bps[l], r.peak_load_Bps[l]);
}

double LinkLoad::total_bytes() const { return std::accumulate(bytes.begin(), bytes.end(), 0.0); }

LinkUse link_use(const Fabric& fab, const LinkLoad& load, int32_t link, double size,
                 double seconds) {
  LinkUse u;
  u.link = link;
  const Link& k = fab.links()[link];
  u.capacity_Bps = k.failed ? 0 : k.bytes_per_s;
  const double scale = load.payload_bytes > 0 ? size / load.payload_bytes : 0;
  u.bytes = load.bytes[link] * scale;
  u.flows = load.flows[link];
  if (u.capacity_Bps > 0) {
    u.mean_util = seconds > 0 ? u.bytes / (u.capacity_Bps * seconds) : 0;
    u.peak_util = load.peak_Bps[link] / u.capacity_Bps;
  }
  return u;
}

std::vector<int32_t> links_hottest_first(const Fabric& fab, const LinkLoad& load) {
  std::vector<int32_t> out;
  for (size_t l = 0; l < load.bytes.size(); ++l)
    if (load.bytes[l] > 0) out.push_back(static_cast<int32_t>(l));
  // Mean utilisation up to a common factor (size / payload / seconds): bytes per capacity.
  auto key = [&](int32_t l) {
    const double c = fab.links()[l].failed ? 0 : fab.links()[l].bytes_per_s;
    return c > 0 ? load.bytes[l] / c : 0.0;
  };
  std::sort(out.begin(), out.end(), [&](int32_t a, int32_t b) {
    const double ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    if (load.bytes[a] != load.bytes[b]) return load.bytes[a] > load.bytes[b];
    return a < b;
  });
  return out;
}

const char* link_tier_key(LinkClass c) {
  switch (c) {
    case LinkClass::kScaleUp:
      return "scale_up";
    case LinkClass::kPcie:
      return "pcie";
    case LinkClass::kNicLeaf:
      return "nic_leaf";
    case LinkClass::kLeafSpine:
      return "leaf_spine";
    case LinkClass::kSpineCore:
      return "spine_core";
    case LinkClass::kGlobal:
      return "global";
  }
  return "?";
}

const char* link_direction(const Fabric& fab, int32_t link) {
  const Link& k = fab.links()[link];
  if (k.cls == LinkClass::kGlobal) return "across";
  // Host-side links are built in pairs, GPU to switch (or to NIC) first.
  if (k.cls == LinkClass::kScaleUp || k.cls == LinkClass::kPcie)
    return (link & 1) == 0 ? "up" : "down";
  return fab.tier(k.from) < fab.tier(k.to) ? "up" : "down";
}

std::vector<TierHeat> tier_heat(const Fabric& fab, const LinkLoad& load, double size,
                                double seconds) {
  constexpr int kClasses = static_cast<int>(LinkClass::kGlobal) + 1;
  std::array<TierHeat, kClasses> by{};
  for (int c = 0; c < kClasses; ++c) by[c].cls = static_cast<LinkClass>(c);
  const auto& links = fab.links();
  for (size_t l = 0; l < links.size(); ++l) {
    TierHeat& t = by[static_cast<int>(links[l].cls)];
    ++t.links;
    if (l >= load.bytes.size() || load.bytes[l] <= 0) continue;
    const LinkUse u = link_use(fab, load, static_cast<int32_t>(l), size, seconds);
    ++t.busy;
    t.bytes += u.bytes;
    t.mean_util += u.mean_util;
    t.max_util = std::max(t.max_util, u.mean_util);
    const int bin = std::clamp(static_cast<int>(u.mean_util * kUtilBins), 0, kUtilBins - 1);
    ++t.bins[bin];
  }
  std::vector<TierHeat> out;
  for (auto& t : by) {
    if (t.links == 0) continue;
    if (t.busy > 0) t.mean_util /= static_cast<double>(t.busy);
    out.push_back(t);
  }
  return out;
}

LinkNames::LinkNames(const Plan& plan, const Catalog& cat, const Fabric& fab)
    : plan_(plan), fab_(fab) {
  gpus_ = static_cast<int>(fab.gpus());
  domains_ = static_cast<int>((fab.gpus() + fab.domain_gpus() - 1) / fab.domain_gpus());
  nics_ = fab.nodes() * fab.nics_per_node();
  first_switch_ = fab.first_switch_vertex();
  first_cable_link_ = fab.first_cable_link();
  node_.resize(static_cast<size_t>(fab.nodes()));
  switch_.resize(static_cast<size_t>(std::max(0, fab.vertices() - first_switch_)));
  auto name_switch = [&](int v, const std::string& name) {
    auto& s = switch_[static_cast<size_t>(v - first_switch_)];
    if (s.empty()) s = name;
  };
  int max_port = 0;
  for_each_link(plan, cat, [&](const CableRun& r) {
    switch (r.kind) {
      case LinkKind::kApplianceLeaf:
        return;  // no link in the fabric graph
      case LinkKind::kNodeLeaf:
        if (node_[static_cast<size_t>(r.a_index)].empty())
          node_[static_cast<size_t>(r.a_index)] = r.a_device;
        name_switch(fab.leaf_vertex(r.plane, static_cast<int>(r.b_index)), r.b_device);
        break;
      case LinkKind::kLeafSpine:
        name_switch(fab.leaf_vertex(r.plane, static_cast<int>(r.a_index)), r.a_device);
        name_switch(fab.spine_vertex(r.plane, static_cast<int>(r.b_index)), r.b_device);
        break;
      case LinkKind::kSpineCore:
        name_switch(fab.spine_vertex(r.plane, static_cast<int>(r.a_index)), r.a_device);
        name_switch(fab.core_vertex(r.plane, static_cast<int>(r.b_index)), r.b_device);
        break;
      case LinkKind::kGlobal:
        name_switch(fab.spine_vertex(r.plane, static_cast<int>(r.a_index)), r.a_device);
        name_switch(fab.spine_vertex(r.plane, static_cast<int>(r.b_index)), r.b_device);
        break;
    }
    port_a_.push_back(r.a_port_no);
    port_b_.push_back(r.b_port_no);
    max_port = std::max({max_port, r.a_port_no, r.b_port_no});
  });
  panel_.resize(static_cast<size_t>(max_port) + 1);
  for (int p = 1; p <= max_port; ++p) panel_[static_cast<size_t>(p)] = panel_port_name(plan, p);
}

int32_t LinkNames::cable_between(int a, const std::string& a_port, int b,
                                 const std::string& b_port) const {
  auto names = [&](int port, const std::string& given) {
    return port > 0 &&
           (given == std::to_string(port) || given == panel_[static_cast<size_t>(port)]);
  };
  for (size_t c = 0; c < port_a_.size(); ++c) {
    const auto link = static_cast<int32_t>(first_cable_link_ + 2 * c);
    if (static_cast<size_t>(link) + 1 >= fab_.links().size()) break;
    const Link& k = fab_.links()[static_cast<size_t>(link)];
    // Written either way round: the link in the direction asked.
    if (k.from == a && k.to == b && names(port_a_[c], a_port) && names(port_b_[c], b_port))
      return link;
    if (k.from == b && k.to == a && names(port_a_[c], b_port) && names(port_b_[c], a_port))
      return Fabric::reverse(link);
  }
  return -1;
}

int32_t LinkNames::node_cable(int node, const std::string& nic_port, int leaf,
                              const std::string& leaf_port) const {
  if (node < 0 || static_cast<size_t>(node) >= node_.size()) return -1;
  for (size_t c = 0; c < port_a_.size(); ++c) {
    const auto link = static_cast<int32_t>(first_cable_link_ + 2 * c);
    if (static_cast<size_t>(link) + 1 >= fab_.links().size()) break;
    const Link& k = fab_.links()[static_cast<size_t>(link)];
    if (k.cls != LinkClass::kNicLeaf || k.to != leaf) continue;
    const LinkEnd nic = end(link, true);
    const int port = port_b_[c];
    if (nic.device == node_[static_cast<size_t>(node)] && nic.port == nic_port && port > 0 &&
        (leaf_port == std::to_string(port) || leaf_port == panel_[static_cast<size_t>(port)]))
      return link;
  }
  return -1;
}

std::string end_name(const LinkEnd& e) {
  return e.port.empty() ? e.device : e.device + ":" + e.port;
}

LinkEnd LinkNames::vertex(int v) const {
  const int G = fab_.gpus_per_node(), R = fab_.nics_per_node();
  if (v < gpus_) return {node_[static_cast<size_t>(v / G)], fmt::format("gpu{}", v % G)};
  if (v < gpus_ + domains_) {
    const long long first_gpu = 1LL * (v - gpus_) * fab_.domain_gpus();
    // The point a node's NVLink meets: NVSwitch, or a direct-link board's links.
    return {node_[static_cast<size_t>(first_gpu / G)],
            plan_.scaleup_direct ? "nvlink" : "nvswitch"};
  }
  if (v < gpus_ + domains_ + nics_) {
    const int nic = v - gpus_ - domains_;
    return {node_[static_cast<size_t>(nic / R)], fmt::format("nic{}", nic % R)};
  }
  if (v < first_switch_) {  // the PCIe switch behind a GPU with several NICs
    const int gpu = v - gpus_ - domains_ - nics_;
    return {node_[static_cast<size_t>(gpu / G)], fmt::format("pcie-switch{}", gpu % G)};
  }
  return {switch_[static_cast<size_t>(v - first_switch_)], ""};
}

LinkEnd LinkNames::end(int32_t link, bool from) const {
  const Link& k = fab_.links()[link];
  LinkEnd e = vertex(from ? k.from : k.to);
  if (link < first_cable_link_) return e;
  // Cables come in pairs of links in cabling order: a to b first, then b to a.
  const size_t cable = static_cast<size_t>((link - first_cable_link_) / 2);
  if (cable >= port_a_.size()) return e;
  const bool a_side = ((link - first_cable_link_) % 2 == 0) == from;
  const int port = a_side ? port_a_[cable] : port_b_[cable];
  if (port > 0) {
    e.port = panel_[static_cast<size_t>(port)];
  } else if (k.cls == LinkClass::kNicLeaf && fab_.planes() > 1) {
    // The node's port on a plane: nic3.p2, as cabling.csv names it.
    const int leaf = from ? k.to : k.from;
    const int per_plane = (fab_.vertices() - first_switch_) / fab_.planes();
    e.port += fmt::format(".p{}", (leaf - first_switch_) / per_plane + 1);
  }
  return e;
}

}  // namespace gf
