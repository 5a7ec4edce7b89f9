#include "qos/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "sim/flow_model.h"
#include "sim/link_load.h"
#include "units/units.h"

namespace gf {
namespace {

// Time is integer picoseconds: a 64-byte frame at 800 Gb/s is 640 ps, and ties are exact.
using Ps = int64_t;
constexpr double kPsPerS = 1e12;
Ps to_ps(double s) { return static_cast<Ps>(s * kPsPerS + 0.5); }  // s >= 0
double to_s(Ps t) { return static_cast<double>(t) / kPsPerS; }

// A responder acknowledges every this many packets and the last of a message: an estimate
// (RoCE NICs coalesce ACKs; ConnectX publishes no count). NAKs and CNPs are not coalesced.
constexpr int kAckEveryPackets = 8;
// Under HPCC the receiver acknowledges every packet, so that every packet's INT reaches the
// sender (the authors' ns-3 runs: simulation/run.py, L2_ACK_INTERVAL 1).
constexpr int kHpccAckEveryPackets = 1;
// The local ACK timeout after which a sender goes back to its oldest unacknowledged packet:
// 4.096 us x 2^NCCL_IB_TIMEOUT, NCCL's default 20 (NCCL environment documentation,
// NCCL_IB_TIMEOUT; IBTA Vol. 1 9.7.6.1.3): 4.3 s, why a tail drop costs seconds.
constexpr double kLocalAckTimeoutS = 4.096e-6 * (1 << 20);
// A port whose queue grew past this share of the ECN Kmin (or 100 KiB without ECN) while it
// was paused less than kCongestedPausedShare of the time it sent is where congestion is: its
// own load, not a pause, built the queue.
constexpr double kCongestedQueueBytesNoEcn = 100 * 1024.0;
constexpr double kCongestedPausedShare = 0.1;
// Where the catalog has no lossy egress profile: a queue may take the free shared buffer
// (dynamic_th 0), an estimate.
constexpr int kDefaultLossyDynamicTh = 0;

enum class Kind : uint8_t { kData, kAck, kNak, kCnp };
// Queues of a port: 0 the strict-priority CNP queue (traffic class 6), 1 the RoCE priority.
constexpr int kCtrlQ = 0, kDataQ = 1;

// A packet in flight, 32 bytes, in a pool reused through a free list: no allocation per packet.
// It carries its path's place so that forwarding reads no QP state.
struct Packet {
  int32_t qp = 0;
  uint32_t psn = 0;
  int32_t next = -1;     // the next packet of its queue, or of the free list
  int32_t in_link = -1;  // the link it entered its current switch by (-1: none, NIC or CNP)
  int32_t link = -1;     // the link it is on
  int32_t path_off = 0;  // its QP's path in path_
  uint16_t hop = 0;      // index of `link` along its direction's path
  uint16_t bytes = 0;    // on the wire, framing included
  Kind kind = Kind::kData;
  uint8_t ce = 0;        // ECN congestion experienced
  uint8_t ctrl_q = 0;    // in the CNP queue
  uint8_t path_len = 0;  // links on the path
};

// An event: when, and what (kind in the top byte, an id below).
struct Event {
  Ps t;
  uint64_t what;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : what > o.what; }
};
enum EventKind : uint64_t {
  kTxDone = 1,     // a port finished sending a frame: id = link
  kArrive = 2,     // a frame reached the end of its link: id = packet
  kNicWake = 3,    // a NIC port's pacing allows the next packet: id = nic port
  kPfc = 4,        // a PAUSE (id bit 0 = 1) or resume reached the egress of link id >> 1
  kRateTimer = 5,  // DCQCN's rate-increase timer of a QP
  kRto = 6,        // a QP's local ACK timeout
  kCut = 7,        // a rate cut deferred to the next rate_reduce_monitor_period
  kSample = 8,     // QosSettings::trace: sample every port's queue
};
constexpr uint64_t ev(EventKind k, uint64_t id) { return k << 56 | id; }

// The event calendar: a timing wheel of 4,096 buckets of 4.1 ns (a 16.8 us horizon, most of a
// packet's next events: its serialisation and the next hop) over a binary heap for the later
// ones (DCQCN timers, timeouts). A bucket is sorted when the clock reaches it; every vector
// keeps its capacity, so events cost no allocation once the run is under way.
class EventQueue {
 public:
  EventQueue() : wheel_(kBuckets) {}
  void push(Ps t, uint64_t what) {
    const Event e{t, what};
    const uint64_t bi = std::max(bucket(t), cur_);
    if (bi >= cur_ + kBuckets) {
      far_.push_back(e);
      std::push_heap(far_.begin(), far_.end(), std::greater<>());
      return;
    }
    std::vector<Event>& v = wheel_[bi & kMask];
    ++count_;
    if (bi == cur_ && sorted_) {
      // Kept latest first, so that the earliest is at the back.
      v.insert(std::upper_bound(v.begin(), v.end(), e, std::greater<>()), e);
    } else {
      v.push_back(e);
    }
  }
  bool empty() const { return count_ == 0 && far_.empty(); }
  /// The event pop() returns next when it is already at hand (the current bucket), else null.
  const Event* peek() const {
    const std::vector<Event>& v = wheel_[cur_ & kMask];
    return sorted_ && !v.empty() ? &v.back() : nullptr;
  }
  /// The earliest event; the queue must not be empty.
  Event pop() {
    for (;;) {
      std::vector<Event>& v = wheel_[cur_ & kMask];
      if (!v.empty()) {
        if (!sorted_) {
          std::sort(v.begin(), v.end(), std::greater<>());
          sorted_ = true;
        }
        const Event e = v.back();
        v.pop_back();
        --count_;
        return e;
      }
      sorted_ = false;
      if (count_ == 0)
        cur_ = bucket(far_.front().t);  // nothing near: jump to the next far event
      else
        ++cur_;
      while (!far_.empty() && bucket(far_.front().t) < cur_ + kBuckets) {
        std::pop_heap(far_.begin(), far_.end(), std::greater<>());
        const Event e = far_.back();
        far_.pop_back();
        wheel_[std::max(bucket(e.t), cur_) & kMask].push_back(e);
        ++count_;
      }
    }
  }

