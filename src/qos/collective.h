// nccl-tests' sizes at packet level: for each size, the collective's NIC-to-NIC traffic run on
// the RoCE data path by the engine (engine.h) with the QoS the configurations set, its time
// made up as nccl-tests would measure it (NCCL's fixed latency of the size plus the network's
// time), beside the flow-level model's row for the same size. Pure.
#pragma once

#include <string>
#include <vector>

#include "qos/engine.h"
#include "sim/nccl_cost.h"

namespace gf {

/// Bytes on the wire per byte of data, by NCCL protocol: LL sends each 4 data bytes with a
/// 4-byte flag (its 8-byte lines, half flags: nccl_constants.h kStepDataBytes), LL128 each 120
/// data bytes in a 128-byte line (15/16 data), Simple only data.
double protocol_wire_factor(Protocol p);

/// One size of the sweep as the flow-level model ran it: what the packet level starts from.
struct PacketSizeInput {
  double bytes = 0;       ///< the size as nccl-tests prints it
  double latency_us = 0;  ///< NCCL's fixed part of the flow-level time (SizeResult::latency_us)
  Protocol protocol = Protocol::kSimple;
  double flow_time_us = 0, flow_busbw_gbs = 0;  ///< the flow-level row, for the comparison
};

/// One size at packet level.
struct PacketSizeResult {
  double bytes = 0;
  double network_us = 0;  ///< the engine's time for the size's RoCE traffic
  double time_us = 0;     ///< latency_us + network_us
  double algbw_gbs = 0, busbw_gbs = 0;
  double flow_time_us = 0, flow_busbw_gbs = 0;
  long long events = 0, packets = 0, retransmitted = 0;
  long long ecn_marks = 0, cnps = 0, pause_frames = 0, drops = 0;
  int unfinished = 0;
  /// Verdicts of the run (qos's); empty when every one passed.
  std::vector<std::string> failed;
};

/// The sweep's results and what produced them.
struct PacketSweep {
  std::string traffic;   ///< the largest size's traffic, e.g. "ring all_reduce of 1 GiB over ..."
  std::string settings;  ///< qos_settings_line of the run
  /// What the packet level runs differently from the flow level (adaptive routing), or empty.
  std::string note;
  std::vector<PacketSizeResult> rows;
};

/// Runs `sizes` of `op` on the first `nodes` nodes (0: all) at packet level with `settings`.
/// Every size's traffic is built (and refused: --op, --engine, or -e for a payload over the
/// engine's bound) before the first runs.
Result<PacketSweep> packet_sweep(const Plan& plan, const Catalog& catalog, const Fabric& fab, Op op,
                                 int nodes, const std::vector<PacketSizeInput>& sizes,
                                 const QosSettings& settings);

}  // namespace gf
