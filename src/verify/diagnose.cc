#include "verify/diagnose.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "config/hosts.h"
#include "verify/rules.h"

namespace gf {
namespace {

// Below this share of line rate an RDMA result is an error, not a warning.
constexpr double kRdmaBadShare = 0.8;
// PFC: more than 1 pause frame per 100,000 received packets on the lossless priority is a storm
// (estimate: healthy lossless fabrics pause rarely; storms pause continuously).
constexpr double kPauseStormRatio = 1e-5;
// RoCE wants jumbo frames; InfiniBand and RoCE path MTU 4096 (the guide's §4.3).
constexpr int kRdmaMtu = 4096;
constexpr int kJumboMtu = 9000;
// Standard NIC port rates, for guessing the line rate of a perftest result without a plan.
constexpr double kStandardRatesGbps[] = {25, 50, 100, 200, 400, 800};
// At most this many lines quoted where a log may repeat a line for every channel or peer.
constexpr std::size_t kMaxQuoted = 4;

using Findings = std::vector<Finding>;

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// NCCL_DEBUG=INFO logs: sockets instead of RDMA, GPUDirect missing, memory registration,
// transport retries and other warnings.
void nccl_log_findings(const NcclLog& r, const std::string& file, Findings& out) {
  if (r.network == "Socket" || r.net_socket > 0 || !r.no_ib_device.empty()) {
    std::vector<Evidence> ev;
    for (const auto& e : r.no_ib_device) ev.push_back({file, e.line, e.text});
    for (const auto& e : r.socket_fallback)
      if (ev.size() < kMaxQuoted) ev.push_back({file, e.line, e.text});
    out.push_back(finding(rule("nccl-socket-fallback"), ev));
  }
  if (r.net_ib > 0 && r.net_ib_gdr < r.net_ib) {
    std::vector<Evidence> ev;
    for (const auto& t : r.transports)
      if (t.text.rfind("NET/IB", 0) == 0 && !has(t.text, "GDRDMA") && ev.size() < kMaxQuoted)
        ev.push_back({file, t.line, "via " + t.text});
    out.push_back(finding(rule("gpudirect-missing"), ev, r.net_ib - r.net_ib_gdr, r.net_ib));
  }
  std::vector<Evidence> retry, other, memlock, async;
  for (const auto& e : r.errors)
    if (has(e.text, "ibv_reg_mr") || has(e.text, "Cannot allocate memory") ||
        has(e.text, "memlock"))
      memlock.push_back({file, e.line, e.text});
  if (!memlock.empty()) out.push_back(finding(rule("memlock-limited"), memlock));
  for (const auto& e : r.errors) {
    if (has(e.text, "retry count exceeded") || has(e.text, "status=12"))
      retry.push_back({file, e.line, e.text});
    // NCCL's IB async thread (transport/net_ib.cc: ncclIbAsyncThreadMain) warns "NET/IB : Got
    // async event : port error" as ibv_get_async_event reports it.
    else if (has(e.text, "Got async event")) {
      if (async.size() < kMaxQuoted) async.push_back({file, e.line, e.text});
    } else if (other.size() < kMaxQuoted)
      other.push_back({file, e.line, e.text});
  }
  if (!retry.empty()) out.push_back(finding(rule("nccl-transport-retry"), retry));
  if (!async.empty()) out.push_back(finding(rule("nccl-ib-async-event"), async));
  if (!other.empty() && retry.empty()) out.push_back(finding(rule("nccl-warnings"), other));
  if (r.network == "IB" && r.ib_devices.empty() && r.net_ib == 0)
    out.push_back(finding(rule("nccl-no-net-channels"), {{file, 0, ""}}));
  // The tuner's table: ring all_reduce rated for Simple but not for LL128 (each table's row).
  std::vector<Evidence> ll128_off;
  for (const auto& e : r.tuner) {
    if (e.op != Op::kAllReduce || e.algorithm != Algorithm::kRing ||
        e.protocol != Protocol::kLL128 || e.bandwidth_GBs > 0)
      continue;
    for (const auto& simple : r.tuner)
      if (simple.line == e.line && simple.algorithm == Algorithm::kRing &&
          simple.protocol == Protocol::kSimple && simple.bandwidth_GBs > 0 &&
          ll128_off.size() < kMaxQuoted)
        ll128_off.push_back(
            {file, e.line,
             fmt::format("AllReduce Ring/LL128 {:.1f}/{:.1f}, Ring/Simple {:.1f}/"
                         "{:.1f} (latency us / GB/s)",
                         e.latency_us, e.bandwidth_GBs, simple.latency_us, simple.bandwidth_GBs)});
  }
  if (!ll128_off.empty()) out.push_back(finding(rule("nccl-ll128-off"), ll128_off));
}

// An NCCL log against the plan: the devices NCCL's network uses, one a rail port of a node.
void nccl_log_plan_findings(const NcclLog& r, const std::string& file, const Plan& plan,
                            Findings& out) {
  std::set<std::string> devices;
  for (const auto& d : r.ib_devices) devices.insert(d.substr(0, d.find(':')));
  const int planned = plan.nics_per_node * std::max(1, plan.topo.planes);
  if (devices.empty() || static_cast<int>(devices.size()) >= planned) return;
  out.push_back(
      finding(rule("nccl-fewer-nics"),
              {{file, r.ib_devices_line,
                fmt::format("{} device{} ({}); the plan has {} rail port{} a node", devices.size(),
                            devices.size() == 1 ? "" : "s", fmt::join(devices, ", "), planned,
                            planned == 1 ? "" : "s")}}));
}

// nvidia-smi topo -m: each GPU should have a NIC on its PCIe switch (PIX or PXB).
void topo_findings(const TopoMatrix& t, const std::string& file, Findings& out) {
  static const std::map<std::string, int> rank = {
      {"PIX", 0}, {"PXB", 1}, {"PHB", 2}, {"NODE", 3}, {"SYS", 4}};
  std::vector<Evidence> ev;
  for (const auto& g : t.gpus) {
    int best = 9;
    std::string kind_of_best;
    const auto links = t.link.find(g);
    if (links != t.link.end())
      for (const auto& [nic, kind] : links->second) {
        auto it = rank.find(kind);
        if (it != rank.end() && it->second < best) {
          best = it->second;
          kind_of_best = kind;
        }
      }
    if (best >= 3) {
      const auto line = t.line.find(g);
      ev.push_back({file, line == t.line.end() ? 0 : line->second,
                    fmt::format("{}: no NIC closer than {}", g,
                                best == 9 ? std::string("(none listed)") : kind_of_best)});
    }
  }
  if (!ev.empty()) out.push_back(finding(rule("gpu-nic-affinity"), ev));
}

// ibv_devinfo: ports not active, and path MTUs below 4096.
void ibv_devinfo_findings(const std::vector<IbvDevice>& devices, const std::string& file,
                          Findings& out) {
  std::vector<Evidence> down, mtu;
  for (const auto& dev : devices)
    for (const auto& p : dev.ports) {
      if (!has(p.state, "ACTIVE"))
        down.push_back({file, p.line, fmt::format("{} port {}: {}", dev.name, p.number, p.state)});
      if (p.active_mtu > 0 && p.active_mtu < kRdmaMtu)
        mtu.push_back({file, p.line,
                       fmt::format("{} port {}: active_mtu {}", dev.name, p.number, p.active_mtu)});
    }
  if (!down.empty()) out.push_back(finding(rule("rdma-port-down"), down));
  if (!mtu.empty()) out.push_back(finding(rule("rdma-mtu-small"), mtu, kRdmaMtu));
}

// ethtool -S: pause storms on the lossless priority, and discards.
void ethtool_findings(const EthtoolStats& s, const std::string& file, Findings& out) {
  const double rx = s.counters.count("rx_packets") ? s.counters.at("rx_packets") : 0;
  std::vector<Evidence> storm, drops, flaps;
  // Counters as the dump prints them: whole numbers (a pause counter read 9.81234e+07).
  for (const auto& [name, v] : s.counters) {
    if (has(name, "_pause") && !has(name, "duration") && name.rfind("rx_prio", 0) == 0 && rx > 0 &&
        v / rx > kPauseStormRatio)
      storm.push_back(
          {file, s.line.at(name), fmt::format("{}: {:.0f} ({:.2g} per packet)", name, v, v / rx)});
    // mlx5's storm protection: the NIC stopped sending pause frames for a receiver stuck longer
    // than its watchdog allows (tx_pause_storm_error_events; the warning one, a stall nearing
    // it). Each is a storm the NIC itself saw, whatever the pause rate.
    if (name.rfind("tx_pause_storm_", 0) == 0 && v > 0)
      storm.push_back({file, s.line.at(name), fmt::format("{}: {:.0f}", name, v)});
    if ((has(name, "discard") || has(name, "out_of_buffer")) && v > 0)
      drops.push_back({file, s.line.at(name), fmt::format("{}: {:.0f}", name, v)});
    // mlx5's link_down_events_phy: the times the physical link went down.
    if (name == "link_down_events_phy" && v > 0)
      flaps.push_back({file, s.line.at(name), fmt::format("{}: {:.0f}", name, v)});
  }
  if (!storm.empty()) out.push_back(finding(rule("pfc-pause-storm"), storm));
  if (!flaps.empty()) out.push_back(finding(rule("link-flaps"), flaps));
  if (!drops.empty()) out.push_back(finding(rule("nic-discards"), drops));
}

// perftest: CPU frequency scaling, bandwidth below line rate (`line_rate` Gb/s, 0 = the nearest
// standard rate), a small path MTU.
void perftest_findings(const PerftestRun& p, const std::string& file, double line_rate,
                       Findings& out) {
  for (const auto& w : p.warnings)
    if (has(w, "Conflicting CPU frequency"))
      out.push_back(finding(rule("cpu-frequency-scaling"), {{file, 0, w}}));
  if (p.latency) return;
  const auto& row =
      *std::max_element(p.rows.begin(), p.rows.end(),
                        [](const auto& a, const auto& b) { return a.bw_avg_gbps < b.bw_avg_gbps; });
  // A bidirectional test (-b) reports both directions' sum: each direction is a port's.
  const double bw = row.bw_avg_gbps / std::max(1, p.directions);
  const std::string each = p.directions == 2 ? " each direction (a bidirectional test)" : "";
  double rate = line_rate;
  if (rate <= 0)
    for (double s : kStandardRatesGbps)
      if (s >= bw) {
        rate = s;
        break;
      }
  // Above one port's line rate (the given one, or the fastest standard port when none fits).
  const double port = rate > 0 ? rate : kStandardRatesGbps[std::size(kStandardRatesGbps) - 1];
  if (bw > port * kAbovePortLineRateShare) {
    out.push_back(finding(
        rule("rdma-above-line-rate"),
        {{file, row.line,
          fmt::format("{:.1f} Gb/s{}, above {:g} Gb/s{}", bw, each, port,
                      rate > 0 && line_rate > 0 ? " line rate" : ", the fastest standard port")}}));
    return;
  }
  if (line_rate <= 0 && rate > 0)
    out.push_back(finding(
        rule("rdma-line-rate-guessed"),
        {{file, row.line,
          fmt::format("{:.1f} Gb/s{} judged against {:g} Gb/s (guessed)", bw, each, rate)}}));
  if (rate > 0 && bw < kRdmaLineRateShare * rate) {
    Finding f = finding(rule("rdma-below-line-rate"),
                        {{file, row.line,
                          fmt::format("{:.1f} Gb/s{} of {:g} Gb/s line rate ({:.0f}%)", bw, each,
                                      rate, 100 * bw / rate)}});
    if (bw < kRdmaBadShare * rate) f.severity = Severity::kError;
    out.push_back(std::move(f));
  }
  if (p.mtu > 0 && p.mtu < kRdmaMtu)
    out.push_back(finding(rule("rdma-mtu-small/perftest"),
                          {{file, 0, fmt::format("Mtu {} in the test header", p.mtu)}}));
}

// iperf3 --json: TCP retransmits.
void iperf3_findings(const Iperf3Run& r, const std::string& file, Findings& out) {
  if (r.retransmits > 0 && r.protocol == "TCP")
    out.push_back(finding(rule("tcp-retransmits"),
                          {{file, 0, fmt::format("{:g} retransmits", r.retransmits)}}));
}

// nccl-tests: bandwidth far below the simulated plan (with a plan), and wrong results.
void nccl_tests_findings(const NcclTestsRun& r, const ToolOutput& f, const Plan* plan,
                         const Catalog* catalog, Findings& out) {
  std::vector<Evidence> wrong;
  for (const auto& row : r.rows) {
    if (reports_wrong_results(row.wrong))
      wrong.push_back({f.file, row.line, "#wrong " + row.wrong + " (out of place)"});
    if (reports_wrong_results(row.wrong_in_place))
      wrong.push_back({f.file, row.line, "#wrong " + row.wrong_in_place + " (in place)"});
  }
  if (plan && catalog) {
    // The rows check judges, as check marks them at its default tolerance: below and above the
    // simulated plan alike, so that the two never disagree on the same file.
    auto c = check_measurements(*plan, *catalog, {f}, kDefaultBusbwTolerance);
    if (c) {
      std::vector<Evidence> low, high;
      for (const auto& row : c->rows) {
        if (!row.judged || (row.mark != CheckMark::kBelow && row.mark != CheckMark::kAbove))
          continue;
        for (const auto& rr : r.rows)
          if (rr.bytes == row.bytes)
            (row.mark == CheckMark::kBelow ? low : high)
                .push_back({f.file, rr.line,
                            fmt::format("busbw {:.1f} GB/s, {:.0f}% of the simulated {:.1f} "
                                        "(as {}){}",
                                        row.measured, 100 * row.ratio, row.expected,
                                        row.expected_as, row.note.empty() ? "" : ": " + row.note)});
      }
      if (!low.empty()) out.push_back(finding(rule("busbw-below-expectation"), low));
      if (!high.empty()) out.push_back(finding(rule("busbw-above-expectation"), high));
    } else {
      out.push_back(finding(rule("busbw-not-compared"), {{f.file, 0, c.errors().front().message}}));
    }
  } else if (!r.rows.empty()) {
    // Without a plan a run at 60 % of what the fabric should reach would read "No findings": say
    // that its bandwidth was not judged, quoting its largest size.
    const NcclTestsRow& last = r.rows.back();
    out.push_back(finding(rule("busbw-not-judged"),
                          {{f.file, last.line,
                            fmt::format("busbw {:.1f} GB/s at {:.0f} B, not compared: no --spec",
                                        last.busbw_gbs, last.bytes)}}));
  }
  if (!wrong.empty()) out.push_back(finding(rule("nccl-tests-wrong-results"), wrong));
  if (!r.failures.empty()) {
    std::vector<Evidence> failed;
    for (const auto& [line, text] : r.failures) failed.push_back({f.file, line, text});
    out.push_back(finding(rule("nccl-tests-failed"), failed));
  }
}

// ip -d link outputs are judged together, once every file is read: the MTUs of the interfaces
// that are up, and the planned rails.
struct IpLinks {
  std::map<int, std::vector<std::pair<std::string, int>>> mtus;          // mtu -> where
  std::map<std::string, std::pair<IpLinkInterface, std::string>> links;  // name -> it, its file

