#include "catalog/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

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

bool Switch::has_role(SwitchRole r) const {
  return std::find(roles.begin(), roles.end(), r) != roles.end();
}

int Switch::cages() const { return std::max(1, ports / std::max(1, ports_per_cage)); }

int Switch::ports_per_cage_at(double gbps) const {
  const int n = ports_at(gbps);
  return n > 0 ? std::max(1, n / cages()) : std::max(1, ports_per_cage);
}

int Switch::lanes_at(double gbps) const {
  return ports_at(gbps) > 0 ? std::max(1, lanes_per_cage / ports_per_cage_at(gbps)) : 0;
}

double Switch::lane_gbps() const {
  const int l = lanes_at(port_gbps);
  return l > 0 ? port_gbps / l : 0;
}

bool Nic::lanes_meet(int split, double switch_lane_gbps) const {
  if (lanes.empty() || !(switch_lane_gbps > 0)) return true;
  split = std::max(1, split);
  // A lane rate within a part in a thousand of the switch's is the switch's (100G is 106.25 Gb/s
  // on the wire at either end; the catalog states both as their nominal rate).
  return std::any_of(lanes.begin(), lanes.end(), [&](int l) {
    return l % split == 0 && port_gbps() / l <= switch_lane_gbps * 1.001;
  });
}

std::optional<PortSlot> Switch::slot(int port, double gbps) const {
  const int n = ports_at(gbps);
  if (n <= 0 || port < 1 || port > n) return std::nullopt;
  PortSlot s;
  s.subports = ports_per_cage_at(gbps);
  s.cage = (port - 1) / s.subports + 1;
  s.subport = (port - 1) % s.subports;
  s.lanes = std::max(1, lanes_per_cage / s.subports);
  s.first_lane = s.subport * s.lanes;
  return s;
}

std::vector<int> Switch::asic_lanes(const PortSlot& s) const {
  std::vector<int> out;
  if (s.cage < 1 || s.cage > static_cast<int>(serdes_lanes.size())) return out;
  for (int l = 0; l < s.lanes; ++l) out.push_back(serdes_lanes[s.cage - 1] + s.first_lane + l);
  return out;
}

