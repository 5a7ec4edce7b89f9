#include "sim/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "common/text.h"
#include "sim/collective.h"
#include "units/units.h"

namespace gf {
namespace {

// A kernel released by another stream's event starts a few microseconds after that kernel ends
// (the same gap back-to-back kernels show on one stream: 1-5 us on H100 in Kineto traces); a
// stream idle for longer than this before a kernel waited for something (estimate).
constexpr double kWakeSlackUs = 10;

// --- names ----------------------------------------------------------------------------------

std::string lower_alnum(const std::string& s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// --- the graph ------------------------------------------------------------------------------

/// One kernel's dependencies as recorded: its stream predecessor (or the step's start) with the
/// gap it left, and the other stream's kernel that released it, if any, with its gap.
struct Deps {
  int32_t pred = -1, waker = -1;
  double pred_gap_us = 0, waker_gap_us = 0;
};

/// A rank's kernels in the replayed window, in start order, with their dependencies.
struct RankGraph {
  const TracedRank* rank = nullptr;
  std::vector<int32_t> kernel;  ///< index into rank->kernels
  std::vector<Deps> deps;
  double t0_us = 0;            ///< the window's first kernel start
  std::vector<int32_t> group;  ///< per kernel: merged group of its collective, -1 none
  std::vector<int32_t> call;   ///< per kernel: the call's sequence number in its group
};

RankGraph build_graph(const TracedRank& r, double from_us, double to_us,
                      const std::vector<int>& merged_group) {
  RankGraph g;
  g.rank = &r;
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    const auto& k = r.kernels[i];
    if (k.start_us >= from_us && k.start_us < to_us) g.kernel.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(g.kernel.begin(), g.kernel.end(), [&](int32_t a, int32_t b) {
    return r.kernels[a].start_us < r.kernels[b].start_us;
  });
  const size_t n = g.kernel.size();
  g.deps.resize(n);
  g.group.assign(n, -1);
  g.call.assign(n, -1);
  if (n == 0) return g;
  g.t0_us = r.kernels[g.kernel[0]].start_us;
  // Per stream: the positions (in g.kernel) of its kernels, and their end times, both in order.
  std::map<int32_t, std::vector<int32_t>> on_stream;
  std::map<int32_t, std::vector<double>> ends;
  std::map<int, int> calls;
  for (size_t i = 0; i < n; ++i) {
    const auto& k = r.kernels[g.kernel[i]];
    auto& mine = on_stream[k.stream];
    Deps d;
    const double end_pred = mine.empty() ? g.t0_us
                                         : r.kernels[g.kernel[mine.back()]].start_us +
                                               r.kernels[g.kernel[mine.back()]].dur_us;
    d.pred = mine.empty() ? -1 : mine.back();
    d.pred_gap_us = std::max(0.0, k.start_us - end_pred);
    if (d.pred_gap_us > kWakeSlackUs) {
      // Idle: released by the kernel of another stream that ended last before it started.
      double best = -std::numeric_limits<double>::infinity();
      for (const auto& [s, e] : ends) {
        if (s == k.stream || e.empty()) continue;
        // Last end <= start (ends of a stream are in order: its kernels do not overlap).
        auto it = std::upper_bound(e.begin(), e.end(), k.start_us);
        if (it == e.begin()) continue;
        --it;
        const double end = *it;
        if (end < k.start_us - kWakeSlackUs || end <= end_pred || end <= best) continue;
        best = end;
        d.waker = on_stream[s][static_cast<size_t>(it - e.begin())];
        d.waker_gap_us = k.start_us - end;
      }
      if (d.waker >= 0) d.pred_gap_us = 0;  // the event, not the host, held it back
    }
    g.deps[i] = d;
    if (k.collective >= 0) {
      const int lg = r.collectives[static_cast<size_t>(k.collective)].group;
      if (lg >= 0) {
        g.group[i] = merged_group[static_cast<size_t>(lg)];
        g.call[i] = calls[g.group[i]]++;
      }
    }
    mine.push_back(static_cast<int32_t>(i));
    auto& e = ends[k.stream];
    e.push_back(std::max(e.empty() ? 0.0 : e.back(), k.start_us + k.dur_us));
  }
  return g;
}

// --- times ----------------------------------------------------------------------------------

struct Interval {
  double a, b;
};

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& x, const Interval& y) { return x.a < y.a; });
  std::vector<Interval> out;
  for (const auto& i : v) {
    if (i.b <= i.a) continue;
    if (!out.empty() && i.a <= out.back().b)
      out.back().b = std::max(out.back().b, i.b);
    else
      out.push_back(i);
  }
  return out;
}

double length(const std::vector<Interval>& v) {
  double s = 0;
  for (const auto& i : v) s += i.b - i.a;
  return s;
}

/// Time of [a, b) covered by the merged intervals `m`.
double covered(const std::vector<Interval>& m, double a, double b) {
  auto it =
      std::upper_bound(m.begin(), m.end(), a, [](double x, const Interval& i) { return x < i.b; });
  double s = 0;
  for (; it != m.end() && it->a < b; ++it) s += std::min(b, it->b) - std::max(a, it->a);
  return s;
}

/// One rank's schedule: start and end of each kernel of its graph, microseconds.
struct Schedule {
  std::vector<double> start, end;
};

