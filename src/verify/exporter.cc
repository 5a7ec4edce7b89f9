#include "verify/exporter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "common/file.h"
#include "qos/engine.h"
#include "qos/report.h"
#include "verify/parsers.h"

namespace gf {
namespace {

namespace fs = std::filesystem;

// InfiniBand port_xmit_data / port_rcv_data count 32-bit words (IBTA: data octets / 4).
constexpr double kIbDataWordBytes = 4;
// The MTU planned for RoCE host interfaces (the guide's §4.3 jumbo frames; configs write it).
constexpr int kPlannedRoceMtu = 9000;

// Collects samples per metric family so that each family is printed once with its HELP/TYPE.
class Families {
 public:
  void add(const std::string& name, const char* type, const std::string& help,
           const std::string& labels, double value) {
    auto& f = fam_[name];
    f.type = type;
    f.help = help;
    f.samples.push_back(fmt::format("{}{{{}}} {}", name, labels, fmt::format("{:.17g}", value)));
    if (std::find(order_.begin(), order_.end(), name) == order_.end()) order_.push_back(name);
  }
  std::string text() const {
    std::string out;
    for (const auto& n : order_) {
      const auto& f = fam_.at(n);
      out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", n, f.help, n, f.type);
      for (const auto& s : f.samples) out += s + "\n";
    }
    return out;
  }

 private:
  struct Family {
    std::string type, help;
    std::vector<std::string> samples;
  };
  std::map<std::string, Family> fam_;
  std::vector<std::string> order_;
};

std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// The text of a sysfs counter or a recorded ethtool dump, read with a limit so that a file that
// is a device (/dev/zero) or grows without end cannot hang the scrape or fill memory. A file that
// does not exist is no error (not every NIC or driver has every counter): nullopt, no log line.
std::optional<std::string> read_source(const fs::path& p, std::vector<SkippedSource>& skipped) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return std::nullopt;
  auto text = read_file_bounded(p.string(), kMaxCounterFileBytes);
  if (!text) {
    skipped.push_back({p.string(), text.errors()[0].message});
    return std::nullopt;
  }
  return std::move(*text);
}

// The first line of a sysfs file; "" when it is missing or cannot be read.
std::string read_line(const fs::path& p, std::vector<SkippedSource>& skipped) {
  const auto text = read_source(p, skipped);
  return text ? text->substr(0, text->find('\n')) : std::string();
}

// The number the first line `s` of sysfs file `p` holds; records a skip and returns false when
// it is none.
bool parse_number(const fs::path& p, const std::string& s, double& v,
                  std::vector<SkippedSource>& skipped) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v) || v < 0) {
    skipped.push_back({p.string(), fmt::format("'{}' is not a counter", s.substr(0, 40))});
    return false;
  }
  return true;
}

// Reads a sysfs file holding one number; records a skip and returns false when it cannot.
bool read_number(const fs::path& p, double& v, std::vector<SkippedSource>& skipped) {
  const auto text = read_source(p, skipped);
  return text && parse_number(p, text->substr(0, text->find('\n')), v, skipped);
}

struct CounterMap {
  const char* file;
  const char* metric;
  const char* help;
  double scale;
};

const CounterMap kPortCounters[] = {
    {"port_xmit_data", "gpufabric_rdma_port_transmit_bytes_total", "Bytes sent by the RDMA port.",
     kIbDataWordBytes},
    {"port_rcv_data", "gpufabric_rdma_port_receive_bytes_total", "Bytes received by the RDMA port.",
     kIbDataWordBytes},
    {"port_xmit_packets", "gpufabric_rdma_port_transmit_packets_total", "Packets sent.", 1},
    {"port_rcv_packets", "gpufabric_rdma_port_receive_packets_total", "Packets received.", 1},
    {"symbol_error", "gpufabric_rdma_port_symbol_errors_total", "Physical symbol errors.", 1},
    {"link_error_recovery", "gpufabric_rdma_port_link_error_recovery_total",
     "Link error recoveries.", 1},
    {"link_downed", "gpufabric_rdma_port_link_downed_total", "Times the link went down.", 1},
    {"port_rcv_errors", "gpufabric_rdma_port_receive_errors_total", "Malformed received packets.",
     1},
};
const CounterMap kHwCounters[] = {
    {"np_cnp_sent", "gpufabric_rdma_cnp_sent_total",
     "Congestion notification packets sent (notification point).", 1},
    {"rp_cnp_handled", "gpufabric_rdma_cnp_handled_total",
     "Congestion notification packets handled (reaction point).", 1},
    {"np_ecn_marked_roce_packets", "gpufabric_rdma_ecn_marked_packets_total",
     "RoCE packets received with ECN congestion marks.", 1},
    {"out_of_sequence", "gpufabric_rdma_out_of_sequence_total", "Out-of-sequence packets received.",
     1},
    {"packet_seq_err", "gpufabric_rdma_packet_sequence_errors_total",
     "NAKs for sequence errors (each causes a retransmission).", 1},
    {"local_ack_timeout_err", "gpufabric_rdma_local_ack_timeouts_total",
     "Transport retransmissions after an ACK timeout.", 1},
};

