#include "catalog/catalog.h"

#include <fmt/format.h>

#include <algorithm>

#include "units/units.h"
#include "yaml/yaml_reader.h"

namespace gf {

// Generated at build time from catalog/*.yaml (cmake/embed_catalog.cmake).
struct EmbeddedFile {
  const char* name;
  const char* text;
};
extern const EmbeddedFile kEmbeddedCatalog[];
extern const int kEmbeddedCatalogCount;

double GpuModel::tflops(Precision precision) const {
  if (precision == Precision::kFp8) return fp8_tflops > 0 ? fp8_tflops : bf16_tflops;
  if (precision == Precision::kFp16) return fp16_tflops;
  if (precision == Precision::kFp32) return fp32_tflops;
  return bf16_tflops;
}

double pcie_x16_gbs(int gen) {
  switch (gen) {
    case 3:
      return 15.75;
    case 4:
      return 31.5;
    case 5:
      return 63.0;
    default:
      return gen >= 6 ? 121.0 : 8.0;
  }
}

int Switch::ports_at(double gbps) const {
  if (gbps == port_gbps) return ports;
  for (const auto& b : breakouts)
    if (b.gbps == gbps) return b.ports;
  return 0;
}

namespace {

template <typename M>
std::vector<std::string> keys_of(const M& m) {
  std::vector<std::string> out;
  for (const auto& kv : m) out.push_back(kv.first);
  return out;
}

// Reads price_usd / power_w with their mandatory provenance.
void read_cost(YamlReader& r, const YAML::Node& map, const std::string& path, CostFigure& c,
               bool need_price, bool need_power) {
  if (auto v = r.number(map, "price_usd", path, need_price)) c.price_usd = *v;
  if (auto v = r.number(map, "power_w", path, need_power)) c.power_w = *v;
  if (auto v = r.text(map, "source", path)) c.source = *v;
  if (auto v = r.boolean(map, "estimate", path)) c.estimate = *v;
  if (c.source.empty() && !c.estimate)
    r.error(map, path, "price and power figures need a 'source:' or 'estimate: true'");
}

const std::vector<std::string> kCostKeys = {"price_usd", "power_w", "source", "estimate"};

std::vector<std::string> with_cost(std::vector<std::string> keys) {
  keys.insert(keys.end(), kCostKeys.begin(), kCostKeys.end());
  return keys;
}

void read_gpu(YamlReader& r, const YAML::Node& n, const std::string& path, GpuModel& g) {
  r.check_keys(
      n, path,
      {"id", "name", "vendor", "memory_gb", "fp32_tflops", "fp16_tflops", "bf16_tflops",
       "fp8_tflops", "tflops_source", "scaleup", "pcie_gen", "gpus_per_node", "max_nics_per_node",
       "compute_efficiency", "compute_efficiency_source", "node", "gpu_hour"});
  if (auto v = r.text(n, "name", path)) g.name = *v;
  if (auto v = r.text(n, "vendor", path)) g.vendor = *v;
  if (auto v = r.number(n, "memory_gb", path, true)) g.memory_gb = *v;
  if (auto v = r.number(n, "fp32_tflops", path)) g.fp32_tflops = *v;
  if (auto v = r.number(n, "bf16_tflops", path, true)) g.bf16_tflops = *v;
  g.fp16_tflops = g.bf16_tflops;
  if (auto v = r.number(n, "fp16_tflops", path)) g.fp16_tflops = *v;
  if (auto v = r.number(n, "fp8_tflops", path)) g.fp8_tflops = *v;
  if (auto v = r.small_positive_int(n, "pcie_gen", path, true)) g.pcie_gen = *v;
  if (auto v = r.small_positive_int(n, "gpus_per_node", path, true)) g.gpus_per_node = *v;
  g.max_nics_per_node = g.gpus_per_node;
  if (auto v = r.small_positive_int(n, "max_nics_per_node", path)) g.max_nics_per_node = *v;
  if (auto v = r.number(n, "compute_efficiency", path)) g.compute_efficiency = *v;
  if (auto v = r.text(n, "compute_efficiency_source", path)) g.compute_efficiency_source = *v;
  const YAML::Node su = child(n, "scaleup");
  const std::string sp = path + ".scaleup";
  if (r.expect_map(su, sp)) {
    r.check_keys(su, sp, {"tech", "gbs_per_gpu", "domain_gpus", "nvls", "source"});
    if (auto v = r.choice_of(su, "tech", sp, kScaleUpTechNames, true)) g.scaleup_tech = *v;
    if (auto v = r.number(su, "gbs_per_gpu", sp, true)) g.scaleup_gbs_per_gpu = *v;
    if (auto v = r.small_positive_int(su, "domain_gpus", sp, true)) g.scaleup_domain_gpus = *v;
    if (auto v = r.boolean(su, "nvls", sp)) g.nvls = *v;
  }
  const YAML::Node node = child(n, "node");
  if (r.expect_map(node, path + ".node")) {
    r.check_keys(node, path + ".node", kCostKeys);
    read_cost(r, node, path + ".node", g.node, true, true);
  }
  const YAML::Node gh = child(n, "gpu_hour");
  if (gh.IsDefined() && r.expect_map(gh, path + ".gpu_hour")) {
    r.check_keys(gh, path + ".gpu_hour", with_cost({"usd"}));
    if (auto v = r.number(gh, "usd", path + ".gpu_hour", true)) g.gpu_hour_usd = *v;
    read_cost(r, gh, path + ".gpu_hour", g.gpu_hour, false, false);
  }
  if (g.compute_efficiency <= 0 || g.compute_efficiency > 1)
    r.error(child(n, "compute_efficiency"), path + ".compute_efficiency",
            "expected a fraction in (0, 1]");
}

void read_nic(YamlReader& r, const YAML::Node& n, const std::string& path, Nic& c) {
  r.check_keys(n, path,
               with_cost({"id", "name", "rate", "ports", "protocols", "gpudirect", "pcie_gen"}));
  if (auto v = r.text(n, "name", path)) c.name = *v;
  if (auto v = r.quantity(n, "rate", path, units::parse_bitrate, true)) c.rate_gbps = *v / 1e9;
  if (auto v = r.small_positive_int(n, "ports", path)) c.ports = *v;
  if (auto v = r.boolean(n, "gpudirect", path)) c.gpudirect = *v;
  if (auto v = r.small_positive_int(n, "pcie_gen", path)) c.pcie_gen = *v;
  const YAML::Node p = child(n, "protocols");
  if (!p.IsSequence()) {
    r.error(p.IsDefined() ? p : n, path + ".protocols", "expected a list: [infiniband, roce]");
  } else {
    for (const auto& e : p) {
      const std::string s = e.IsScalar() ? e.Scalar() : "";
      if (s == "infiniband")
        c.infiniband = true;
      else if (s == "roce")
        c.roce = true;
      else
        r.error(e, path + ".protocols", fmt::format("'{}' is not infiniband or roce", s),
                did_you_mean(s, {"infiniband", "roce"}));
    }
  }
  read_cost(r, n, path, c.cost, true, true);
}

void read_switch(YamlReader& r, const YAML::Node& n, const std::string& path, Switch& s) {
  r.check_keys(n, path,
               with_cost({"id", "name", "technology", "ports", "port_speed", "ports_per_cage",
                          "breakout", "buffer_mb", "in_network_reduction", "adaptive_routing",
                          "latency_ns", "latency_source", "modular", "rack_units"}));
  if (auto v = r.text(n, "name", path)) s.name = *v;
  if (auto v = r.choice_of(n, "technology", path, kSwitchTechnologyNames, true)) s.technology = *v;
  if (auto v = r.small_positive_int(n, "ports", path, true)) s.ports = *v;
  if (auto v = r.quantity(n, "port_speed", path, units::parse_bitrate, true))
    s.port_gbps = *v / 1e9;
  if (auto v = r.small_positive_int(n, "ports_per_cage", path)) s.ports_per_cage = *v;
  if (auto v = r.number(n, "buffer_mb", path)) s.buffer_mb = *v;
  if (auto v = r.text(n, "in_network_reduction", path)) s.in_network_reduction = *v;
  if (s.in_network_reduction == "none" || s.in_network_reduction == "false")
    s.in_network_reduction.clear();
  if (auto v = r.boolean(n, "adaptive_routing", path)) s.adaptive_routing = *v;
  if (auto v = r.number(n, "latency_ns", path, true)) s.latency_ns = *v;
  if (auto v = r.boolean(n, "modular", path)) s.modular = *v;
  if (auto v = r.small_positive_int(n, "rack_units", path)) s.rack_units = *v;
  const YAML::Node b = child(n, "breakout");
  if (b.IsDefined()) {
    if (!b.IsSequence()) {
      r.error(b, path + ".breakout", "expected a list of {ports, port_speed}");
    } else {
      for (size_t i = 0; i < b.size(); ++i) {
        const std::string bp = fmt::format("{}.breakout[{}]", path, i);
        if (!r.expect_map(b[i], bp)) continue;
        r.check_keys(b[i], bp, {"ports", "port_speed"});
        Breakout o;
        if (auto v = r.small_positive_int(b[i], "ports", bp, true)) o.ports = *v;
        if (auto v = r.quantity(b[i], "port_speed", bp, units::parse_bitrate, true))
          o.gbps = *v / 1e9;
        s.breakouts.push_back(o);
      }
    }
  }
  read_cost(r, n, path, s.cost, true, true);
}

void read_cable(YamlReader& r, const YAML::Node& n, const std::string& path, CablePart& c) {
  r.check_keys(n, path, with_cost({"id", "name", "kind", "speed", "links", "max_length_m"}));
  if (auto v = r.text(n, "name", path)) c.name = *v;
  if (auto v = r.choice_of(n, "kind", path, kCableKindNames, true)) c.kind = *v;
  if (auto v = r.quantity(n, "speed", path, units::parse_bitrate, true)) c.gbps = *v / 1e9;
  if (auto v = r.small_positive_int(n, "links", path)) c.links = *v;
  if (auto v = r.number(n, "max_length_m", path, true)) c.max_length_m = *v;
  read_cost(r, n, path, c.cost, true, true);
}

// Reads one section ("gpus:", ...) of entries with ids into `out`, replacing entries by id.
template <typename T, typename ReadFn>
void read_section(YamlReader& r, const YAML::Node& root, const std::string& section,
                  std::map<std::string, T>& out, std::map<std::string, std::string>& origin,
                  ReadFn read) {
  const YAML::Node list = root[section];
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) {
    r.error(list, section, "expected a list of entries, each with an id");
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    const std::string path = fmt::format("{}[{}]", section, i);
    if (!r.expect_map(e, path)) continue;
    const auto id = r.text(e, "id", path, true);
    if (!id) continue;
    const size_t before = r.errors().size();
    T item;
    item.id = *id;
    read(r, e, section + "." + *id, item);
    if (r.errors().size() == before) {
      out[*id] = item;
      origin[section + "/" + *id] = fmt::format("{}:{}", r.file(), e.Mark().line + 1);
    }
  }
}

}  // namespace