StepTimes times_of(const RankGraph& g, const Schedule& s, std::vector<double>* exposed_per_kernel) {
  StepTimes t;
  const size_t n = g.kernel.size();
  if (n == 0) return t;
  std::vector<Interval> compute, comm;
  double lo = s.start[0], hi = s.end[0];
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, s.start[i]);
    hi = std::max(hi, s.end[i]);
    (g.rank->kernels[g.kernel[i]].collective >= 0 ? comm : compute)
        .push_back({s.start[i], s.end[i]});
  }
  const auto c = merged(std::move(compute));
  const auto m = merged(std::move(comm));
  double exposed = 0;
  for (const auto& i : m) exposed += (i.b - i.a) - covered(c, i.a, i.b);
  t.step_s = (hi - lo) * 1e-6;
  t.compute_s = length(c) * 1e-6;
  t.exposed_comm_s = exposed * 1e-6;
  t.other_s = std::max(0.0, t.step_s - t.compute_s - t.exposed_comm_s);
  if (exposed_per_kernel) {
    // Each stretch of exposed time goes in equal shares to the collectives running through it:
    // two on different streams at once are exposed once, and the shares add up to the step's.
    exposed_per_kernel->assign(n, 0);
    struct Edge {
      double at;
      size_t kernel;
      bool starts;
    };
    std::vector<Edge> edges;
    for (size_t i = 0; i < n; ++i)
      if (g.rank->kernels[g.kernel[i]].collective >= 0 && s.end[i] > s.start[i]) {
        edges.push_back({s.start[i], i, true});
        edges.push_back({s.end[i], i, false});
      }
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
      return a.at != b.at ? a.at < b.at : a.starts < b.starts;  // ends first at a tie
    });
    std::vector<size_t> active;
    for (size_t e = 0; e < edges.size(); ++e) {
      if (edges[e].starts) {
        active.push_back(edges[e].kernel);
      } else {
        active.erase(std::find(active.begin(), active.end(), edges[e].kernel));
      }
      if (active.empty() || e + 1 == edges.size()) continue;
      const double a = edges[e].at, b = edges[e + 1].at;
      if (b <= a) continue;
      const double share = ((b - a) - covered(c, a, b)) * 1e-6 / static_cast<double>(active.size());
      for (size_t k : active) (*exposed_per_kernel)[k] += share;
    }
  }
  return t;
}

Schedule recorded_schedule(const RankGraph& g) {
  Schedule s;
  for (int32_t k : g.kernel) {
    const auto& x = g.rank->kernels[static_cast<size_t>(k)];
    s.start.push_back(x.start_us);
    s.end.push_back(x.start_us + x.dur_us);
  }
  return s;
}

// --- groups on the fabric -------------------------------------------------------------------

struct MergedGroup {
  TracedGroup g;
  GroupMapping map;
  std::vector<std::vector<int>> siblings;  ///< GPU ids of every group of this kind
};

bool arithmetic(const std::vector<int>& r) {
  if (r.size() < 2) return true;
  const int s = r[1] - r[0];
  if (s <= 0) return false;
  for (size_t i = 1; i < r.size(); ++i)
    if (r[i] - r[i - 1] != s) return false;
  return true;
}

/// Groups like {first, first+stride, ...} of `size` that partition the world: every base b with
/// b mod (size x stride) < stride. Only the group itself when they do not tile the world.
std::vector<std::vector<int>> tile(int first, int stride, int size, int world) {
  std::vector<std::vector<int>> out;
  const long long span = 1LL * size * stride;
  if (span <= 0 || world % span != 0) {
    std::vector<int> g;
    for (int j = 0; j < size; ++j) g.push_back(first + j * stride);
    out.push_back(g);
    return out;
  }
  for (int b = 0; b < world; ++b) {
    if (b % span >= stride) continue;
    std::vector<int> g;
    for (int j = 0; j < size; ++j) g.push_back(b + j * stride);
    out.push_back(std::move(g));
  }
  return out;
}

/// The role a group of `size` plays in the layout, from its description (Megatron's names) or
/// its size; "" when it fits none.
std::string role_in_layout(const TracedGroup& g, const ReplayLayout& l, int world) {
  const std::string d = lower_alnum(g.desc);
  if (d.find("tensor") != std::string::npos && g.size == l.tp) return "tp";
  if (d.find("pipeline") != std::string::npos && g.size == l.pp) return "pp";
  if (d.find("data") != std::string::npos && g.size == l.dp) return "dp";
  if (g.size == world) return "world";
  if (g.size == l.tp) return "tp";
  if (g.size == l.dp) return "dp";
  if (g.size == l.pp) return "pp";
  return "";
}