// `s` as one word for sh: in single quotes, each ' written as '\''. Interface names come from the
// (possibly recorded) sysfs tree and may hold any character but '/'.
std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// "400 Gb/sec (4X NDR)" -> 4e11 bits/s.
double rate_bps(const std::string& s) {
  double v = 0;
  char unit[16] = {0};
  if (std::sscanf(s.c_str(), "%lf %15s", &v, unit) < 2) return 0;
  const std::string u = unit;
  if (u.rfind("Gb", 0) == 0) return v * 1e9;
  if (u.rfind("Mb", 0) == 0) return v * 1e6;
  return 0;
}

}  // namespace

std::vector<std::string> SourceHealth::update(const std::vector<SkippedSource>& skipped) {
  std::vector<std::string> lines;
  std::set<std::string> now;
  for (const auto& s : skipped)
    if (now.insert(s.source).second && !failing_.count(s.source))
      lines.push_back(fmt::format("skipped {}: {}", s.source, s.reason));
  // A source under a device now gone did not recover: the device's own line says what happened.
  auto under_gone = [&](const std::string& source) {
    return std::any_of(gone_.begin(), gone_.end(), [&](const std::string& dev) {
      return source.find("/" + dev + "/") != std::string::npos;
    });
  };
  for (const auto& f : failing_)
    if (!now.count(f) && !under_gone(f)) lines.push_back(f + " recovered");
  failing_ = std::move(now);
  return lines;
}

std::map<std::string, std::set<std::string>> SourceHealth::devices_now(
    const std::map<std::string, std::set<std::string>>& seen) {
  std::map<std::string, std::set<std::string>> gone;
  gone_.clear();
  for (const auto& [dev, ports] : ports_)
    if (!seen.count(dev)) {
      gone[dev] = ports;
      gone_.insert(dev);
    }
  for (const auto& [dev, ports] : seen) ports_[dev].insert(ports.begin(), ports.end());
  return gone;
}

std::string collect_metrics(const ExporterOptions& o, std::vector<std::string>& log) {
  SourceHealth fresh;
  return collect_metrics(o, fresh, log);
}