  void add(const std::vector<IpLinkInterface>& interfaces, const std::string& file) {
    for (const auto& l : interfaces) {
      if (l.name != "lo" && l.state == "UP") mtus[l.mtu].push_back({file + ": " + l.name, l.line});
      links[l.name] = {l, file};
    }
  }
};

// The planned rails (addressing.host_netdevs) in `ip link` output: each present, up, at the MTU
// the host files set (kHostMtu).
void rail_findings(const std::vector<std::string>& rails, const IpLinks& ip, Findings& out) {
  std::vector<Evidence> missing, down, small, large;
  for (const auto& rail : rails) {
    const auto it = ip.links.find(rail);
    if (it == ip.links.end()) {
      missing.push_back({ip.links.begin()->second.second, 0,
                         fmt::format("{} is not among the interfaces", rail)});
      continue;
    }
    const auto& [l, file] = it->second;
    const Evidence ev{file, l.line, fmt::format("{} state {} mtu {}", l.name, l.state, l.mtu)};
    if (l.state != "UP") down.push_back(ev);
    if (l.mtu < kHostMtu) small.push_back(ev);
    if (l.mtu > kHostMtu) large.push_back(ev);
  }
  if (!missing.empty()) out.push_back(finding(rule("rail-missing"), missing));
  if (!down.empty()) out.push_back(finding(rule("rail-down"), down));
  if (!small.empty()) out.push_back(finding(rule("rail-mtu-below-plan"), small, kHostMtu));
  if (!large.empty()) out.push_back(finding(rule("rail-mtu-above-plan"), large, kHostMtu));
}

// Interfaces that are up at different MTUs, or all below jumbo frames; interfaces that are
// down (with a plan that names the rails, rail_findings judges them instead, and nothing else).
void ip_link_findings(const IpLinks& ip, bool rails_known, Findings& out) {
  std::vector<Evidence> down;
  for (const auto& [name, it] : ip.links) {
    const auto& [l, file] = it;
    if (name != "lo" && l.state == "DOWN")
      down.push_back({file, l.line, fmt::format("{} state {} mtu {}", l.name, l.state, l.mtu)});
  }
  if (!down.empty() && !rails_known) out.push_back(finding(rule("interface-down"), down));
  // With the rails named, rail_findings judges their MTU against the plan's; the others (the
  // management interface at 1500, a container bridge) are not the fabric's.
  if (rails_known) return;
  if (ip.mtus.size() > 1) {
    std::vector<Evidence> ev;
    for (const auto& [mtu, where] : ip.mtus)
      for (const auto& [w, line] : where)
        ev.push_back({w.substr(0, w.find(':')), line,
                      fmt::format("{} mtu {}", w.substr(w.find(": ") + 2), mtu)});
    out.push_back(finding(rule("mtu-mismatch"), ev));
  } else if (ip.mtus.size() == 1 && ip.mtus.begin()->first < kJumboMtu) {
    std::vector<Evidence> ev;
    for (const auto& [w, line] : ip.mtus.begin()->second)
      ev.push_back({w.substr(0, w.find(':')), line,
                    fmt::format("{} mtu {}", w.substr(w.find(": ") + 2), ip.mtus.begin()->first)});
    out.push_back(finding(rule("mtu-not-jumbo"), ev));
  }
}

}  // namespace

Result<std::vector<Finding>> diagnose(const std::vector<ToolOutput>& files, double line_rate,
                                      const Plan* plan, const Catalog* catalog,
                                      const std::vector<std::string>& rail_netdevs) {
  Findings out;
  std::vector<Diagnostic> errs;
  IpLinks ip;
  for (const auto& f : files) {
    const std::string& file = f.file;
    switch (f.kind) {
      case OutputKind::kNcclLog:
        with_parsed(parse_nccl_log, f, errs, [&](const auto& r) {
          nccl_log_findings(r, file, out);
          if (plan) nccl_log_plan_findings(r, file, *plan, out);
        });
        // A run's stdout with NCCL_DEBUG set: its table is judged as well as its log lines.
        if (holds_nccl_tests_table(f))
          with_parsed(parse_nccl_tests, f, errs,
                      [&](const auto& r) { nccl_tests_findings(r, f, plan, catalog, out); });
        break;
      case OutputKind::kTopo:
        with_parsed(parse_topo, f, errs, [&](const auto& t) { topo_findings(t, file, out); });
        break;
      case OutputKind::kIbvDevinfo:
        with_parsed(parse_ibv_devinfo, f, errs,
                    [&](const auto& d) { ibv_devinfo_findings(d, file, out); });
        break;
      case OutputKind::kIpLink:
        with_parsed(parse_ip_link, f, errs, [&](const auto& l) { ip.add(l, file); });
        break;
      case OutputKind::kEthtool:
        with_parsed(parse_ethtool, f, errs, [&](const auto& s) { ethtool_findings(s, file, out); });
        break;
      case OutputKind::kPerftest:
        with_parsed(parse_perftest, f, errs,
                    [&](const auto& p) { perftest_findings(p, file, line_rate, out); });
        break;
      case OutputKind::kIperf3:
        with_parsed(parse_iperf3, f, errs, [&](const auto& r) { iperf3_findings(r, file, out); });
        break;
      case OutputKind::kNcclTests:
        with_parsed(parse_nccl_tests, f, errs,
                    [&](const auto& r) { nccl_tests_findings(r, f, plan, catalog, out); });
        break;
      case OutputKind::kUnknown:
        errs.push_back(Diagnostic::in_file(
            file, "", "cannot tell which tool wrote this file",
            "diagnose reads nccl-tests, perftest, iperf3 --json, NCCL_DEBUG=INFO logs, "
            "nvidia-smi topo -m, ibv_devinfo, ethtool -S and ip -d link"));
        break;
    }
  }
  const bool rails_known =
      plan && plan->technology == Technology::kRoce && !ip.links.empty() && !rail_netdevs.empty();
  if (rails_known) rail_findings(rail_netdevs, ip, out);
  ip_link_findings(ip, rails_known, out);
  if (!errs.empty()) return errs;
  return out;
}

}  // namespace gf