// Where the ranks' calls at one position of a communicator (`at`: rank, kernel position) do not
// pair up: another operation, or (but alltoall, whose splits may differ per rank, and
// point-to-point) another size. The error names both ranks' files and lines.
std::optional<Diagnostic> mismatched_call(const std::vector<RankGraph>& graphs,
                                          const std::vector<std::pair<size_t, size_t>>& at,
                                          const std::string& group, int call) {
  auto collective_at = [&](std::pair<size_t, size_t> a) -> const TracedCollective& {
    const TracedRank& r = *graphs[a.first].rank;
    const int32_t k = graphs[a.first].kernel[a.second];
    return r.collectives[static_cast<size_t>(r.kernels[static_cast<size_t>(k)].collective)];
  };
  auto where = [&](std::pair<size_t, size_t> a) {
    const TracedRank& r = *graphs[a.first].rank;
    const int line = collective_at(a).line;
    return line > 0 ? fmt::format("{}:{}", r.file, line) : r.file;
  };
  auto what = [](const TracedCollective& c) {
    return fmt::format("{} of {}", c.op ? op_name(*c.op) : c.name, units::format_bytes(c.bytes));
  };
  const TracedCollective& first = collective_at(at.front());
  for (size_t m = 1; m < at.size(); ++m) {
    const TracedCollective& c = collective_at(at[m]);
    const bool same_op = first.op && c.op ? *first.op == *c.op : first.name == c.name;
    // A size of 0 is none recorded (kept as recorded): nothing to compare.
    const bool sized =
        c.op && *c.op != Op::kAlltoall && *c.op != Op::kSendRecv && c.bytes > 0 && first.bytes > 0;
    const bool same_size =
        !sized || std::abs(c.bytes - first.bytes) <= 1e-9 * std::max(first.bytes, c.bytes);
    if (same_op && same_size) continue;
    const TracedRank& r = *graphs[at[m].first].rank;
    // NCCL logs name the call's line (its COLL line); a profiler trace, its events.
    Diagnostic d = Diagnostic::in_file(
        r.file, c.line > 0 ? "COLL" : "traceEvents",
        fmt::format("call {} on group '{}' does not pair up across the ranks: rank {} records {} "
                    "({}), rank {} {} ({}); NCCL would hang or mix the buffers",
                    call + 1, group, graphs[at.front().first].rank->rank, what(first),
                    where(at.front()), r.rank, what(c), where(at[m])),
        "give traces of the same step of one job, recorded together, as the tools wrote them");
    d.line = c.line;
    return d;
  }
  return std::nullopt;
}

}  // namespace

// --- public helpers -------------------------------------------------------------------------

std::vector<int> complete_ranks(const std::vector<int>& known, int size) {
  if (size <= 0) return {};
  if (static_cast<int>(known.size()) >= size)
    return std::vector<int>(known.begin(), known.begin() + size);
  if (known.size() < 2) return {};
  if (!arithmetic(known)) return {};
  const int s = known[1] - known[0];
  std::vector<int> out;
  for (int j = 0; j < size; ++j) out.push_back(known[0] + j * s);
  return out;
}

double torch_dtype_bytes(const std::string& dtype) {
  // c10::toString(ScalarType) names (c10/core/ScalarType.h) and their element sizes.
  static const std::map<std::string, double> kBytes = {{"Byte", 1},
                                                       {"Char", 1},
                                                       {"Bool", 1},
                                                       {"Short", 2},
                                                       {"Int", 4},
                                                       {"Long", 8},
                                                       {"Half", 2},
                                                       {"Float", 4},
                                                       {"Double", 8},
                                                       {"BFloat16", 2},
                                                       {"ComplexHalf", 4},
                                                       {"ComplexFloat", 8},
                                                       {"ComplexDouble", 16},
                                                       {"Float8_e5m2", 1},
                                                       {"Float8_e4m3fn", 1},
                                                       {"Float8_e5m2fnuz", 1},
                                                       {"Float8_e4m3fnuz", 1},
                                                       {"UInt16", 2},
                                                       {"UInt32", 4},
                                                       {"UInt64", 8}};
  auto it = kBytes.find(dtype);
  return it == kBytes.end() ? 0 : it->second;
}

std::optional<Op> collective_op(const std::string& name) {
  std::string n = name;
  // Kernel names: ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...), ncclKernel_AllGather_...
  for (const char* p : {"ncclDevKernel_", "ncclKernel_"})
    if (starts_with(n, p)) {
      n = n.substr(std::string(p).size());
      n = n.substr(0, n.find('_'));
    }
  if (starts_with(n, "nccl:")) n = n.substr(5);
  std::string k = lower_alnum(n);
  // c10d's variants of one operation: _allgather_base, allgather_into_tensor_coalesced,
  // reduce_scatter_tensor_coalesced, _reduce_scatter_base, allreduce_coalesced, _reduce_oop.
  for (const char* suffix : {"coalesced", "base", "oop", "intotensor", "tensor"})
    for (int again = 0; again < 2; ++again) {
      const std::string sfx = suffix;
      if (k.size() > sfx.size() && k.compare(k.size() - sfx.size(), sfx.size(), sfx) == 0)
        k.resize(k.size() - sfx.size());
    }
  if (k == "allreduce" || k == "barrier") return Op::kAllReduce;
  if (k == "allgather") return Op::kAllGather;
  if (k == "reducescatter") return Op::kReduceScatter;
  if (k == "alltoall" || k == "alltoallv" || k == "alltoallbase") return Op::kAlltoall;
  if (k == "broadcast") return Op::kBroadcast;
  if (k == "reduce") return Op::kReduce;
  if (k == "send" || k == "recv" || k == "sendrecv" || k == "batchisendirecv") return Op::kSendRecv;
  return std::nullopt;
}

// --- the replay -----------------------------------------------------------------------------