 private:
  static constexpr int kShift = 12;  // 4,096 ps a bucket
  static constexpr uint64_t kBuckets = 4096, kMask = kBuckets - 1;
  static uint64_t bucket(Ps t) { return static_cast<uint64_t>(t) >> kShift; }
  std::vector<std::vector<Event>> wheel_;
  std::vector<Event> far_;
  uint64_t cur_ = 0;
  size_t count_ = 0;
  bool sorted_ = false;
};

// One hop's INT as a switch stamps it on a data packet leaving its egress (HPCC's Algorithm 1;
// ns-3 SwitchNode::SwitchNotifyDequeue, IntHeader::PushHop): the time in ns, the bytes the
// egress had sent, and its queue after this packet left, in 32-bit fields that wrap (as the
// INT header's do; differences are taken modulo 2^32). The hop's line rate is the path's link.
struct IntHop {
  uint32_t ts_ns = 0;
  uint32_t tx_bytes = 0;
  uint32_t qlen_bytes = 0;
};
// The hops a packet's INT holds (IntHeader::maxHop 5): 60 bytes, one cache line a packet.
constexpr int kIntHopsMax = 5;
struct alignas(64) IntStack {
  IntHop hop[kIntHopsMax];
};
// A sender whose last INT is older than this starts its measurement again: the bytes counter
// wraps every 2^32 bytes (86 ms at 400G, 43 ms at 800G).
constexpr double kIntStaleS = 10e-3;

// An HPCC sender's state (ns-3 RdmaQueuePair::hp): the last INT of each hop, the smoothed
// utilisation U (1 at the start, as hp.u), the reference window W_c, the additive stage, and
// the PSN after which the next full (once per RTT) update is due.
struct HpccState {
  IntStack last;
  Ps last_at = 0;  // when `last` arrived
  double u = 1;
  double wc_bytes = 0, w_bytes = 0;
  int stage = 0;
  uint32_t last_update_psn = 0;
  bool started = false;
};

struct Port {
  // Egress: the two queues (FIFOs of packet indices), whether it is sending, paused.
  int32_t head[2] = {-1, -1}, tail[2] = {-1, -1};
  double q_bytes[2] = {0, 0};
  bool busy = false, paused = false;
  Ps busy_until = 0, paused_since = 0;
  Ps pfc_arrives = -1;  // when the last PFC frame this link carries reaches its far end
  double rate_Bps = 0;
  Ps prop_ps = 0;
  int sw_from = -1, sw_to = -1;    // switch index at each end, -1 for a NIC
  int nic_from = -1, nic_to = -1;  // NIC port index at each end, -1 for a switch
  // Ingress priority group at the far end (packets that arrived over this link).
  double pg_bytes = 0, pg_xoff_at = 0, headroom = 0, xon_offset = 0, pg_alpha = 1;
  double round_trip_bytes = 0, cable_m = 0;
  bool pg_xoff = false;
  int depth_received = 0;  // the depth of the pause this egress is under
  // Counters.
  double peak = 0, area = 0, peak_cnp = 0;
  double peak_since_sample = 0;  // QosSettings::trace: the queue's peak since the last sample
  Ps last_change = 0;
  long long marks = 0, cnps = 0, drops = 0, pause_rx = 0, pause_tx = 0;
  long long ce_rx = 0;  // marked data packets delivered to the NIC at its far end
  int depth_sent = 0;
  Ps paused_ps = 0;
  double tx_bytes = 0;
  bool used = false;
};

struct SwitchState {
  double used = 0, total = 0, shared = 0;  // bytes held; the buffer; the part not reserved
  double lossy_alpha = 1;
  Ps first_mark = -1, first_xoff = -1;
  int vertex = 0;
  std::vector<int32_t> out_links;
};

struct NicPort {
  int link = -1;                              // its uplink
  std::vector<std::pair<Ps, int32_t>> ready;  // min-heap of (may send at, QP)
  Ps wake_at = -1;
};

struct Qp {
  int flow = 0, src_port = 0, dst_port = 0;
  int32_t path_off = 0;
  uint16_t path_len = 0;
  uint32_t packets = 0, last_payload = 0;
  // Sender.
  uint32_t next_psn = 0, una = 0;
  Ps may_send = 0;
  Ps ready_t = 0;   // the time of its live entry in the NIC's ready heap
  Ps last_tx = -1;  // when it last sent a data packet, and that packet's bytes
  uint32_t last_tx_bytes = 0;
  double rc = 0, rt = 0, line = 0, alpha = 1;
  Ps alpha_t = 0, last_decrease = -1;
  bool rate_limited = false, timer_armed = false, in_ready = false, cnp_seen = false;
  bool raised_since_cut = false, cut_pending = false;
  int t_stage = 0, b_stage = 0;
  double byte_count = 0;
  Ps rto_at = -1;
  uint32_t rto_una = 0, sent_high = 0;
  bool rto_pending = false;
  bool win_blocked = false;  // HPCC: waits for ACKs, its bytes in flight at the window
  // Receiver.
  uint32_t epsn = 0;
  bool nak_pending = false;
  Ps last_cnp = -(Ps{1} << 60);
  int since_ack = 0;
  Ps done_at = -1;
};

class Engine {
 public:
  Engine(const Plan& plan, const Catalog& catalog, const Fabric& fab,
         const std::vector<QosFlow>& flows, const QosSettings& s)
      : plan_(plan),
        catalog_(catalog),
        fab_(fab),
        flows_(flows),
        s_(s),
        dcqcn_(s.cc == CongestionControl::kDcqcn),
        hpcc_(s.cc == CongestionControl::kHpcc),
        ack_every_(hpcc_ ? kHpccAckEveryPackets : kAckEveryPackets),
        int_bytes_(hpcc_ ? s.hpcc_params.int_bytes : 0),
        int_hops_(hpcc_ ? std::min(s.hpcc_params.max_hops, kIntHopsMax) : 0) {}

  QosResult run();

