// The packet-level RoCE engine: a discrete-event simulation of a fabric's RoCE data path with the
// QoS settings the configurations write (plan/roce_qos.h): links at the planned rate with the
// propagation delay of their cable, switches with a shared buffer, per-port queues for the
// lossless RoCE priority and the strict-priority CNP queue, WRED ECN marking, PFC with headroom
// (SONiC's formula), ECMP by the fabric's own hash; NICs with RoCE v2 senders under DCQCN
// (CNPs from the receivers) or HPCC (INT stamped by every switch egress, echoed by per-packet
// ACKs, a window per QP), go-back-N on loss, several QPs per connection.
// Pure: a network, flows and settings in, counters out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/diag.h"
#include "common/enum_names.h"
#include "plan/plan.h"
#include "plan/roce_qos.h"
#include "sim/nccl_cost.h"
#include "topo/fabric.h"

namespace gf {

/// The traffic a qos run puts on the fabric.
enum class QosPattern { kIncast, kAlltoall, kAllReduce, kPermutation };
inline constexpr EnumName<QosPattern> kQosPatternNames[] = {
    {QosPattern::kIncast, "incast"},
    {QosPattern::kAlltoall, "alltoall"},
    {QosPattern::kAllReduce, "all_reduce"},
    {QosPattern::kPermutation, "permutation"}};

/// The congestion control the NICs run: DCQCN (ECN marks, CNPs, rate cuts), HPCC (INT from every
/// switch, a window from the most loaded hop), or none (line rate, PFC alone).
enum class CongestionControl { kDcqcn, kHpcc, kNone };
inline constexpr EnumName<CongestionControl> kCongestionControlNames[] = {
    {CongestionControl::kDcqcn, "dcqcn"},
    {CongestionControl::kHpcc, "hpcc"},
    {CongestionControl::kNone, "none"}};

/// The most RoCE endpoints (NIC ports) one run simulates: about a 1,024-GPU fabric or one
/// scalable unit of a larger one, where a run stays within seconds to a minute (bench).
constexpr int kMaxQosEndpoints = 1024;

/// The most payload one run moves, bytes: 64 GiB is 16.8 M packets, about 100 M events, a few
/// seconds at the engine's rate (bench); more is refused at --bytes rather than run for minutes.
constexpr double kMaxQosPayloadBytes = 64.0 * 1024 * 1024 * 1024;

/// One connection: `bytes` from a NIC to a NIC on one plane, split evenly over `qps` QPs, each
/// with its own UDP source port (and so its own ECMP path).
struct QosFlow {
  int src_nic = 0, dst_nic = 0, plane = 0;
  double bytes = 0;
  int qps = 1;
  uint64_t qp_key = 0;  ///< the first QP's numbers (24 bits each end); the others follow
};

/// The traffic of a pattern on the first `nodes` nodes of a fabric.
struct QosTraffic {
  std::vector<QosFlow> flows;
  int nodes = 0;      ///< nodes whose NICs take part
  int endpoints = 0;  ///< NIC ports that send or receive
  std::string what;   ///< e.g. "8-to-1 incast of 16 MiB on rail 0"
};
/// The pattern and size `qos` runs when none is given, and the one the report and the dashboard
/// run for a spec: nccl-tests' alltoall of 64 MiB per rank, the heaviest all-to-all traffic a
/// training step's expert or sequence parallelism puts on every NIC at once.
constexpr QosPattern kQosDefaultPattern = QosPattern::kAlltoall;
constexpr double kQosDefaultBytes = 64.0 * 1024 * 1024;

/// RoCE endpoints (NIC ports) of the first `nodes` nodes.
long long qos_endpoints(const Fabric& fab, int nodes);

/// The NIC-to-NIC connections of an nccl-tests collective of `bytes` (its size, as nccl-tests
/// prints it) on the first `nodes` nodes (0: all), as NCCL lays it across nodes: all_reduce,
/// all_gather and reduce_scatter on its rings (rail by rail, two channels per NIC), alltoall
/// through the destination's rail (PXN). Other ops, more than kMaxQosEndpoints, one node or a
/// payload over kMaxQosPayloadBytes are refused: the diagnostic names --op, --engine or
/// `bytes_flag`. `wire_factor`: the wire bytes a data byte takes (LL and LL128 carry their flags
/// in the data, protocol_wire_factor): the flows carry that much more, and the description
/// names the size and the wire's.
Result<QosTraffic> qos_collective_traffic(const Plan& plan, const Fabric& fab, Op op, int nodes,
                                          double bytes, const std::string& bytes_flag,
                                          double wire_factor = 1.0);

/// `incast_senders`: N of incast:N. `bytes`: per sender (incast, permutation) or the
/// collective's buffer per rank (alltoall, all_reduce, as nccl-tests' -b). Errors name the flag.
/// Fabrics larger than kMaxQosEndpoints run on their first scalable unit, or are refused.
Result<QosTraffic> qos_traffic(const Plan& plan, const Fabric& fab, QosPattern pattern,
                               int incast_senders, double bytes);

/// What a run simulates with.
struct QosSettings {
  EcnSettings ecn;
  bool pfc = true;
  CongestionControl cc = CongestionControl::kDcqcn;
  DcqcnParams dcqcn_params = dcqcn_nvidia_defaults();
  HpccParams hpcc_params = hpcc_paper();
  /// > 0: every lossless priority group's headroom, bytes, instead of SONiC's formula.
  double headroom_bytes = 0;
  /// > 0: every cable this long, metres, instead of the plan's length class (what-if).
  double cable_m = 0;
  /// A pause chain through more switches than this counts as a storm: 1, a congested switch may
  /// pause the switches next to it, but they may not pause theirs (congestion spreading).
  int pause_storm_hops = 1;
  /// Simulated time at most, seconds: flows unfinished then are reported as such.
  double max_time_s = 20;
  uint64_t seed = 1;
  /// Record every port's RoCE queue and paused time over the run (QosResult::trace), for
  /// the report's charts; off by default (it adds events).
  bool trace = false;
};

/// One switch or NIC port (the port of `device` that sends on link `link`) and its RoCE
/// priority: the egress queue, the PFC frames on the cable, ECN marks, CNPs, drops.
struct QosPortStats {
  int link = 0;
  std::string device, peer;
  int priority = kRocePriority;
  double peak_queue_bytes = 0, mean_queue_bytes = 0;
  double cnp_peak_queue_bytes = 0;  ///< the CNP queue's (traffic class 6, strict priority)
  long long pause_sent = 0;         ///< XOFF frames this port sent (its ingress was full)
  long long pause_received = 0;     ///< XOFF frames the peer sent it
  double paused_s = 0;              ///< time its egress on the priority was paused
  long long ecn_marks = 0, cnps = 0, drops = 0;
  /// Marked data packets this link delivered to the NIC at its far end: what the NIC counts as
  /// np_ecn_marked_roce_packets (0 on links into switches).
  long long ecn_marked_rx = 0;
  double tx_bytes = 0;
  bool from_nic = false, to_nic = false;  ///< a NIC's uplink, a link down to a NIC
  int pause_depth = 0;     ///< hops from the congested port that the pauses it sent reach
  bool congested = false;  ///< its own queue built up (not only because it was paused)
};

/// A flow's outcome.
struct QosFlowResult {
  double fct_s = 0;        ///< until its last byte arrived (0: did not finish)
  double fluid_fct_s = 0;  ///< the flow-level model's on the same paths
  bool crosses_congested = false;
  bool victim = false;  ///< slowed > kVictimSlowdown against the flow model, off the congestion
};
/// A flow is a victim when the packet level takes this much longer than the flow-level model
/// (max-min sharing of the same paths) although none of its ports is congested.
constexpr double kVictimSlowdown = 1.25;
/// The "throughput holds" verdict: the run's payload throughput at least this share of the
/// flow-level model's on the same paths. Congestion control that works keeps a congested link
/// busy (over 256 MiB a sender the DCQCN paper's parameters hold 61-96 % of it at 400G, the
/// ConnectX defaults 88-95 %, HPCC its eta of 95 %); a short incast also loses the start's
/// overshoot and a recovery period (4-to-1 of 4 MiB each under the ConnectX defaults: 49 %).
/// Below a third the link idles while the senders recover, or flows starve.
constexpr double kQosThroughputFloor = 1.0 / 3;

/// A verdict a network engineer acts on, with the setting to change when it fails.
struct QosVerdict {
  std::string name, detail, setting;
  bool pass = true;
};

/// The queues over a run: every port that carried traffic sampled at a period that doubles
/// whenever kQosTraceSamples are taken (every other sample kept), so that a run of any length
/// keeps between half and all of kQosTraceSamples samples of each port.
constexpr int kQosTraceSamples = 256;
/// The first sampling period, seconds: a few packets at 400G.
constexpr double kQosTraceFirstPeriodS = 1e-6;
struct QosTrace {
  std::vector<int> links;   ///< the sampled ports, by link id (as QosPortStats::link)
  std::vector<double> t_s;  ///< sample times
  /// The RoCE queue's peak (bytes) over the interval ending at each sample, t_s.size() x
  /// links.size(), time-major.
  std::vector<float> queue;
  std::vector<float> paused_us;  ///< cumulative paused time of each port's egress, same layout
};

struct QosResult {
  CongestionControl cc = CongestionControl::kDcqcn;  ///< what the NICs ran
  std::vector<QosPortStats> ports;                   ///< ports that carried traffic, by link id
  std::vector<QosFlowResult> flows;
  double time_s = 0;        ///< until the last flow finished
  double fluid_time_s = 0;  ///< the flow-level model's
  double payload_bytes = 0;
  double throughput_Bps = 0, fluid_throughput_Bps = 0;  ///< payload / time
  double fct_p50_s = 0, fct_p99_s = 0;
  long long events = 0, packets = 0;
  long long drops_lossless = 0, drops = 0, ecn_marks = 0, cnps = 0, pause_frames = 0;
  long long retransmitted_packets = 0;
  long long acks = 0;  ///< ACKs and NAKs the receivers sent (HPCC's carry INT)
  /// HPCC: the base RTT T of the window (the longest of the run's paths, as the authors' ns-3
  /// runs take the largest base RTT of the fabric) and the window at line rate, W_init = B x T.
  double hpcc_base_rtt_s = 0, hpcc_init_window_bytes = 0;
  int unfinished = 0, victims = 0;
  int max_pause_depth = 0;
  /// The lossless ingress group with the least headroom over its cable's round trip.
  double headroom_bytes = 0, round_trip_bytes = 0, headroom_cable_m = 0;
  std::string headroom_port;
  std::vector<QosVerdict> verdicts;
  /// With QosSettings::trace: the ports' queues and paused time sampled over the run.
  QosTrace trace;
  bool all_pass() const;
};

/// Runs the flows to completion on the fabric.
QosResult run_qos(const Plan& plan, const Catalog& catalog, const Fabric& fab,
                  const std::vector<QosFlow>& flows, const QosSettings& settings);

/// Whether the routed paths of `flows` hold a cycle of PFC buffer dependencies (an ingress
/// queue waiting on an egress that waits on ... the first): the links of one cycle, or empty.
std::vector<int> pfc_dependency_cycle(const Fabric& fab, const std::vector<QosFlow>& flows);
/// The same over paths given as link ids (links 2k and 2k + 1 are the two directions of a
/// cable, as in the fabric), `links` of them in all.
std::vector<int> pfc_dependency_cycle(size_t links, const std::vector<std::vector<int32_t>>& paths);

/// Jain's fairness index of `x`: (sum x)^2 / (n sum x^2), 1 when all are equal.
double jain_index(const std::vector<double>& x);

}  // namespace gf
