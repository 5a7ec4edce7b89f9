#include "qos/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/output.h"

namespace gf {
namespace {

std::string kib(double b) {
  if (b >= 1024.0 * 1024) return fmt::format("{:.2f} MiB", b / 1024 / 1024);
  return fmt::format("{:.1f} KiB", b / 1024);
}

std::string dur(double s) {
  if (s >= 1) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} us", s * 1e6);
}

}  // namespace

std::string qos_settings_line(const QosSettings& s) {
  std::string ecn = s.ecn.enabled
                        ? fmt::format("ECN kmin {} kmax {} pmax {:g} %", kib(s.ecn.kmin_bytes),
                                      kib(s.ecn.kmax_bytes), s.ecn.pmax * 100)
                        : "ECN off";
  std::string pfc = s.pfc ? fmt::format("PFC on priority {}, headroom {}", kRocePriority,
                                        s.headroom_bytes > 0 ? kib(s.headroom_bytes)
                                                             : "by SONiC's formula per cable")
                          : "PFC off (lossy)";
  std::string cc;
  switch (s.cc) {
    case CongestionControl::kDcqcn:
      cc = "DCQCN on (" + s.dcqcn_params.source + ")";
      break;
    case CongestionControl::kHpcc:
      cc = fmt::format("HPCC on (eta {:g} %, maxStage {}, INT {} B a packet, an ACK a packet; {})",
                       s.hpcc_params.eta * 100, s.hpcc_params.max_stage, s.hpcc_params.int_bytes,
                       s.hpcc_params.source);
      break;
    case CongestionControl::kNone:
      cc = "DCQCN off";  // no congestion control; the line as before --cc
      break;
  }
  return ecn + " | " + pfc + " | " + cc;
}

std::string qos_text(const QosRunInfo& info, const QosResult& r) {
  std::string o =
      fmt::format("qos: {}: {}\nsettings: {}\n", info.spec_name, info.traffic, info.settings);
  o += fmt::format("simulated {}: {} events, {} data packets ({} sent again)\n", dur(r.time_s),
                   r.events, r.packets, r.retransmitted_packets);
  if (r.cc == CongestionControl::kHpcc)
    o += fmt::format("HPCC: base RTT T {}, window at line rate {}, {} ACKs with INT\n",
                     dur(r.hpcc_base_rtt_s), kib(r.hpcc_init_window_bytes), r.acks);
  o += "\n";
  std::vector<const QosPortStats*> ports;
  for (const QosPortStats& p : r.ports) ports.push_back(&p);
  std::stable_sort(ports.begin(), ports.end(), [](auto* a, auto* b) {
    return std::tie(a->peak_queue_bytes, a->pause_sent, a->drops) >
           std::tie(b->peak_queue_bytes, b->pause_sent, b->drops);
  });
  o += fmt::format("ports, priority {} (CNPs strict priority, queue {}); {} of {} by peak queue:\n",
                   kRocePriority, kCnpQueue, std::min<size_t>(kQosTextPorts, ports.size()),
                   ports.size());
  // The port column as wide as its widest name shown (at least 30), so the figures line up.
  const size_t shown = std::min<size_t>(kQosTextPorts, ports.size());
  size_t width = 30;
  for (size_t i = 0; i < shown; ++i)
    width = std::max(width, ports[i]->device.size() + 4 + ports[i]->peer.size());
  o += fmt::format("  {:<{}} {:>11} {:>11} {:>8} {:>8} {:>9} {:>9} {:>7} {:>6}\n", "port", width,
                   "peak queue", "mean queue", "XOFF tx", "XOFF rx", "paused", "ECN marks", "CNPs",
                   "drops");
  for (size_t i = 0; i < shown; ++i) {
    const QosPortStats& p = *ports[i];
    o += fmt::format("  {:<{}} {:>11} {:>11} {:>8} {:>8} {:>9} {:>9} {:>7} {:>6}{}\n",
                     p.device + " -> " + p.peer, width, kib(p.peak_queue_bytes),
                     kib(p.mean_queue_bytes), p.pause_sent, p.pause_received, dur(p.paused_s),
                     p.ecn_marks, p.cnps, p.drops, p.congested ? "  congested" : "");
  }
  o += fmt::format(
      "\nflows: {}, completion p50 {}, p99 {}; {} unfinished; {} victim(s) (slowed > {:g}x the "
      "flow model, off the congested ports)\n",
      r.flows.size(), dur(r.fct_p50_s), dur(r.fct_p99_s), r.unfinished, r.victims, kVictimSlowdown);
  const double share = r.fluid_throughput_Bps > 0 ? r.throughput_Bps / r.fluid_throughput_Bps : 0;
  o += fmt::format(
      "throughput: {:.1f} GB/s of payload; the flow-level model {:.1f} GB/s ({:.0f} %)\n",
      r.throughput_Bps / 1e9, r.fluid_throughput_Bps / 1e9, share * 100);
  o += fmt::format("totals: {} ECN marks, {} CNPs, {} XOFF frames, {} drops ({} lossless)\n\n",
                   r.ecn_marks, r.cnps, r.pause_frames, r.drops, r.drops_lossless);
  o += "verdicts:\n";
  for (const QosVerdict& v : r.verdicts) {
    o += fmt::format("  {}  {}: {}\n", v.pass ? "PASS" : "FAIL", v.name, v.detail);
    if (!v.pass && !v.setting.empty()) o += fmt::format("        change: {}\n", v.setting);
  }
  return o;
}