 private:
  void setup();
  int32_t alloc(const Packet& p) {
    int32_t i;
    if (free_ >= 0) {
      i = free_;
      free_ = pool_[i].next;
      pool_[i] = p;
    } else {
      i = static_cast<int32_t>(pool_.size());
      pool_.push_back(p);
      if (hpcc_) int_.resize(pool_.size());
    }
    return i;
  }
  void release(int32_t i) {
    pool_[i].next = free_;
    free_ = i;
  }
  // The link at `p.hop` of its direction's path (ACKs, NAKs and CNPs go back along it).
  int32_t link_at(const Packet& p) const {
    if (p.kind == Kind::kData) return path_[p.path_off + p.hop];
    return Fabric::reverse(path_[p.path_off + p.path_len - 1 - p.hop]);
  }
  void note_queue(Port& o) {
    o.area += o.q_bytes[kDataQ] * static_cast<double>(now_ - o.last_change);
    o.last_change = now_;
  }
  void enqueue(int32_t link, int32_t pi);
  void try_send(int32_t link);
  void start_tx(int32_t link, int32_t pi);
  void arrive(int32_t pi);
  void at_switch(int32_t pi, int32_t in_link);
  void at_nic(int32_t pi);
  void free_buffer(const Packet& p);
  void mark(Port& o, Packet& p);
  void send_pfc(int32_t in_link, bool pause);
  void nic_wake(int np);
  void schedule_nic(int np, Ps t);
  void ready_push(int np, Ps t, int32_t qp);
  int32_t send_ctrl(int qp, Kind k, uint32_t psn);
  void hpcc_ack(int qp, const IntStack& ints);
  bool window_bound(const Qp& q) const {
    return hpcc_ && static_cast<double>(q.next_psn - q.una) * full_packet_bytes_ >=
                        hp_[&q - qps_.data()].w_bytes;
  }
  void on_cnp(int qp);
  void cut_rate(int qp);
  void rate_increase(Qp& q);
  void repace(int qp);
  void arm_rate_timer(int qp);
  void arm_rto(int qp);
  void sample();
  double pause_point(const SwitchState& sw, const Port& in) const {
    return in.pg_alpha * std::max(0.0, sw.shared - sw.used);
  }
  double uniform() {  // xorshift64*, deterministic per seed
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return static_cast<double>((rng_ * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
  }

  const Plan& plan_;
  const Catalog& catalog_;
  const Fabric& fab_;
  const std::vector<QosFlow>& flows_;
  const QosSettings& s_;
  const bool dcqcn_, hpcc_;
  const int ack_every_, int_bytes_, int_hops_;
  double full_packet_bytes_ = 0;  // a full data packet on the wire
  // HPCC: every packet's INT (by pool index), every QP's sender state, T.
  std::vector<IntStack> int_;
  std::vector<HpccState> hp_;
  Ps hp_t_ps_ = 0;
  double hp_t_s_ = 0;
  EventQueue events_;
  std::vector<Packet> pool_;
  int32_t free_ = -1;
  std::vector<Port> ports_;
  std::vector<SwitchState> switches_;
  std::vector<int32_t> switch_of_vertex_;
  std::vector<NicPort> nics_;
  std::vector<Qp> qps_;
  std::vector<int32_t> path_;
  std::vector<int> flow_qps_left_;
  std::vector<Ps> flow_done_;
  Ps now_ = 0;
  uint64_t rng_ = 0x9E3779B97F4A7C15ULL;
  long long events_run_ = 0, packets_ = 0, retransmitted_ = 0, drops_lossless_ = 0, acks_ = 0;
  int flows_left_ = 0;
  QosTrace trace_;
  Ps sample_every_ = 0;
};

// Every sampled port's peak queue since the last sample and cumulative paused time now; at
// kQosTraceSamples, samples merge in pairs (the larger peak, the later time) and the period
// doubles.
void Engine::sample() {
  const size_t n = trace_.links.size();
  trace_.t_s.push_back(to_s(now_));
  for (int32_t l : trace_.links) {
    Port& p = ports_[l];
    trace_.queue.push_back(static_cast<float>(p.peak_since_sample));
    p.peak_since_sample = p.q_bytes[kDataQ];
    const Ps paused = p.paused_ps + (p.paused ? now_ - p.paused_since : 0);
    trace_.paused_us.push_back(static_cast<float>(to_s(paused) * 1e6));
  }
  if (trace_.t_s.size() >= static_cast<size_t>(kQosTraceSamples)) {
    size_t kept = 0;
    for (size_t i = 1; i < trace_.t_s.size(); i += 2, ++kept) {
      trace_.t_s[kept] = trace_.t_s[i];
      for (size_t c = 0; c < n; ++c)
        trace_.queue[kept * n + c] =
            std::max(trace_.queue[(i - 1) * n + c], trace_.queue[i * n + c]);
      std::copy_n(trace_.paused_us.begin() + i * n, n, trace_.paused_us.begin() + kept * n);
    }
    trace_.t_s.resize(kept);
    trace_.queue.resize(kept * n);
    trace_.paused_us.resize(kept * n);
    sample_every_ *= 2;
  }
  events_.push(now_ + sample_every_, ev(kSample, 0));
}

void Engine::setup() {
  rng_ ^= s_.seed * 0xBF58476D1CE4E5B9ULL;
  if (rng_ == 0) rng_ = 1;
  const auto& links = fab_.links();
  ports_.assign(links.size(), Port{});
  switch_of_vertex_.assign(static_cast<size_t>(fab_.vertices()), -1);
  // Cable lengths by link class: the plan's length class (plan/cabling), or the what-if length.
  auto medium_m = [&](LinkKind k) {
    return s_.cable_m > 0 ? s_.cable_m : link_medium(plan_, catalog_, k).length_m;
  };
  const double nic_m = medium_m(LinkKind::kNodeLeaf), ls_m = medium_m(LinkKind::kLeafSpine),
               sc_m = medium_m(LinkKind::kSpineCore);
  const Switch& sw = plan_.sw;
  const double sw_latency_s = sw.latency_ns * 1e-9;
  const double gbps = plan_.topo.lane_gbps;
  int lossy_th = kDefaultLossyDynamicTh;
  if (sw.sonic) {
    auto it = sw.sonic->profiles.find("egress_lossy_profile");
    if (it != sw.sonic->profiles.end() && it->second.dynamic_th) lossy_th = *it->second.dynamic_th;
  }
  // Routes of every QP (the fabric's ECMP hash of its 5-tuple at every switch).
  std::vector<int32_t> route;
  flow_qps_left_.assign(flows_.size(), 0);
  flow_done_.assign(flows_.size(), -1);
  std::vector<int> nic_port_of(
      static_cast<size_t>(fab_.nodes()) * fab_.nics_per_node() * fab_.planes(), -1);
  auto nic_port = [&](int nic, int plane) {
    int& np = nic_port_of[static_cast<size_t>(nic) * fab_.planes() + plane];
    if (np < 0) {
      np = static_cast<int>(nics_.size());
      nics_.push_back({fab_.nic_to_leaf(nic, plane), {}, -1});
    }
    return np;
  };
  const double payload_per_packet = kRoceMtuBytes;
  for (size_t f = 0; f < flows_.size(); ++f) {
    const QosFlow& fl = flows_[f];
    const double per_qp = fl.bytes / fl.qps;
    for (int k = 0; k < fl.qps; ++k) {
      route.clear();
      const uint64_t qpn = (((fl.qp_key & 0xFFFFFF) + static_cast<uint64_t>(k)) & 0xFFFFFF) |
                           ((((fl.qp_key >> 24) & 0xFFFFFF) + static_cast<uint64_t>(k)) & 0xFFFFFF)
                               << 24;
      if (!fab_.route(fl.src_nic, fl.dst_nic, fl.plane, qpn, route)) continue;
      Qp q;
      q.flow = static_cast<int>(f);
      q.src_port = nic_port(fl.src_nic, fl.plane);
      q.dst_port = nic_port(fl.dst_nic, fl.plane);
      q.path_off = static_cast<int32_t>(path_.size());
      q.path_len = static_cast<uint16_t>(route.size());
      path_.insert(path_.end(), route.begin(), route.end());
      const double pk = std::max(1.0, std::ceil(per_qp / payload_per_packet));
      q.packets = static_cast<uint32_t>(pk);
      q.last_payload = static_cast<uint32_t>(std::max(1.0, per_qp - (pk - 1) * payload_per_packet));
      q.line = links[route.front()].bytes_per_s;
      q.rc = q.rt = q.line;
      q.alpha = s_.dcqcn_params.initial_alpha;
      for (int32_t l : route) {
        ports_[l].used = true;
        ports_[Fabric::reverse(l)].used = true;
      }
      qps_.push_back(q);
      ++flow_qps_left_[f];
    }
    if (flow_qps_left_[f] > 0) ++flows_left_;
  }
  // Ports: rate, propagation, and the PFC thresholds of the priority group at the far end.
  for (size_t l = 0; l < links.size(); ++l) {
    Port& p = ports_[l];
    if (!p.used) continue;
    const Link& k = links[l];
    const double m = k.cls == LinkClass::kNicLeaf     ? nic_m
                     : k.cls == LinkClass::kLeafSpine ? ls_m
                                                      : sc_m;
    p.cable_m = m;
    p.rate_Bps = k.bytes_per_s;
    // The fabric's latency is the switch's and the cable's; the engine queues for itself.
    p.prop_ps = to_ps(m / kSignalSpeedMps + (fab_.tier(k.from) > 0 ? sw_latency_s : 0));
    const PfcThresholds t = pfc_thresholds(sw, gbps, m);
    p.headroom = s_.headroom_bytes > 0 ? s_.headroom_bytes : t.headroom_bytes;
    p.xon_offset = t.xon_offset_bytes;
    p.pg_alpha = t.dynamic_alpha;
    p.round_trip_bytes = pfc_round_trip_bytes(gbps, m);
    for (int end = 0; end < 2; ++end) {
      const int v = end ? k.to : k.from;
      if (fab_.tier(v) == 0) continue;
      int& si = switch_of_vertex_[v];
      if (si < 0) {
        si = static_cast<int>(switches_.size());
        SwitchState st;
        st.vertex = v;
        st.total = sw.buffer_mb * 1e6;  // catalog: buffer_mb in MB (10^6 bytes), as datasheets
        st.lossy_alpha = std::ldexp(1.0, lossy_th);
        switches_.push_back(std::move(st));
      }
      (end ? p.sw_to : p.sw_from) = si;
    }
  }
  for (size_t l = 0; l < links.size(); ++l) {
    Port& p = ports_[l];
    if (!p.used) continue;
    if (p.sw_from >= 0) switches_[p.sw_from].out_links.push_back(static_cast<int32_t>(l));
    // The headroom of every lossless ingress group is reserved out of the shared buffer.
    if (p.sw_to >= 0 && s_.pfc) switches_[p.sw_to].shared -= p.headroom;
  }
  for (SwitchState& st : switches_) st.shared = std::max(0.0, st.total + st.shared);
  for (size_t n = 0; n < nics_.size(); ++n) {
    ports_[nics_[n].link].nic_from = static_cast<int>(n);
    ports_[Fabric::reverse(nics_[n].link)].nic_to = static_cast<int>(n);
  }
  if (s_.trace) {
    for (size_t l = 0; l < links.size(); ++l)
      if (ports_[l].used) trace_.links.push_back(static_cast<int>(l));
    sample_every_ = to_ps(kQosTraceFirstPeriodS);
    events_.push(sample_every_, ev(kSample, 0));
  }
  full_packet_bytes_ = kRoceMtuBytes + kRoceHeaderBytes + kEthernetGapBytes + int_bytes_;
  if (hpcc_) {
    // T: the longest base RTT of the run's paths (GLOBAL_T 1 in the authors' runs: the largest
    // of the fabric, scratch/third.cc maxRtt): every hop's flight and a full data packet's
    // serialisation out, an ACK's back. W_init = B x T (third.cc maxBdp), at line rate.
    const double ack_bytes = kRoceControlBytes + kEthernetGapBytes + int_bytes_;
    for (const Qp& q : qps_) {
      double rtt = 0;
      for (int i = 0; i < q.path_len; ++i) {
        const Port& o = ports_[path_[q.path_off + i]];
        const Port& b = ports_[Fabric::reverse(path_[q.path_off + i])];
        rtt +=
            to_s(o.prop_ps + b.prop_ps) + full_packet_bytes_ / o.rate_Bps + ack_bytes / b.rate_Bps;
      }
      hp_t_s_ = std::max(hp_t_s_, rtt);
    }
    hp_t_ps_ = to_ps(hp_t_s_);
    hp_.assign(qps_.size(), HpccState{});
    for (size_t q = 0; q < qps_.size(); ++q)
      hp_[q].wc_bytes = hp_[q].w_bytes = qps_[q].line * hp_t_s_;
  }
  pool_.reserve(1 << 16);
  if (hpcc_) int_.reserve(size_t{1} << 16);
  for (size_t q = 0; q < qps_.size(); ++q) ready_push(qps_[q].src_port, 0, static_cast<int32_t>(q));
}

void Engine::ready_push(int np, Ps t, int32_t qp) {
  Qp& q = qps_[qp];
  if (q.in_ready) return;
  q.in_ready = true;
  q.ready_t = t;
  auto& h = nics_[np].ready;
  h.push_back({t, qp});
  std::push_heap(h.begin(), h.end(), std::greater<>());
  schedule_nic(np, t);
}

void Engine::schedule_nic(int np, Ps t) {
  NicPort& n = nics_[np];
  const Port& p = ports_[n.link];
  if (p.busy) return;  // TxDone tries again
  t = std::max(t, now_);
  if (n.wake_at >= 0 && n.wake_at <= t) return;
  n.wake_at = t;
  events_.push(t, ev(kNicWake, static_cast<uint64_t>(np)));
}

void Engine::enqueue(int32_t link, int32_t pi) {
  Port& o = ports_[link];
  Packet& p = pool_[pi];
  const int qi = p.ctrl_q ? kCtrlQ : kDataQ;
  if (qi == kDataQ) note_queue(o);
  o.q_bytes[qi] += p.bytes;
  if (qi == kDataQ) {
    o.peak = std::max(o.peak, o.q_bytes[kDataQ]);
    o.peak_since_sample = std::max(o.peak_since_sample, o.q_bytes[kDataQ]);
  } else {
    o.peak_cnp = std::max(o.peak_cnp, o.q_bytes[kCtrlQ]);
  }
  p.next = -1;
  if (o.tail[qi] >= 0)
    pool_[o.tail[qi]].next = pi;
  else
    o.head[qi] = pi;
  o.tail[qi] = pi;
  if (!o.busy) try_send(link);
}

void Engine::start_tx(int32_t link, int32_t pi) {
  Port& o = ports_[link];
  const Packet& p = pool_[pi];
  const Ps ser = to_ps(p.bytes / o.rate_Bps);
  o.busy = true;
  o.busy_until = now_ + ser;
  o.tx_bytes += p.bytes;
  events_.push(now_ + ser, ev(kTxDone, static_cast<uint64_t>(link)));
  events_.push(now_ + ser + o.prop_ps, ev(kArrive, static_cast<uint64_t>(pi)));
}

// The port is idle: send the CNP queue first (strict priority), then, unless paused, the RoCE
// queue; a NIC port then takes its QPs' next packet when their pacing allows.
void Engine::try_send(int32_t link) {
  Port& o = ports_[link];
  if (o.busy) return;
  for (int qi : {kCtrlQ, kDataQ}) {
    if (qi == kDataQ && o.paused) break;
    const int32_t pi = o.head[qi];
    if (pi < 0) continue;
    Packet& p = pool_[pi];
    o.head[qi] = p.next;
    if (o.head[qi] < 0)
      o.tail[qi] = -1;
    else {
      __builtin_prefetch(&pool_[o.head[qi]]);  // the next to leave, long queued: not in cache
      if (hpcc_) __builtin_prefetch(&int_[o.head[qi]]);
    }
    if (qi == kDataQ) note_queue(o);
    o.q_bytes[qi] -= p.bytes;
    if (qi == kDataQ && o.sw_from >= 0) {
      mark(o, p);
      // HPCC's INT: the hop's time, bytes sent before this packet, and queue after it left.
      if (hpcc_ && p.kind == Kind::kData && p.hop >= 1 && p.hop <= int_hops_)
        int_[pi].hop[p.hop - 1] = {static_cast<uint32_t>(static_cast<uint64_t>(now_ / 1000)),
                                   static_cast<uint32_t>(static_cast<uint64_t>(o.tx_bytes)),
                                   static_cast<uint32_t>(o.q_bytes[kDataQ] + o.q_bytes[kCtrlQ])};
    }
    free_buffer(p);
    start_tx(link, pi);
    return;
  }
  if (o.nic_from < 0 || o.paused) return;
  NicPort& n = nics_[o.nic_from];
  auto& h = n.ready;
  // Entries a rate change moved (repace) are left behind in the heap: drop them here.
  while (!h.empty() &&
         (!qps_[h.front().second].in_ready || qps_[h.front().second].ready_t != h.front().first)) {
    std::pop_heap(h.begin(), h.end(), std::greater<>());
    h.pop_back();
  }
  if (h.empty()) return;
  if (h.front().first > now_) {
    schedule_nic(o.nic_from, h.front().first);
    return;
  }
  std::pop_heap(h.begin(), h.end(), std::greater<>());
  const int32_t qi = h.back().second;
  h.pop_back();
  Qp& q = qps_[qi];
  q.in_ready = false;
  if (q.next_psn >= q.packets) return try_send(link);  // all sent (a go-back may re-add it)
  if (window_bound(q)) {  // HPCC: an ACK that opens the window sends it again
    q.win_blocked = true;
    return try_send(link);
  }
  const uint32_t psn = q.next_psn++;
  const uint32_t payload = psn + 1 == q.packets ? q.last_payload : kRoceMtuBytes;
  Packet p;
  p.qp = qi;
  p.psn = psn;
  p.kind = Kind::kData;
  p.bytes = static_cast<uint16_t>(payload + kRoceHeaderBytes + kEthernetGapBytes + int_bytes_);
  p.path_off = q.path_off;
  p.path_len = static_cast<uint8_t>(q.path_len);
  p.link = link;
  ++packets_;
  if (psn < q.sent_high)
    ++retransmitted_;
  else
    q.sent_high = psn + 1;
  start_tx(link, alloc(p));
  // DCQCN's pacing: the next packet no earlier than this one's bytes at the current rate.
  q.may_send = now_ + to_ps(p.bytes / q.rc);
  q.last_tx = now_;
  q.last_tx_bytes = p.bytes;
  if (dcqcn_ && q.rate_limited) {
    q.byte_count += p.bytes;
    if (q.byte_count >= s_.dcqcn_params.byte_reset_bytes) {
      q.byte_count = 0;
      ++q.b_stage;
      rate_increase(q);
    }
  }
  if (!q.rto_pending) arm_rto(qi);
  if (q.next_psn < q.packets) ready_push(q.src_port, q.may_send, qi);
}

// WRED ECN marking by the egress queue's depth as the packet leaves (marking on dequeue, as the
// HPCC authors' ns-3 RDMA simulator does, SwitchNode::SwitchNotifyDequeue: the mark reaches the
// receiver without waiting behind the queue it reports).
void Engine::mark(Port& o, Packet& p) {
  if (!s_.ecn.enabled || p.kind != Kind::kData || p.ce) return;
  const double q = o.q_bytes[kDataQ];
  double prob = 0;
  if (q >= s_.ecn.kmax_bytes)
    prob = 1;
  else if (q > s_.ecn.kmin_bytes)
    prob = s_.ecn.pmax * (q - s_.ecn.kmin_bytes) / (s_.ecn.kmax_bytes - s_.ecn.kmin_bytes);
  if (prob > 0 && uniform() < prob) {
    p.ce = 1;
    ++o.marks;
    SwitchState& sw = switches_[o.sw_from];
    if (sw.first_mark < 0) sw.first_mark = now_;
  }
}

void Engine::free_buffer(const Packet& p) {
  if (p.in_link < 0) return;
  Port& in = ports_[p.in_link];
  SwitchState& sw = switches_[in.sw_to];
  sw.used -= p.bytes;
  if (p.ctrl_q) return;
  in.pg_bytes -= p.bytes;
  if (in.pg_xoff && in.pg_bytes <= std::max(0.0, pause_point(sw, in) - in.xon_offset))
    send_pfc(p.in_link, false);
}

// The ingress group of `in_link` pauses (or resumes) the upstream port: the frame leaves after
// the frame the reverse link is sending, and acts when it arrives.
void Engine::send_pfc(int32_t in_link, bool pause) {
  Port& in = ports_[in_link];
  in.pg_xoff = pause;
  const int32_t back = Fabric::reverse(in_link);
  Port& b = ports_[back];
  const Ps wait = b.busy ? b.busy_until - now_ : 0;
  // PFC frames leave a port in the order they are made: a resume made just after a pause, when
  // the frame that delayed the pause has gone, still arrives after it (else the pause, arriving
  // last, would stop the upstream port for good).
  const Ps t =
      std::max(now_ + wait + to_ps(kRoceControlBytes / b.rate_Bps) + b.prop_ps, b.pfc_arrives + 1);
  b.pfc_arrives = t;
  if (pause) {
    ++b.pause_tx;
    SwitchState& sw = switches_[in.sw_to];
    if (sw.first_xoff < 0) sw.first_xoff = now_;
    int depth = 1;
    for (int32_t l : sw.out_links)
      if (ports_[l].paused) depth = std::max(depth, ports_[l].depth_received + 1);
    // Depth counts switches: a pause that reaches a NIC stops there.
    if (in.sw_from >= 0) b.depth_sent = std::max(b.depth_sent, depth);
    // The depth travels with the frame: the upstream egress is under a pause of this depth.
    in.depth_received = depth;
    events_.push(t, ev(kPfc, static_cast<uint64_t>(in_link) << 1 | 1));
  } else {
    events_.push(t, ev(kPfc, static_cast<uint64_t>(in_link) << 1));
  }
}

void Engine::arrive(int32_t pi) {
  Packet& p = pool_[pi];
  const int32_t link = p.link;
  const Port& l = ports_[link];
  if (l.sw_to >= 0)
    at_switch(pi, link);
  else
    at_nic(pi);
}

void Engine::at_switch(int32_t pi, int32_t in_link) {
  Packet& p = pool_[pi];
  Port& in = ports_[in_link];
  SwitchState& sw = switches_[in.sw_to];
  ++p.hop;
  const int32_t out_link = p.link = link_at(p);
  Port& out = ports_[out_link];
  const double b = p.bytes;
  auto drop = [&](bool lossless) {
    ++out.drops;
    if (lossless) ++drops_lossless_;
    release(pi);
  };
  if (p.ctrl_q) {
    if (sw.used + b > sw.total) return drop(false);
    sw.used += b;
    p.in_link = in_link;
    return enqueue(out_link, pi);
  }
  if (s_.pfc) {
    if (in.pg_xoff) {
      if (in.pg_bytes + b > in.pg_xoff_at + in.headroom || sw.used + b > sw.total)
        return drop(true);
    } else if (in.pg_bytes + b > pause_point(sw, in)) {
      in.pg_xoff_at = in.pg_bytes;
      send_pfc(in_link, true);
      if (b > in.headroom || sw.used + b > sw.total) return drop(true);
    }
  } else if (out.q_bytes[kDataQ] + b > sw.lossy_alpha * std::max(0.0, sw.shared - sw.used) ||
             sw.used + b > sw.total) {
    return drop(false);
  }
  sw.used += b;
  in.pg_bytes += b;
  p.in_link = in_link;
  enqueue(out_link, pi);
}

int32_t Engine::send_ctrl(int qi, Kind k, uint32_t psn) {
  Qp& q = qps_[qi];
  Packet c;
  c.qp = qi;
  c.psn = psn;
  c.kind = k;
  // HPCC's ACKs and NAKs echo the data packet's INT (ns-3 RdmaHw::ReceiveUdp, SetIntHeader).
  c.bytes = kRoceControlBytes + kEthernetGapBytes + (k == Kind::kCnp ? 0 : int_bytes_);
  c.ctrl_q = k == Kind::kCnp;
  const int32_t link = Fabric::reverse(path_[q.path_off + q.path_len - 1]);
  c.path_off = q.path_off;
  c.path_len = static_cast<uint8_t>(q.path_len);
  c.link = link;
  if (k == Kind::kCnp)
    ++ports_[link].cnps;
  else
    ++acks_;
  const int32_t ci = alloc(c);
  enqueue(link, ci);
  return ci;
}

void Engine::at_nic(int32_t pi) {
  const Packet p = pool_[pi];
  // HPCC: the INT the packet carries, kept before its slot is reused (a data packet's goes
  // into the ACK it causes; an ACK's to the sender).
  IntStack ints;
  if (hpcc_) ints = int_[pi];
  release(pi);
  Qp& q = qps_[p.qp];
  // An ACK or NAK for the data packet just received, carrying its INT.
  auto ack = [&](Kind k, uint32_t psn) {
    const int32_t ci = send_ctrl(p.qp, k, psn);
    if (hpcc_) int_[ci] = ints;
  };
  switch (p.kind) {
    case Kind::kData: {
      if (p.ce) ++ports_[p.link].ce_rx;
      // Notification point: a CNP for a marked packet, at most one per QP per interval.
      if (p.ce && dcqcn_ && now_ - q.last_cnp >= to_ps(s_.dcqcn_params.min_time_between_cnps_s)) {
        q.last_cnp = now_;
        send_ctrl(p.qp, Kind::kCnp, p.psn);
      }
      if (p.psn == q.epsn) {
        ++q.epsn;
        q.nak_pending = false;
        if (q.epsn == q.packets && q.done_at < 0) {
          q.done_at = now_;
          const int f = q.flow;
          if (--flow_qps_left_[f] == 0) {
            flow_done_[f] = now_;
            --flows_left_;
          }
        }
        if (++q.since_ack >= ack_every_ || q.epsn == q.packets) {
          q.since_ack = 0;
          ack(Kind::kAck, q.epsn);
        }
      } else if (p.psn > q.epsn) {
        // Go-back-N: out of sequence, dropped; one NAK names the packet expected.
        if (!q.nak_pending) {
          q.nak_pending = true;
          ack(Kind::kNak, q.epsn);
        }
      } else if (q.epsn == q.packets) {
        ack(Kind::kAck, q.epsn);  // a duplicate after the end: acknowledge again
      }
      break;
    }
    case Kind::kAck:
    case Kind::kNak: {
      if (p.psn > q.una) {
        q.una = p.psn;
        arm_rto(p.qp);  // progress: the timeout starts again
      }
      if (p.kind == Kind::kNak && p.psn < q.next_psn) {
        q.next_psn = p.psn;
        ready_push(q.src_port, std::max(now_, q.may_send), p.qp);
      }
      if (hpcc_) {
        if (q.una < q.packets) hpcc_ack(p.qp, ints);
        // ns-3 RdmaHw::ReceiveAck: an ACK may open the window (TriggerTransmit).
        if (q.win_blocked && !window_bound(q)) {
          q.win_blocked = false;
          ready_push(q.src_port, std::max(now_, q.may_send), p.qp);
        }
      }
      break;
    }
    case Kind::kCnp:
      if (dcqcn_) on_cnp(p.qp);
      break;
  }
}

// HPCC's sender on an ACK (Algorithm 1; ns-3 RdmaHw::HandleAckHp and UpdateRateHp, one rate for
// all hops): the first ACK only records the INT; then every ACK measures each hop's
// utilisation u = min(qlen, last qlen) / (B x T) + txRate / B over the time between its two
// INT stamps, takes the most loaded hop, and folds it into U with weight tau / T. The window
// follows W_c: multiplicatively down (or up) to W_c / (U / eta) when U >= eta or after
// max_stage additive steps, else W_c + W_AI; W_c itself moves only on the first ACK of a new
// round trip (a PSN past the one sent at the last full update), the other ACKs react at once
// without it (FastReactHp). The pacing rate is W / T.
void Engine::hpcc_ack(int qi, const IntStack& ints) {
  Qp& q = qps_[qi];
  HpccState& h = hp_[qi];
  const HpccParams& hp = s_.hpcc_params;
  const int n = std::min<int>(q.path_len - 1, int_hops_);
  const uint32_t acked = q.una;
  const bool stale = now_ - h.last_at > to_ps(kIntStaleS);
  h.last_at = now_;
  if (!h.started || stale) {
    if (!h.started) h.last_update_psn = q.next_psn;
    h.started = true;
    h.last = ints;
    return;
  }
  const bool full = acked > h.last_update_psn;
  if (!full && !hp.fast_react) return;
  double u_max = 0;
  Ps tau_max = 0;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    const IntHop& a = ints.hop[i];
    IntHop& b = h.last.hop[i];
    const Ps tau = Ps{static_cast<uint32_t>(a.ts_ns - b.ts_ns)} * 1000;
    if (tau <= 0) continue;  // the same stamp again (an ACK repeated): nothing new
    const double rate = ports_[path_[q.path_off + 1 + i]].rate_Bps;
    const double tx_rate = static_cast<uint32_t>(a.tx_bytes - b.tx_bytes) / to_s(tau);
    const double u = tx_rate / rate + std::min(a.qlen_bytes, b.qlen_bytes) / (rate * hp_t_s_);
    if (u > u_max) {
      u_max = u;
      tau_max = tau;
    }
    any = true;
    b = a;
  }
  if (any) {
    const double tau = to_s(std::min(tau_max, hp_t_ps_));
    h.u = (h.u * (hp_t_s_ - tau) + u_max * tau) / hp_t_s_;
    const double c = h.u / hp.eta;
    const double w_ai = hp.ai_rate_share * q.line * hp_t_s_;
    double w;
    int stage;
    if (c >= 1 || h.stage >= hp.max_stage) {
      w = (c > 0 ? h.wc_bytes / c : q.line * hp_t_s_) + w_ai;
      stage = 0;
    } else {
      w = h.wc_bytes + w_ai;
      stage = h.stage + 1;
    }
    w = std::clamp(w, hp.min_rate_bps / 8 * hp_t_s_, q.line * hp_t_s_);
    h.w_bytes = w;
    q.rc = w / hp_t_s_;
    repace(qi);
    if (full) {
      h.wc_bytes = w;
      h.stage = stage;
    }
  }
  if (full && q.next_psn > h.last_update_psn) h.last_update_psn = q.next_psn;
}

// DCQCN's reaction point (the paper's §3.1, the NIC firmware's bounds): cut the rate by alpha/2
// at most once per rate_reduce_period, raise alpha, restart the increase stages.
void Engine::on_cnp(int qi) {
  Qp& q = qps_[qi];
  const DcqcnParams& d = s_.dcqcn_params;
  const Ps period = to_ps(d.alpha_update_s);
  if (!q.cnp_seen) {
    q.cnp_seen = true;
    q.alpha = d.initial_alpha;
  } else if (period > 0 && now_ > q.alpha_t) {
    // Periods without a CNP decayed alpha by (1 - g) each (the one holding this CNP does not).
    const double n = std::floor(static_cast<double>(now_ - q.alpha_t) / period);
    if (n > 1) q.alpha *= std::pow(1 - d.g, n - 1);
  }
  q.alpha = (1 - d.g) * q.alpha + d.g;
  q.alpha_t = now_;
  // A CNP inside the monitor period cuts at the period's end (ConnectX
  // rate_reduce_monitor_period): at most one cut a period, none lost.
  const Ps period_end = q.last_decrease + to_ps(d.rate_reduce_period_s);
  if (q.last_decrease >= 0 && now_ < period_end) {
    if (!q.cut_pending) {
      q.cut_pending = true;
      events_.push(period_end, ev(kCut, static_cast<uint64_t>(qi)));
    }
    return;
  }
  cut_rate(qi);
}

void Engine::cut_rate(int qi) {
  Qp& q = qps_[qi];
  const DcqcnParams& d = s_.dcqcn_params;
  q.cut_pending = false;
  q.last_decrease = now_;
  if (d.clamp_target_always || q.raised_since_cut) q.rt = q.rc;
  q.raised_since_cut = false;
  q.rc = std::max({q.rc * (1 - q.alpha / 2), q.rc * d.min_dec_factor, d.min_rate_bps / 8});
  q.rate_limited = true;
  q.t_stage = q.b_stage = 0;
  q.byte_count = 0;
  arm_rate_timer(qi);
  repace(qi);
}

void Engine::rate_increase(Qp& q) {
  const DcqcnParams& d = s_.dcqcn_params;
  const int f = d.fast_recovery_stages;
  if (std::max(q.t_stage, q.b_stage) < f) {
    // fast recovery: towards the target
  } else if (std::min(q.t_stage, q.b_stage) > f) {
    q.rt += (std::min(q.t_stage, q.b_stage) - f) * d.hai_rate_bps / 8;
  } else {
    q.rt += d.ai_rate_bps / 8;
  }
  q.rt = std::min(q.rt, q.line);
  q.rc = std::min(q.line, (q.rt + q.rc) / 2);
  q.raised_since_cut = true;
  if (q.rc >= q.line * (1 - 1e-9)) {
    q.rc = q.rt = q.line;
    q.rate_limited = false;
  }
  repace(static_cast<int>(&q - qps_.data()));
}

// The NIC's rate limiter paces a QP's next packet at its current rate, counted from the last
// one it sent: a rate change moves the packet waiting for its turn. Without this a QP cut to
// the minimum rate (1 Mb/s: 33 ms for a 4 KiB packet) sat out that gap although its timer
// had raised it back to line rate within 300 us.
void Engine::repace(int qi) {
  Qp& q = qps_[qi];
  if (q.last_tx < 0) return;
  q.may_send = q.last_tx + to_ps(q.last_tx_bytes / q.rc);
  const Ps t = std::max(now_, q.may_send);
  if (!q.in_ready || t == q.ready_t) return;
  q.ready_t = t;
  auto& h = nics_[q.src_port].ready;
  h.push_back({t, qi});
  std::push_heap(h.begin(), h.end(), std::greater<>());
  schedule_nic(q.src_port, t);
}

void Engine::arm_rate_timer(int qi) {
  Qp& q = qps_[qi];
  if (q.timer_armed) return;
  q.timer_armed = true;
  events_.push(now_ + to_ps(s_.dcqcn_params.time_reset_s),
               ev(kRateTimer, static_cast<uint64_t>(qi)));
}

// One timeout event per QP at a time: progress moves the deadline, and the event, when it
// comes early, waits again for the deadline.
void Engine::arm_rto(int qi) {
  Qp& q = qps_[qi];
  q.rto_at = now_ + to_ps(kLocalAckTimeoutS);
  q.rto_una = q.una;
  if (q.rto_pending) return;
  q.rto_pending = true;
  events_.push(q.rto_at, ev(kRto, static_cast<uint64_t>(qi)));
}

QosResult Engine::run() {
  setup();
  const Ps end = to_ps(s_.max_time_s);
  while (!events_.empty() && flows_left_ > 0) {
    const Event e = events_.pop();
    if (e.t > end) break;
    now_ = e.t;
    ++events_run_;
    const uint64_t id = e.what & ((uint64_t{1} << 56) - 1);
    if (const Event* n = events_.peek(); n && (n->what >> 56) == kArrive) {
      __builtin_prefetch(&pool_[n->what & ((uint64_t{1} << 56) - 1)]);
      if (hpcc_) __builtin_prefetch(&int_[n->what & ((uint64_t{1} << 56) - 1)]);
    }
    switch (static_cast<EventKind>(e.what >> 56)) {
      case kTxDone: {
        Port& o = ports_[id];
        o.busy = false;
        try_send(static_cast<int32_t>(id));
        break;
      }
      case kArrive:
        arrive(static_cast<int32_t>(id));
        break;
      case kNicWake: {
        NicPort& n = nics_[id];
        if (n.wake_at != now_) break;  // superseded by an earlier wake
        n.wake_at = -1;
        try_send(n.link);
        break;
      }
      case kPfc: {
        const int32_t link = static_cast<int32_t>(id >> 1);
        Port& o = ports_[link];
        const bool pause = id & 1;
        if (pause && !o.paused) {
          o.paused = true;
          o.paused_since = now_;
          ++o.pause_rx;
        } else if (!pause && o.paused) {
          o.paused = false;
          o.paused_ps += now_ - o.paused_since;
          try_send(link);
        }
        break;
      }
      case kRateTimer: {
        Qp& q = qps_[id];
        q.timer_armed = false;
        if (!q.rate_limited || q.done_at >= 0) break;
        ++q.t_stage;
        rate_increase(q);
        if (q.rate_limited) arm_rate_timer(static_cast<int>(id));
        break;
      }
      case kSample:
        --events_run_;  // not an event of the network: a run counts the same traced or not
        sample();
        break;
      case kCut:
        if (qps_[id].cut_pending && qps_[id].done_at < 0) cut_rate(static_cast<int>(id));
        break;
      case kRto: {
        Qp& q = qps_[id];
        q.rto_pending = false;
        if (q.una >= q.packets) break;
        if (now_ < q.rto_at) {
          q.rto_pending = true;
          events_.push(q.rto_at, e.what);
          break;
        }
        // No progress for a whole timeout: go back to the oldest unacknowledged packet.
        q.next_psn = q.una;
        ready_push(q.src_port, now_, static_cast<int32_t>(id));
        arm_rto(static_cast<int>(id));
        break;
      }
    }
  }
  // Results.
  QosResult r;
  if (s_.trace) {
    sample();  // the state at the end
    r.trace = std::move(trace_);
  }
  r.cc = s_.cc;
  r.events = events_run_;
  r.packets = packets_;
  r.acks = acks_;
  r.hpcc_base_rtt_s = hp_t_s_;
  if (hpcc_ && !qps_.empty()) r.hpcc_init_window_bytes = qps_.front().line * hp_t_s_;
  r.retransmitted_packets = retransmitted_;
  r.drops_lossless = drops_lossless_;
  const auto& links = fab_.links();
  for (size_t l = 0; l < links.size(); ++l) {
    Port& p = ports_[l];
    if (!p.used) continue;
    note_queue(p);
    if (p.paused) p.paused_ps += now_ - p.paused_since;
  }
  // Ports and switches as cabling.csv and the configurations name them (su01-r0-leaf:1/4,
  // node004:nic0).
  const LinkNames names(plan_, catalog_, fab_);
  for (size_t l = 0; l < links.size(); ++l) {
    const Port& p = ports_[l];
    if (!p.used || (p.tx_bytes == 0 && p.pause_rx == 0 && p.pause_tx == 0)) continue;
    QosPortStats st;
    st.link = static_cast<int>(l);
    st.device = end_name(names.from(static_cast<int32_t>(l)));
    st.peer = end_name(names.to(static_cast<int32_t>(l)));
    st.peak_queue_bytes = p.peak;
    st.cnp_peak_queue_bytes = p.peak_cnp;
    st.mean_queue_bytes = now_ > 0 ? p.area / static_cast<double>(now_) : 0;
    st.pause_sent = p.pause_tx;
    st.pause_received = p.pause_rx;
    st.paused_s = to_s(p.paused_ps);
    st.ecn_marks = p.marks;
    st.ecn_marked_rx = p.ce_rx;
    st.from_nic = p.nic_from >= 0;
    st.to_nic = p.nic_to >= 0;
    st.cnps = p.cnps;
    st.drops = p.drops;
    st.tx_bytes = p.tx_bytes;
    st.pause_depth = p.depth_sent;
    const double threshold = s_.ecn.enabled ? s_.ecn.kmin_bytes : kCongestedQueueBytesNoEcn;
    const double busy_s = p.tx_bytes / p.rate_Bps;
    st.congested = p.sw_from >= 0 && p.peak >= threshold &&
                   st.paused_s <= kCongestedPausedShare * std::max(busy_s, 1e-12);
    r.ecn_marks += p.marks;
    r.cnps += p.cnps;
    r.drops += p.drops;
    r.pause_frames += p.pause_tx;
    r.max_pause_depth = std::max(r.max_pause_depth, p.depth_sent);
    r.ports.push_back(std::move(st));
  }
  // The lossless ingress group with the least headroom to spare over its cable's round trip.
  double margin = std::numeric_limits<double>::infinity();
  for (size_t l = 0; l < links.size(); ++l) {
    const Port& p = ports_[l];
    if (!p.used || p.sw_to < 0 || p.headroom - p.round_trip_bytes >= margin) continue;
    margin = p.headroom - p.round_trip_bytes;
    r.headroom_bytes = p.headroom;
    r.round_trip_bytes = p.round_trip_bytes;
    r.headroom_cable_m = p.cable_m;
    r.headroom_port = end_name(names.to(static_cast<int32_t>(l))) + " from " +
                      end_name(names.from(static_cast<int32_t>(l)));
  }
  // The flow-level model on the same QP paths: max-min sharing of the links' payload rates.
  FlowSet fs;
  std::vector<FlowSet::Hop> hops;
  std::vector<double> qp_latency_s;
  for (const Qp& q : qps_) {
    hops.clear();
    // Store and forward: the flow's bytes once at the bottleneck (the fluid's time), plus its
    // first packet once more on every hop but one, plus the flight of every link.
    const double first =
        (q.packets > 1 ? kRoceMtuBytes : q.last_payload) + kRoceHeaderBytes + kEthernetGapBytes;
    double lat = 0;
    for (int i = 0; i < q.path_len; ++i) {
      const int32_t l = path_[q.path_off + i];
      hops.push_back({l, 1.0f});
      lat += to_s(ports_[l].prop_ps) + (i > 0 ? first / ports_[l].rate_Bps : 0);
    }
    fs.add(flows_[q.flow].bytes / flows_[q.flow].qps, hops);
    qp_latency_s.push_back(lat);
  }
  std::vector<double> capacity(links.size(), 0);
  for (size_t l = 0; l < links.size(); ++l)
    capacity[l] = links[l].bytes_per_s * kRocePayloadEfficiency;
  const FluidResult fluid = run_fluid(fs, capacity);
  r.flows.assign(flows_.size(), QosFlowResult{});
  std::vector<uint8_t> congested(links.size(), 0);
  for (const QosPortStats& st : r.ports)
    if (st.congested) congested[st.link] = 1;
  for (size_t qi = 0; qi < qps_.size(); ++qi) {
    const Qp& q = qps_[qi];
    QosFlowResult& fr = r.flows[q.flow];
    fr.fluid_fct_s = std::max(fr.fluid_fct_s, fluid.completion_s[qi] + qp_latency_s[qi]);
    for (int i = 0; i < q.path_len; ++i)
      if (congested[path_[q.path_off + i]]) fr.crosses_congested = true;
  }
  std::vector<double> fct;
  for (size_t f = 0; f < flows_.size(); ++f) {
    QosFlowResult& fr = r.flows[f];
    r.payload_bytes += flows_[f].bytes;
    if (flow_done_[f] < 0) {
      ++r.unfinished;
      continue;
    }
    fr.fct_s = to_s(flow_done_[f]);
    fct.push_back(fr.fct_s);
    r.time_s = std::max(r.time_s, fr.fct_s);
    r.fluid_time_s = std::max(r.fluid_time_s, fr.fluid_fct_s);
    fr.victim = !fr.crosses_congested && fr.fct_s > kVictimSlowdown * fr.fluid_fct_s;
    if (fr.victim) ++r.victims;
  }
  if (r.unfinished > 0) r.time_s = to_s(now_);
  std::sort(fct.begin(), fct.end());
  auto pct = [&](double q) {
    if (fct.empty()) return 0.0;
    const size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(fct.size()))) - 1;
    return fct[std::min(i, fct.size() - 1)];
  };
  r.fct_p50_s = pct(0.5);
  r.fct_p99_s = pct(0.99);
  if (r.time_s > 0) r.throughput_Bps = r.payload_bytes / r.time_s;
  if (r.fluid_time_s > 0) r.fluid_throughput_Bps = r.payload_bytes / r.fluid_time_s;

