#include "verify/diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "config/hosts.h"

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
// diagnose flags nccl-tests bandwidth below this fraction of the simulated expectation.
constexpr double kBusbwTolerance = 0.25;
// Standard NIC port rates, for guessing the line rate of a perftest result without a plan.
constexpr double kStandardRatesGbps[] = {25, 50, 100, 200, 400, 800};

Finding make(const char* id, Severity severity, std::vector<Evidence> ev, std::string cause,
             std::string check, std::string fix) {
  return {id, severity, std::move(ev), std::move(cause), std::move(check), std::move(fix)};
}

}  // namespace

namespace {

// The planned rails (addressing.host_netdevs) in `ip link` output: each present, up, at the MTU
// the host files set (kHostMtu).
void rail_findings(const std::vector<std::string>& rails,
                   const std::map<std::string, std::pair<IpLinkInterface, std::string>>& links,
                   std::vector<Finding>& out) {
  std::vector<Evidence> missing, down, small, large;
  for (const auto& rail : rails) {
    const auto it = links.find(rail);
    if (it == links.end()) {
      missing.push_back(
          {links.begin()->second.second, 0, fmt::format("{} is not among the interfaces", rail)});
      continue;
    }
    const auto& [l, file] = it->second;
    const Evidence ev{file, l.line, fmt::format("{} state {} mtu {}", l.name, l.state, l.mtu)};
    if (l.state != "UP") down.push_back(ev);
    if (l.mtu < kHostMtu) small.push_back(ev);
    if (l.mtu > kHostMtu) large.push_back(ev);
  }
  if (!missing.empty())
    out.push_back(make("rail-missing", Severity::kWarning, missing,
                       "a rail the spec names (addressing.host_netdevs) is not on this host: "
                       "renamed, driver not loaded, or the output is of another host",
                       "ibdev2netdev; ip link", "fix addressing.host_netdevs or the host"));
  if (!down.empty())
    out.push_back(make("rail-down", Severity::kError, down,
                       "a planned rail is not up: its GPUs' traffic moves to the other rails or "
                       "NCCL fails",
                       "ip link; ethtool (link, cable); the switch port",
                       "bring the link up (cable, transceiver, switch port), netplan apply"));
  if (!small.empty())
    out.push_back(
        make("rail-mtu-below-plan", Severity::kError, small,
             fmt::format("a planned rail runs below the planned MTU {}: jumbo RoCE "
                         "frames and 4096-byte RDMA path MTU do not fit",
                         kHostMtu),
             "ip link; ibv_devinfo active_mtu; ping -M do -s 8972 to another host",
             fmt::format("apply the generated netplan (MTU {}) on every node", kHostMtu)));
  if (!large.empty())
    out.push_back(make("rail-mtu-above-plan", Severity::kWarning, large,
                       fmt::format("a planned rail runs above the planned MTU {}: frames larger "
                                   "than the switch MTU (9100 on SONiC) are dropped",
                                   kHostMtu),
                       "ip link; the switch port MTU",
                       fmt::format("MTU {} on hosts, 9100-9216 on switches", kHostMtu)));
}

}  // namespace