std::vector<Diagnostic> merge_catalog(Catalog& catalog, const std::string& text,
                                      const std::string& file) {
  YamlReader r(file);
  const YAML::Node root = r.parse(text);
  if (!r.ok()) return r.errors();
  if (root.IsNull()) return {};
  if (!r.expect_map(root, "")) return r.errors();
  r.check_keys(root, "", {"gpus", "nics", "switches", "cables"});
  read_section(r, root, "gpus", catalog.gpus, catalog.origin, read_gpu);
  read_section(r, root, "nics", catalog.nics, catalog.origin, read_nic);
  read_section(r, root, "switches", catalog.switches, catalog.origin, read_switch);
  read_section(r, root, "cables", catalog.cables, catalog.origin, read_cable);
  return r.errors();
}

Result<Catalog> builtin_catalog() {
  Catalog c;
  std::vector<Diagnostic> errors;
  for (int i = 0; i < kEmbeddedCatalogCount; ++i) {
    auto e = merge_catalog(c, kEmbeddedCatalog[i].text, kEmbeddedCatalog[i].name);
    errors.insert(errors.end(), e.begin(), e.end());
  }
  if (!errors.empty()) return errors;
  return c;
}

std::vector<std::string> Catalog::gpu_ids() const { return keys_of(gpus); }
std::vector<std::string> Catalog::nic_ids() const { return keys_of(nics); }
std::vector<std::string> Catalog::switch_ids() const { return keys_of(switches); }

const CablePart* Catalog::cable_for(CableKind kind, double gbps, double length_m,
                                    int links_per_part) const {
  const CablePart* best = nullptr;
  for (const auto& [id, c] : cables) {
    if (c.kind != kind || c.gbps != gbps || c.max_length_m < length_m) continue;
    if (c.links != links_per_part) continue;
    if (!best || c.cost.price_usd < best->cost.price_usd) best = &c;
  }
  if (!best && links_per_part != 1) return cable_for(kind, gbps, length_m, 1);
  return best;
}

}  // namespace gf
