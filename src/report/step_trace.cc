#include "report/step_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace gf {
namespace {

constexpr double kUsPerS = 1e6;
// The largest schedule drawn; beyond it the timeline would be hundreds of MB (the step's numbers
// do not depend on it).
constexpr long long kMaxOps = 2'000'000;

// Communication done inside every layer (on the critical path of each forward and backward).
bool per_layer(const std::string& kind) {
  return kind.rfind("tp_", 0) == 0 || kind.rfind("cp_", 0) == 0 || kind.rfind("ep_", 0) == 0;
}

struct ScheduledOp {
  bool backward;
  int chunk, microbatch;
};

// Megatron-LM core_v0.15.0, megatron/core/pipeline_parallel/schedules.py: microbatches go in
// groups of pp through the chunks (forwards chunk 0 first, backwards the last chunk first);
// num_warmup_microbatches forwards, then one forward one backward, then the remaining backwards.
std::vector<ScheduledOp> rank_order(int rank, int pp, int vp, int m) {
  std::vector<ScheduledOp> fwd, bwd;
  for (int g = 0; g < m; g += pp) {
    const int n = std::min(pp, m - g);
    for (int c = 0; c < vp; ++c)
      for (int j = 0; j < n; ++j) {
        fwd.push_back({false, c, g + j});
        bwd.push_back({true, vp - 1 - c, g + j});
      }
  }
  const int total = static_cast<int>(fwd.size());
  int warmup = vp == 1 ? pp - rank - 1 : 2 * (pp - rank - 1) + (vp - 1) * pp;
  warmup = std::clamp(warmup, 0, total);
  std::vector<ScheduledOp> out(fwd.begin(), fwd.begin() + warmup);
  for (int i = 0; i < total - warmup; ++i) {
    out.push_back(fwd[warmup + i]);
    out.push_back(bwd[i]);
  }
  for (int i = total - warmup; i < total; ++i) out.push_back(bwd[i]);
  return out;
}

nlohmann::json meta(const char* what, int pid, int tid, const std::string& name) {
  nlohmann::json e = {{"name", what}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

nlohmann::json sort_index(const char* what, int pid, int tid, int index) {
  nlohmann::json e = {{"name", what}, {"ph", "M"}, {"pid", pid}, {"args", {{"sort_index", index}}}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

nlohmann::json span(const std::string& name, const char* cat, int pid, int tid, double start_s,
                    double dur_s, nlohmann::json args = nlohmann::json::object()) {
  return {{"name", name},
          {"cat", cat},
          {"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"ts", start_s * kUsPerS},
          {"dur", dur_s * kUsPerS},
          {"args", std::move(args)}};
}

}  // namespace

nlohmann::json step_trace(const StepResult& r) {
  nlohmann::json events = nlohmann::json::array();
  const int pp = std::max<int>(1, static_cast<int>(r.stages.size()));
  const int vp = pp > 1 ? std::max(1, r.virtual_pipeline) : 1;
  const int m = std::max(1, static_cast<int>(std::lround(r.microbatches)));
  const bool drawn = 1LL * pp * vp * m * 2 <= kMaxOps && !r.stages.empty();

  // Tracks: compute, one per kind of communication, the bubble.
  constexpr int kCompute = 1;
  std::vector<std::string> kinds;
  for (const auto& c : r.comms) kinds.push_back(c.kind);
  const int bubble_tid = kCompute + 1 + static_cast<int>(kinds.size());
  auto tid_of = [&](const std::string& kind) {
    return kCompute + 1 +
           static_cast<int>(std::find(kinds.begin(), kinds.end(), kind) - kinds.begin());
  };
  for (int s = 0; s < pp; ++s) {
    const int pid = s + 1;
    const int layers = s < static_cast<int>(r.stages.size()) ? r.stages[s].layers : 0;
    events.push_back(meta("process_name", pid, -1,
                          pp > 1 ? fmt::format("pipeline stage {} ({} layers)", s + 1, layers)
                                 : fmt::format("GPU ({} layers)", layers)));
    events.push_back(sort_index("process_sort_index", pid, -1, s));
    events.push_back(meta("thread_name", pid, kCompute, "compute"));
    for (const auto& k : kinds) events.push_back(meta("thread_name", pid, tid_of(k), k));
    events.push_back(meta("thread_name", pid, bubble_tid, "pipeline bubble"));
    for (int t = kCompute; t <= bubble_tid; ++t)
      events.push_back(sort_index("thread_sort_index", pid, t, t));
  }
  nlohmann::json other = {
      {"generator", "gpufabric step"}, {"step_time_s", r.step_time_s}, {"microbatches", m},
      {"pipeline_stages", pp},         {"virtual_pipeline", vp},       {"drawn", drawn}};
  if (!drawn) return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", other}};

  // Exposed per-layer communication of one microbatch on a stage of `layers` layers: the
  // critical stage's share per layer, half with the forward and half with the backward.
  const double crit_layers = std::max(1, r.stages[r.critical_stage].layers);
  auto layer_comm = [&](const StepComm& c, int layers) {
    return c.exposed_s / (m * crit_layers) * layers / 2 / vp;
  };
  // The SMs overlapped communication takes from compute (the step's overlap_slowdown_s), spread
  // over every compute span: each runs that much longer than alone.
  const double sm_stretch = r.compute_s > 0 ? 1 + r.overlap_slowdown_s / r.compute_s : 1;
  other["sm_stretch"] = sm_stretch;
  double p2p_s = 0;
  for (const auto& c : r.comms)
    if (c.kind == "pp_sendrecv" && c.count > 0) p2p_s = c.total_s / c.count;

  // Dependency-driven run of the schedule: a forward of virtual stage k waits for k - 1's, a
  // backward for k + 1's (the last waits for its own forward), each after one transfer.
  const int stages_v = pp * vp;
  std::vector<std::vector<double>> f_end(stages_v, std::vector<double>(m, -1)),
      b_end(stages_v, std::vector<double>(m, -1));
  std::vector<std::vector<ScheduledOp>> order(pp);
  for (int s = 0; s < pp; ++s) order[s] = rank_order(s, pp, vp, m);
  std::vector<size_t> next(pp, 0);
  std::vector<double> free_at(pp, 0);
  std::vector<std::vector<std::pair<double, double>>> busy(pp);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < pp; ++s) {
      while (next[s] < order[s].size()) {
        const ScheduledOp& op = order[s][next[s]];
        const int k = op.chunk * pp + s;
        double ready = 0;
        if (!op.backward && k > 0) ready = f_end[k - 1][op.microbatch];
        if (op.backward)
          ready = k + 1 < stages_v ? b_end[k + 1][op.microbatch] : f_end[k][op.microbatch];
        if (ready < 0) break;
        const bool hop = op.backward ? k + 1 < stages_v : k > 0;
        const double start = std::max(free_at[s], ready + (hop ? p2p_s : 0));
        const StageTime& st = r.stages[s];
        double t = start;
        const double compute = (op.backward ? st.backward_s : st.forward_s) / vp * sm_stretch;
        const std::string name =
            fmt::format("{} mb {}{}", op.backward ? "backward" : "forward", op.microbatch,
                        vp > 1 ? fmt::format(" chunk {}", op.chunk) : "");
        events.push_back(span(name, op.backward ? "backward" : "forward", s + 1, kCompute, t,
                              compute, {{"microbatch", op.microbatch}, {"chunk", op.chunk}}));
        t += compute;
        for (const auto& c : r.comms) {
          if (!per_layer(c.kind)) continue;
          const double d = layer_comm(c, st.layers);
          if (d <= 0) continue;
          events.push_back(span(c.kind, "communication", s + 1, tid_of(c.kind), t, d,
                                {{"microbatch", op.microbatch}}));
          t += d;
        }
        // The send this op ends with: activations forward, gradients backward.
        const bool sends = op.backward ? k > 0 : k + 1 < stages_v;
        if (sends && p2p_s > 0)
          events.push_back(span("pp_sendrecv", "communication", s + 1, tid_of("pp_sendrecv"), t,
                                p2p_s, {{"microbatch", op.microbatch}}));
        (op.backward ? b_end : f_end)[k][op.microbatch] = t;
        busy[s].push_back({start, t});
        free_at[s] = t;
        ++next[s];
        progress = true;
      }
    }
  }
  // Step-level communication (data parallel, ZeRO): after each stage's last backward, the part
  // hidden behind that backward drawn under it.
  double end = 0;
  for (int s = 0; s < pp; ++s) {
    double t = free_at[s];
    for (const auto& c : r.comms) {
      if (per_layer(c.kind) || c.kind == "pp_sendrecv" || c.total_s <= 0) continue;
      events.push_back(span(c.kind, "communication", s + 1, tid_of(c.kind),
                            t - (c.total_s - c.exposed_s), c.total_s,
                            {{"exposed_s", c.exposed_s}, {"bytes", c.bytes}}));
      t += c.exposed_s;
    }
    end = std::max(end, t);
  }
  // Bubbles: every gap on a stage's compute track, up to the end of the step.
  for (int s = 0; s < pp; ++s) {
    double t = 0;
    busy[s].push_back({free_at[s], free_at[s]});
    for (const auto& [a, b] : busy[s]) {
      if (a > t + 1e-12) events.push_back(span("bubble", "bubble", s + 1, bubble_tid, t, a - t));
      t = std::max(t, b);
    }
    if (pp > 1 && t < end - 1e-12)
      events.push_back(span("bubble", "bubble", s + 1, bubble_tid, t, end - t));
  }
  bool complete = true;
  for (int s = 0; s < pp; ++s) complete = complete && next[s] == order[s].size();
  other["timeline_s"] = end;
  other["complete"] = complete;
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

}  // namespace gf