Result<std::vector<Finding>> diagnose(const std::vector<ToolOutput>& files, double line_rate,
                                      const Plan* plan, const Catalog* catalog,
                                      const std::vector<std::string>& rail_netdevs) {
  std::vector<Finding> out;
  std::vector<Diagnostic> errs;
  std::map<int, std::vector<std::pair<std::string, int>>> mtus;          // mtu -> where
  std::map<std::string, std::pair<IpLinkInterface, std::string>> links;  // name -> it, its file
  for (const auto& f : files) {
    switch (f.kind) {
      case OutputKind::kNcclLog: {
        auto r = parse_nccl_log(f.text, f.file);
        if (!r) {
          errs.insert(errs.end(), r.errors().begin(), r.errors().end());
          break;
        }
        if (r->network == "Socket" || r->net_socket > 0 || !r->no_ib_device.empty()) {
          std::vector<Evidence> ev;
          for (const auto& e : r->no_ib_device) ev.push_back({f.file, e.line, e.text});
          for (const auto& e : r->socket_fallback)
            if (ev.size() < 4) ev.push_back({f.file, e.line, e.text});
          out.push_back(make("nccl-socket-fallback", Severity::kError, ev,
                             "NCCL fell back to TCP sockets: RDMA is not in use (no usable "
                             "InfiniBand/RoCE device, missing libibverbs or NCCL_IB_DISABLE=1)",
                             "NCCL_DEBUG=INFO must show 'NET/IB : Using [0]mlx5_0' and "
                             "'Using network IB'; run ibv_devinfo",
                             "install rdma-core/MLNX_OFED, load the NIC driver, unset "
                             "NCCL_IB_DISABLE, set NCCL_IB_HCA to the RDMA NICs"));
        }
        if (r->net_ib > 0 && r->net_ib_gdr < r->net_ib) {
          std::vector<Evidence> ev;
          for (const auto& t : r->transports)
            if (t.text.rfind("NET/IB", 0) == 0 && t.text.find("GDRDMA") == std::string::npos &&
                ev.size() < 4)
              ev.push_back({f.file, t.line, "via " + t.text});
          out.push_back(make("gpudirect-missing", Severity::kWarning, ev,
                             fmt::format("{} of {} network channels run without GPUDirect RDMA: "
                                         "data is staged through host memory",
                                         r->net_ib - r->net_ib_gdr, r->net_ib),
                             "nvidia-smi topo -m: GPU to NIC should be PIX or PXB, not SYS; "
                             "lsmod | grep nvidia_peermem",
                             "load nvidia-peermem (or use DMA-BUF), place each GPU's NIC on its "
                             "PCIe switch, set NCCL_NET_GDR_LEVEL"));
        }
        std::vector<Evidence> retry, other, memlock;
        for (const auto& e : r->errors)
          if (e.text.find("ibv_reg_mr") != std::string::npos ||
              e.text.find("Cannot allocate memory") != std::string::npos ||
              e.text.find("memlock") != std::string::npos)
            memlock.push_back({f.file, e.line, e.text});
        if (!memlock.empty())
          out.push_back(make("memlock-limited", Severity::kWarning, memlock,
                             "memory registration may be limited by the locked-memory ulimit",
                             "ulimit -l on every host (must be unlimited); gpufabric doctor",
                             "'* - memlock unlimited' in /etc/security/limits.d/, and "
                             "LimitMEMLOCK=infinity for services"));
        for (const auto& e : r->errors) {
          if (e.text.find("retry count exceeded") != std::string::npos ||
              e.text.find("status=12") != std::string::npos)
            retry.push_back({f.file, e.line, e.text});
          else if (other.size() < 4)
            other.push_back({f.file, e.line, e.text});
        }
        if (!retry.empty())
          out.push_back(make("nccl-transport-retry", Severity::kError, retry,
                             "RDMA connections time out: packets are dropped between the hosts "
                             "(firewall, no subnet manager, PFC/lossless misconfigured) or memory "
                             "registration is limited",
                             "ib_write_bw between the two hosts; sminfo (InfiniBand); ulimit -l; "
                             "firewall rules for the RDMA/bootstrap ports",
                             "open the firewall, (re)start the subnet manager, set memlock "
                             "unlimited in /etc/security/limits.d, fix PFC on the RoCE priority"));
        if (!other.empty() && retry.empty())
          out.push_back(make("nccl-warnings", Severity::kWarning, other, "NCCL reported warnings",
                             "read the lines quoted", "see NCCL's troubleshooting guide"));
        if (r->network == "IB" && r->ib_devices.empty() && r->net_ib == 0)
          out.push_back(make("nccl-no-net-channels", Severity::kInfo, {{f.file, 0, ""}},
                             "the log shows no network channels (single node?)", "", ""));
        break;
      }
      case OutputKind::kTopo: {
        auto t = parse_topo(f.text, f.file);
        if (!t) {
          errs.insert(errs.end(), t.errors().begin(), t.errors().end());
          break;
        }
        static const std::map<std::string, int> rank = {
            {"PIX", 0}, {"PXB", 1}, {"PHB", 2}, {"NODE", 3}, {"SYS", 4}};
        std::vector<Evidence> ev;
        for (const auto& g : t->gpus) {
          int best = 9;
          std::string kind_of_best;
          for (const auto& [nic, kind] : t->link[g]) {
            auto it = rank.find(kind);
            if (it != rank.end() && it->second < best) {
              best = it->second;
              kind_of_best = kind;
            }
          }
          if (best >= 3)
            ev.push_back({f.file, t->line[g],
                          fmt::format("{}: no NIC closer than {}", g,
                                      best == 9 ? std::string("(none listed)") : kind_of_best)});
        }
        if (!ev.empty())
          out.push_back(make("gpu-nic-affinity", Severity::kWarning, ev,
                             "GPUs without a NIC on their PCIe switch: GPUDirect RDMA crosses the "
                             "CPU interconnect (SYS) or is disabled",
                             "nvidia-smi topo -m: every GPU should see a NIC as PIX or PXB",
                             "install a NIC per GPU pair on the same PCIe switch, or set "
                             "NCCL_IB_HCA / NCCL_NET_GDR_LEVEL to match the topology"));
        break;
      }
      case OutputKind::kIbvDevinfo: {
        auto d = parse_ibv_devinfo(f.text, f.file);
        if (!d) {
          errs.insert(errs.end(), d.errors().begin(), d.errors().end());
          break;
        }
        std::vector<Evidence> down, mtu;
        for (const auto& dev : *d)
          for (const auto& p : dev.ports) {
            if (p.state.find("ACTIVE") == std::string::npos)
              down.push_back(
                  {f.file, p.line, fmt::format("{} port {}: {}", dev.name, p.number, p.state)});
            if (p.active_mtu > 0 && p.active_mtu < kRdmaMtu)
              mtu.push_back(
                  {f.file, p.line,
                   fmt::format("{} port {}: active_mtu {}", dev.name, p.number, p.active_mtu)});
          }
        if (!down.empty())
          out.push_back(make("rdma-port-down", Severity::kError, down,
                             "an RDMA port is not active: cable, switch port, or (InfiniBand) no "
                             "subnet manager",
                             "ibstat / ibv_devinfo; the switch port's state; sminfo",
                             "reseat or replace the cable, enable the switch port, start the SM"));
        if (!mtu.empty())
          out.push_back(make("rdma-mtu-small", Severity::kWarning, mtu,
                             fmt::format("RDMA path MTU below {}: more packets per message, lower "
                                         "bandwidth",
                                         kRdmaMtu),
                             "ibv_devinfo active_mtu; ip link (RoCE interface MTU >= 4200)",
                             "set MTU 9000 on RoCE interfaces and 9214 on the switches (guide "
                             "§4.2)"));
        break;
      }
      case OutputKind::kIpLink: {
        auto parsed = parse_ip_link(f.text, f.file);
        if (!parsed) {
          errs.insert(errs.end(), parsed.errors().begin(), parsed.errors().end());
          break;
        }
        for (const auto& l : *parsed) {
          if (l.name != "lo" && l.state == "UP")
            mtus[l.mtu].push_back({f.file + ": " + l.name, l.line});
          links[l.name] = {l, f.file};
        }
        break;
      }
      case OutputKind::kEthtool: {
        auto s = parse_ethtool(f.text, f.file);
        if (!s) {
          errs.insert(errs.end(), s.errors().begin(), s.errors().end());
          break;
        }
        const double rx = s->counters.count("rx_packets") ? s->counters.at("rx_packets") : 0;
        std::vector<Evidence> storm, drops;
        for (const auto& [name, v] : s->counters) {
          if (name.find("_pause") != std::string::npos &&
              name.find("duration") == std::string::npos && name.rfind("rx_prio", 0) == 0 &&
              rx > 0 && v / rx > kPauseStormRatio)
            storm.push_back({f.file, s->line.at(name),
                             fmt::format("{}: {:g} ({:.2g} per packet)", name, v, v / rx)});
          if ((name.find("discard") != std::string::npos ||
               name.find("out_of_buffer") != std::string::npos) &&
              v > 0)
            drops.push_back({f.file, s->line.at(name), fmt::format("{}: {:g}", name, v)});
        }
        if (!storm.empty())
          out.push_back(
              make("pfc-pause-storm", Severity::kError, storm,
                   "the NIC receives pause frames at a high rate: a congested or stuck "
                   "receiver back-pressures the fabric (PFC storm)",
                   "switch 'show interface counters errors' and PFC counters; per-priority "
                   "pause counters over time",
                   "enable the PFC watchdog and ECN/DCQCN on the RoCE queue; check "
                   "buffer thresholds; find the slow receiver"));
        if (!drops.empty())
          out.push_back(make("nic-discards", Severity::kWarning, drops,
                             "packets dropped at the NIC (lossless class misconfigured, or "
                             "receive buffers exhausted)",
                             "ethtool -S twice, a minute apart: are discards rising?",
                             "trust DSCP and map RoCE to the PFC priority on host and switch; "
                             "raise receive ring sizes"));
        break;
      }
      case OutputKind::kPerftest: {
        auto p = parse_perftest(f.text, f.file);
        if (!p) {
          errs.insert(errs.end(), p.errors().begin(), p.errors().end());
          break;
        }
        for (const auto& w : p->warnings)
          if (w.find("Conflicting CPU frequency") != std::string::npos)
            out.push_back(make("cpu-frequency-scaling", Severity::kInfo, {{f.file, 0, w}},
                               "CPU frequency scaling: perftest's timing may be off",
                               "cpupower frequency-info", "set the performance governor"));
        if (p->latency) break;
        const auto& row = *std::max_element(
            p->rows.begin(), p->rows.end(),
            [](const auto& a, const auto& b) { return a.bw_avg_gbps < b.bw_avg_gbps; });
        double rate = line_rate;
        if (rate <= 0)
          for (double s : kStandardRatesGbps)
            if (s >= row.bw_avg_gbps) {
              rate = s;
              break;
            }
        if (rate > 0 && row.bw_avg_gbps < kRdmaLineRateShare * rate) {
          const bool bad = row.bw_avg_gbps < kRdmaBadShare * rate;
          out.push_back(make(
              "rdma-below-line-rate", bad ? Severity::kError : Severity::kWarning,
              {{f.file, row.line,
                fmt::format("{:.1f} Gb/s of {:g} Gb/s line rate ({:.0f}%)", row.bw_avg_gbps, rate,
                            100 * row.bw_avg_gbps / rate)}},
              "RDMA bandwidth well below line rate: a link trained at a lower speed, a bad cable "
              "or FEC errors, the wrong PCIe slot, or small MTU",
              "ibv_devinfo -v (active_speed/width), ethtool (speed, FEC), lspci -vv (LnkSta), "
              "the test with -F --report_gbits",
              "replace or reseat the cable/transceiver, set the port speed and FEC, move the NIC "
              "to a x16 Gen5 slot"));
        }
        if (p->mtu > 0 && p->mtu < kRdmaMtu)
          out.push_back(make("rdma-mtu-small", Severity::kWarning,
                             {{f.file, 0, fmt::format("Mtu {} in the test header", p->mtu)}},
                             "the RDMA path MTU is small", "ibv_devinfo active_mtu",
                             "MTU 9000 on RoCE interfaces, 4096 path MTU"));
        break;
      }
      case OutputKind::kIperf3: {
        auto r = parse_iperf3(f.text, f.file);
        if (!r) {
          errs.insert(errs.end(), r.errors().begin(), r.errors().end());
          break;
        }
        if (r->retransmits > 0 && r->protocol == "TCP")
          out.push_back(make("tcp-retransmits", Severity::kInfo,
                             {{f.file, 0, fmt::format("{:g} retransmits", r->retransmits)}},
                             "TCP retransmitted segments: some loss on the path",
                             "netstat -s; switch drop counters",
                             "check MTU consistency and drops"));
        break;
      }
      case OutputKind::kNcclTests: {
        auto r = parse_nccl_tests(f.text, f.file);
        if (!r) {
          errs.insert(errs.end(), r.errors().begin(), r.errors().end());
          break;
        }
        std::vector<Evidence> wrong;
        for (const auto& row : r->rows) {
          double v = 0;
          if (row.wrong != "N/A" && row.wrong != "0" &&
              (std::sscanf(row.wrong.c_str(), "%lf", &v) != 1 || v > 1e-3))
            wrong.push_back({f.file, row.line, "#wrong " + row.wrong});
        }
        if (plan && catalog) {
          auto c = check_measurements(*plan, *catalog, {f}, kBusbwTolerance);
          if (c) {
            std::vector<Evidence> low;
            for (const auto& row : c->rows)
              if (!row.ok)
                for (const auto& rr : r->rows)
                  if (rr.bytes == row.bytes)
                    low.push_back({f.file, rr.line,
                                   fmt::format("busbw {:.1f} GB/s, {:.0f}% of the simulated {:.1f}",
                                               row.measured, 100 * row.ratio, row.expected)});
            if (!low.empty())
              out.push_back(make("busbw-below-expectation", Severity::kError, low,
                                 "collective bandwidth far below what the planned fabric gives: a "
                                 "slow link, NCCL not using every NIC, ECMP collisions or "
                                 "congestion",
                                 "NCCL_DEBUG=INFO (NET/IB on every NIC, GDRDMA), ib_write_bw per "
                                 "NIC pair, switch counters; gpufabric simulate --explain for the "
                                 "expected bottleneck",
                                 "fix the slow NIC or link; spread flows (NCCL_IB_QPS_PER_"
                                 "CONNECTION, adaptive routing)"));
          }
        }
        if (!wrong.empty())
          out.push_back(make("nccl-tests-wrong-results", Severity::kError, wrong,
                             "nccl-tests found wrong results: data corruption (faulty GPU, NIC, "
                             "cable or driver)",
                             "rerun with -c 1 on subsets of nodes to isolate the faulty one",
                             "replace the failing component"));
        break;
      }
      case OutputKind::kUnknown:
        errs.push_back(Diagnostic::in_file(
            f.file, "", "cannot tell which tool wrote this file",
            "diagnose reads nccl-tests, perftest, iperf3 --json, NCCL_DEBUG=INFO logs, "
            "nvidia-smi topo -m, ibv_devinfo, ethtool -S and ip -d link"));
        break;
    }
  }
  if (plan && plan->technology == "roce" && !links.empty() && !rail_netdevs.empty())
    rail_findings(rail_netdevs, links, out);
  if (mtus.size() > 1) {
    std::vector<Evidence> ev;
    for (const auto& [mtu, where] : mtus)
      for (const auto& [w, line] : where)
        ev.push_back({w.substr(0, w.find(':')), line,
                      fmt::format("{} mtu {}", w.substr(w.find(": ") + 2), mtu)});
    out.push_back(make("mtu-mismatch", Severity::kWarning, ev,
                       "interfaces that are up use different MTUs: jumbo frames get dropped where "
                       "the path is smaller (single node fine, multi-node broken)",
                       "ip link on every host; ping -M do -s 8972 between hosts",
                       "one MTU everywhere: 9000 on hosts (4096 RDMA path MTU), 9214 on switches"));
  } else if (mtus.size() == 1 && mtus.begin()->first < kJumboMtu) {
    out.push_back(make("mtu-not-jumbo", Severity::kInfo, {}, "no interface uses jumbo frames",
                       "ip link", "MTU 9000 on the RoCE interfaces"));
  }
  if (!errs.empty()) return errs;
  return out;
}

}  // namespace gf