nlohmann::json qos_json(const QosRunInfo& info, const QosResult& r) {
  using nlohmann::json;
  json j;
  j["spec"] = info.spec_name;
  j["traffic"] = info.traffic;
  j["settings"] = info.settings;
  j["congestion_control"] = name_of(kCongestionControlNames, r.cc);
  if (r.cc == CongestionControl::kHpcc)
    j["hpcc"] = {{"base_rtt_s", r.hpcc_base_rtt_s},
                 {"init_window_bytes", r.hpcc_init_window_bytes},
                 {"acks", r.acks}};
  j["time_s"] = r.time_s;
  j["events"] = r.events;
  j["packets"] = r.packets;
  j["retransmitted_packets"] = r.retransmitted_packets;
  j["throughput_Bps"] = r.throughput_Bps;
  j["flow_model_throughput_Bps"] = r.fluid_throughput_Bps;
  j["fct_p50_s"] = r.fct_p50_s;
  j["fct_p99_s"] = r.fct_p99_s;
  j["flow_count"] = r.flows.size();
  json flows = json::array();
  for (const QosFlowResult& f : r.flows)
    flows.push_back({{"fct_s", f.fct_s},
                     {"flow_model_fct_s", f.fluid_fct_s},
                     {"crosses_congested", f.crosses_congested},
                     {"victim", f.victim}});
  j["flows"] = flows;
  j["unfinished"] = r.unfinished;
  j["victims"] = r.victims;
  j["totals"] = {{"ecn_marks", r.ecn_marks},           {"cnps", r.cnps},
                 {"pause_frames", r.pause_frames},     {"drops", r.drops},
                 {"drops_lossless", r.drops_lossless}, {"max_pause_depth", r.max_pause_depth}};
  j["headroom"] = {{"port", r.headroom_port},
                   {"bytes", r.headroom_bytes},
                   {"round_trip_bytes", r.round_trip_bytes},
                   {"cable_m", r.headroom_cable_m}};
  json ports = json::array();
  for (const QosPortStats& p : r.ports)
    ports.push_back({{"device", p.device},
                     {"peer", p.peer},
                     {"priority", p.priority},
                     {"peak_queue_bytes", p.peak_queue_bytes},
                     {"mean_queue_bytes", p.mean_queue_bytes},
                     {"cnp_peak_queue_bytes", p.cnp_peak_queue_bytes},
                     {"pause_sent", p.pause_sent},
                     {"pause_received", p.pause_received},
                     {"paused_s", p.paused_s},
                     {"ecn_marks", p.ecn_marks},
                     {"cnps", p.cnps},
                     {"drops", p.drops},
                     {"tx_bytes", p.tx_bytes},
                     {"pause_depth", p.pause_depth},
                     {"congested", p.congested}});
  j["ports"] = ports;
  json verdicts = json::array();
  for (const QosVerdict& v : r.verdicts)
    verdicts.push_back(
        {{"name", v.name}, {"pass", v.pass}, {"detail", v.detail}, {"setting", v.setting}});
  j["verdicts"] = verdicts;
  j["pass"] = r.all_pass();
  return j;
}