std::string collect_metrics(const ExporterOptions& o, SourceHealth& health,
                            std::vector<std::string>& log) {
  std::vector<SkippedSource> skipped;
  Families m;
  std::error_code ec;
  const fs::path ib = fs::path(o.sysfs) / "class/infiniband";
  std::vector<std::string> devices;
  for (const auto& d : fs::directory_iterator(ib, ec)) devices.push_back(d.path().filename());
  std::sort(devices.begin(), devices.end());
  // Rail of each RDMA device: its position, as NCCL_IB_HCA lists them and cabling.csv numbers
  // NICs (nic0 = the first).
  std::map<std::string, int> rail;
  for (size_t i = 0; i < devices.size(); ++i) rail[devices[i]] = static_cast<int>(i);
  // The plan's view of this node: rail -> leaf and port.
  std::map<int, std::pair<std::string, std::string>> planned;
  if (o.plan && o.catalog && !o.node.empty()) {
    for_each_link(*o.plan, *o.catalog, [&](const CableRun& r) {
      if (r.kind == LinkKind::kNodeLeaf && r.a_device == o.node && r.plane == 0)
        planned[r.rail] = {r.b_device, r.b_port};
    });
    if (planned.empty()) skipped.push_back({"node " + o.node, "not in the plan's cabling"});
  }
  const double planned_bps = o.plan ? o.plan->topo.lane_gbps * 1e9 : 0;
  std::map<std::string, std::string> netdev_rail;  // interface -> rail label
  std::map<std::string, std::set<std::string>> seen;  // device -> ports, this scrape
  for (const auto& dev : devices) {
    seen[dev];
    for (const auto& p : fs::directory_iterator(ib / dev / "ports", ec)) {
      const std::string port = p.path().filename();
      seen[dev].insert(port);
      const std::string labels =
          fmt::format("device=\"{}\",port=\"{}\"", label_value(dev), label_value(port));
      for (const auto& c : kPortCounters) {
        double v = 0;
        if (read_number(p.path() / "counters" / c.file, v, skipped))
          m.add(c.metric, "counter", c.help, labels, v * c.scale);
      }
      for (const auto& c : kHwCounters) {
        double v = 0;
        if (read_number(p.path() / "hw_counters" / c.file, v, skipped))
          m.add(c.metric, "counter", c.help, labels, v * c.scale);
      }
      const std::string state = read_line(p.path() / "state", skipped);
      if (!state.empty())
        m.add("gpufabric_rdma_port_up", "gauge", "1 when the RDMA port is ACTIVE.", labels,
              state.find("ACTIVE") != std::string::npos ? 1 : 0);
      const double bps = rate_bps(read_line(p.path() / "rate", skipped));
      if (bps > 0)  // bytes per second, as node_exporter's node_network_speed_bytes
        m.add("gpufabric_rdma_port_rate_bytes", "gauge",
              "Negotiated port rate in bytes per second.", labels, bps / 8);
      if (o.plan) {
        const int r = rail[dev];
        auto it = planned.find(r);
        const std::string info =
            fmt::format("{},rail=\"{}\",leaf=\"{}\",leaf_port=\"{}\"", labels, r,
                        it == planned.end() ? "" : label_value(it->second.first),
                        it == planned.end() ? "" : label_value(it->second.second));
        m.add("gpufabric_port_info", "gauge", "The port's role in the plan.", info, 1);
        if (bps > 0)
          m.add("gpufabric_port_speed_as_planned", "gauge",
                "1 when the port runs at the planned speed.", labels, bps == planned_bps ? 1 : 0);
      }
    }
    for (const auto& n : fs::directory_iterator(ib / dev / "device/net", ec))
      netdev_rail[n.path().filename()] = std::to_string(rail[dev]);
  }
  // A device an earlier scrape read and this one does not find: its ports down, said once in the
  // log as a skipped source (their series had vanished, and their failing counters "recovered").
  for (const auto& [dev, ports] : health.devices_now(seen)) {
    skipped.push_back({"device " + dev, fmt::format("no longer in {}", ib.string())});
    for (const auto& port : ports)
      m.add("gpufabric_rdma_port_up", "gauge", "1 when the RDMA port is ACTIVE.",
            fmt::format("device=\"{}\",port=\"{}\"", label_value(dev), label_value(port)), 0);
  }
  // Interfaces.
  const fs::path net = fs::path(o.sysfs) / "class/net";
  std::vector<std::string> ifs;
  for (const auto& d : fs::directory_iterator(net, ec)) ifs.push_back(d.path().filename());
  std::sort(ifs.begin(), ifs.end());
  for (const auto& name : ifs) {
    if (name == "lo") continue;
    const fs::path d = net / name;
    const std::string labels = fmt::format("interface=\"{}\"", label_value(name));
    double v = 0;
    if (read_number(d / "mtu", v, skipped)) {
      m.add("gpufabric_net_mtu_bytes", "gauge", "Interface MTU.", labels, v);
      if (o.plan && o.plan->technology == Technology::kRoce && netdev_rail.count(name))
        m.add("gpufabric_port_mtu_as_planned", "gauge",
              "1 when a RoCE interface has the planned MTU.", labels, v == kPlannedRoceMtu ? 1 : 0);
    }
    // The speed the kernel knows: -1 (SPEED_UNKNOWN, include/uapi/linux/ethtool.h) for a
    // virtual interface or a link that is down, whose read may also fail (EINVAL): no speed to
    // export, and no source that failed.
    {
      std::vector<SkippedSource> unknown;  // a read that fails is an unknown speed too
      const std::string speed = read_line(d / "speed", unknown);
      if (!speed.empty() && speed != "-1" && parse_number(d / "speed", speed, v, skipped))
        m.add("gpufabric_net_speed_bytes", "gauge", "Interface speed in bytes per second.", labels,
              v * 1e6 / 8);
    }
    const std::string state = read_line(d / "operstate", skipped);
    if (!state.empty())
      m.add("gpufabric_net_up", "gauge", "1 when the interface is up.", labels,
            state == "up" ? 1 : 0);
    if (read_number(d / "statistics/rx_dropped", v, skipped))
      m.add("gpufabric_net_receive_drops_total", "counter", "Received packets dropped.", labels, v);
    if (read_number(d / "statistics/tx_dropped", v, skipped))
      m.add("gpufabric_net_transmit_drops_total", "counter", "Packets dropped on transmit.", labels,
            v);
    // Per-priority PFC pause frames and discards from ethtool -S.
    std::string text;
    if (!o.ethtool_dir.empty()) {
      text = read_source(fs::path(o.ethtool_dir) / (name + ".txt"), skipped).value_or("");
    } else {
      const std::string cmd = "ethtool -S " + shell_quoted(name) + " 2>/dev/null";
      if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[4096];
        size_t n;
        bool too_long = false;
        while (!too_long && (n = fread(buf, 1, sizeof buf, p)) > 0) {
          too_long = text.size() + n > kMaxCounterFileBytes;
          if (!too_long) text.append(buf, n);
        }
        pclose(p);
        if (too_long) {
          skipped.push_back(
              {"ethtool statistics of " + name,
               fmt::format("'ethtool -S' goes on past {}", human_bytes(kMaxCounterFileBytes))});
          continue;
        }
      }
    }
    if (text.empty()) continue;
    auto stats = parse_ethtool(text, name);
    if (!stats) {
      skipped.push_back({"ethtool statistics of " + name, stats.errors()[0].message});
      continue;
    }
    for (const auto& [counter, value] : stats->counters) {
      int prio = -1;
      char dir[3] = {0};
      const bool pause =
          counter.size() > 6 && counter.compare(counter.size() - 6, 6, "_pause") == 0;
      if (pause && std::sscanf(counter.c_str(), "%1[rt]x_prio%d_pause", dir, &prio) == 2 &&
          prio >= 0 && prio < 8)
        m.add("gpufabric_net_pfc_pause_frames_total", "counter",
              "PFC pause frames by priority and direction (ethtool -S).",
              fmt::format("{},priority=\"{}\",direction=\"{}\"", labels, prio,
                          dir[0] == 'r' ? "rx" : "tx"),
              value);
      if (counter == "rx_discards_phy" || counter == "tx_discards_phy")
        m.add("gpufabric_net_discards_total", "counter",
              "Packets discarded by the NIC (ethtool -S).",
              fmt::format("{},direction=\"{}\"", labels, counter[0] == 'r' ? "rx" : "tx"), value);
    }
  }
  // The baseline: the last check's results.
  if (!o.baseline_file.empty()) {
    const auto rows = read_baseline(o.baseline_file);
    if (!rows) skipped.push_back({"baseline " + o.baseline_file, rows.errors()[0].message});
    for (const auto& row : rows ? *rows : std::vector<BaselineRow>{}) {
      const std::string labels =
          fmt::format("collective=\"{}\",bytes=\"{:.0f}\"", label_value(row.collective), row.bytes);
      m.add("gpufabric_baseline_busbw_bytes_per_second", "gauge",
            "Bus bandwidth measured by the last gpufabric check.", labels,
            row.measured_busbw_gbs * 1e9);
      m.add("gpufabric_expected_busbw_bytes_per_second", "gauge",
            "Bus bandwidth the simulator expects of the plan.", labels,
            row.expected_busbw_gbs * 1e9);
      m.add("gpufabric_check_ratio", "gauge", "Measured over expected bus bandwidth.", labels,
            row.ratio);
    }
  }
  m.add("gpufabric_exporter_skipped_sources", "gauge",
        "Sources skipped in this scrape (unreadable or malformed).", "",
        static_cast<double>(skipped.size()));
  for (auto& line : health.update(skipped)) log.push_back(std::move(line));
  return m.text();
}

