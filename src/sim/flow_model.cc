#include "sim/flow_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

namespace gf {
int FlowSet::add(double bytes, const std::vector<Hop>& path) {
  if (max_bytes_ > 0 &&
      (over_budget_ || memory_bytes(bytes_.size() + 1, hops_.size() + path.size()) > max_bytes_)) {
    over_budget_ = true;
    return -1;
  }
  bytes_.push_back(bytes);
  hops_.insert(hops_.end(), path.begin(), path.end());
  offset_.push_back(static_cast<int64_t>(hops_.size()));
  return static_cast<int>(bytes_.size()) - 1;
}

namespace {

// The fluid simulation, exact: flows share the links max-min fairly, and each time flows finish
// the rates are solved again for the flows that can change, found in two steps.
// - Max-min sharing decomposes over the connected components of the flow-link graph (flows of
//   two components share no link), and components only split as flows leave: they are found
//   once, and an event re-solves only the components its finished flows belonged to.
// - Within a component, when flows whose least rate was s leave, every flow whose rate was
//   below s keeps it: progressive filling froze those flows on links the leaving flows do not
//   cross (a flow crossing a link that saturated below its own level would have been frozen
//   there), and those links' usage below s does not depend on the leaving flows. So only the
//   flows at rate s or above are solved again, on what the others leave of the links. Equal-size
//   flows finish fastest first, so an event usually re-solves only a few flows.
class Fluid {
 public:
  Fluid(const FlowSet& flows, const std::vector<double>& capacity)
      : fs_(flows), cap_(capacity), F_(flows.size()), L_(capacity.size()) {}

  // Max-min rates of the flows `active` marks: the first solve alone.
  void rates(const std::vector<uint8_t>& active, std::vector<double>& rate,
             std::vector<int32_t>& limit) {
    start(active);
    rate = rate_;
    limit = limit_;
  }

  FluidResult run(double tie) {
    FluidResult out;
    std::vector<uint8_t> active(static_cast<size_t>(F_), 0);
    for (int f = 0; f < F_; ++f) active[f] = fs_.bytes(f) > 0 && fs_.begin(f) != fs_.end(f);
    start(active);
    out.completion_s.assign(static_cast<size_t>(F_), 0);
    ++out.rounds;
    out.load_Bps = usage_;
    std::vector<int> ending;
    std::vector<double> comp_level(comp_flows_.size(), -1);  // least rate ending, per component
    std::vector<int> dirty;
    while (!events_.empty()) {
      // The next completion, and every flow completing within `tie` of it (relative): they
      // end together at the last of their times, so no byte is dropped.
      const double t0 = events_.top().time;
      const double horizon = t0 + tie * std::max(t0, 1e-300);
      ending.clear();
      double now = t0;
      while (!events_.empty() && events_.top().time <= horizon) {
        const Event e = events_.top();
        events_.pop();
        if (e.version != version_[e.flow] || !active_[e.flow]) continue;  // superseded
        ending.push_back(e.flow);
        now = std::max(now, e.time);
      }
      if (ending.empty()) continue;
      std::sort(ending.begin(), ending.end());  // the bottleneck: the highest-numbered flow's
      for (int f : ending) {
        active_[f] = 0;
        remaining_[f] = 0;
        out.completion_s[f] = now;
        out.bottleneck_link = limit_[f];
        for (const auto* h = fs_.begin(f); h != fs_.end(f); ++h)
          usage_[h->link] -= rate_[f] * h->coef;
        const int c = comp_[f];
        if (comp_level[c] < 0) dirty.push_back(c);
        comp_level[c] = comp_level[c] < 0 ? rate_[f] : std::min(comp_level[c], rate_[f]);
      }
      out.time_s = now;
      bool solved = false;
      for (int c : dirty) {
        solved = solve(c, now, comp_level[c]) || solved;
        comp_level[c] = -1;
      }
      if (solved) ++out.rounds;
      dirty.clear();
    }
    out.peak_load_Bps = peak_;
    // Flows still active have no capacity left (every path cut by zero-capacity links).
    for (int f = 0; f < F_; ++f)
      if (active_[f]) {
        out.time_s = std::numeric_limits<double>::infinity();
        out.completion_s[f] = out.time_s;
      }
    return out;
  }

