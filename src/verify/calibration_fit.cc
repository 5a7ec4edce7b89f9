#include "verify/calibration_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>

#include "common/text.h"
#include "sim/collective.h"
#include "sim/nccl_constants.h"
#include "topo/fabric.h"

namespace gf {

const char* fit_band(double bytes) {
  if (bytes < kFitSmallBelowBytes) return "small";
  if (bytes <= kFitMidUpToBytes) return "mid";
  if (bytes >= kFitLargeFromBytes) return "large";
  return "between";
}

namespace {

// How an output names the algorithm it was forced to: NCCL_DEBUG=INFO prints "NCCL_ALGO set by
// environment to Ring" (src/misc/param.cc), launch scripts echo "NCCL_ALGO=Ring".
std::optional<std::string> algo_in_text(const std::string& text) {
  static const std::regex env_re(R"(NCCL_ALGO(?: set by environment to |=)\s*([A-Za-z]+))");
  std::smatch m;
  // Only the head of the file: the banner and NCCL's init lines come before the table.
  const std::string head = text.substr(0, std::min<std::size_t>(text.size(), 1 << 20));
  if (std::regex_search(head, m, env_re)) return m[1].str();
  return std::nullopt;
}

// NCCL_ALGO's spelling (kNcclAlgoNames, in any case) to gpufabric's; else gpufabric's own name
// (parse_algorithm: CollNet is CollNet Direct).
std::optional<Algorithm> algorithm_of_nccl_name(std::string s) {
  s = ascii_lower(s);
  for (const auto& e : kNcclAlgoNames)
    if (ascii_lower(e.name) == s) return e.value;
  return parse_algorithm(s);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The factors being fitted, in one vector: scale-up and network efficiency, network and NVLink
// step latency, network message time, then one bandwidth factor per algorithm
// (kProfileAlgorithmNames order).
constexpr int kScaleUp = 0, kNetwork = 1, kLatency = 2, kNvLatency = 3, kMessage = 4,
              kFirstAlgorithm = 5;
constexpr int kParams = kFirstAlgorithm + kProfileAlgorithms;
// The additive factors (us), searched on a linear scale and probed by adding; the others
// multiply a term.
bool additive(int i) { return i == kLatency || i == kNvLatency || i == kMessage; }
// The per-step latencies: fitted on the points below 1 MiB, the others from 32 MiB.
bool step_latency(int i) { return i == kLatency || i == kNvLatency; }
// NVLink's step latency is told apart only inside one domain, where no network step shares the
// small calls' time with it: its probe and its descent see those runs' points alone.
bool one_domain_only(int i) { return i == kNvLatency; }

struct Theta {
  std::array<double, kParams> v{};
  std::array<bool, kParams> fitted{};
};

// The model's own factors for the plan's GPUs (the scale-up efficiency is the generation's).
Theta model_theta(const Plan& plan) {
  Theta t;
  t.v[kScaleUp] = scale_up_simple_efficiency(generation_of(plan.gpu));
  t.v[kNetwork] = nccl::kNetworkSimpleEfficiency;
  t.v[kLatency] = 0;
  t.v[kNvLatency] = 0;
  t.v[kMessage] = 0;
  for (int a = 0; a < kProfileAlgorithms; ++a) t.v[kFirstAlgorithm + a] = 1;
  return t;
}

std::string param_name(int i) {
  if (i == kScaleUp) return "scaleup_efficiency";
  if (i == kNetwork) return "network_efficiency";
  if (i == kLatency) return "network_step_latency_us";
  if (i == kNvLatency) return "nvlink_step_latency_us";
  if (i == kMessage) return "network_message_us";
  return std::string("algorithms.") + kProfileAlgorithmNames[i - kFirstAlgorithm];
}

// Search range of each factor: the profile's own bounds.
std::pair<double, double> param_range(int i) {
  if (i == kScaleUp || i == kNetwork) return {kMinProfileEfficiency, kMaxProfileEfficiency};
  if (step_latency(i)) return {0, 100};  // us: NCCL's largest per-step term is 31 us (tuning.cc)
  if (i == kMessage) return {0, 100};  // us: the same order
  return {kMinAlgorithmFactor, kMaxAlgorithmFactor};
}

// Where a fitted value `v` of factor i stopped at its search bound, what that says ("": not at
// a bound). A time at 0 adds nothing: the runs are no slower than the model's own latencies.
std::string at_bound_note(int i, double v) {
  const auto [lo, hi] = param_range(i);
  const bool high = additive(i) ? v > hi - kFitAtBoundUs : std::log(hi / v) < kFitAtBoundLog;
  const bool low = additive(i) ? v < lo + kFitAtBoundUs : std::log(v / lo) < kFitAtBoundLog;
  if (!high && !low) return "";
  if (additive(i) && low)
    return fmt::format(
        "at its lower bound {:g} us: the runs' small sizes are no slower than the model's own "
        "latencies, so nothing is added (a shorter time is not fitted)",
        lo);
  const double bound = high ? hi : lo;
  if (i == kScaleUp || i == kNetwork)
    return high ? fmt::format(
                      "at its bound {:g}: the runs are as fast as the spec's links at their full "
                      "rate or faster; check the spec's GPUs, NICs and nics_per_node against the "
                      "cluster's",
                      bound)
                : fmt::format(
                      "at its bound {:g}: the runs are over {:g}x slower than the links allow; "
                      "look for a fault (gpufabric diagnose) before calibrating the model to it",
                      bound, 1 / bound);
  if (additive(i))
    return fmt::format("at the search's bound {:g} us: more than a per-{} time mends", bound,
                       i == kMessage ? "message" : "step");
  return fmt::format(
      "at its bound {:g}: the points are more than {:g}x off the model's {}, more than a factor "
      "mends; check the runs' NCCL_ALGO and the spec",
      bound, high ? bound : 1 / bound, kProfileAlgorithmNames[i - kFirstAlgorithm]);
}

// The profile that sets the fitted factors and leaves the rest as the model has them.
CalibrationProfile profile_of(const Theta& t) {
  CalibrationProfile p;
  if (t.fitted[kScaleUp]) p.scaleup_efficiency = t.v[kScaleUp];
  if (t.fitted[kNetwork]) p.network_efficiency = t.v[kNetwork];
  if (t.fitted[kLatency]) p.network_step_latency_us = t.v[kLatency];
  if (t.fitted[kNvLatency]) p.nvlink_step_latency_us = t.v[kNvLatency];
  if (t.fitted[kMessage]) p.network_message_us = t.v[kMessage];
  for (int a = 0; a < kProfileAlgorithms; ++a)
    if (t.fitted[kFirstAlgorithm + a]) p.algorithm_factor[a] = t.v[kFirstAlgorithm + a];
  return p;
}

// The memory one run's build may use within FitOptions::memory_bytes (0: no limit): what the
// kept flows may not take, for the fit's first check of each run and every build after it alike.
size_t fit_build_budget(double memory_bytes) {
  return memory_bytes > 0
             ? static_cast<size_t>(std::max(1.0, memory_bytes * (1 - kFitKeptFlowsShare)))
             : 0;
}

// Every run's fabric and plan, built once; each run's collective model is built once with its
// flows kept, so that trying another link efficiency solves the same flows on the new
// capacities (CollectiveModel::relink) without routing them again, and another algorithm factor,
// step latency or message time (CollectiveModel::recalibrate) does not solve them at all.
class Predictor {
 public:
  // `keep`: keep each run's flows for the efficiencies tried next (a fit); `memory_bytes`:
  // FitOptions::memory_bytes.
  Predictor(const Plan& plan, const Catalog& cat, const std::vector<FitRun>& runs, bool keep,
            double memory_bytes = 0)
      : plan_(plan),
        fabric_(Fabric::build(plan, cat)),
        runs_(runs),
        cache_(runs.size()),
        keep_(keep),
        no_room_(runs.size(), false),
        memory_bytes_(memory_bytes) {}

  const Plan& plan() const { return plan_; }
  /// GPUs of one scale-up domain on the spec's fabric (a node, or an NVL72 rack's trays).
  int domain_gpus() const { return fabric_.domain_gpus(); }

  // Times of every row of the runs in `which` (others left as they are in `out`), us; the
  // algorithm/protocol each row ran in `ran` when given.
  std::vector<Diagnostic> predict(const CalibrationProfile& prof, const std::vector<bool>& which,
                                  std::vector<std::vector<double>>& out,
                                  std::vector<std::vector<std::string>>* ran = nullptr) const {
    out.resize(runs_.size());
    if (ran) ran->resize(runs_.size());
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      if (!which[i]) continue;
      const FitRun& r = runs_[i];
      auto& m = cache_[i];
      if (m && (m->calibration().scaleup_efficiency != prof.scaleup_efficiency ||
                m->calibration().network_efficiency != prof.network_efficiency)) {
        if (!m->relink(fabric_, prof)) m.reset();  // its flows were not kept: build it again
      } else if (m) {
        m->recalibrate(prof);
      }
      if (!m) {
        SimOptions o;
        // A build has the memory the kept flows may not take; they get what is left of theirs.
        const double allowance = memory_bytes_ * kFitKeptFlowsShare - kept_bytes_;
        o.memory_budget_bytes = fit_build_budget(memory_bytes_);
        o.keep_flows = keep_ && !no_room_[i] && (memory_bytes_ <= 0 || allowance >= 1);
        if (o.keep_flows && memory_bytes_ > 0)
          o.kept_flows_budget_bytes = static_cast<size_t>(allowance);
        o.op = r.op;
        o.algorithm = r.algorithm;
        o.nodes = r.nodes;
        o.gpus_per_thread = r.gpus_per_thread;
        o.iters = r.iters;
        o.calibration = prof;
        auto built = CollectiveModel::build(fabric_, plan_, o);
        if (!built) {
          std::vector<Diagnostic> errs;
          for (const auto& e : built.errors())
            errs.push_back(Diagnostic::in_file(r.file, "", e.message, e.hint));
          return errs;
        }
        if (r.algorithm)
          for (const auto& a : built->algorithms())
            if (a.algorithm == *r.algorithm && !a.available)
              return {Diagnostic::in_file(
                  r.file, "",
                  fmt::format("the run forced {} {}, which the spec's fabric cannot run: {}",
                              op_name(r.op), algorithm_name(*r.algorithm), a.unavailable_reason),
                  "give the spec of the cluster the run was taken on")};
        m.emplace(std::move(*built));
        // A run whose flows found no room is routed again for each efficiency, never kept.
        const size_t kept = m->kept_flow_bytes();
        if (o.keep_flows && kept == 0) no_room_[i] = true;
        kept_bytes_ += static_cast<double>(kept);
      }
      out[i].resize(r.rows.size());
      if (ran) (*ran)[i].resize(r.rows.size());
      for (std::size_t k = 0; k < r.rows.size(); ++k) {
        const SizeResult s = m->at(r.rows[k].bytes);
        out[i][k] = s.time_us;
        if (ran)
          (*ran)[i][k] =
              fmt::format("{}/{}", algorithm_name(s.algorithm), protocol_name(s.protocol));
      }
    }
    return {};
  }

 private:
  const Plan& plan_;
  Fabric fabric_;
  const std::vector<FitRun>& runs_;
  mutable std::vector<std::optional<CollectiveModel>> cache_;
  bool keep_ = false;
  mutable std::vector<bool> no_room_;  ///< runs whose flows did not fit what was left to keep
  double memory_bytes_ = 0;            ///< FitOptions::memory_bytes
  mutable double kept_bytes_ = 0;      ///< what the cached models' kept flows take
};

// A point of the objective: run, row and the measured time.
struct ObjPoint {
  int run = 0, row = 0;
  double measured_us = 0;
  bool large = false;  ///< the bandwidth band (>= 32 MiB); else the latency band (< 1 MiB)
  bool one_domain = false;  ///< a run inside one scale-up domain (no network step)
};

// Mean squared log error of the time over `pts` (`band`: only the points of that band, large
// or not; `one_domain`: only the points of runs inside one scale-up domain).
double objective(const std::vector<ObjPoint>& pts, const std::vector<std::vector<double>>& t,
                 std::optional<bool> band = std::nullopt, bool one_domain = false) {
  double s = 0;
  int n = 0;
  for (const auto& p : pts) {
    if (band && p.large != *band) continue;
    if (one_domain && !p.one_domain) continue;
    const double sim = t[p.run][p.row];
    const double e = std::isfinite(sim) && sim > 0 ? std::log(sim / p.measured_us) : 10.0;
    s += e * e;
    ++n;
  }
  return n > 0 ? s / n : 0;
}

struct CoreFit {
  Theta theta;
  std::array<std::string, kParams> why{};
  double before = 0, after = 0;
};

// Fits the factors the points in `pts` depend on: first which (a probe of each, from the
// model's values), then their values by coordinate descent, each by golden-section search over
// its range (log scale for the multiplying ones). `near`: a fit of most of the same points (the
// cross-validation's folds start from the full fit) searched within kWarmSpan of it.
constexpr double kWarmSpan = 1.6;  // a factor either way; latency: kWarmSpanUs
constexpr double kWarmSpanUs = 10;
Result<CoreFit> fit_core(const Predictor& pr, const std::vector<FitRun>& runs,
                         const std::vector<ObjPoint>& pts, const Theta* near = nullptr) {
  CoreFit f;
  f.theta = model_theta(pr.plan());
  std::vector<bool> which(runs.size(), false);
  for (const auto& p : pts) which[p.run] = true;
  if (pts.empty()) {
    for (auto& w : f.why) w = "no point of 1 MiB or less or of 32 MiB or more to fit it on";
    return f;
  }
  std::vector<std::vector<double>> base, t;
  std::vector<std::vector<std::string>> ran;
  if (auto e = pr.predict(profile_of(f.theta), which, base, &ran); !e.empty()) return e;
  f.before = objective(pts, base);
  // Which algorithms the points run, and the reference one (ring where present) whose factor
  // stays 1: the link efficiencies are measured through it.
  std::map<std::string, int> algo_points;
  for (const auto& p : pts) {
    const std::string& a = ran[p.run][p.row];
    ++algo_points[a.substr(0, a.find('/'))];
  }
  const bool any_large =
      std::any_of(pts.begin(), pts.end(), [](const ObjPoint& p) { return p.large; });
  std::string reference = "ring";
  if (!algo_points.count(reference)) {
    int most = 0;
    for (const auto& [a, n] : algo_points)
      if (n > most) most = n, reference = a;
  }
  // The probe: a factor joins the fit when moving it moves some point's time by 2 %, a point of
  // the band where its term dominates: the latency's below 1 MiB, the bandwidth factors' (link
  // efficiencies, algorithms) from 32 MiB on. An algorithm NCCL picks only for small sizes is
  // not fitted a bandwidth factor on its latency-bound points.
  std::vector<int> moved_of(kParams, 0);
  for (int i = 0; i < kParams; ++i) {
    if (i >= kFirstAlgorithm) {
      const std::string a = kProfileAlgorithmNames[i - kFirstAlgorithm];
      if (!algo_points.count(a)) {
        f.why[i] = "no fitted point runs " + a;
        continue;
      }
      // With no point of 32 MiB or more nothing is measured through the reference either: it
      // gets the probe's own reason below.
      if (a == reference && any_large) {
        f.why[i] = fmt::format(
            "{} is the reference algorithm: the link efficiencies are "
            "measured through it",
            a);
        continue;
      }
    }
    Theta probe = f.theta;
    probe.fitted[i] = true;
    if (step_latency(i))
      probe.v[i] += kFitProbeLatencyUs;
    else if (i == kMessage)
      probe.v[i] += kFitProbeMessageUs;
    else
      probe.v[i] *= kFitProbeFactor;
    if (auto e = pr.predict(profile_of(probe), which, t); !e.empty()) return e;
    int moved = 0;
    for (const auto& p : pts)
      if (p.large == !step_latency(i) && (!one_domain_only(i) || p.one_domain) &&
          std::fabs(t[p.run][p.row] / base[p.run][p.row] - 1) >= kFitSensitivity)
        ++moved;
    if (moved < kFitMinPoints) {
      f.why[i] =
          i == kScaleUp   ? "no fitted point of 32 MiB or more depends on NVLink's rate"
          : i == kNetwork ? "no fitted point of 32 MiB or more depends on the scale-out links' rate"
          : i == kLatency ? "no fitted point below 1 MiB depends on the network steps' latency"
          : i == kNvLatency ? "no fitted point below 1 MiB of a run inside one scale-up domain "
                              "(one node; a rack's trays) depends on the NVLink steps' latency"
          : i == kMessage
              ? "no fitted point of 32 MiB or more sends enough network messages (ring or tree "
                "calls across nodes the network paces)"
              : "no fitted point of 32 MiB or more depends on this algorithm's "
                "bandwidth";
      continue;
    }
    f.theta.fitted[i] = true;
    moved_of[i] = moved;
    f.why[i] = fmt::format("fitted on {} point{}", moved, moved == 1 ? "" : "s");
  }
  // A band's points tell at most as many factors apart: with more factors than points any of
  // them absorbs the error, and the fit reads 0 % while meaning nothing. The factors the most
  // points depend on are kept (the earlier on a tie), the others left at the model's value.
  for (const bool large : {true, false}) {
    const long long points =
        std::count_if(pts.begin(), pts.end(), [&](const ObjPoint& p) { return p.large == large; });
    std::vector<int> band;
    for (int i = 0; i < kParams; ++i)
      if (f.theta.fitted[i] && !step_latency(i) == large) band.push_back(i);
    if (static_cast<long long>(band.size()) <= points) continue;
    std::stable_sort(band.begin(), band.end(),
                     [&](int a, int b) { return moved_of[a] > moved_of[b]; });
    std::string kept;
    for (size_t k = 0; k < band.size(); ++k)
      if (static_cast<long long>(k) < points)
        kept += (kept.empty() ? "" : ", ") + param_name(band[k]);
    for (size_t k = static_cast<size_t>(points); k < band.size(); ++k) {
      f.theta.fitted[band[k]] = false;
      f.why[band[k]] = fmt::format(
          "not fitted: {} point{} {} tell at most {} factor{} apart ({}); run more sizes", points,
          points == 1 ? "" : "s", large ? "of 32 MiB or more" : "below 1 MiB", points,
          points == 1 ? "" : "s", kept);
    }
  }
  // Coordinate descent, each factor over the band where its term dominates (the latency below
  // 1 MiB, the bandwidth factors from 32 MiB): a factor is not moved to mend the other band
  // (a network efficiency pulled down by small calls' rate, which is not the links').
  constexpr int kSweeps = 8;  // a coupled valley (LL's rate and the step latency) takes more than 3
  // Steps of the golden-section search: the bracket shrinks to 0.618^steps of the range (a
  // full range of 1/20..1 in log: 0.1 % after 20; a warm one of /1.6..x1.6: 0.1 % after 14).
  const int golden_steps = near ? 14 : 20;
  if (near)
    for (int i = 0; i < kParams; ++i)
      if (f.theta.fitted[i] && near->fitted[i]) f.theta.v[i] = near->v[i];
  const double phi = (std::sqrt(5.0) - 1) / 2;
  // The descent from `th`, in place; the objective over both bands where it ends.
  auto descend = [&](Theta& th) -> Result<double> {
    if (auto e = pr.predict(profile_of(th), which, t); !e.empty()) return e;
    double best = objective(pts, t);
    for (int sweep = 0; sweep < kSweeps; ++sweep) {
      const double start = best;
      for (int i = 0; i < kParams; ++i) {
        if (!th.fitted[i]) continue;
        const bool large = !step_latency(i);
        const bool one_domain = one_domain_only(i);
        if (auto e = pr.predict(profile_of(th), which, t); !e.empty()) return e;
        const double here = objective(pts, t, large, one_domain);
        const bool logscale = !additive(i);
        auto [lo_v, hi_v] = param_range(i);
        if (near && near->fitted[i]) {
          lo_v = std::max(lo_v, logscale ? th.v[i] / kWarmSpan : th.v[i] - kWarmSpanUs);
          hi_v = std::min(hi_v, logscale ? th.v[i] * kWarmSpan : th.v[i] + kWarmSpanUs);
        }
        auto to_x = [&](double v) { return logscale ? std::log(v) : v; };
        auto to_v = [&](double x) { return logscale ? std::exp(x) : x; };
        double a = to_x(lo_v), b = to_x(hi_v);
        std::vector<Diagnostic> err;
        auto eval = [&](double x) {
          Theta probe = th;
          probe.v[i] = to_v(x);
          if (auto e = pr.predict(profile_of(probe), which, t); !e.empty()) err = e;
          return objective(pts, t, large, one_domain);
        };
        double c = b - phi * (b - a), d = a + phi * (b - a);
        double fc = eval(c), fd = eval(d);
        for (int k = 0; k < golden_steps && err.empty(); ++k) {
          if (fc < fd) {
            b = d, d = c, fd = fc;
            c = b - phi * (b - a);
            fc = eval(c);
          } else {
            a = c, c = d, fc = fd;
            d = a + phi * (b - a);
            fd = eval(d);
          }
        }
        if (!err.empty()) return err;
        const double x = fc < fd ? c : d, fx = std::min(fc, fd);
        if (fx < here) th.v[i] = to_v(x);
      }
      if (auto e = pr.predict(profile_of(th), which, t); !e.empty()) return e;
      best = objective(pts, t);
      if (std::fabs(start - best) < 1e-9) break;
    }
    return best;
  };
  // The large sizes' objective of a descent's end.
  auto large_objective = [&](const Theta& th) -> Result<double> {
    if (auto e = pr.predict(profile_of(th), which, t); !e.empty()) return e;
    return objective(pts, t, true);
  };
  // The efficiency alone first; then the messages' time from there. The two lie in one valley
  // where the points hold one message size, which coordinate descent crosses slowly: the
  // messages' time is kept only where it fits the points from 32 MiB better than the efficiency
  // alone by more than kFitMessageEvidence, and is not negligible.
  Theta alone = f.theta;
  alone.fitted[kMessage] = false;
  alone.v[kMessage] = 0;
  auto best = descend(alone);
  if (!best) return best.errors();
  const bool try_messages = f.theta.fitted[kMessage];
  f.theta = alone;
  if (try_messages) {
    Theta with_messages = alone;
    with_messages.fitted[kMessage] = true;
    auto with_best = descend(with_messages);
    if (!with_best) return with_best.errors();
    auto lw = large_objective(with_messages), la = large_objective(alone);
    if (!lw) return lw.errors();
    if (!la) return la.errors();
    if (*lw < *la - kFitMessageEvidence && with_messages.v[kMessage] >= kFitMessageNegligibleUs) {
      f.theta = with_messages;
      best = with_best;
    } else {
      // Name the condition that failed: too little gain, or a time too small to count.
      const bool gained = *lw < *la - kFitMessageEvidence;
      f.why[kMessage] =
          gained ? fmt::format(
                       "not fitted: its fitted time, {:.3f} us a message, is under the {:g} us "
                       "that counts (mean squared log error {:.2g} alone, {:.2g} with it)",
                       with_messages.v[kMessage], kFitMessageNegligibleUs, *la, *lw)
                 : fmt::format(
                       "not fitted: it does not improve the fit of the points of 32 MiB or more "
                       "by the {:.2g} a term must (about 1 % on every point): mean squared log "
                       "error {:.2g} alone, {:.2g} with {:.2f} us a message",
                       kFitMessageEvidence, *la, *lw, with_messages.v[kMessage]);
    }
  }
  // A link efficiency at its upper bound says the runs beat the links at their full rate: the
  // model's algorithm for them (or the spec) is off, not the link. Written, it would make every
  // other prediction on those links faster than they can go (a 2-node NVLS run crediting
  // NVLink with 555 GB/s in one node), so it is left at the model's value and the rest fitted
  // again without it.
  {
    const Theta model = model_theta(pr.plan());
    bool refit = false;
    for (const int i : {kScaleUp, kNetwork}) {
      if (!f.theta.fitted[i] || std::log(param_range(i).second / f.theta.v[i]) >= kFitAtBoundLog)
        continue;
      f.why[i] = fmt::format(
          "not fitted: the points took it to its bound {:g}, faster than the {} at their full "
          "rate, which no link is; left at the model's {:.2f} (check the spec's GPUs, NICs and "
          "nics_per_node against the cluster's, and the runs' NCCL_ALGO)",
          param_range(i).second, i == kScaleUp ? "scale-up (NVLink) links" : "scale-out links",
          model.v[i]);
      f.theta.fitted[i] = false;
      f.theta.v[i] = model.v[i];
      refit = true;
    }
    if (refit) {
      best = descend(f.theta);
      if (!best) return best.errors();
    }
  }
  // A factor that ends at its bound stopped where the points would have taken it further: it
  // mends more than its term, and the note says what to look at.
  for (int i = 0; i < kParams; ++i)
    if (f.theta.fitted[i] && f.why[i].rfind("fitted on", 0) == 0)
      if (const std::string note = at_bound_note(i, f.theta.v[i]); !note.empty())
        f.why[i] += "; " + note;
  f.after = *best;
  return f;
}

// |busbw error| (small: the time ratio) of points grouped by collective and band.
std::vector<FitErrorGroup> error_groups(const std::vector<FitRun>& runs,
                                        const std::vector<FitPoint>& pts,
                                        double FitPoint::*predicted) {
  std::map<std::pair<std::string, int>, std::vector<double>> g;
  const std::vector<std::string> bands = {"small", "mid", "between", "large"};
  for (const auto& p : pts) {
    const double sim = p.*predicted;
    if (!(sim > 0) || !std::isfinite(sim)) continue;
    const int b = static_cast<int>(std::find(bands.begin(), bands.end(), p.band) - bands.begin());
    const double e = p.band == "small"
                         ? std::max(sim / p.measured_time_us, p.measured_time_us / sim)
                         : std::fabs(p.measured_time_us / sim - 1);
    g[{op_name(runs[p.run].op), b}].push_back(e);
  }
  std::vector<FitErrorGroup> out;
  for (const auto& [k, v] : g)
    out.push_back({k.first, bands[k.second], static_cast<int>(v.size()), median(v),
                   *std::max_element(v.begin(), v.end())});
  return out;
}

}  // namespace

Result<std::vector<FitRun>> read_fit_runs(const Plan& plan, const std::vector<ToolOutput>& files,
                                          const FitOptions& o) {
  std::vector<FitRun> runs;
  std::vector<Diagnostic> errs;
  const std::string hint =
      "give the stdout of all_reduce_perf, all_gather_perf, ... as it printed it";
  // The same output twice would count its points twice, and leave-one-file-out would fit on
  // the copy of the file it leaves out: named (in file order, among the others' errors).
  std::vector<bool> repeated;
  std::vector<Diagnostic> twice = repeated_outputs(files, &repeated);
  auto next_twice = twice.begin();
  for (size_t i = 0; i < files.size(); ++i) {
    const ToolOutput& f = files[i];
    if (repeated[i]) {
      errs.push_back(*next_twice++);
      continue;
    }
    if (!holds_nccl_tests_table(f) && f.kind != OutputKind::kUnknown) {
      errs.push_back(Diagnostic::in_file(
          f.file, "",
          fmt::format("this is {} output; calibrate --fit reads nccl-tests outputs",
                      output_kind_name(f.kind)),
          hint));
      continue;
    }
    // A table without nccl-tests' banner (a log cut to its table) is read if it parses.
    auto parsed = parse_nccl_tests(f.text, f.file);
    if (!parsed) {
      if (f.kind == OutputKind::kUnknown)
        errs.push_back(Diagnostic::in_file(
            f.file, "", "not a nccl-tests output (no 'size count type redop' table)", hint));
      else
        errs.insert(errs.end(), parsed.errors().begin(), parsed.errors().end());
      continue;
    }
    if (auto e = device_gpu_error(*parsed, plan.gpu.id, f.file,
                                  "fit each cluster's runs with the spec of that cluster")) {
      errs.push_back(*e);
      continue;
    }
    FitRun r;
    r.file = f.file;
    r.complete = parsed->has_avg;
    if (parsed->gpus_per_thread > 0) r.gpus_per_thread = parsed->gpus_per_thread;
    if (const int calls = back_to_back_calls(*parsed); calls > 0) r.iters = calls;
    const auto op = op_of(*parsed, f.file);
    if (!op) {
      errs.push_back(Diagnostic::in_file(
          f.file, "",
          parsed->collective.empty() ? "the output does not say which collective it ran"
                                     : fmt::format("unknown collective '{}'", parsed->collective),
          "keep the '# Collective test starting: X_perf' line, or name the file after the "
          "test (all_gather_perf.out)"));
      continue;
    }
    r.op = *op;
    if (o.algorithm) {
      r.algorithm = o.algorithm;
      r.algorithm_source = "--algo";
    } else if (auto name = algo_in_text(f.text)) {
      r.algorithm = algorithm_of_nccl_name(*name);
      if (!r.algorithm) {
        errs.push_back(Diagnostic::in_file(
            f.file, "NCCL_ALGO",
            fmt::format("the run forced NCCL_ALGO={}, which gpufabric does not model", *name),
            "leave the file out, or give --algo for what it ran"));
        continue;
      }
      r.algorithm_source = "NCCL_ALGO in the file";
    }
    // The hosts named count the nodes, unless rank lines were left out or --nodes says.
    const auto shape = run_shape(*parsed, o.nodes, o.gpus_per_node, plan.gpus_per_node, f.file,
                                 "give --nodes N (and --gpus-per-node if not the spec's)");
    if (!shape) {
      errs.insert(errs.end(), shape.errors().begin(), shape.errors().end());
      continue;
    }
    r.nodes = shape->nodes;
    r.gpus_per_node = shape->gpus_per_node;
    if (auto e = shape_gpus_error(
            *shape, plan.gpus_per_node, f.file,
            "calibrate on runs that use every GPU of each node, with the spec of that cluster; "
            "where the file's rank lines are not all there, give --nodes (and --gpus-per-node)")) {
      errs.push_back(*e);
      continue;
    }
    if (r.nodes > plan.nodes) {
      errs.push_back(Diagnostic::in_file(
          f.file, "", fmt::format("the run used {} nodes; the spec has {}", r.nodes, plan.nodes),
          "give the spec of the whole cluster (cluster.nodes)"));
      continue;
    }
    if (r.nodes * r.gpus_per_node < 2) {
      errs.push_back(Diagnostic::in_file(f.file, "", "the run has a single GPU: nothing to fit"));
      continue;
    }
    if (auto e = banner_gpus_error(*parsed, r.gpus_per_node, "the run's", f.file,
                                   "keep the banner as nccl-tests printed it, or give "
                                   "--gpus-per-node / --nodes as the run used them")) {
      errs.push_back(*e);
      continue;
    }
    for (const auto& row : parsed->rows)
      if (row.bytes > 0 && row.time_us > 0 && std::isfinite(row.time_us)) r.rows.push_back(row);
    if (r.rows.empty()) {
      errs.push_back(Diagnostic::in_file(f.file, "", "no row with a positive size and time"));
      continue;
    }
    runs.push_back(std::move(r));
  }
  if (!errs.empty()) return errs;
  if (runs.empty()) return Diagnostic::flag("--fit", "no nccl-tests output given");
  return runs;
}

Result<std::vector<double>> predict_runs(const Plan& plan, const Catalog& catalog,
                                         const std::vector<FitRun>& runs,
                                         const CalibrationProfile& profile) {
  Predictor pr(plan, catalog, runs, false);
  std::vector<std::vector<double>> t;
  if (auto e = pr.predict(profile, std::vector<bool>(runs.size(), true), t); !e.empty()) return e;
  std::vector<double> out;
  for (const auto& r : t) out.insert(out.end(), r.begin(), r.end());
  return out;
}

Result<FitResult> fit_calibration(const Plan& plan, const Catalog& catalog,
                                  const std::vector<FitRun>& given, const FitOptions& o) {
  FitResult res;
  // A run forced to an algorithm the model does not run for its collective (all_gather NVLS,
  // CollNet Chain, ...) is left out and listed, not approximated by another algorithm.
  std::vector<FitRun> runs;
  {
    const Fabric fabric = Fabric::build(plan, catalog);
    for (const auto& r : given) {
      if (r.algorithm) {
        SimOptions so;
        so.op = r.op;
        so.algorithm = r.algorithm;
        so.nodes = r.nodes;
        so.calibration = CalibrationProfile{};
        so.memory_budget_bytes = fit_build_budget(o.memory_bytes);
        auto m = CollectiveModel::build(fabric, plan, so);
        if (!m) {
          std::vector<Diagnostic> errs;
          for (const auto& e : m.errors())
            errs.push_back(Diagnostic::in_file(r.file, "", e.message, e.hint));
          return errs;
        }
        std::string why;
        for (const auto& a : m->algorithms())
          if (a.algorithm == *r.algorithm && !a.available) why = a.unavailable_reason;
        if (!why.empty()) {
          res.skipped.push_back({r.file, fmt::format("{} {} is not simulated: {}", op_name(r.op),
                                                     algorithm_name(*r.algorithm), why)});
          continue;
        }
      }
      runs.push_back(r);
    }
  }
  if (runs.empty())
    return Diagnostic::flag("--fit", "no run the model can simulate: " + res.skipped.front().why,
                            "give runs of the collectives and algorithms gpufabric models");
  res.runs = runs;
  Predictor pr(plan, catalog, res.runs, true, o.memory_bytes);
  const std::vector<bool> all(runs.size(), true);
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (std::size_t k = 0; k < runs[i].rows.size(); ++k) {
      const auto& row = runs[i].rows[k];
      FitPoint p;
      p.run = static_cast<int>(i);
      p.line = row.line;
      p.bytes = row.bytes;
      p.band = fit_band(row.bytes);
      p.measured_time_us = row.time_us;
      p.measured_busbw_gbs = row.busbw_gbs;
      p.in_objective = p.band == std::string("small") || p.band == std::string("large");
      res.points.push_back(p);
    }
  // Where each point sits: run and row.
  std::vector<ObjPoint> objective_points;
  std::vector<int> point_of_obj;
  {
    std::size_t n = 0;
    for (std::size_t i = 0; i < runs.size(); ++i)
      for (std::size_t k = 0; k < runs[i].rows.size(); ++k, ++n)
        if (res.points[n].in_objective) {
          objective_points.push_back(
              {static_cast<int>(i), static_cast<int>(k), runs[i].rows[k].time_us,
               res.points[n].band == std::string("large"),
               1LL * runs[i].nodes * plan.gpus_per_node <= pr.domain_gpus()});
          point_of_obj.push_back(static_cast<int>(n));
        }
  }
  auto fill = [&](const CalibrationProfile& prof, double FitPoint::*field,
                  std::vector<std::vector<std::string>>* ran) -> std::vector<Diagnostic> {
    std::vector<std::vector<double>> t;
    if (auto e = pr.predict(prof, all, t, ran); !e.empty()) return e;
    std::size_t n = 0;
    for (std::size_t i = 0; i < runs.size(); ++i)
      for (std::size_t k = 0; k < runs[i].rows.size(); ++k, ++n) res.points[n].*field = t[i][k];
    return {};
  };
  if (auto e = fill(CalibrationProfile{}, &FitPoint::model_time_us, nullptr); !e.empty()) return e;

  auto full = fit_core(pr, runs, objective_points);
  if (!full) return full.errors();
  res.profile = profile_of(full->theta);
  res.objective_before = full->before;
  res.objective_after = full->after;
  const Theta model = model_theta(plan);
  for (int i = 0; i < kParams; ++i) {
    // Algorithms no point runs are left out of the report: nothing was tried for them.
    if (i >= kFirstAlgorithm && !full->theta.fitted[i] &&
        full->why[i].rfind("no fitted point runs", 0) == 0)
      continue;
    res.parameters.push_back(
        {param_name(i), model.v[i], full->theta.v[i], full->theta.fitted[i], full->why[i]});
  }
  std::vector<std::vector<std::string>> ran;
  if (auto e = fill(res.profile, &FitPoint::fitted_time_us, &ran); !e.empty()) return e;
  {
    std::size_t n = 0;
    for (std::size_t i = 0; i < runs.size(); ++i)
      for (std::size_t k = 0; k < runs[i].rows.size(); ++k, ++n)
        res.points[n].algorithm = ran[i][k];
  }

  // Cross-validation: each file left out in turn, or k folds over the points of one file.
  std::vector<std::vector<double>> t;
  if (runs.size() >= 2) {
    res.cv_method = fmt::format("leave-one-file-out ({} files)", runs.size());
    for (std::size_t out = 0; out < runs.size(); ++out) {
      std::vector<ObjPoint> train;
      for (const auto& p : objective_points)
        if (p.run != static_cast<int>(out)) train.push_back(p);
      auto f = fit_core(pr, runs, train, &full->theta);
      if (!f) return f.errors();
      std::vector<bool> only(runs.size(), false);
      only[out] = true;
      if (auto e = pr.predict(profile_of(f->theta), only, t); !e.empty()) return e;
      std::size_t n = 0;
      for (std::size_t i = 0; i < runs.size(); ++i)
        for (std::size_t k = 0; k < runs[i].rows.size(); ++k, ++n)
          if (i == out) res.points[n].cv_time_us = t[i][k];
    }
  } else if (res.points.size() < 2) {
    // One point: leaving it out leaves nothing to fit on, and keeping it tests nothing.
    res.cv_method = "none: one point, and leaving it out leaves nothing to fit on";
  } else {
    const int folds = std::max(2, std::min<int>(o.folds, static_cast<int>(res.points.size())));
    res.cv_method = fmt::format("{}-fold over the points (point i in fold i mod {})", folds, folds);
    for (int fold = 0; fold < folds; ++fold) {
      std::vector<ObjPoint> train;
      for (std::size_t j = 0; j < objective_points.size(); ++j)
        if (point_of_obj[j] % folds != fold) train.push_back(objective_points[j]);
      auto f = fit_core(pr, runs, train, &full->theta);
      if (!f) return f.errors();
      if (auto e = pr.predict(profile_of(f->theta), all, t); !e.empty()) return e;
      std::size_t n = 0;
      for (std::size_t i = 0; i < runs.size(); ++i)
        for (std::size_t k = 0; k < runs[i].rows.size(); ++k, ++n)
          if (static_cast<int>(n) % folds == fold) res.points[n].cv_time_us = t[i][k];
    }
  }
  res.model_errors = error_groups(runs, res.points, &FitPoint::model_time_us);
  res.fit_errors = error_groups(runs, res.points, &FitPoint::fitted_time_us);
  res.cv_errors = error_groups(runs, res.points, &FitPoint::cv_time_us);
  return res;
}

namespace {

// A double-quoted YAML scalar of `s` (a file name need not be UTF-8; the profile must read back).
std::string yaml_quoted(const std::string& raw) {
  const std::string s = utf8_or_replacement(raw);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::string groups_yaml(const std::vector<FitErrorGroup>& gs, const std::string& indent) {
  std::string s;
  for (const auto& g : gs)
    s +=
        fmt::format("{}- {{collective: {}, band: {}, points: {}, median: {:.4f}, worst: {:.4f}}}\n",
                    indent, g.collective, g.band, g.points, g.median, g.worst);
  if (gs.empty()) s += indent + "[]\n";
  return s;
}

}  // namespace

std::string fit_profile_yaml(const FitResult& r, const Plan& plan, const std::string& spec) {
  std::string s =
      "# gpufabric calibration profile, written by `gpufabric calibrate --fit`: the factors of "
      "the\n"
      "# simulator's model measured on this cluster's nccl-tests outputs. A spec applies it with\n"
      "# `calibration: <this file>` (path relative to the spec); simulate, check, step and\n"
      "# what-if then use it. Only `factors:` is read back; the rest reports the fit.\n"
      "profile: 1\n";
  s += fmt::format(
      "cluster: {{spec: {}, gpu: {}, nodes: {}, gpus_per_node: {}, nic: {}, nics_per_node: {}, "
      "nccl: \"{}\"}}\n",
      yaml_quoted(spec), plan.gpu.id, plan.nodes, plan.gpus_per_node, plan.nic.id,
      plan.nics_per_node, nccl_release_name(plan.nccl));
  s += "fitted_on:\n";
  for (const auto& run : r.runs)
    s += fmt::format("  - {{file: {}, collective: {}, algorithm: {}, nodes: {}, sizes: {}}}\n",
                     yaml_quoted(run.file), op_name(run.op),
                     run.algorithm ? algorithm_name(*run.algorithm) : "auto", run.nodes,
                     run.rows.size());
  if (!r.skipped.empty()) {
    s += "skipped:\n";
    for (const auto& k : r.skipped)
      s += fmt::format("  - {{file: {}, why: {}}}\n", yaml_quoted(k.file), yaml_quoted(k.why));
  }
  s += "factors:\n";
  bool any = false, any_algo = false;
  for (const auto& p : r.parameters) {
    if (!p.fitted) continue;
    any = true;
    if (p.name.rfind("algorithms.", 0) == 0) continue;
    const std::string meaning =
        p.name == "scaleup_efficiency"   ? "share of the NVLink rate Simple reaches"
        : p.name == "network_efficiency" ? "share of the scale-out links' rate Simple reaches"
        : p.name == "network_message_us"
            ? "us each network message (a slice) holds its connection beyond its bytes"
        : p.name == "nvlink_step_latency_us"
            ? "us added to every NVLink step (inside a scale-up domain)"
            : "us added to every step that crosses the network";
    s += fmt::format("  {}: {:.4f}  # {} (model: {:g}); {}\n", p.name, p.value, meaning,
                     p.model_value, p.why);
  }
  for (const auto& p : r.parameters) {
    if (!p.fitted || p.name.rfind("algorithms.", 0) != 0) continue;
    if (!any_algo) s += "  algorithms:  # factor on the algorithm's modelled bandwidth\n";
    any_algo = true;
    s += fmt::format("    {}: {:.4f}  # {}\n", p.name.substr(11), p.value, p.why);
  }
  if (!any) s += "  {}  # no factor could be fitted: the model is kept as it is\n";
  s += "not_fitted:\n";
  bool none = true;
  for (const auto& p : r.parameters)
    if (!p.fitted) {
      s += fmt::format("  - {{factor: {}, why: {}}}\n", p.name, yaml_quoted(p.why));
      none = false;
    }
  if (none) s += "  []\n";
  s += "fit:  # error of the fitted profile on the points it was fitted on (small: time ratio; "
       "else |busbw error|)\n";
  s += fmt::format(
      "  objective: {{before: {:.5f}, after: {:.5f}}}  # mean squared log time "
      "error of the large and small points\n",
      r.objective_before, r.objective_after);
  s += "  groups:\n" + groups_yaml(r.fit_errors, "    ");
  s += "cross_validation:  # error on points the fit did not see\n";
  s += fmt::format("  method: {}\n", yaml_quoted(r.cv_method));
  s += "  groups:\n" + groups_yaml(r.cv_errors, "    ");
  return s;
}

std::string fit_text(const FitResult& r) {
  std::string s = "Calibration fit\n\nFactors:\n";
  for (const auto& p : r.parameters)
    s += fmt::format("  {:<26} {:>9} (model {:g})  {}\n", p.name,
                     p.fitted ? fmt::format("{:.4f}", p.value) : "-", p.model_value, p.why);
  s += fmt::format("\nErrors per collective and band (small: time ratio; else |busbw error|)\n");
  s += fmt::format("{:<16} {:<8} {:>6} {:>15} {:>15} {:>15}\n", "collective", "band", "points",
                   "model med/worst", "fit med/worst", "cv med/worst");
  for (std::size_t i = 0; i < r.fit_errors.size(); ++i) {
    const auto& f = r.fit_errors[i];
    auto find = [&](const std::vector<FitErrorGroup>& gs) {
      for (const auto& g : gs)
        if (g.collective == f.collective && g.band == f.band) return g;
      return FitErrorGroup{};
    };
    // A group with no point ("-"): no cross-validation ran, or nothing was predicted.
    auto cell = [&](const FitErrorGroup& g) {
      if (g.points == 0) return std::string("-");
      return f.band == "small" ? fmt::format("{:.2f}x/{:.2f}x", g.median, g.worst)
                               : fmt::format("{:.1f}%/{:.1f}%", 100 * g.median, 100 * g.worst);
    };
    s += fmt::format("{:<16} {:<8} {:>6} {:>15} {:>15} {:>15}\n", f.collective, f.band, f.points,
                     cell(find(r.model_errors)), cell(f), cell(find(r.cv_errors)));
  }
  s += fmt::format("\nCross-validation: {}\n", r.cv_method);
  for (const auto& k : r.skipped) s += fmt::format("Skipped: {}: {}\n", k.file, k.why);
  for (const auto& run : r.runs)
    if (!run.complete)
      s += fmt::format(
          "Note: {} has no '# Avg bus bandwidth' line after its table: the run may have been cut, "
          "its last sizes missing (fitted on the {} rows it has)\n",
          utf8_or_replacement(run.file), run.rows.size());
  return s;
}

nlohmann::json fit_json(const FitResult& r) {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : r.parameters)
    params.push_back({{"name", p.name},
                      {"model_value", p.model_value},
                      {"value", p.value},
                      {"fitted", p.fitted},
                      {"why", p.why}});
  auto groups = [](const std::vector<FitErrorGroup>& gs) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& g : gs)
      a.push_back({{"collective", g.collective},
                   {"band", g.band},
                   {"points", g.points},
                   {"median", g.median},
                   {"worst", g.worst}});
    return a;
  };
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : r.points)
    points.push_back({{"file", utf8_or_replacement(r.runs[p.run].file)},
                      {"line", p.line},
                      {"collective", op_name(r.runs[p.run].op)},
                      {"nodes", r.runs[p.run].nodes},
                      {"bytes", p.bytes},
                      {"band", p.band},
                      {"measured_time_us", p.measured_time_us},
                      {"measured_busbw_gbs", p.measured_busbw_gbs},
                      {"model_time_us", p.model_time_us},
                      {"fitted_time_us", p.fitted_time_us},
                      {"cv_time_us", p.cv_time_us},
                      {"algorithm", p.algorithm},
                      {"in_objective", p.in_objective}});
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& k : r.skipped)
    skipped.push_back({{"file", utf8_or_replacement(k.file)}, {"why", k.why}});
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : r.runs)
    runs.push_back({{"file", utf8_or_replacement(run.file)},
                    {"collective", op_name(run.op)},
                    {"nodes", run.nodes},
                    {"gpus_per_node", run.gpus_per_node},
                    {"rows", run.rows.size()},
                    {"complete", run.complete}});
  return {{"parameters", params},
          {"runs", runs},
          {"skipped", skipped},
          {"cross_validation", r.cv_method},
          {"objective_before", r.objective_before},
          {"objective_after", r.objective_after},
          {"model_errors", groups(r.model_errors)},
          {"fit_errors", groups(r.fit_errors)},
          {"cv_errors", groups(r.cv_errors)},
          {"points", points}};
}

}  // namespace gf