std::vector<Diagnostic> validate_exporter_options(const ExporterOptions& o) {
  std::vector<Diagnostic> errs;
  auto folder = [&](const std::string& path, const char* key, const char* hint) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return;
    errs.push_back(Diagnostic::in_file(
        path, key, fs::exists(path, ec) ? "is not a folder" : "no such folder", hint));
  };
  folder(o.sysfs, "--sysfs", "give /sys or the root of a recorded copy of it");
  if (!o.ethtool_dir.empty())
    folder(o.ethtool_dir, "--ethtool-dir", "give the folder of recorded 'ethtool -S' outputs");
  if (!o.baseline_file.empty()) {
    auto rows = read_baseline(o.baseline_file, "--baseline");
    if (!rows) errs.insert(errs.end(), rows.errors().begin(), rows.errors().end());
  }
  if (!o.node.empty() && o.plan && o.catalog) {
    std::vector<std::string> nodes;  // in plan order, each once
    for_each_link(*o.plan, *o.catalog, [&](const CableRun& r) {
      if (r.kind == LinkKind::kNodeLeaf && r.plane == 0 &&
          (nodes.empty() || nodes.back() != r.a_device))
        nodes.push_back(r.a_device);
    });
    if (std::find(nodes.begin(), nodes.end(), o.node) == nodes.end())
      errs.push_back(Diagnostic::flag("--node",
                                      nodes.empty()
                                          ? fmt::format("'{}': the plan has no nodes", o.node)
                                          : fmt::format("'{}' is not a node of the plan ({} to {})",
                                                        o.node, nodes.front(), nodes.back()),
                                      did_you_mean(o.node, nodes)));
  }
  return errs;
}

