#include "qos/collective.h"

#include <fmt/format.h>

#include <algorithm>

#include "qos/report.h"

namespace gf {

double protocol_wire_factor(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return 2.0;
    case Protocol::kLL128:
      return 16.0 / 15.0;
    case Protocol::kSimple:
      return 1.0;
  }
  return 1.0;
}

Result<PacketSweep> packet_sweep(const Plan& plan, const Catalog& catalog, const Fabric& fab, Op op,
                                 int nodes, const std::vector<PacketSizeInput>& sizes,
                                 const QosSettings& settings) {
  // All traffic first: a refused size refuses the sweep before anything runs.
  std::vector<QosTraffic> traffic;
  traffic.reserve(sizes.size());
  for (const PacketSizeInput& in : sizes) {
    auto t = qos_collective_traffic(plan, fab, op, nodes, std::max(1.0, in.bytes), "-e",
                                    protocol_wire_factor(in.protocol));
    if (!t) return t.errors();
    traffic.push_back(std::move(*t));
  }
  PacketSweep sweep;
  sweep.settings = qos_settings_line(settings);
  if (!traffic.empty()) sweep.traffic = traffic.back().what;
  if (plan.load_balancing == LoadBalancing::kAdaptive ||
      plan.load_balancing == LoadBalancing::kSpray)
    sweep.note = fmt::format(
        "load balancing {}: the packet level routes each QP on its ECMP path (adaptive routing "
        "and spraying are not modelled per packet), the flow level spreads it",
        load_balancing_name(plan.load_balancing));
  for (size_t i = 0; i < sizes.size(); ++i) {
    const PacketSizeInput& in = sizes[i];
    const QosResult r = run_qos(plan, catalog, fab, traffic[i].flows, settings);
    PacketSizeResult row;
    row.bytes = in.bytes;
    row.network_us = r.time_s * 1e6;
    row.time_us = in.latency_us + row.network_us;
    row.flow_time_us = in.flow_time_us;
    row.flow_busbw_gbs = in.flow_busbw_gbs;
    if (row.time_us > 0) {
      row.algbw_gbs = in.bytes / (row.time_us * 1e-6) / 1e9;
      row.busbw_gbs = row.algbw_gbs * bus_factor(op, 1LL * traffic[i].nodes * fab.gpus_per_node());
    }
    row.events = r.events;
    row.packets = r.packets;
    row.retransmitted = r.retransmitted_packets;
    row.ecn_marks = r.ecn_marks;
    row.cnps = r.cnps;
    row.pause_frames = r.pause_frames;
    row.drops = r.drops;
    row.unfinished = r.unfinished;
    for (const QosVerdict& v : r.verdicts)
      if (!v.pass) row.failed.push_back(v.name);
    sweep.rows.push_back(std::move(row));
  }
  return sweep;
}

}  // namespace gf
