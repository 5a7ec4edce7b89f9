#include "sim/step_overlap.h"

#include <algorithm>
#include <bit>
#include <iterator>

#include "sim/collective.h"
#include "sim/flow_builder.h"

namespace gf {
namespace {

// A key mixed into each communication's ECMP hashes: every parallel dimension has its own NCCL
// communicator, whose connections' QP numbers differ from every other's.
constexpr uint64_t kCommHashKey = 0x57e9;

// The most communications one step schedules (StepComm kinds); masks per link are 16 bits.
constexpr size_t kMaxComms = 16;

constexpr size_t kWindows = std::size(kOverlapWindowNames);

}  // namespace

void TaggedFlows::copy(const FlowSet& from, int f, double scale, int t) {
  thread_local std::vector<FlowSet::Hop> path;
  path.assign(from.begin(f), from.end(f));
  fs.add(from.bytes(f) * scale, path);
  tag.push_back(t);
}

void TaggedFlows::append(const TaggedFlows& from, int tag_offset) {
  for (int f = 0; f < from.fs.size(); ++f)
    copy(from.fs, f, 1.0, from.tag[static_cast<size_t>(f)] + tag_offset);
}

bool is_network_link(LinkClass c) { return c != LinkClass::kScaleUp && c != LinkClass::kPcie; }

bool crosses_network(const Fabric& fab, const FlowSet& fs, int f) {
  for (const auto* h = fs.begin(f); h != fs.end(f); ++h)
    if (is_network_link(fab.links()[static_cast<size_t>(h->link)].cls)) return true;
  return false;
}

std::vector<double> tag_completion(const TaggedFlows& tf, const FluidResult& r, int first,
                                   size_t tags) {
  std::vector<double> out(tags, 0);
  for (int f = 0; f < tf.fs.size(); ++f) {
    auto& t = out[static_cast<size_t>(tf.tag[static_cast<size_t>(f)])];
    t = std::max(t, r.completion_s[static_cast<size_t>(first + f)]);
  }
  return out;
}

SlowedComm slow_comm(double total_s, double exposed_s, double factor) {
  SlowedComm s;
  s.total_s = total_s * factor;
  const double hidden = total_s - exposed_s;
  // Untouched (factor 1): exactly as alone, not alone plus the rounding of total - hidden.
  s.exposed_s = factor == 1 ? exposed_s
                            : std::min(s.total_s, std::max(exposed_s, s.total_s - hidden));
  return s;
}

const char* comm_stream_name(CommStream s) { return name_of(kCommStreamNames, s); }
const char* overlap_window_name(OverlapWindowKind k) { return name_of(kOverlapWindowNames, k); }

StepConcurrency step_concurrency(const Fabric& fab, LoadBalancing lb,
                                 const std::vector<double>& cap,
                                 const std::vector<ScheduledComm>& comms) {
  const size_t C = std::min(comms.size(), kMaxComms);
  StepConcurrency out;
  out.comms.assign(comms.size(), {});
  // One call's network flows of each communication, built once; a sendrecv's also reversed
  // (the backward's gradient goes from stage p + 1 back to p).
  std::vector<FlowSet> one(C), back(C);
  auto network_only = [&](const FlowSet& all, FlowSet& kept) {
    std::vector<FlowSet::Hop> path;
    for (int f = 0; f < all.size(); ++f)
      if (crosses_network(fab, all, f)) {
        path.assign(all.begin(f), all.end(f));
        kept.add(all.bytes(f), path);
      }
  };
  for (size_t c = 0; c < C; ++c) {
    const ScheduledComm& sc = comms[c];
    if (sc.bytes <= 0 || sc.groups.empty() || sc.groups[0].size() < 2) continue;
    const uint64_t seed = mix_key(kCommHashKey, c + 1);
    FlowSet all;
    group_flows(fab, lb, sc.op, sc.groups, sc.bytes, all, seed);
    network_only(all, one[c]);
    if (sc.op == Op::kSendRecv && (sc.backward_calls[0] > 0 || sc.backward_calls[1] > 0)) {
      auto rev = sc.groups;
      for (auto& g : rev) std::reverse(g.begin(), g.end());
      FlowSet r;
      group_flows(fab, lb, sc.op, rev, sc.bytes, r, mix_key(seed, 2));
      network_only(r, back[c]);
    }
  }

  const size_t L = fab.links().size();
  std::vector<std::vector<double>> factor(kWindows, std::vector<double>(C, 1.0));
  std::vector<uint16_t> shares(C, 0);  // per communication: the others it met on a link
  for (size_t w = 0; w < kWindows; ++w) {
    OverlapWindow win;
    win.kind = static_cast<OverlapWindowKind>(w);
    // The streams active in the window, in CommStream order, and their flows.
    std::vector<TaggedFlows> flows;
    std::vector<int> stream_of_comm(C, -1);
    for (const auto& e : kCommStreamNames) {
      WindowStream ws;
      ws.stream = e.value;
      TaggedFlows tf;
      for (size_t c = 0; c < C; ++c) {
        const ScheduledComm& sc = comms[c];
        const double calls = sc.calls[w];
        if (sc.stream != e.value || calls <= 0 || sc.bytes <= 0) continue;
        ws.kinds.push_back(sc.kind);
        ws.bytes += sc.bytes * calls;
        stream_of_comm[c] = static_cast<int>(win.streams.size());
        const double backward = sc.op == Op::kSendRecv ? std::min(calls, sc.backward_calls[w]) : 0;
        for (int f = 0; f < one[c].size(); ++f)
          if (calls - backward > 0) tf.copy(one[c], f, calls - backward, static_cast<int>(c));
        for (int f = 0; f < back[c].size(); ++f)
          if (backward > 0) tf.copy(back[c], f, backward, static_cast<int>(c));
      }
      if (ws.kinds.empty()) continue;
      ws.network = tf.fs.size() > 0;
      win.streams.push_back(std::move(ws));
      flows.push_back(std::move(tf));
    }
    const size_t S = win.streams.size();
    // Which streams' and communications' network flows cross each link.
    std::vector<uint8_t> stream_mask(S > 1 ? L : 0, 0);
    std::vector<uint16_t> comm_mask(S > 1 ? L : 0, 0);
    for (size_t s = 0; s < S && S > 1; ++s)
      for (int f = 0; f < flows[s].fs.size(); ++f)
        for (const auto* h = flows[s].fs.begin(f); h != flows[s].fs.end(f); ++h) {
          stream_mask[static_cast<size_t>(h->link)] |= static_cast<uint8_t>(1u << s);
          comm_mask[static_cast<size_t>(h->link)] |=
              static_cast<uint16_t>(1u << flows[s].tag[static_cast<size_t>(f)]);
        }
    uint8_t meeting = 0;              // streams that share a link with another
    std::vector<uint16_t> met(C, 0);  // per communication: communications of other streams it met
    for (size_t l = 0; l < stream_mask.size(); ++l) {
      if (std::popcount(stream_mask[l]) < 2) continue;
      meeting |= stream_mask[l];
      for (uint16_t a = comm_mask[l]; a; a &= a - 1) {
        const int ca = std::countr_zero(a);
        for (uint16_t b = comm_mask[l]; b; b &= b - 1) {
          const int cb = std::countr_zero(b);
          if (stream_of_comm[static_cast<size_t>(ca)] != stream_of_comm[static_cast<size_t>(cb)])
            met[static_cast<size_t>(ca)] |= static_cast<uint16_t>(1u << cb);
        }
      }
    }
    win.shared = meeting != 0;
    if (win.shared) {
      // Each meeting stream alone, then all of them together: their flows start at once, as
      // the window's streams are issued at once; a stream's own communications are sequential
      // on the GPU and meet each other in both runs, so only the other streams' share slows it.
      TaggedFlows all;
      std::vector<int> first(S, 0);
      std::vector<std::vector<double>> alone(S);
      for (size_t s = 0; s < S; ++s) {
        if (!(meeting >> s & 1)) continue;
        const FluidResult r = run_fluid(flows[s].fs, cap);
        alone[s] = tag_completion(flows[s], r, 0, C);
        win.streams[s].alone_s = r.time_s;
        first[s] = all.fs.size();
        all.append(flows[s]);
      }
      const FluidResult r = run_fluid(all.fs, cap);
      for (size_t s = 0; s < S; ++s) {
        if (!(meeting >> s & 1)) continue;
        const std::vector<double> together = tag_completion(flows[s], r, first[s], C);
        WindowStream& ws = win.streams[s];
        for (double t : together) ws.together_s = std::max(ws.together_s, t);
        ws.factor = ws.alone_s > 0 ? std::max(1.0, ws.together_s / ws.alone_s) : 1;
        if (ws.factor < 1 + kFluidTie) ws.factor = 1;
        for (size_t c = 0; c < C; ++c) {
          if (stream_of_comm[c] != static_cast<int>(s) || !met[c] || alone[s][c] <= 0) continue;
          const double f = together[c] / alone[s][c];
          if (f >= 1 + kFluidTie) factor[w][c] = f;
          shares[c] |= met[c];
        }
      }
    }
    out.windows.push_back(std::move(win));
  }
  // Over the step: each window's factor weighted by the communication's calls in it.
  for (size_t c = 0; c < C; ++c) {
    double calls = 0, weighted = 0;
    for (size_t w = 0; w < kWindows; ++w) {
      calls += comms[c].step_calls[w];
      weighted += comms[c].step_calls[w] * factor[w][c];
    }
    CommConcurrency& cc = out.comms[c];
    const double outside = std::max(0.0, comms[c].count - calls);  // in no window: factor 1
    cc.factor = calls > 0 ? (weighted + outside) / (calls + outside) : 1;
    bool any = false;
    for (size_t w = 0; w < kWindows; ++w) any = any || factor[w][c] != 1;
    if (!any) cc.factor = 1;  // exactly, not a mean of ones rounded
    for (size_t o = 0; o < C; ++o)
      if (shares[c] >> o & 1) cc.shares_with.push_back(comms[o].kind);
  }
  return out;
}

}  // namespace gf