Result<std::vector<BaselineRow>> read_baseline(const std::string& path, const std::string& key) {
  // A check result is a few KiB (one row per measured size); the spec limit is generous and keeps
  // a wrong file (a log, a device) from stalling every scrape.
  const auto text = read_file_bounded(path, kMaxSpecBytes, key);
  if (!text) return text.errors();
  const std::string hint = "give the output of 'gpufabric check SPEC FILES... --json'";
  auto bad = [&](const std::string& what) { return Diagnostic::in_file(path, key, what, hint); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    // what() is "[json.exception.parse_error.101] parse error at line 1, column 1: ...".
    const std::string what = e.what();
    return bad("not valid JSON: " + what.substr(what.find(']') + 2));
  }
  if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array())
    return bad("not the output of 'gpufabric check --json' (no \"rows\" list)");
  std::vector<BaselineRow> rows;
  for (size_t i = 0; i < j["rows"].size(); ++i) {
    const auto& r = j["rows"][i];
    if (!r.is_object()) return bad(fmt::format("rows[{}] is not an object", i));
    if (!r.contains("measured_busbw_gbs")) continue;  // a bandwidth test, not a collective
    if (!r.contains("collective") || !r["collective"].is_string())
      return bad(fmt::format("rows[{}].collective: expected a string", i));
    BaselineRow b{r["collective"].get<std::string>()};
    for (auto [k, v] :
         {std::pair{"bytes", &b.bytes}, std::pair{"measured_busbw_gbs", &b.measured_busbw_gbs},
          std::pair{"expected_busbw_gbs", &b.expected_busbw_gbs}, std::pair{"ratio", &b.ratio}}) {
      if (!r.contains(k) || !r[k].is_number())
        return bad(fmt::format("rows[{}].{}: expected a number", i, k));
      *v = r[k].get<double>();
    }
    rows.push_back(std::move(b));
  }
  // No nccl-tests row: nothing to export, and the below-baseline alert could never fire.
  if (rows.empty())
    return bad(j.contains("suspects")
                   ? "check's result of an acceptance results folder, which holds no nccl-tests "
                     "row with its busbw: the baseline is check --json of nccl-tests outputs"
                   : "no nccl-tests row (measured_busbw_gbs): the baseline compares bus "
                     "bandwidth, so it is check --json of nccl-tests outputs");
  return rows;
}