  // Verdicts.
  auto kib = [](double b) { return fmt::format("{:.0f} KiB", b / 1024); };
  {
    QosVerdict v{"ECN marks before PFC pauses", "", "", true};
    int early = 0;
    std::string first;
    for (const SwitchState& st : switches_) {
      if (st.first_xoff < 0) continue;
      if (st.first_mark < 0 || st.first_mark > st.first_xoff) {
        if (early++ == 0)
          first = fmt::format("{} paused at {:.1f} us, {}", end_name(names.vertex(st.vertex)),
                              to_s(st.first_xoff) * 1e6,
                              st.first_mark < 0 ? std::string("no mark")
                                                : fmt::format("first mark at {:.1f} us",
                                                              to_s(st.first_mark) * 1e6));
      }
    }
    v.pass = early == 0;
    v.detail = v.pass
                   ? (r.pause_frames ? "every switch that paused had marked first" : "no PFC pause")
                   : fmt::format("{} switch(es) paused before marking; {}", early, first);
    if (!v.pass)
      v.setting = s_.ecn.enabled
                      ? fmt::format(
                            "lower the ECN thresholds below the PFC pause point "
                            "(--ecn kmin=..,kmax=..; now {} / {}): WRED_PROFILE "
                            "green_min/max_threshold, EOS random-detect ecn",
                            kib(s_.ecn.kmin_bytes), kib(s_.ecn.kmax_bytes))
                      : "turn ECN marking on for the RoCE queue (--ecn kmin=..,kmax=..,pmax=..) "
                        "and DCQCN at the NICs";
    r.verdicts.push_back(v);
  }
  {
    QosVerdict v{"no pause storm", "", "", r.max_pause_depth <= s_.pause_storm_hops};
    v.detail = fmt::format("pauses reach {} hop(s) from the congestion (limit {})",
                           r.max_pause_depth, s_.pause_storm_hops);
    if (!v.pass)
      v.setting = fmt::format(
          "stop the congestion at its source: ECN on and below the pause point, DCQCN on at "
          "the NICs; the PFC watchdog ({} ms) only breaks a storm after the fact",
          kPfcWatchdogMs);
    r.verdicts.push_back(v);
  }
  {
    QosVerdict v;
    if (s_.pfc) {
      v.name = "headroom enough for the cables";
      v.pass = drops_lossless_ == 0 && r.headroom_bytes >= r.round_trip_bytes;
      v.detail = fmt::format(
          "{} drop(s) on the lossless priority; least to spare: {} holds {} against a round "
          "trip of {} on {:g} m",
          drops_lossless_, r.headroom_port, kib(r.headroom_bytes), kib(r.round_trip_bytes),
          r.headroom_cable_m);
      if (!v.pass)
        v.setting =
            "raise the lossless profile's xoff (headroom) to the cable's round trip: SONiC "
            "CABLE_LENGTH and BUFFER_PROFILE pg_lossless_*_profile xoff, or shorter cables";
    } else {
      v.name = "no drops on the RoCE priority";
      v.pass = r.drops == 0;
      v.detail = fmt::format("PFC off: {} drop(s), {} packet(s) sent again (go-back-N)", r.drops,
                             r.retransmitted_packets);
      if (!v.pass)
        v.setting = fmt::format(
            "--pfc on: PFC on priority {} (lossless RoCE), or enough ECN "
            "and DCQCN to keep the queues short",
            kRocePriority);
    }
    r.verdicts.push_back(v);
  }
  {
    const double share = r.fluid_throughput_Bps > 0 ? r.throughput_Bps / r.fluid_throughput_Bps : 0;
    QosVerdict v{"throughput holds", "", "", r.unfinished == 0 && share >= kQosThroughputFloor};
    v.detail = r.unfinished > 0
                   ? fmt::format("{} of {} flows unfinished after {:g} s", r.unfinished,
                                 r.flows.size(), s_.max_time_s)
                   : fmt::format(
                         "{:.0f} % of the flow-level model's throughput on the same paths "
                         "(floor {:.0f} %); slowest flow {} against {} in the model",
                         100 * share, 100 * kQosThroughputFloor, units::format_seconds(r.time_s),
                         units::format_seconds(r.fluid_time_s));
    if (!v.pass)
      v.setting =
          s_.cc == CongestionControl::kHpcc
              ? "HPCC's eta and W_AI (the link idles below eta; W_AI too small starves flows)"
          : s_.cc == CongestionControl::kNone
              ? "congestion control at the NICs (DCQCN with ECN marking): PFC alone pauses "
                "whole links, and the flows behind them"
              : "DCQCN's recovery (rpg_time_reset, rpg_ai_rate, rpg_hai_rate) and the ECN "
                "thresholds: the senders are cut further than they recover";
    r.verdicts.push_back(v);
  }
  {
    const std::vector<int> cycle = pfc_dependency_cycle(fab_, flows_);
    QosVerdict v{"no cyclic buffer dependency", "", "", cycle.empty()};
    if (cycle.empty()) {
      v.detail = "the routed paths hold no cycle of PFC waits (no deadlock)";
    } else {
      std::string c;
      for (int l : cycle) c += end_name(names.from(l)) + " -> ";
      c += end_name(names.from(cycle.front()));
      v.detail = "a cycle of PFC waits: " + c;
      v.setting = "route up-down only (no valley paths), or take PFC off the links of the cycle";
    }
    r.verdicts.push_back(v);
  }
  return r;
}

}  // namespace