std::string qos_ports_csv(const QosResult& r) {
  std::string o =
      "device,peer,priority,peak_queue_bytes,mean_queue_bytes,cnp_peak_queue_bytes,pause_sent,"
      "pause_received,paused_s,ecn_marks,cnps,drops,tx_bytes,congested\n";
  for (const QosPortStats& p : r.ports)
    o += fmt::format("{},{},{},{:.0f},{:.0f},{:.0f},{},{},{:.9f},{},{},{},{:.0f},{}\n",
                     csv_field(p.device), csv_field(p.peer), p.priority, p.peak_queue_bytes,
                     p.mean_queue_bytes, p.cnp_peak_queue_bytes, p.pause_sent, p.pause_received,
                     p.paused_s, p.ecn_marks, p.cnps, p.drops, p.tx_bytes, p.congested ? 1 : 0);
  return o;
}

std::string packet_sweep_text(const PacketSweep& s) {
  std::string o = fmt::format(
      "#\n# gpufabric packet level (--engine packet): {}, on the RoCE data path with the QoS the "
      "configurations set: {}\n# time = NCCL's fixed latency of the size (the flow model's) + "
      "the packet-level time of its NIC-to-NIC traffic (NVLink inside a node is not simulated); "
      "LL and LL128 sizes carry their flags on the wire\n",
      s.traffic, s.settings);
  if (!s.note.empty()) o += "# note: " + s.note + "\n";
  o += fmt::format("# {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>6}  {:>9}  {:>6}  {:>5}  {:>9}\n",
                   "size", "flow time", "flow busbw", "pkt time", "pkt busbw", "pkt/fl",
                   "ECN marks", "XOFF", "drops", "events");
  o += fmt::format("# {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>6}  {:>9}  {:>6}  {:>5}  {:>9}\n",
                   "(B)", "(us)", "(GB/s)", "(us)", "(GB/s)", "", "", "", "", "");
  double sum = 0;
  for (const PacketSizeResult& r : s.rows) {
    const double ratio = r.flow_busbw_gbs > 0 ? r.busbw_gbs / r.flow_busbw_gbs : 0;
    o += fmt::format(
        "# {:>10}  {:>10.2f}  {:>10.2f}  {:>10.2f}  {:>10.2f}  {:>6.3f}  {:>9}  {:>6}  {:>5}  "
        "{:>9}{}\n",
        static_cast<long long>(r.bytes), r.flow_time_us, r.flow_busbw_gbs, r.time_us, r.busbw_gbs,
        ratio, r.ecn_marks, r.pause_frames, r.drops, r.events,
        r.unfinished ? fmt::format("  {} unfinished", r.unfinished) : "");
    for (const std::string& f : r.failed)
      o += fmt::format("# {:>10}  FAIL {} (gpufabric qos says what to change)\n", "", f);
    sum += r.busbw_gbs;
  }
  o += fmt::format("# Avg bus bandwidth at packet level : {:g}\n",
                   s.rows.empty() ? 0.0 : sum / s.rows.size());
  return o;
}

nlohmann::json packet_sweep_json(const PacketSweep& s) {
  using nlohmann::json;
  json rows = json::array();
  for (const PacketSizeResult& r : s.rows)
    rows.push_back({{"bytes", r.bytes},
                    {"time_us", r.time_us},
                    {"network_us", r.network_us},
                    {"algbw_gbs", r.algbw_gbs},
                    {"busbw_gbs", r.busbw_gbs},
                    {"flow_time_us", r.flow_time_us},
                    {"flow_busbw_gbs", r.flow_busbw_gbs},
                    {"events", r.events},
                    {"packets", r.packets},
                    {"retransmitted_packets", r.retransmitted},
                    {"ecn_marks", r.ecn_marks},
                    {"cnps", r.cnps},
                    {"pause_frames", r.pause_frames},
                    {"drops", r.drops},
                    {"unfinished", r.unfinished},
                    {"failed_verdicts", r.failed}});
  return {{"traffic", s.traffic}, {"settings", s.settings}, {"note", s.note}, {"results", rows}};
}

}  // namespace gf