Result<QosAlertBasis> qos_alert_basis(const Plan& plan, const Catalog& catalog, const Fabric& fab) {
  if (plan.technology != Technology::kRoce)
    return Diagnostic::at_key("fabric.technology",
                              fmt::format("{} has no PFC, ECN or DCQCN to derive RoCE alert "
                                          "thresholds from",
                                          technology_name(plan.technology)));
  auto traffic = qos_traffic(plan, fab, kQosDefaultPattern, 0, kQosDefaultBytes);
  if (!traffic) return traffic.errors();
  const QosSettings s;
  const QosResult r = run_qos(plan, catalog, fab, traffic->flows, s);
  QosAlertBasis b;
  b.traffic = traffic->what;
  b.settings = qos_settings_line(s);
  b.run_s = r.time_s;
  // A rail port's full-MTU packets a second at its line rate: its bytes on the wire a packet.
  const double port_bytes_per_s = plan.nic.rate_gbps * 1e9 / 8 / std::max(1, plan.topo.planes);
  b.line_packets_per_s = port_bytes_per_s / (kRoceMtuBytes + kRoceHeaderBytes + kEthernetGapBytes);
  if (!(r.time_s > 0)) return b;
  for (const QosPortStats& p : r.ports) {
    if (p.from_nic) {
      b.pause_rx_per_s = std::max(b.pause_rx_per_s, p.pause_received / r.time_s);
      b.cnp_sent_per_s = std::max(b.cnp_sent_per_s, p.cnps / r.time_s);
    }
    if (p.to_nic) b.ecn_marked_per_s = std::max(b.ecn_marked_per_s, p.ecn_marked_rx / r.time_s);
  }
  return b;
}

double alert_threshold(double planned_per_s, double floor_per_s) {
  return std::max({kAlertOverPlannedRate * planned_per_s, kAlertFloorPerS, floor_per_s});
}

namespace {

// A rate for PromQL and for people: whole events a second from 100 up, else 3 digits.
std::string rate(double per_s) {
  return per_s >= 100 ? fmt::format("{:.0f}", per_s) : fmt::format("{:.3g}", per_s);
}

// The RoCE congestion rules whose thresholds come from the packet-level run.
std::string qos_rules(const QosAlertBasis& b) {
  const std::string from = fmt::format(
      "gpufabric's packet-level run (src/qos, as `gpufabric qos SPEC` runs it) of {} with {}, "
      "{:.3g} ms simulated",
      b.traffic, b.settings, b.run_s * 1e3);
  // ECN marks and CNPs are DCQCN at work: their floor scales with the port's packet rate.
  const double dcqcn_floor = kEcnAlertFloorShare * b.line_packets_per_s;
  auto rule = [&](const char* name, const std::string& what, double planned, const char* expr,
                  const char* summary, const char* description, double floor) {
    return fmt::format(
        R"yaml(      # {what}: at most {planned}/s on one NIC port at the planned load, in
      # {from}; the threshold is {over:g} x that, at least {floor}/s{floor_why}.
      - alert: {name}
        expr: {expr} > {threshold}
        for: 5m
        labels:
          severity: warning
        annotations:
          summary: "{summary} on {{{{ $labels.instance }}}} {{{{ $labels.device }}}}{{{{ $labels.interface }}}}"
          description: "{description} The plan expects at most {planned}/s at its load (gpufabric qos); {{{{ $value | humanize }}}}/s is above {threshold}/s, the rule's threshold."
)yaml",
        fmt::arg("what", what), fmt::arg("planned", rate(planned)), fmt::arg("from", from),
        fmt::arg("over", kAlertOverPlannedRate),
        fmt::arg("floor", rate(std::max(kAlertFloorPerS, floor))),
        fmt::arg("floor_why",
                 floor > kAlertFloorPerS
                     ? fmt::format(" ({:g} of the {} full-MTU packets a second a port receives "
                                   "at line rate: DCQCN marks some on a healthy fabric)",
                                   kEcnAlertFloorShare, rate(b.line_packets_per_s))
                     : ""),
        fmt::arg("name", name), fmt::arg("expr", expr),
        fmt::arg("threshold", rate(alert_threshold(planned, floor))), fmt::arg("summary", summary),
        fmt::arg("description", description));
  };
  std::string o;
  o += rule("GpufabricPfcPausesAbovePlan", "PFC pause frames a NIC receives on the RoCE priority",
            b.pause_rx_per_s,
            "sum by (instance, interface) "
            "(rate(gpufabric_net_pfc_pause_frames_total{direction=\"rx\",priority=\"3\"}[5m]))",
            "PFC pauses above plan",
            "The switch pauses this NIC more often than the planned traffic does: congestion "
            "the ECN marking did not stop first. Check the ECN thresholds and DCQCN.",
            kAlertFloorPerS);
  o += rule("GpufabricEcnMarksAbovePlan", "ECN-marked RoCE packets a NIC receives",
            b.ecn_marked_per_s,
            "sum by (instance, device) (rate(gpufabric_rdma_ecn_marked_packets_total[5m]))",
            "ECN marks above plan",
            "Queues on this NIC's paths run fuller than the planned traffic makes them: ECMP "
            "collisions, oversubscription or a slow receiver.",
            dcqcn_floor);
  o += rule("GpufabricCnpsAbovePlan", "CNPs a NIC sends (DCQCN notification point)",
            b.cnp_sent_per_s, "sum by (instance, device) (rate(gpufabric_rdma_cnp_sent_total[5m]))",
            "CNPs above plan",
            "This NIC asks its senders to slow down more often than the planned traffic does.",
            dcqcn_floor);
  return o;
}

}  // namespace