Result<ReplayResult> replay_step(const std::vector<TracedRank>& ranks, const Plan& plan,
                                 const Fabric& fabric, const ReplayOptions& o) {
  ReplayResult out;
  if (ranks.empty()) return Diagnostic::error("no trace to replay");
  out.traced_ranks = static_cast<int>(ranks.size());
  out.timed = true;
  for (const auto& r : ranks) out.timed = out.timed && r.timed;

  // Groups merged across the traces by name; their sizes must agree.
  std::vector<MergedGroup> groups;
  std::map<std::string, int> by_name;
  std::vector<std::vector<int>> merged_of(ranks.size());
  std::vector<Diagnostic> errs;
  for (size_t ri = 0; ri < ranks.size(); ++ri)
    for (const auto& g : ranks[ri].groups) {
      auto [it, fresh] = by_name.emplace(g.name, static_cast<int>(groups.size()));
      if (fresh) {
        groups.push_back({g, {}, {}});
      } else {
        auto& m = groups[static_cast<size_t>(it->second)].g;
        if (m.size != g.size)
          errs.push_back(
              Diagnostic::in_file(ranks[ri].file, "Process Group Name",
                                  fmt::format("group '{}' has {} ranks here and {} in {}", g.name,
                                              g.size, m.size, ranks[0].file)));
        if (m.ranks.empty()) m.ranks = g.ranks;
        if (m.desc.empty()) m.desc = g.desc;
      }
      merged_of[ri].push_back(it->second);
    }
  if (!errs.empty()) return errs;

  // The world: what the traces say, the largest group, or the layout.
  const ReplayLayout& L = o.layout;
  const bool layout = L.tp > 0 || L.pp > 0 || L.dp > 0;
  int world = 0;
  for (const auto& r : ranks) world = std::max(world, r.world);
  for (const auto& m : groups)
    for (int x : m.g.ranks) world = std::max(world, x + 1);
  // Calls per group, and per size: the inference below orders the groups by them.
  std::vector<int> calls_of(groups.size(), 0);
  for (size_t ri = 0; ri < ranks.size(); ++ri)
    for (const auto& c : ranks[ri].collectives)
      if (c.group >= 0)
        ++calls_of[static_cast<size_t>(merged_of[ri][static_cast<size_t>(c.group)])];
  std::map<int, int> calls_by_size;  // size -> most calls of a group of that size
  for (size_t gi = 0; gi < groups.size(); ++gi)
    if (groups[gi].g.size > 1)
      calls_by_size[groups[gi].g.size] = std::max(calls_by_size[groups[gi].g.size], calls_of[gi]);
  const bool layout_given = L.tp > 0 || L.pp > 0 || L.dp > 0;
  if (world == 0 && !layout_given && !calls_by_size.empty()) {
    // Neither the traces nor the user say how large the job is: the largest group when it is
    // the product of the others (a world group beside tp and dp), else the product of them all
    // (every dimension's group is there, none the world's).
    const int largest = calls_by_size.rbegin()->first;
    long long others = 1, all = 1;
    for (const auto& [size, n] : calls_by_size) {
      all *= size;
      if (size != largest) others *= size;
      all = std::min(all, static_cast<long long>(plan.gpus) + 1);
      others = std::min(others, static_cast<long long>(plan.gpus) + 1);
    }
    world = (others == largest || all > plan.gpus) ? largest : static_cast<int>(all);
    if (world != largest || calls_by_size.size() > 1)
      out.notes.push_back(fmt::format(
          "the traces do not say the job's size: taken as {} ranks from the groups' sizes; give "
          "--tp/--pp/--dp if it ran otherwise",
          world));
  }
  const int world_said = world;  // by the traces (distributedInfo, ranks), not by sizes
  int largest_group = 0;
  for (const auto& m : groups) largest_group = std::max(largest_group, m.g.size);
  world = std::max(world, largest_group);
  if (layout) {
    // In double: each factor may be as large as any cluster, their product past 64 bits.
    const double product = 1.0 * std::max(1, L.tp) * std::max(1, L.pp) * std::max(1, L.dp);
    const bool full = L.tp > 0 && L.pp > 0 && L.dp > 0;
    if (product > std::numeric_limits<int>::max())
      return Diagnostic::flag(
          "--tp", fmt::format("tp x pp x dp = {:.4g}, more ranks than any job has", product),
          "give a layout whose product is the job's size, or none");
    const long long want = static_cast<long long>(product);
    if (full && world_said == 0 && largest_group <= want) world = static_cast<int>(want);
    if (full && want != world)
      return Diagnostic::flag("--tp",
                              fmt::format("tp x pp x dp = {} but the traces' job has {} "
                                          "ranks",
                                          want, world),
                              "give a layout whose product is the job's size, or none");
    world = static_cast<int>(std::max<long long>(world, want));
  }
  if (world < 1) world = 1;
  const bool placed = !o.gpu_of_rank.empty();
  const long long room = placed ? static_cast<long long>(o.gpu_of_rank.size()) : plan.gpus;
  if (world > room)
    return Diagnostic::error(fmt::format("the traced job has {} ranks but the {} has {} GPUs",
                                         world, placed ? "job" : "fabric", room),
                             placed
                                 ? "give the job at least as many GPUs as the traced run had ranks"
                                 : "replay on a spec with at least as many GPUs (cluster.nodes)");
  // Rank r's GPU on the fabric.
  auto gpu_of = [&](int r) { return placed ? o.gpu_of_rank[static_cast<size_t>(r)] : r; };
  out.world = world;
  ReplayLayout lay = L;
  if (layout) {
    // The missing dimension fills the world.
    if (lay.tp <= 0) lay.tp = std::max(1, world / (std::max(1, lay.pp) * std::max(1, lay.dp)));
    if (lay.pp <= 0) lay.pp = std::max(1, world / (lay.tp * std::max(1, lay.dp)));
    if (lay.dp <= 0) lay.dp = std::max(1, world / (lay.tp * lay.pp));
    // The dimensions given must divide the job: what is left over fits no group.
    if (1LL * lay.tp * lay.pp * lay.dp != world) {
      std::string given;
      for (const auto& [name, v] :
           {std::pair{"tp", L.tp}, std::pair{"pp", L.pp}, std::pair{"dp", L.dp}})
        if (v > 0) given += fmt::format("{}{}={}", given.empty() ? "" : " x ", name, v);
      return Diagnostic::flag(
          L.tp > 0 ? "--tp" : (L.pp > 0 ? "--pp" : "--dp"),
          fmt::format("{} does not divide the traces' job of {} ranks into whole groups", given,
                      world),
          "give the sizes the job ran with: their product is the job's ranks");
    }
  }

  // Each group on the fabric: its ranks, and the groups of its kind that run beside it.
  for (auto& m : groups) {
    GroupMapping& gm = m.map;
    gm.name = m.g.name;
    gm.desc = m.g.desc;
    gm.size = m.g.size;
    const std::vector<int> rk = complete_ranks(m.g.ranks, m.g.size);
    if (!rk.empty() && arithmetic(rk)) {
      gm.first_rank = rk[0];
      gm.stride = rk.size() > 1 ? rk[1] - rk[0] : 1;
      gm.source = "trace ranks";
    } else if (!rk.empty()) {
      gm.first_rank = rk[0];
      gm.stride = 0;  // not evenly spaced: simulated alone
      gm.source = "trace ranks";
    } else if (layout) {
      gm.role = role_in_layout(m.g, lay, world);
      gm.source = "--tp/--pp/--dp";
      if (gm.role == "tp" || gm.role == "world") gm.stride = 1;
      if (gm.role == "pp") gm.stride = lay.tp;
      if (gm.role == "dp") gm.stride = lay.tp * lay.pp;
      if (gm.role.empty())
        return Diagnostic::flag(
            "--tp",
            fmt::format("group '{}' of {} ranks is none of tp={}, pp={}, dp={} nor the "
                        "world ({})",
                        m.g.name, m.g.size, lay.tp, lay.pp, lay.dp, world),
            "give the layout the job ran with");
    } else {
      // From sizes and calls, Megatron's order: the group kind that calls most is innermost
      // (tensor parallelism: consecutive ranks), the next is strided by the sizes inside it, and
      // so on out to data parallelism, which calls least (one gradient reduction a bucket).
      gm.source = "inferred from sizes and calls";
      if (m.g.size == world) {
        gm.role = "world";
        gm.stride = 1;
      } else {
        std::vector<std::pair<int, int>> kinds;  // (calls, size), innermost first
        for (const auto& [size, n] : calls_by_size)
          if (size != world) kinds.push_back({n, size});
        std::sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) {
          return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        long long stride = 1;
        for (size_t k = 0; k < kinds.size(); ++k) {
          if (kinds[k].second == m.g.size) {
            gm.stride = static_cast<int>(std::min<long long>(stride, world));
            gm.role = k == 0 ? "tp" : (k + 1 == kinds.size() ? "dp" : "group");
            break;
          }
          stride *= kinds[k].second;
        }
        if (1LL * gm.stride * gm.size > world) gm.stride = std::max(1, world / gm.size);
      }
    }
    if (gm.role.empty() && gm.source == "trace ranks") {
      if (gm.size == world)
        gm.role = "world";
      else if (gm.stride == 1)
        gm.role = "tp";
      else if (gm.stride > 0 && 1LL * gm.stride * gm.size == world)
        gm.role = "dp";
      else
        gm.role = "group";
    }
    if (gm.stride > 0) {
      m.siblings = tile(gm.first_rank % std::max(1, gm.stride), gm.stride, gm.size, world);
    } else {
      m.siblings = {rk};
    }
    for (const auto& s : m.siblings)
      for (int x : s)
        if (x < 0 || x >= world)
          return Diagnostic::error(
              fmt::format("group '{}' names rank {} outside the job's {}", m.g.name, x, world));
    gm.siblings = static_cast<int>(m.siblings.size());
    out.groups.push_back(gm);
  }
  if (layout) {
    // The traces' own ranks place every group they name: a layout given beside them is not
    // used, and where a traced group's size is none of its dimensions it disagrees with them.
    bool used = false;
    std::string odd;
    for (const auto& gm : out.groups) {
      used = used || gm.source == "--tp/--pp/--dp";
      if (odd.empty() && gm.size > 1 && gm.size != world && gm.size != lay.tp &&
          gm.size != lay.pp && gm.size != lay.dp)
        odd = fmt::format(", and group '{}' of {} ranks is none of tp={}, pp={}, dp={}", gm.name,
                          gm.size, lay.tp, lay.pp, lay.dp);
    }
    if (!used)
      out.notes.push_back(
          fmt::format("--tp/--pp/--dp not used: the traces name every group's ranks{}", odd));
  }

  // The window: the named step (a bare number N is ProfilerStep#N), or each trace's last step
  // with kernels.
  std::optional<std::string> want = o.step;
  if (want && all_digits(*want)) want = "ProfilerStep#" + *want;
  std::vector<RankGraph> graphs;
  for (size_t ri = 0; ri < ranks.size(); ++ri) {
    const auto& r = ranks[ri];
    double from = -std::numeric_limits<double>::infinity();
    double to = std::numeric_limits<double>::infinity();
    if (!r.steps.empty()) {
      const TracedStep* pick = nullptr;
      std::vector<std::string> with_kernels;
      for (const auto& s : r.steps) {
        // Kernels are in start order: the first at or after the step's start tells.
        auto k = std::lower_bound(r.kernels.begin(), r.kernels.end(), s.start_us,
                                  [](const TracedKernel& x, double t) { return x.start_us < t; });
        if (k == r.kernels.end() || k->start_us >= s.end_us) continue;
        with_kernels.push_back(s.name);
        if (!want || s.name == *want) pick = &s;
      }
      if (!pick) {
        // The steps it could take, the first and last few of a long list.
        std::string listed;
        for (size_t i = 0; i < with_kernels.size(); ++i) {
          if (with_kernels.size() > 8 && i == 4) {
            listed += ", ...";
            i = with_kernels.size() - 3;
          }
          listed += (listed.empty() ? "" : ", ") + with_kernels[i];
        }
        return Diagnostic::flag(
            "--step",
            want ? fmt::format("{} has no step '{}' with GPU kernels", r.file, *want)
                 : fmt::format("{} has no step with GPU kernels", r.file),
            with_kernels.empty()
                ? std::string("record the step with ProfilerActivity.CUDA")
                : fmt::format("its steps with GPU kernels: {} (a number N is ProfilerStep#N)",
                              listed));
      }
      from = pick->start_us;
      to = pick->end_us;
      if (ri == 0) out.step = pick->name;
    } else if (o.step) {
      return Diagnostic::flag("--step", fmt::format("{} marks no steps (ProfilerStep#N)", r.file),
                              "leave --step out to replay the whole trace");
    }
    graphs.push_back(build_graph(r, from, to, merged_of[ri]));
    if (graphs.back().kernel.empty())
      return Diagnostic::in_file(r.file, "traceEvents", "no GPU kernels to replay",
                                 "record with ProfilerActivity.CUDA");
    out.kernels += static_cast<long long>(graphs.back().kernel.size());
  }

  // The collectives on this fabric: one simulation per (group, operation).
  std::map<std::pair<int, Op>, std::unique_ptr<GroupCollective>> sims;
  std::map<std::pair<int, Op>, LinkLoad> loads;
  std::map<std::pair<int, Op>, std::vector<std::vector<int>>> gpu_groups;
  auto sim_of = [&](int group, Op op) -> Result<const GroupCollective*> {
    auto key = std::make_pair(group, op);
    auto it = sims.find(key);
    if (it != sims.end()) return it->second.get();
    const auto& m = groups[static_cast<size_t>(group)];
    std::vector<std::vector<int>> gpus;
    for (const auto& s : m.siblings) {
      if (op == Op::kSendRecv) {
        for (size_t j = 0; j + 1 < s.size(); ++j) gpus.push_back({gpu_of(s[j]), gpu_of(s[j + 1])});
      } else {
        gpus.push_back({});
        for (int x : s) gpus.back().push_back(gpu_of(x));
      }
    }
    gpu_groups[key] = gpus;
    LinkLoad* keep = o.links ? &loads[key] : nullptr;
    // Sends run on the whole process group's communicator (its size sets their channels).
    auto g = GroupCollective::build(fabric, plan, op, gpus, o.load_balancing, keep,
                                    op == Op::kSendRecv ? m.g.size : 0);
    if (!g)
      return Diagnostic::error(fmt::format("{} on group '{}' ({} ranks): {}", op_name(op), m.g.name,
                                           m.g.size, g.errors().front().message));
    auto [pos, ok] = sims.emplace(key, std::make_unique<GroupCollective>(std::move(*g)));
    return pos->second.get();
  };

  // Predicted duration of every kernel: collectives simulated, the rest as recorded.
  std::vector<std::vector<double>> dur(graphs.size());
  std::vector<std::vector<uint8_t>> simulated(graphs.size());
  std::set<std::string> kept_names;
  for (size_t ri = 0; ri < graphs.size(); ++ri) {
    const auto& g = graphs[ri];
    const auto& r = *g.rank;
    dur[ri].resize(g.kernel.size());
    simulated[ri].assign(g.kernel.size(), 0);
    for (size_t i = 0; i < g.kernel.size(); ++i) {
      const auto& k = r.kernels[static_cast<size_t>(g.kernel[i])];
      dur[ri][i] = k.dur_us;
      if (k.collective < 0) continue;
      ++out.collectives;
      const auto& c = r.collectives[static_cast<size_t>(k.collective)];
      const int mg = g.group[i];
      if (!c.op || mg < 0 || c.bytes <= 0 || groups[static_cast<size_t>(mg)].g.size < 2) {
        kept_names.insert(c.name.empty() ? "(unnamed)" : c.name);
        continue;
      }
      auto s = sim_of(mg, *c.op);
      if (!s) return s.errors();
      dur[ri][i] = (*s)->seconds(c.bytes) * 1e6;
      simulated[ri][i] = 1;
    }
  }
  if (!kept_names.empty()) {
    std::string names;
    for (const auto& n : kept_names) names += (names.empty() ? "" : ", ") + n;
    out.notes.push_back(fmt::format(
        "kept as recorded (no size, no group, a single rank, or an operation the simulator "
        "lacks): {}",
        names));
  }

  // Schedule: each rank in its recorded order; a collective of several traced ranks starts when
  // the last of them is ready.
  std::map<int, int> members;  // merged group -> traced ranks in it
  for (size_t ri = 0; ri < graphs.size(); ++ri) {
    std::set<int> mine(merged_of[ri].begin(), merged_of[ri].end());
    for (int gi : mine) ++members[gi];
  }
  std::vector<Schedule> sched(graphs.size());
  std::vector<size_t> next(graphs.size(), 0);
  struct Pending {
    double ready = 0;
    std::vector<std::pair<size_t, size_t>> at;  // (rank, kernel position)
  };
  std::map<std::pair<int, int>, Pending> pending;
  for (size_t ri = 0; ri < graphs.size(); ++ri) {
    sched[ri].start.assign(graphs[ri].kernel.size(), 0);
    sched[ri].end.assign(graphs[ri].kernel.size(), 0);
  }
  auto ready_of = [&](size_t ri, size_t i) {
    const auto& g = graphs[ri];
    const Deps& d = g.deps[i];
    double t = (d.pred >= 0 ? sched[ri].end[static_cast<size_t>(d.pred)] : g.t0_us) + d.pred_gap_us;
    if (d.waker >= 0) t = std::max(t, sched[ri].end[static_cast<size_t>(d.waker)] + d.waker_gap_us);
    return t;
  };
  bool progress = true;
  size_t done = 0, total = 0;
  for (const auto& g : graphs) total += g.kernel.size();
  std::vector<uint8_t> waiting(graphs.size(), 0);
  while (done < total && progress) {
    progress = false;
    for (size_t ri = 0; ri < graphs.size(); ++ri) {
      const auto& g = graphs[ri];
      while (next[ri] < g.kernel.size() && !waiting[ri]) {
        const size_t i = next[ri];
        const double ready = ready_of(ri, i);
        const int mg = g.group[i];
        if (mg >= 0 && members[mg] > 1) {
          auto& p = pending[{mg, g.call[i]}];
          p.ready = std::max(p.ready, ready);
          p.at.push_back({ri, i});
          waiting[ri] = 1;
          if (static_cast<int>(p.at.size()) == members[mg]) {
            // The ranks' calls of one communicator pair up in order: each must be the same
            // operation of the same size, or NCCL would hang or mix the buffers.
            if (auto bad = mismatched_call(graphs, p.at, groups[static_cast<size_t>(mg)].g.name,
                                           g.call[i]))
              return *bad;
            for (auto [rj, j] : p.at) {
              sched[rj].start[j] = p.ready;
              sched[rj].end[j] = p.ready + dur[rj][j];
              ++next[rj];
              ++done;
              waiting[rj] = 0;
            }
            pending.erase({mg, g.call[i]});
          }
          progress = true;
          break;
        }
        sched[ri].start[i] = ready;
        sched[ri].end[i] = ready + dur[ri][i];
        ++next[ri];
        ++done;
        progress = true;
      }
    }
  }
  if (done < total) {
    const auto& [key, p] = *pending.begin();
    return Diagnostic::in_file(
        graphs[p.at[0].first].rank->file, "Process Group Name",
        fmt::format("the traces' calls on group '{}' do not match: call {} waits for ranks "
                    "whose traces have no such call",
                    groups[static_cast<size_t>(key.first)].g.name, key.second + 1),
        "give traces of the same step, recorded together");
  }

  // Times: the rank that takes longest is the step.
  size_t crit_rec = 0, crit_pred = 0;
  std::vector<StepTimes> rec(graphs.size()), pred(graphs.size());
  std::vector<std::vector<double>> rec_exposed(graphs.size()), pred_exposed(graphs.size());
  for (size_t ri = 0; ri < graphs.size(); ++ri) {
    rec[ri] = times_of(graphs[ri], recorded_schedule(graphs[ri]), &rec_exposed[ri]);
    pred[ri] = times_of(graphs[ri], sched[ri], &pred_exposed[ri]);
    if (rec[ri].step_s > rec[crit_rec].step_s) crit_rec = ri;
    if (pred[ri].step_s > pred[crit_pred].step_s) crit_pred = ri;
  }
  if (out.timed) out.recorded = rec[crit_rec];
  out.predicted = pred[crit_pred];

  // Breakdown per group and operation, on the critical rank.
  {
    const size_t ri = crit_pred;
    const auto& g = graphs[ri];
    const auto& r = *g.rank;
    std::map<std::pair<std::string, std::string>, CollectiveBreakdown> rows;
    std::vector<std::string> order;
    for (size_t i = 0; i < g.kernel.size(); ++i) {
      const auto& k = r.kernels[static_cast<size_t>(g.kernel[i])];
      if (k.collective < 0) continue;
      const auto& c = r.collectives[static_cast<size_t>(k.collective)];
      const std::string gname =
          g.group[i] >= 0 ? groups[static_cast<size_t>(g.group[i])].g.name : "?";
      const std::string op = c.op ? op_name(*c.op) : c.name;
      auto& b = rows[{gname, op}];
      b.group = gname;
      b.op = op;
      ++b.calls;
      b.bytes += c.bytes;
      b.recorded_s += k.dur_us * 1e-6;
      b.simulated_s += dur[ri][i] * 1e-6;
      b.recorded_exposed_s += rec_exposed[ri][i];
      b.predicted_exposed_s += pred_exposed[ri][i];
      b.simulated = b.simulated && simulated[ri][i];
    }
    for (auto& [key, b] : rows) {
      if (b.simulated && b.calls > 0) {
        // Same (group, op) ran on one simulation: its bus bandwidth at the mean size.
        for (const auto& gm : groups)
          if (gm.g.name == b.group) {
            const int gi = by_name.at(b.group);
            auto op = parse_op(b.op);
            auto it = op ? sims.find({gi, *op}) : sims.end();
            if (it != sims.end()) {
              b.busbw_gbs = it->second->busbw_gbs(b.bytes / b.calls);
              b.gpu_groups = gpu_groups.at({gi, *op});
            }
            break;
          }
      }
      out.breakdown.push_back(b);
    }
    std::sort(out.breakdown.begin(), out.breakdown.end(),
              [](const CollectiveBreakdown& a, const CollectiveBreakdown& b) {
                if (a.predicted_exposed_s != b.predicted_exposed_s)
                  return a.predicted_exposed_s > b.predicted_exposed_s;
                return std::tie(a.group, a.op) < std::tie(b.group, b.op);
              });
  }

  if (o.links) {
    // Bytes per link over the step: every simulated call of the critical rank's graph, its
    // group's flows scaled to its size.
    LinkLoad total;
    total.payload_bytes = 1;
    const size_t links = fabric.links().size();
    total.bytes.assign(links, 0);
    total.peak_Bps.assign(links, 0);
    total.flows.assign(links, 0);
    const auto& g = graphs[crit_pred];
    for (size_t i = 0; i < g.kernel.size(); ++i) {
      if (!simulated[crit_pred][i]) continue;
      const auto& c = g.rank->collectives[static_cast<size_t>(
          g.rank->kernels[static_cast<size_t>(g.kernel[i])].collective)];
      const auto it = loads.find({g.group[i], *c.op});
      if (it == loads.end() || it->second.payload_bytes <= 0) continue;
      const LinkLoad& l = it->second;
      const double scale = c.bytes / l.payload_bytes;
      for (size_t x = 0; x < l.bytes.size() && x < links; ++x) {
        total.bytes[x] += l.bytes[x] * scale;
        total.peak_Bps[x] = std::max(total.peak_Bps[x], l.peak_Bps[x]);
        total.flows[x] = std::max(total.flows[x], l.flows[x]);
      }
    }
    out.load = std::move(total);
  }
  // Rank r runs on GPU r mod G of node r / G (torchrun's and mpirun's order); a log whose
  // ncclCommInitRank lines say otherwise is worth a word.
  std::map<std::string, int> host_first_rank;
  const int G = std::max(1, plan.gpus_per_node);
  for (const auto& r : ranks) {
    if (r.rank < 0 || r.cuda_dev < 0 || r.rank >= world) continue;
    const int gpu = gpu_of(r.rank);
    if (gpu % G != r.cuda_dev)
      out.notes.push_back(fmt::format(
          "{}: rank {} ran on cudaDev {} of {}; the replay places it on GPU {} of node {}", r.file,
          r.rank, r.cuda_dev, r.host.empty() ? "its node" : r.host, gpu % G, gpu / G + 1));
    if (!r.host.empty()) {
      auto [it, fresh] = host_first_rank.emplace(r.host, r.rank);
      if (!fresh && gpu_of(it->second) / G != gpu / G)
        out.notes.push_back(fmt::format(
            "{}: ranks {} and {} shared host {} but are on different nodes of the plan ({} GPUs "
            "a node)",
            r.file, it->second, r.rank, r.host, plan.gpus_per_node));
    }
  }
  for (const auto& r : ranks)
    for (const auto& n : r.notes) out.notes.push_back(fmt::format("{}: {}", r.file, n));
  return out;
}