namespace {

// The most electrical lanes one port has (OSFP and QSFP-DD cages carry 8; 16 leaves room for
// OSFP-XD).
constexpr int kMaxPortLanes = 16;

template <typename M>
std::vector<std::string> keys_of(const M& m) {
  std::vector<std::string> out;
  for (const auto& kv : m) out.push_back(kv.first);
  return out;
}

// Reads price_usd / power_w with their mandatory provenance.
// Bounds on one part's figures: a whole NVL72 rack is about $3M and 120 kW, so a figure beyond
// these is a slip of the keyboard (a missing decimal point, an exponent), not a part.
constexpr double kMaxPartUsd = 1e9;
constexpr double kMaxPartW = 1e7;

void read_cost(YamlReader& r, const YAML::Node& map, const std::string& path, CostFigure& c,
               bool need_price, bool need_power) {
  for (const auto& [key, max, unit, out, need] :
       {std::tuple{"price_usd", kMaxPartUsd, "USD", &c.price_usd, need_price},
        std::tuple{"power_w", kMaxPartW, "W", &c.power_w, need_power}}) {
    const auto v = r.number(map, key, path, need);
    if (!v) continue;
    if (*v < 0 || *v > max) {
      r.error(child(map, key), YamlReader::join(path, key),
              fmt::format("expected a figure from 0 to {:g} {}, found {:g}", max, unit, *v));
      continue;
    }
    *out = *v;
  }
  if (auto v = r.text(map, "source", path)) c.source = *v;
  if (auto v = r.boolean(map, "estimate", path)) c.estimate = *v;
  if (c.source.empty() && !c.estimate)
    r.error(map, path, "price and power figures need a 'source:' or 'estimate: true'");
}

const std::vector<std::string> kCostKeys = {"price_usd", "power_w", "source", "estimate"};

// Bounds on an entry's hardware figures, as on its cost: each far past any part made, so that a
// figure beyond is a slip of the keyboard (a sign, a missing decimal point, an exponent).
// One GPU's HBM, GiB: the largest is 288 GB (B300, MI355X datasheets); 16 times that.
constexpr double kMaxGpuMemoryGb = 4096;
// One GPU's dense peak, TFLOP/s: the catalog's fastest is 5,000 (B300 FP8); 200 times that.
constexpr double kMaxGpuTflops = 1e6;
// One GPU's HBM bandwidth, GB/s: the catalog's fastest is 8,000 (B200); 125 times that.
constexpr double kMaxHbmGbps = 1e6;
// One GPU's scale-up bandwidth a direction, GB/s: NVLink 5's is 900 (B200 datasheet); 100 times.
constexpr double kMaxScaleupGbs = 1e5;
// A switch's port-to-port latency, ns: the catalog's slowest is a modular chassis's 3,500; 1 ms.
constexpr double kMaxSwitchLatencyNs = 1e6;
// A switch's packet buffer, MB: the catalog's deepest is 131,072 (a chassis of line cards with
// HBM, catalog/switches.yaml); 1 TB. SONiC's buffer objects are held in bytes.
constexpr double kMaxSwitchBufferMb = 1e6;
constexpr double kMaxSonicBufferBytes = kMaxSwitchBufferMb * 1e6;
// A cable part's reach, m: 1,000 km, past any pluggable optic (400ZR+ reaches about 120 km).
constexpr double kMaxCableLengthM = 1e6;
// A GPU-hour's rental, USD: on-demand H100s rent for $2 to $10; a hundred times the dearest.
constexpr double kMaxGpuHourUsd = 1000;

// The range a figure must lie in: from `lo` (above it, where `above_lo`: a figure that must be
// positive) to `hi`, in `unit`; `hint` says what the figure is and gives an example.
struct FigureRange {
  double lo = 0;
  double hi = 0;
  bool above_lo = false;
  const char* unit = "";
  const char* hint = "";
};

// `key` of `map` as a number within `range`; outside it, an error at the key that names the range.
std::optional<double> figure(YamlReader& r, const YAML::Node& map, const std::string& key,
                             const std::string& path, const FigureRange& range,
                             bool required = false) {
  const auto v = r.number(map, key, path, required);
  if (!v) return std::nullopt;
  if (*v < range.lo || (range.above_lo && *v == range.lo) || *v > range.hi) {
    r.error(child(map, key), YamlReader::join(path, key),
            fmt::format("expected a figure {} {:g} {} {:g} {}, found {:g}",
                        range.above_lo ? "above" : "from", range.lo,
                        range.above_lo ? "and at most" : "to", range.hi, range.unit, *v),
            range.hint);
    return std::nullopt;
  }
  return v;
}

// `key` of `map` as a rate in Gb/s (positive, units::parse_bitrate) up to kMaxPortGbps.
std::optional<double> rate_gbps(YamlReader& r, const YAML::Node& map, const std::string& key,
                                const std::string& path, bool required = false) {
  const auto v = r.quantity(map, key, path, units::parse_bitrate, required);
  if (!v) return std::nullopt;
  if (*v / 1e9 > kMaxPortGbps) {
    r.error(child(map, key), YamlReader::join(path, key),
            fmt::format("expected a rate up to {:g}G, found {:g}G", kMaxPortGbps, *v / 1e9),
            "a rate such as 400G");
    return std::nullopt;
  }
  return *v / 1e9;
}

// A part's `pcie_gen`: one of the generations pcie_x16_gbs knows.
std::optional<int> pcie_gen(YamlReader& r, const YAML::Node& map, const std::string& path,
                            bool required = false) {
  const auto v = r.small_positive_int(map, "pcie_gen", path, required);
  if (!v) return std::nullopt;
  if (*v < kMinPcieGen || *v > kMaxPcieGen) {
    r.error(child(map, "pcie_gen"), path + ".pcie_gen",
            fmt::format("PCIe Gen{} does not exist: expected a generation from {} to {}", *v,
                        kMinPcieGen, kMaxPcieGen),
            "the generation of the part's x16 link: 4 (A100), 5 (H100, H200), 6 (B300)");
    return std::nullopt;
  }
  return v;
}

std::vector<std::string> with_cost(std::vector<std::string> keys) {
  keys.insert(keys.end(), kCostKeys.begin(), kCostKeys.end());
  return keys;
}

void read_gpu(YamlReader& r, const YAML::Node& n, const std::string& path, GpuModel& g) {
  r.check_keys(n, path,
               {"id",
                "name",
                "vendor",
                "memory_gb",
                "memory_source",
                "fp32_tflops",
                "fp16_tflops",
                "bf16_tflops",
                "fp8_tflops",
                "tflops_source",
                "scaleup",
                "pcie_gen",
                "gpus_per_node",
                "max_nics_per_node",
                "compute_efficiency",
                "compute_efficiency_source",
                "node",
                "gpu_hour",
                "hbm_gbps",
                "hbm_source",
                "matmul_efficiency",
                "attention_efficiency",
                "kernel_efficiency_source",
                "sm_count",
                "sm_source",
                "networks",
                "nic_attach",
                "nic_attach_source",
                "host_cpu",
                "host_cpu_source",
                "arch"});
  if (auto v = r.text(n, "name", path)) g.name = *v;
  if (auto v = r.text(n, "vendor", path)) g.vendor = *v;
  if (auto v = figure(
          r, n, "memory_gb", path,
          {0, kMaxGpuMemoryGb, true, "GiB", "the GPU's HBM, e.g. 80 (H100), 141 (H200)"}, true))
    g.memory_gb = *v;
  if (auto v = r.text(n, "memory_source", path)) g.memory_source = *v;
  // Dense peaks: a step divides by them. fp8 may be 0, a GPU without FP8 tensor cores.
  const FigureRange peak{0, kMaxGpuTflops, true, "TFLOP/s",
                         "the datasheet's dense (no sparsity) peak, e.g. 989 (H100 BF16)"};
  if (auto v = figure(r, n, "fp32_tflops", path, peak)) g.fp32_tflops = *v;
  if (auto v = figure(r, n, "bf16_tflops", path, peak, true)) g.bf16_tflops = *v;
  g.fp16_tflops = g.bf16_tflops;
  if (auto v = figure(r, n, "fp16_tflops", path, peak)) g.fp16_tflops = *v;
  if (auto v = figure(r, n, "fp8_tflops", path,
                      {0, kMaxGpuTflops, false, "TFLOP/s",
                       "the datasheet's dense FP8 peak, e.g. 1979 (H100); 0 without FP8 tensor "
                       "cores (A100)"}))
    g.fp8_tflops = *v;
  if (auto v = pcie_gen(r, n, path, true)) g.pcie_gen = *v;
  if (auto v = r.small_positive_int(n, "gpus_per_node", path, true)) g.gpus_per_node = *v;
  g.max_nics_per_node = g.gpus_per_node;
  if (auto v = r.small_positive_int(n, "max_nics_per_node", path)) g.max_nics_per_node = *v;
  if (auto v = r.choice_of(n, "nic_attach", path, kNicAttachNames)) g.nic_attach = *v;
  if (auto v = r.text(n, "nic_attach_source", path)) g.nic_attach_source = *v;
  if (g.nic_attach != NicAttach::kGpuSwitch && g.nic_attach_source.empty())
    r.error(child(n, "nic_attach"), path + ".nic_attach",
            "a NIC reached other than over the GPU's PCIe switch needs a 'nic_attach_source:'");
  if (auto v = r.choice_of(n, "host_cpu", path, kHostCpuNames)) g.host_cpu = *v;
  if (auto v = r.text(n, "host_cpu_source", path)) g.host_cpu_source = *v;
  if (g.host_cpu != HostCpu::kX86 && g.host_cpu_source.empty())
    r.error(child(n, "host_cpu"), path + ".host_cpu",
            "a host CPU other than x86 needs a 'host_cpu_source:'");
  if (auto v = r.number(n, "compute_efficiency", path)) g.compute_efficiency = *v;
  if (auto v = r.text(n, "compute_efficiency_source", path)) g.compute_efficiency_source = *v;
  if (auto v = figure(r, n, "hbm_gbps", path,
                      {0, kMaxHbmGbps, false, "GB/s",
                       "the datasheet's HBM bandwidth, e.g. 3350 (H100 SXM); 0: not known"}))
    g.hbm_gbps = *v;
  if (auto v = r.text(n, "hbm_source", path)) g.hbm_source = *v;
  if (auto v = r.number(n, "matmul_efficiency", path)) g.matmul_efficiency = *v;
  if (auto v = r.number(n, "attention_efficiency", path)) g.attention_efficiency = *v;
  if (auto v = r.text(n, "kernel_efficiency_source", path)) g.kernel_efficiency_source = *v;
  if (auto v = r.small_positive_int(n, "sm_count", path)) g.sm_count = *v;
  if (auto v = r.text(n, "sm_source", path)) g.sm_source = *v;
  const YAML::Node su = child(n, "scaleup");
  const std::string sp = path + ".scaleup";
  if (r.expect_map(su, sp)) {
    r.check_keys(su, sp,
                 {"tech", "gbs_per_gpu", "domain_gpus", "nvls", "direct_board_gpus", "source"});
    if (auto v = r.choice_of(su, "tech", sp, kScaleUpTechNames, true)) g.scaleup_tech = *v;
    // Every scale-up tech is a link the GPU's traffic crosses, a PCIe card's x16 too
    // (topo/fabric.cc): at 0 it cuts the GPU off.
    if (auto v = figure(r, su, "gbs_per_gpu", sp,
                        {0, kMaxScaleupGbs, true, "GB/s",
                         "one GPU's scale-up bandwidth a direction, e.g. 450 (NVLink 4: 900 GB/s "
                         "both ways); a 'pcie' card's x16 link, e.g. 24 (Gen4 as NCCL rates it)"},
                        true))
      g.scaleup_gbs_per_gpu = *v;
    if (auto v = r.small_positive_int(su, "domain_gpus", sp, true)) g.scaleup_domain_gpus = *v;
    if (auto v = r.boolean(su, "nvls", sp)) g.nvls = *v;
    if (auto v = r.small_positive_int(su, "direct_board_gpus", sp)) {
      g.scaleup_direct_board_gpus = *v;
      if (g.scaleup_domain_gpus > g.gpus_per_node)
        r.error(child(su, "direct_board_gpus"), sp + ".direct_board_gpus",
                fmt::format("the NVLink domain spans servers ({} GPUs, {} a server): its "
                            "servers reach it through the rack's switches, not a board of "
                            "their own",
                            g.scaleup_domain_gpus, g.gpus_per_node),
                "leave direct_board_gpus out for a rack-scale domain");
      else if (*v < 2 || *v >= g.scaleup_domain_gpus)
        r.error(child(su, "direct_board_gpus"), sp + ".direct_board_gpus",
                fmt::format("a board of {} GPUs linked directly needs 2 to {} (below domain_gpus)",
                            *v, g.scaleup_domain_gpus - 1));
    }
    if (g.scaleup_tech == ScaleUpTech::kPcie &&
        g.scaleup_gbs_per_gpu > pcie_x16_gbs(g.pcie_gen) * (1 + 1e-9))
      r.error(child(su, "gbs_per_gpu"), sp + ".gbs_per_gpu",
              fmt::format("a 'pcie' card's link is its PCIe Gen{} x16, {:g} GB/s a direction at "
                          "most: {:g} is more",
                          g.pcie_gen, pcie_x16_gbs(g.pcie_gen), g.scaleup_gbs_per_gpu),
              "give the rate NCCL measures over it (Gen4: 24) or check pcie_gen");
    if (g.scaleup_tech == ScaleUpTech::kPcie && g.nvls)
      r.error(child(su, "nvls"), sp + ".nvls", "NVLink SHARP needs NVLink: a 'pcie' GPU has none");
  }
  switch (g.scaleup_tech) {
    case ScaleUpTech::kNvlink3:
      g.arch = GpuArch::kAmpere;
      break;
    case ScaleUpTech::kNvlink5:
      g.arch = GpuArch::kBlackwell;
      break;
    default:
      g.arch = GpuArch::kHopper;
      break;
  }
  if (auto v = r.choice_of(n, "arch", path, kGpuArchNames)) {
    g.arch = *v;
  } else if (g.scaleup_tech == ScaleUpTech::kPcie && !child(n, "arch").IsDefined()) {
    r.error(n, path + ".arch",
            "a GPU on 'pcie' scale-up needs 'arch: ampere', 'hopper' or 'blackwell' (NVLink's "
            "generation cannot tell it)");
  }
  const YAML::Node node = child(n, "node");
  if (r.expect_map(node, path + ".node")) {
    r.check_keys(node, path + ".node", with_cost({"nics"}));
    read_cost(r, node, path + ".node", g.node, true, true);
    // The NICs the figure includes: a map of catalog id to count (validate_spec checks the ids).
    const YAML::Node nics = child(node, "nics");
    if (nics.IsDefined() && r.expect_map(nics, path + ".node.nics")) {
      g.node_nics.clear();
      for (const auto& kv : nics) {
        if (!kv.first.IsScalar()) continue;
        const std::string id = kv.first.Scalar();
        if (auto v = r.small_positive_int(nics, id, path + ".node.nics", true))
          g.node_nics.push_back({id, *v});
      }
    }
  }
  const YAML::Node gh = child(n, "gpu_hour");
  if (gh.IsDefined() && r.expect_map(gh, path + ".gpu_hour")) {
    r.check_keys(gh, path + ".gpu_hour", with_cost({"usd"}));
    if (auto v = figure(r, gh, "usd", path + ".gpu_hour",
                        {0, kMaxGpuHourUsd, false, "USD",
                         "one GPU's rental for an hour, e.g. 2.5 (H100 on demand)"},
                        true))
      g.gpu_hour_usd = *v;
    read_cost(r, gh, path + ".gpu_hour", g.gpu_hour, false, false);
  }
  const YAML::Node nw = child(n, "networks");
  if (nw.IsDefined() && r.expect_map(nw, path + ".networks")) {
    const std::string np = path + ".networks";
    r.check_keys(nw, np,
                 {"storage_nic", "storage_nics", "storage_ports", "inband_ports", "storage_speed",
                  "inband_speed", "storage_read", "source"});
    auto& s = g.networks;
    if (auto v = r.text(nw, "storage_nic", np, true)) s.storage_nic = *v;
    if (auto v = r.small_positive_int(nw, "storage_nics", np)) s.storage_nics = *v;
    if (auto v = r.small_positive_int(nw, "storage_ports", np)) s.storage_ports = *v;
    if (auto v = r.small_positive_int(nw, "inband_ports", np)) s.inband_ports = *v;
    if (auto v = rate_gbps(r, nw, "storage_speed", np)) s.storage_gbps = *v;
    if (auto v = rate_gbps(r, nw, "inband_speed", np)) s.inband_gbps = *v;
    if (auto v = rate_gbps(r, nw, "storage_read", np)) s.storage_read_gbs = *v / 8;
    if (auto v = r.text(nw, "source", np, true)) s.source = *v;
  }
  if (g.compute_efficiency <= 0 || g.compute_efficiency > 1)
    r.error(child(n, "compute_efficiency"), path + ".compute_efficiency",
            "expected a fraction in (0, 1]");
  for (const auto& [key, v] : {std::pair<const char*, double>{"matmul_efficiency", g.matmul_efficiency},
                               {"attention_efficiency", g.attention_efficiency}})
    if (v < 0 || v > 1) r.error(child(n, key), path + "." + key, "expected a fraction in (0, 1]");
  // The compute NICs a server's figure includes fit its slots (its storage cards are apart).
  long long compute_nics = 0;
  for (const auto& [id, count] : g.node_nics)
    if (id != g.networks.storage_nic) compute_nics += count;
  if (compute_nics > g.max_nics_per_node)
    r.error(child(child(n, "node"), "nics"), path + ".node.nics",
            fmt::format("{} compute NICs, more than the server's {} (max_nics_per_node)",
                        compute_nics, g.max_nics_per_node));
}

void read_nic(YamlReader& r, const YAML::Node& n, const std::string& path, Nic& c) {
  r.check_keys(
      n, path,
      with_cost({"id", "name", "rate", "ports", "protocols", "gpudirect", "pcie_gen", "lanes"}));
  if (auto v = r.text(n, "name", path)) c.name = *v;
  if (auto v = rate_gbps(r, n, "rate", path, true)) c.rate_gbps = *v;
  if (auto v = r.small_positive_int(n, "ports", path)) c.ports = *v;
  if (auto v = r.boolean(n, "gpudirect", path)) c.gpudirect = *v;
  if (auto v = pcie_gen(r, n, path)) c.pcie_gen = *v;
  // lanes: the electrical lanes a port runs its rate over, a list (one per signalling mode).
  if (const YAML::Node l = child(n, "lanes"); l.IsDefined()) {
    if (!l.IsSequence() || l.size() == 0) {
      r.error(l, path + ".lanes", "expected a list of lane counts, e.g. [4] or [4, 8]");
    } else {
      for (const auto& e : l) {
        const std::string t = e.IsScalar() ? e.Scalar() : "";
        char* end = nullptr;
        const long v = std::strtol(t.c_str(), &end, 10);
        if (t.empty() || *end != '\0' || v < 1 || v > kMaxPortLanes)
          r.error(e, path + ".lanes",
                  fmt::format("'{}' is not a lane count (1 to {})", t, kMaxPortLanes),
                  "the electrical lanes one port runs its rate over: 4 for 400G over 4 x 100G");
        else
          c.lanes.push_back(static_cast<int>(v));
      }
    }
  }
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

// A buffer profile's dynamic_th: the alpha exponent, -8 to 8 (sonic-buffer-profile.yang).
std::optional<int> dynamic_th(YamlReader& r, const YAML::Node& n, const std::string& path) {
  const auto v = r.number(n, "dynamic_th", path);
  if (!v) return std::nullopt;
  if (*v < -8 || *v > 8 || *v != std::floor(*v)) {
    r.error(child(n, "dynamic_th"), path + ".dynamic_th", "expected a whole number from -8 to 8");
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

// A SONiC buffer object: {type|pool, size, xoff, static_th, dynamic_th}.
void read_buffer_object(YamlReader& r, const YAML::Node& n, const std::string& path, bool pool,
                        SonicBufferObject& o) {
  if (!r.expect_map(n, path)) return;
  r.check_keys(n, path,
               pool ? std::vector<std::string>{"type", "size", "xoff"}
                    : std::vector<std::string>{"pool", "size", "static_th", "dynamic_th"});
  const FigureRange bytes{0, kMaxSonicBufferBytes, false, "bytes",
                          "bytes, as the platform's buffers_defaults_*.j2 gives them"};
  if (pool) {
    if (auto v = r.choice(n, "type", path, {"ingress", "egress"}, true)) o.pool = *v;
    if (auto v = figure(r, n, "xoff", path, bytes)) o.xoff = *v;
  } else {
    if (auto v = r.text(n, "pool", path, true)) o.pool = *v;
    if (auto v = figure(r, n, "static_th", path, bytes)) o.static_th = *v;
    if (auto v = dynamic_th(r, n, path)) o.dynamic_th = *v;
    if (o.static_th <= 0 && !o.dynamic_th)
      r.error(n, path, "a buffer profile needs static_th or dynamic_th");
  }
  if (auto v = figure(r, n, "size", path, bytes)) o.size = *v;
}

// sonic: the platform's names and buffer figures (catalog/switches.yaml says where from).
void read_sonic(YamlReader& r, const YAML::Node& n, const std::string& path, SonicPlatform& p) {
  if (!r.expect_map(n, path)) return;
  r.check_keys(n, path,
               {"platform", "hwsku", "fec", "pools", "profiles", "queue_lossy_profile",
                "lossless_pg", "cable_lengths_m", "source"});
  if (auto v = r.text(n, "platform", path, true)) p.platform = *v;
  if (auto v = r.text(n, "fec", path)) p.fec = *v;
  if (auto v = r.text(n, "source", path, true)) p.source = *v;
  if (auto v = r.text(n, "queue_lossy_profile", path)) p.queue_lossy_profile = *v;
  const YAML::Node hw = child(n, "hwsku");
  if (hw.IsDefined() && r.expect_map(hw, path + ".hwsku"))
    for (const auto& kv : hw) {
      const std::string speed = kv.first.Scalar();
      auto g = units::parse_bitrate(speed);
      if (!g || !kv.second.IsScalar())
        r.error(kv.first, path + ".hwsku",
                fmt::format("'{}: ...' is not a speed and a name", speed),
                "write it as 400G: Arista-7060X6-64PE-O128S2");
      else
        p.hwsku[*g / 1e9] = kv.second.Scalar();
    }
  for (const char* table : {"pools", "profiles"}) {
    const YAML::Node t = child(n, table);
    const std::string tp = path + "." + table;
    if (!r.expect_map(t, tp)) continue;
    const bool pool = std::string(table) == "pools";
    for (const auto& kv : t) {
      SonicBufferObject o;
      read_buffer_object(r, kv.second, tp + "." + kv.first.Scalar(), pool, o);
      (pool ? p.pools : p.profiles)[kv.first.Scalar()] = o;
    }
  }
  for (const auto& [name, prof] : p.profiles)
    if (!p.pools.count(prof.pool))
      r.error(child(child(n, "profiles"), name), path + ".profiles." + name,
              fmt::format("pool '{}' is not among this platform's pools", prof.pool));
  for (const char* need : {"ingress_lossy_profile", "egress_lossless_profile"})
    if (!p.profiles.count(need))
      r.error(n, path + ".profiles", fmt::format("the platform's {} is missing", need));
  if (!p.profiles.count(p.queue_lossy_profile))
    r.error(n, path + ".queue_lossy_profile",
            fmt::format("'{}' is not among the profiles", p.queue_lossy_profile));
  const YAML::Node pg = child(n, "lossless_pg");
  if (pg.IsDefined()) {
    const std::string pp = path + ".lossless_pg";
    if (r.expect_map(pg, pp)) {
      r.check_keys(pg, pp, {"size", "xon", "xon_offset", "dynamic_th", "cell_bytes"});
      SonicLosslessPg l;
      const FigureRange bytes{0, kMaxSonicBufferBytes, false, "bytes",
                              "bytes, as the platform's pg_profile_lookup.ini gives them"};
      if (auto v = figure(r, pg, "size", pp, bytes, true)) l.size = *v;
      if (auto v = figure(r, pg, "xon", pp, bytes)) l.xon = *v;
      if (auto v = figure(r, pg, "xon_offset", pp, bytes)) l.xon_offset = *v;
      if (auto v = dynamic_th(r, pg, pp)) l.dynamic_th = *v;
      if (auto v = r.small_positive_int(pg, "cell_bytes", pp, true)) l.cell_bytes = *v;
      p.lossless_pg = l;
    }
  }
  const YAML::Node cl = child(n, "cable_lengths_m");
  if (cl.IsDefined()) {
    if (!cl.IsSequence()) {
      r.error(cl, path + ".cable_lengths_m", "expected a list of lengths in metres: [5, 40, 150]");
    } else {
      for (const auto& e : cl) {
        char* end = nullptr;
        const std::string t = e.IsScalar() ? e.Scalar() : "";
        const double m = std::strtod(t.c_str(), &end);
        if (t.empty() || *end != '\0' || !(m > 0) || m > 100000)
          r.error(e, path + ".cable_lengths_m", fmt::format("'{}' is not a length in metres", t));
        else
          p.cable_lengths_m.push_back(m);
      }
      std::sort(p.cable_lengths_m.begin(), p.cable_lengths_m.end());
    }
  }
}

void read_switch(YamlReader& r, const YAML::Node& n, const std::string& path, Switch& s) {
  r.check_keys(n, path,
               with_cost({"id",
                          "name",
                          "technology",
                          "ports",
                          "port_speed",
                          "ports_per_cage",
                          "breakout",
                          "buffer_mb",
                          "in_network_reduction",
                          "adaptive_routing",
                          "latency_ns",
                          "latency_source",
                          "modular",
                          "rack_units",
                          "lanes_per_cage",
                          "serdes_lanes",
                          "asic_vendor",
                          "sonic",
                          "roles",
                          "uplinks"}));
  if (auto v = r.text(n, "name", path)) s.name = *v;
  if (auto v = r.choice_of(n, "technology", path, kSwitchTechnologyNames, true)) s.technology = *v;
  if (auto v = r.small_positive_int(n, "ports", path, true)) s.ports = *v;
  if (auto v = rate_gbps(r, n, "port_speed", path, true)) s.port_gbps = *v;
  if (auto v = r.small_positive_int(n, "ports_per_cage", path)) s.ports_per_cage = *v;
  if (auto v = figure(r, n, "buffer_mb", path,
                      {0, kMaxSwitchBufferMb, false, "MB",
                       "the ASIC's packet buffer, e.g. 165 (Tomahawk 5); 0: not known"}))
    s.buffer_mb = *v;
  if (auto v = r.text(n, "in_network_reduction", path)) s.in_network_reduction = *v;
  if (s.in_network_reduction == "none" || s.in_network_reduction == "false")
    s.in_network_reduction.clear();
  if (auto v = r.boolean(n, "adaptive_routing", path)) s.adaptive_routing = *v;
  if (auto v = figure(r, n, "latency_ns", path,
                      {0, kMaxSwitchLatencyNs, true, "ns",
                       "port-to-port latency from the datasheet, e.g. 130 (QM9700)"},
                      true))
    s.latency_ns = *v;
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
        if (auto v = rate_gbps(r, b[i], "port_speed", bp, true)) o.gbps = *v;
        s.breakouts.push_back(o);
      }
    }
  }
  if (const YAML::Node ro = child(n, "roles"); ro.IsDefined()) {
    if (!ro.IsSequence() || ro.size() == 0) {
      r.error(ro, path + ".roles", "expected a list of roles: [storage, inband]",
              "roles: fabric, storage, inband, oob, mgmt-spine");
    } else {
      s.roles.clear();
      for (const auto& e : ro) {
        const std::string t = e.IsScalar() ? e.Scalar() : "";
        if (auto role = parse_name(kSwitchRoleNames, t))
          s.roles.push_back(*role);
        else
          r.error(e, path + ".roles", fmt::format("'{}' is not a switch role", t),
                  did_you_mean(t, names_of(kSwitchRoleNames)));
      }
    }
  }
  if (const YAML::Node up = child(n, "uplinks");
      up.IsDefined() && r.expect_map(up, path + ".uplinks")) {
    r.check_keys(up, path + ".uplinks", {"ports", "port_speed"});
    if (auto v = r.small_positive_int(up, "ports", path + ".uplinks", true)) s.uplink_ports = *v;
    if (auto v = rate_gbps(r, up, "port_speed", path + ".uplinks", true)) s.uplink_gbps = *v;
  }
  if (auto v = r.small_positive_int(n, "lanes_per_cage", path)) {
    if (*v > kMaxPortLanes)
      r.error(child(n, "lanes_per_cage"), path + ".lanes_per_cage",
              fmt::format("{} lanes is more than a cage has (at most {})", *v, kMaxPortLanes),
              "OSFP and QSFP-DD cages: 8; QSFP56: 4");
    else
      s.lanes_per_cage = *v;
  }
  if (auto v = r.choice_of(n, "asic_vendor", path, kAsicVendorNames)) s.asic_vendor = *v;
  // One model of the cages: every speed fills whole cages, each port on a whole number of lanes.
  for (const auto& [ports, gbps] : [&] {
         std::vector<std::pair<int, double>> speeds{{s.ports, s.port_gbps}};
         for (const auto& b : s.breakouts) speeds.push_back({b.ports, b.gbps});
         return speeds;
       }()) {
    const int per_cage = ports / s.cages();
    if (ports % s.cages() != 0 || per_cage < 1 || s.lanes_per_cage % per_cage != 0)
      r.error(n, path,
              fmt::format("{} ports at {:g}G do not split {} cages of {} lanes evenly", ports, gbps,
                          s.cages(), s.lanes_per_cage),
              "check ports, ports_per_cage, lanes_per_cage and breakout");
  }
  const YAML::Node lanes = child(n, "serdes_lanes");
  if (lanes.IsDefined()) {
    if (!lanes.IsSequence() || static_cast<int>(lanes.size()) != s.cages()) {
      r.error(lanes, path + ".serdes_lanes",
              fmt::format("expected a list of {} lane numbers, one per cage", s.cages()));
    } else {
      for (const auto& e : lanes) {
        char* end = nullptr;
        const std::string t = e.IsScalar() ? e.Scalar() : "";
        const long v = std::strtol(t.c_str(), &end, 10);
        if (t.empty() || *end != '\0' || v < 0 || v > 100000)
          r.error(e, path + ".serdes_lanes", fmt::format("'{}' is not a lane number", t));
        else
          s.serdes_lanes.push_back(static_cast<int>(v));
      }
    }
  }
  const YAML::Node so = child(n, "sonic");
  if (so.IsDefined()) {
    SonicPlatform p;
    read_sonic(r, so, path + ".sonic", p);
    if (!s.asic_vendor)
      r.error(so, path + ".sonic", "a SONiC platform needs the switch's asic_vendor",
              "its buffer model depends on it: asic_vendor: broadcom");
    if (s.serdes_lanes.empty())
      r.error(so, path + ".sonic", "a SONiC platform needs serdes_lanes (PORT lanes)");
    if (s.asic_vendor && sonic_buffer_model(*s.asic_vendor) == BufferModel::kTraditional &&
        (!p.lossless_pg || p.cable_lengths_m.empty()))
      r.error(so, path + ".sonic",
              fmt::format("a {} switch runs SONiC's traditional buffer model: it needs "
                          "lossless_pg and cable_lengths_m (the platform's pg_profile_lookup.ini)",
                          asic_vendor_name(*s.asic_vendor)));
    if (!p.pools.count("ingress_lossless_pool"))
      r.error(so, path + ".sonic.pools",
              "the lossless PGs' pool, ingress_lossless_pool, is missing (buffermgrd names it)");
    for (const auto& [gbps, sku] : p.hwsku)
      if (s.ports_at(gbps) == 0)
        r.error(so, path + ".sonic.hwsku",
                fmt::format("{} is for {:g}G, a speed the switch lacks", sku, gbps));
    s.sonic = std::move(p);
  }
  read_cost(r, n, path, s.cost, true, true);
}

void read_cable(YamlReader& r, const YAML::Node& n, const std::string& path, CablePart& c) {
  r.check_keys(n, path,
               with_cost({"id", "name", "kind", "speed", "links", "max_length_m", "media"}));
  if (auto v = r.text(n, "name", path)) c.name = *v;
  if (auto v = r.choice_of(n, "kind", path, kCableKindNames, true)) c.kind = *v;
  if (auto v = rate_gbps(r, n, "speed", path, true)) c.gbps = *v;
  if (auto v = r.small_positive_int(n, "links", path)) c.links = *v;
  if (auto v = figure(r, n, "max_length_m", path,
                      {0, kMaxCableLengthM, true, "m", "the part's reach, e.g. 3 (DAC), 500 (DR4)"},
                      true))
    c.max_length_m = *v;
  if (auto v = r.choice_of(n, "media", path, kFibreMediaNames)) {
    c.media = *v;
    if (c.kind != CableKind::kTransceiver && c.kind != CableKind::kFibre)
      r.error(child(n, "media"), path + ".media",
              "only transceivers and fibres run over a fibre medium");
  }
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
  // An empty file adds nothing: a user who meant it to replace an entry would not know.
  if (root.IsNull())
    return {Diagnostic::in_file(file, "", "the catalog file is empty: it adds or replaces nothing",
                                "give gpus:, nics:, switches: or cables: entries, or leave the "
                                "file out of the spec's catalog: list")};
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

Catalog::IncludedNics Catalog::included_nics(const GpuModel& g) const {
  IncludedNics out;
  for (const auto& [id, count] : g.node_nics) {
    auto it = nics.find(id);
    if (it == nics.end()) {
      out.missing.push_back(id);
      continue;
    }
    if (id == g.networks.storage_nic) {
      out.storage_cards += count;
      out.storage_price_usd += count * it->second.cost.price_usd;
      out.storage_power_w += count * it->second.cost.power_w;
      continue;
    }
    out.price_usd += count * it->second.cost.price_usd;
    out.power_w += count * it->second.cost.power_w;
    out.list += fmt::format("{}{} x {}", out.list.empty() ? "" : ", ", count, id);
  }
  return out;
}

std::vector<std::string> Catalog::gpu_ids() const { return keys_of(gpus); }
std::vector<std::string> Catalog::nic_ids() const { return keys_of(nics); }
std::vector<std::string> Catalog::switch_ids() const { return keys_of(switches); }

namespace {
bool media_match(FibreMedia a, FibreMedia b) {
  return a == FibreMedia::kAny || b == FibreMedia::kAny || a == b;
}
}  // namespace

const CablePart* Catalog::fibre_for(double length_m, FibreMedia media) const {
  const CablePart* best = nullptr;
  for (const auto& [id, c] : cables)
    if (c.kind == CableKind::kFibre && c.max_length_m >= length_m && media_match(c.media, media) &&
        (!best || c.cost.price_usd < best->cost.price_usd))
      best = &c;
  return best;
}

const CablePart* Catalog::cable_for(CableKind kind, double gbps, double length_m,
                                    int links_per_part, FibreMedia media) const {
  const CablePart* best = nullptr;
  for (const auto& [id, c] : cables) {
    if (c.kind != kind || c.gbps != gbps || c.max_length_m < length_m) continue;
    if (c.links != links_per_part || !media_match(c.media, media)) continue;
    if (!best || c.cost.price_usd < best->cost.price_usd) best = &c;
  }
  return best;
}

}  // namespace gf