std::string prometheus_rules(const Plan& plan, const std::optional<QosAlertBasis>& qos,
                             const std::string& qos_absent) {
  std::string derived = qos ? qos_rules(*qos)
                            : fmt::format("      # No thresholds from the packet-level run: {}\n",
                                          qos_absent.empty() ? "not asked for" : qos_absent);
  // PFC and DCQCN are RoCE's: an InfiniBand fabric (credit-based, no pause frames) gets neither
  // rule. A storm is far beyond the plan: its fixed threshold is raised, where the packet-level
  // run saw more, to kAlertOverPlannedRate x the derived rule's threshold, so that it neither
  // fires at the plan's own load nor with the derived warning.
  const bool roce = plan.technology == Technology::kRoce;
  double storm = kPauseStormPerS, surge = kCnpSurgePerS;
  if (qos) {
    storm = std::max(storm, kAlertOverPlannedRate * alert_threshold(qos->pause_rx_per_s));
    surge = std::max(surge, kAlertOverPlannedRate * alert_threshold(qos->cnp_sent_per_s));
  }
  const std::string pause_storm = roce ? fmt::format(R"yaml(      - alert: GpufabricPfcPauseStorm
        expr: sum by (instance, interface) (rate(gpufabric_net_pfc_pause_frames_total{{direction="rx"}}[5m])) > {storm}
        for: 2m
        labels:
          severity: critical
        annotations:
          summary: "PFC pause storm on {{{{ $labels.instance }}}} {{{{ $labels.interface }}}}"
          description: "More than {storm} pause frames/s received: a stuck or congested receiver back-pressures the fabric. Check the PFC watchdog and ECN."
)yaml",
                                                     fmt::arg("storm", rate(storm)))
                                       : "";
  const std::string cnp_surge = roce ? fmt::format(R"yaml(      - alert: GpufabricCnpSurge
        expr: rate(gpufabric_rdma_cnp_handled_total[5m]) > {surge}
        for: 5m
        labels:
          severity: warning
        annotations:
          summary: "Congestion notifications surge on {{{{ $labels.instance }}}} {{{{ $labels.device }}}}"
          description: "Sustained DCQCN congestion: look for ECMP collisions, oversubscription or a slow receiver."
)yaml",
                                                   fmt::arg("surge", rate(surge)))
                                     : "";
  return fmt::format(R"yaml(# Alerting rules for the gpufabric exporter, fabric {name}.
groups:
  - name: gpufabric
    rules:
{pause_storm}      - alert: GpufabricLinkFlapping
        expr: increase(gpufabric_rdma_port_link_downed_total[15m]) > 2
        labels:
          severity: warning
        annotations:
          summary: "RDMA link flapping on {{{{ $labels.instance }}}} {{{{ $labels.device }}}}"
          description: "The link went down more than twice in 15 minutes: reseat or replace the cable."
      - alert: GpufabricPortErrors
        expr: rate(gpufabric_rdma_port_symbol_errors_total[5m]) > 0 or rate(gpufabric_rdma_port_receive_errors_total[5m]) > 0
        for: 5m
        labels:
          severity: warning
        annotations:
          summary: "Errors on {{{{ $labels.instance }}}} {{{{ $labels.device }}}}"
          description: "Symbol or receive errors keep rising: cable, transceiver or FEC."
{cnp_surge}      - alert: GpufabricBusbwBelowBaseline
        expr: gpufabric_check_ratio < 0.85
        labels:
          severity: warning
        annotations:
          summary: "Bus bandwidth below expectation ({{{{ $labels.collective }}}}, {{{{ $labels.bytes }}}} B)"
          description: "The last gpufabric check measured {{{{ $value | humanizePercentage }}}} of the simulated bus bandwidth."
      - alert: GpufabricPortNotAsPlanned
        expr: gpufabric_port_speed_as_planned == 0 or gpufabric_port_mtu_as_planned == 0
        labels:
          severity: warning
        annotations:
          summary: "Port not as planned on {{{{ $labels.instance }}}}"
          description: "Speed or MTU differs from the plan ({lane:g} Gbps ports)."
{derived})yaml",
                     fmt::arg("name", plan.name), fmt::arg("lane", plan.topo.lane_gbps),
                     fmt::arg("pause_storm", pause_storm), fmt::arg("cnp_surge", cnp_surge),
                     fmt::arg("derived", derived));
}