std::string fabric_shape(const Plan& p) {
  return fmt::format("{}, {} leaves, {} spines, {:.2f}:1 as built", topology_kind_name(p.topo.kind),
                     p.topo.leaves, p.topo.spines, p.topo.oversubscription);
}

Result<ReplayAlternative> replay_at_oversubscription(const std::vector<TracedRank>& ranks,
                                                     const Spec& spec, const Catalog& catalog,
                                                     const Plan& plan, double ratio,
                                                     const ReplayOptions& o) {
  Spec over = spec;
  over.fabric.oversubscription = ratio;
  over.fabric.switch_id = plan.sw.id;
  over.fabric.technology = plan.technology;
  // The planned topology first: a small cluster's auto choice is one switch, where a leaf
  // ratio means nothing; when that kind cannot be built at the ratio, the planner chooses again.
  over.fabric.topology = plan.topo.kind;
  auto p = make_plan(over, catalog);
  if (!p) {
    over.fabric.topology = std::nullopt;
    p = make_plan(over, catalog);
  }
  if (!p)
    return Diagnostic::flag(
        "--oversubscription",
        fmt::format("the spec cannot be planned at {:g}:1: {}", ratio, p.errors().front().message),
        p.errors().front().hint);
  const Fabric fab = Fabric::build(*p, catalog);
  auto r = replay_step(ranks, *p, fab, o);
  if (!r) return r.errors();
  ReplayAlternative a;
  a.label = fmt::format("{:g}:1 oversubscription", ratio);
  a.kind = "oversubscription";
  a.asked = ratio;
  a.built = p->topo.oversubscription;
  a.fabric = fabric_shape(*p);
  a.result = std::move(*r);
  return a;
}

}  // namespace gf