bool QosResult::all_pass() const {
  return std::all_of(verdicts.begin(), verdicts.end(), [](const QosVerdict& v) { return v.pass; });
}

QosResult run_qos(const Plan& plan, const Catalog& catalog, const Fabric& fab,
                  const std::vector<QosFlow>& flows, const QosSettings& settings) {
  Engine e(plan, catalog, fab, flows, settings);
  return e.run();
}

std::vector<int> pfc_dependency_cycle(const Fabric& fab, const std::vector<QosFlow>& flows) {
  std::vector<std::vector<int32_t>> paths;
  std::vector<int32_t> route;
  for (const QosFlow& f : flows)
    for (int k = 0; k < f.qps; ++k) {
      route.clear();
      const uint64_t qpn = (((f.qp_key & 0xFFFFFF) + static_cast<uint64_t>(k)) & 0xFFFFFF) |
                           ((((f.qp_key >> 24) & 0xFFFFFF) + static_cast<uint64_t>(k)) & 0xFFFFFF)
                               << 24;
      if (fab.route(f.src_nic, f.dst_nic, f.plane, qpn, route)) paths.push_back(route);
    }
  return pfc_dependency_cycle(fab.links().size(), paths);
}

std::vector<int> pfc_dependency_cycle(size_t n, const std::vector<std::vector<int32_t>>& paths) {
  // A buffer waits on the next: an edge from each link to the link after it on a path, both
  // directions (ACKs travel back on the lossless priority too).
  std::vector<std::vector<int32_t>> next(n);
  for (const std::vector<int32_t>& route : paths)
    for (size_t i = 0; i + 1 < route.size(); ++i) {
      next[route[i]].push_back(route[i + 1]);
      next[Fabric::reverse(route[i + 1])].push_back(Fabric::reverse(route[i]));
    }
  for (auto& v : next) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  // Iterative depth-first search; a grey node met again closes a cycle.
  std::vector<uint8_t> colour(n, 0);
  std::vector<int32_t> parent(n, -1);
  std::vector<std::pair<int32_t, size_t>> stack;
  for (size_t s = 0; s < n; ++s) {
    if (colour[s] || next[s].empty()) continue;
    stack.push_back({static_cast<int32_t>(s), 0});
    colour[s] = 1;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      if (i < next[v].size()) {
        const int32_t w = next[v][i++];
        if (colour[w] == 1) {
          std::vector<int> cycle{w};
          for (int32_t u = v; u != w && u >= 0; u = parent[u]) cycle.push_back(u);
          std::reverse(cycle.begin() + 1, cycle.end());
          return cycle;
        }
        if (colour[w] == 0) {
          colour[w] = 1;
          parent[w] = v;
          stack.push_back({w, 0});
        }
      } else {
        colour[v] = 2;
        stack.pop_back();
      }
    }
  }
  return {};
}

double jain_index(const std::vector<double>& x) {
  if (x.empty()) return 1;
  double s = 0, s2 = 0;
  for (double v : x) {
    s += v;
    s2 += v * v;
  }
  return s2 > 0 ? s * s / (static_cast<double>(x.size()) * s2) : 1;
}

}  // namespace gf