 private:
  struct Event {
    double time;
    int flow;
    uint32_t version;
    bool operator>(const Event& o) const { return time > o.time; }
  };

  // Every flow `active` marks with its bytes to move, the links indexed and the components
  // found, and the rates of the first solve.
  void start(const std::vector<uint8_t>& active) {
    const size_t F = static_cast<size_t>(F_);
    active_ = active;
    solving_.assign(F, 0);
    frozen_.assign(F, 0);
    remaining_.assign(F, 0);
    rate_.assign(F, 0);
    since_.assign(F, 0);
    version_.assign(F, 0);
    limit_.assign(F, -1);
    for (int f = 0; f < F_; ++f) remaining_[f] = fs_.bytes(f);
    index_links();
    find_components();
    rem_.assign(L_, 0);
    coef_.assign(L_, 0);
    usage_.assign(L_, 0);
    peak_.assign(L_, 0);
    in_solve_link_.assign(L_, 0);
    for (size_t c = 0; c < comp_flows_.size(); ++c) solve(static_cast<int>(c), 0, 0);
  }

  // Link -> flows index over the active flows (a flow once per hop on the link).
  void index_links() {
    first_.assign(L_ + 1, 0);
    for (int f = 0; f < F_; ++f)
      if (active_[f])
        for (const auto* h = fs_.begin(f); h != fs_.end(f); ++h) ++first_[h->link + 1];
    for (size_t l = 0; l < L_; ++l) first_[l + 1] += first_[l];
    on_link_.assign(static_cast<size_t>(first_[L_]), 0);
    std::vector<int64_t> fill(first_.begin(), first_.end() - 1);
    for (int f = 0; f < F_; ++f)
      if (active_[f])
        for (const auto* h = fs_.begin(f); h != fs_.end(f); ++h)
          on_link_[static_cast<size_t>(fill[h->link]++)] = f;
  }

  int root(int f) {
    while (parent_[f] != f) f = parent_[f] = parent_[parent_[f]];
    return f;
  }

  // Connected components of the flow-link graph (union-find over the flows of each link).
  void find_components() {
    parent_.resize(static_cast<size_t>(F_));
    for (int f = 0; f < F_; ++f) parent_[f] = f;
    for (size_t l = 0; l < L_; ++l)
      for (int64_t k = first_[l] + 1; k < first_[l + 1]; ++k) {
        const int a = root(on_link_[static_cast<size_t>(first_[l])]);
        const int b = root(on_link_[static_cast<size_t>(k)]);
        if (a != b) parent_[b] = a;
      }
    comp_.assign(static_cast<size_t>(F_), -1);
    std::vector<int> id(static_cast<size_t>(F_), -1);
    for (int f = 0; f < F_; ++f) {
      if (!active_[f]) continue;
      const int r = root(f);
      if (id[r] < 0) {
        id[r] = static_cast<int>(comp_flows_.size());
        comp_flows_.emplace_back();
      }
      comp_[f] = id[r];
      comp_flows_[id[r]].push_back(f);
    }
  }