nlohmann::json grafana_dashboard(const Plan& plan) {
  using nlohmann::json;
  int id = 0;
  auto panel = [&](const std::string& title, const std::string& expr, const std::string& unit,
                   const std::string& legend, int x, int y) {
    return json{
        {"id", ++id},
        {"type", "timeseries"},
        {"title", title},
        {"datasource", {{"type", "prometheus"}, {"uid", "${datasource}"}}},
        {"gridPos", {{"h", 8}, {"w", 12}, {"x", x}, {"y", y}}},
        {"fieldConfig", {{"defaults", {{"unit", unit}}}, {"overrides", json::array()}}},
        {"targets", json::array({{{"expr", expr}, {"legendFormat", legend}, {"refId", "A"}}})}};
  };
  json panels = json::array();
  panels.push_back(panel("Fabric overview: RDMA ports up", "sum(gpufabric_rdma_port_up)", "none",
                         "ports up", 0, 0));
  panels.push_back(panel("Throughput per rail",
                         "sum by (rail) (rate(gpufabric_rdma_port_transmit_bytes_total[1m]) * "
                         "on (instance, device, port) group_left(rail) gpufabric_port_info) * 8",
                         "bps", "rail {{rail}}", 12, 0));
  // PFC pauses and DCQCN's CNPs are RoCE's; an InfiniBand fabric has neither.
  int row = 8;
  if (plan.technology == Technology::kRoce) {
    panels.push_back(panel("PFC pause frames received",
                           "sum by (instance, interface, priority) "
                           "(rate(gpufabric_net_pfc_pause_frames_total{direction=\"rx\"}[1m]))",
                           "pps", "{{instance}} {{interface}} prio {{priority}}", 0, row));
    panels.push_back(panel("CNP rate (DCQCN)",
                           "sum by (instance, device) (rate(gpufabric_rdma_cnp_handled_total[1m]))",
                           "pps", "{{instance}} {{device}}", 12, row));
    row += 8;
  }
  panels.push_back(
      panel("Errors",
            "sum by (instance, device) (rate(gpufabric_rdma_port_symbol_errors_total[5m]) "
            "+ rate(gpufabric_rdma_port_receive_errors_total[5m]) + "
            "rate(gpufabric_rdma_port_link_downed_total[5m]))",
            "short", "{{instance}} {{device}}", 0, row));
  panels.push_back(panel("Bus bandwidth against baseline",
                         "gpufabric_baseline_busbw_bytes_per_second or "
                         "gpufabric_expected_busbw_bytes_per_second",
                         "Bps", "{{__name__}} {{collective}} {{bytes}}", 12, row));
  return {{"title", "gpufabric: " + plan.name},
          {"uid", "gpufabric-" + plan.name},
          {"schemaVersion", 38},
          {"version", 1},
          {"time", {{"from", "now-6h"}, {"to", "now"}}},
          {"refresh", "30s"},
          {"tags", json::array({"gpufabric", technology_name(plan.technology)})},
          {"templating",
           {{"list",
             json::array(
                 {{{"name", "datasource"}, {"type", "datasource"}, {"query", "prometheus"}}})}}},
          {"panels", panels}};
}

}  // namespace gf