  // Solves again the active flows of component `c` whose rate is `level` or more (all of them
  // at level 0), by progressive filling on what the other flows leave of each link: the link
  // with the lowest fair share freezes every flow being solved that crosses it at that share.
  // Their completions are then scheduled from `now`. False when no flow was solved.
  bool solve(int c, double now, double level) {
    auto& flows = comp_flows_[c];
    const double floor = level * (1 - kLevelTie);
    solving_list_.clear();
    size_t w = 0;
    for (int f : flows) {
      if (!active_[f]) continue;
      flows[w++] = f;
      if (rate_[f] < floor) continue;  // keeps its rate
      remaining_[f] = std::max(0.0, remaining_[f] - rate_[f] * (now - since_[f]));
      since_[f] = now;
      solving_[f] = 1;
      frozen_[f] = 0;
      solving_list_.push_back(f);
      for (const auto* h = fs_.begin(f); h != fs_.end(f); ++h)
        usage_[h->link] -= rate_[f] * h->coef;
    }
    flows.resize(w);
    if (solving_list_.empty()) return false;
    links_.clear();
    for (int f : solving_list_)
      for (const auto* h = fs_.begin(f); h != fs_.end(f); ++h) {
        if (!in_solve_link_[h->link]) {
          in_solve_link_[h->link] = 1;
          links_.push_back(h->link);
          rem_[h->link] = cap_[h->link] - usage_[h->link];
          coef_[h->link] = 0;
        }
        coef_[h->link] += h->coef;
      }
    auto share = [&](int32_t l) { return std::max(0.0, rem_[l]) / coef_[l]; };
    heap_.clear();
    for (int32_t l : links_)
      if (coef_[l] > kCoefEps) heap_.push_back({share(l), l});
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
    size_t frozen = 0;
    while (!heap_.empty() && frozen < solving_list_.size()) {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      const auto [s, l] = heap_.back();
      heap_.pop_back();
      if (coef_[l] <= kCoefEps) continue;
      const double fill = share(l);
      // A link's share only rises as flows freeze on others ((R - s c) / (C - c) >= R / C when
      // R / C >= s, the level they froze at), so every entry's key is at most its link's share
      // and the heap's least accurate entry is the least share. A stale entry goes back in
      // with its share now: one push per stale pop, not one per touched link per freeze.
      if (std::fabs(fill - s) > 1e-9 * std::max(fill, s) + 1e-300) {
        heap_.push_back({fill, l});
        std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
        continue;
      }
      for (int64_t k = first_[l]; k < first_[l + 1]; ++k) {
        const int f = on_link_[static_cast<size_t>(k)];
        if (!solving_[f] || frozen_[f]) continue;
        frozen_[f] = 1;
        ++frozen;
        rate_[f] = fill;
        limit_[f] = l;
        for (const auto* h = fs_.begin(f); h != fs_.end(f); ++h) {
          rem_[h->link] -= fill * h->coef;
          coef_[h->link] -= h->coef;
        }
      }
      coef_[l] = 0;
    }
    for (int32_t l : links_) in_solve_link_[l] = 0;
    for (int f : solving_list_) {
      solving_[f] = 0;
      ++version_[f];
      if (!frozen_[f]) rate_[f] = 0;  // crosses only links with nothing left
      for (const auto* h = fs_.begin(f); h != fs_.end(f); ++h) {
        usage_[h->link] += rate_[f] * h->coef;
        peak_[h->link] = std::max(peak_[h->link], usage_[h->link]);
      }
      if (rate_[f] > 0) events_.push({now + remaining_[f] / rate_[f], f, version_[f]});
    }
    return true;
  }

  // Rates this close (relative) below the leaving flows' least rate are solved again too:
  // rounding, not a different level.
  static constexpr double kLevelTie = 1e-9;
  static constexpr double kCoefEps = 1e-12;

  const FlowSet& fs_;
  const std::vector<double>& cap_;
  const int F_;
  const size_t L_;
  // Per flow: still moving; being solved now; frozen in this solve.
  std::vector<uint8_t> active_, solving_, frozen_;
  // Per link: crossed by a flow being solved; its share changed in this filling step.
  std::vector<uint8_t> in_solve_link_;
  // Per flow: bytes left at `since_`, the rate since then, the link that froze it.
  std::vector<double> remaining_, rate_, since_;
  std::vector<int32_t> limit_;
  std::vector<uint32_t> version_;  // per flow: which scheduled completion is current
  // Per link: capacity left and coefficients of unfrozen flows (in a solve); traffic of every
  // active flow at its current rate.
  std::vector<double> rem_, coef_, usage_, peak_;  // peak_: usage_ at its highest
  std::vector<int32_t> on_link_, links_;
  std::vector<int64_t> first_;
  std::vector<int> parent_, comp_, solving_list_;
  std::vector<std::vector<int>> comp_flows_;
  std::vector<std::pair<double, int32_t>> heap_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
};

}  // namespace

void max_min_rates(const FlowSet& flows, const std::vector<double>& capacity,
                   const std::vector<uint8_t>& active, std::vector<double>& rate,
                   std::vector<int32_t>& limit) {
  Fluid(flows, capacity).rates(active, rate, limit);
}

FluidResult run_fluid(const FlowSet& flows, const std::vector<double>& capacity, double tie) {
  return Fluid(flows, capacity).run(tie);
}

}  // namespace gf
