#include "sim/flow_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gf {
namespace {
// After this many rounds the batching tolerance starts to double every round.
constexpr int kRoundsAtBaseBatch = 3;
constexpr double kBatchGrowthBase = 0.05;
// Re-sharing rounds allowed: flow sets above kLargeFlowSetHops path entries get fewer.
constexpr size_t kLargeFlowSetHops = 1'000'000;
constexpr int kMaxRoundsLarge = 6;
constexpr int kMaxRoundsSmall = 40;
}  // namespace

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

void max_min_rates(const FlowSet& flows, const std::vector<double>& capacity,
                   const std::vector<uint8_t>& active, std::vector<double>& rate,
                   std::vector<int32_t>& limit) {
  const int F = flows.size();
  const size_t L = capacity.size();
  rate.assign(F, 0);
  limit.assign(F, -1);
  // Per link: remaining capacity and the sum of coefficients of unfrozen flows on it.
  std::vector<double> rem(capacity), coef(L, 0);
  std::vector<int64_t> first(L + 1, 0);
  for (int f = 0; f < F; ++f) {
    if (!active[f]) continue;
    for (const auto* h = flows.begin(f); h != flows.end(f); ++h) {
      coef[h->link] += h->coef;
      ++first[h->link + 1];
    }
  }
  std::vector<int32_t> used;  // links that carry unfrozen flows
  for (size_t l = 0; l < L; ++l) {
    if (first[l + 1] > 0) used.push_back(static_cast<int32_t>(l));
    first[l + 1] += first[l];
  }
  // Link -> flows index (a flow appears once per hop on that link).
  std::vector<int32_t> on_link(static_cast<size_t>(first[L]));
  {
    std::vector<int64_t> fill(first.begin(), first.end() - 1);
    for (int f = 0; f < F; ++f) {
      if (!active[f]) continue;
      for (const auto* h = flows.begin(f); h != flows.end(f); ++h)
        on_link[static_cast<size_t>(fill[h->link]++)] = f;
    }
  }
  // Progressive filling: the link with the lowest fair share freezes every flow crossing it at
  // that share; links whose share changed are re-queued (stale queue entries are skipped).
  constexpr double kEps = 1e-12;
  using Entry = std::pair<double, int32_t>;
  std::vector<Entry> heap;
  heap.reserve(used.size() * 2);
  auto share = [&](int32_t l) { return std::max(0.0, rem[l]) / coef[l]; };
  for (int32_t l : used)
    if (coef[l] > kEps) heap.push_back({share(l), l});
  std::make_heap(heap.begin(), heap.end(), std::greater<Entry>());
  std::vector<uint8_t> frozen(F, 0), dirty(L, 0);
  std::vector<int32_t> touched;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<Entry>());
    const auto [s, l] = heap.back();
    heap.pop_back();
    if (coef[l] <= kEps) continue;
    const double now = share(l);
    if (std::fabs(now - s) > 1e-9 * std::max(now, s) + 1e-300) continue;  // stale entry
    for (int64_t k = first[l]; k < first[l + 1]; ++k) {
      const int f = on_link[static_cast<size_t>(k)];
      if (frozen[f]) continue;
      frozen[f] = 1;
      rate[f] = now;
      limit[f] = l;
      for (const auto* h = flows.begin(f); h != flows.end(f); ++h) {
        rem[h->link] -= now * h->coef;
        coef[h->link] -= h->coef;
        if (!dirty[h->link]) {
          dirty[h->link] = 1;
          touched.push_back(h->link);
        }
      }
    }
    coef[l] = 0;
    for (int32_t t : touched) {
      dirty[t] = 0;
      if (coef[t] > kEps) {
        heap.push_back({share(t), t});
        std::push_heap(heap.begin(), heap.end(), std::greater<Entry>());
      }
    }
    touched.clear();
  }
}

FluidResult run_fluid(const FlowSet& flows, const std::vector<double>& capacity, double batch) {
  FluidResult out;
  const int F = flows.size();
  out.load_Bps.assign(capacity.size(), 0);
  std::vector<uint8_t> active(F, 1);
  std::vector<double> remaining(F), rate;
  std::vector<int32_t> limit;
  for (int f = 0; f < F; ++f) {
    remaining[f] = flows.bytes(f);
    if (remaining[f] <= 0 || flows.begin(f) == flows.end(f)) active[f] = 0;
  }
  int left = static_cast<int>(std::count(active.begin(), active.end(), 1));
  double t = 0;
  while (left > 0) {
    max_min_rates(flows, capacity, active, rate, limit);
    if (out.rounds++ == 0)
      for (int f = 0; f < F; ++f)
        if (active[f])
          for (const auto* h = flows.begin(f); h != flows.end(f); ++h)
            out.load_Bps[h->link] += rate[f] * h->coef;
    double first = std::numeric_limits<double>::infinity();
    for (int f = 0; f < F; ++f)
      if (active[f] && rate[f] > 0) first = std::min(first, remaining[f] / rate[f]);
    if (!std::isfinite(first)) {
      // Flows with no capacity left (every path cut by zero-capacity links) never end.
      out.time_s = std::numeric_limits<double>::infinity();
      return out;
    }
    // Flows ending within a tolerance of the first end together, at the last of their ends, so
    // no byte is dropped. The tolerance grows as rounds add up, so widely spread rates
    // (oversubscribed or collided links) cost tens of re-sharing rounds, not one per rate.
    const double b =
        out.rounds <= kRoundsAtBaseBatch
            ? batch
            : std::max(batch, kBatchGrowthBase) * std::pow(2.0, out.rounds - kRoundsAtBaseBatch);
    // Large flow sets stop re-sharing after a few rounds: what is left finishes at the rates
    // of the last round (a slight overestimate of the tail).
    const int max_rounds =
        flows.hop_count() > kLargeFlowSetHops ? kMaxRoundsLarge : kMaxRoundsSmall;
    const double horizon =
        out.rounds >= max_rounds ? std::numeric_limits<double>::infinity() : first * (1 + b);
    double dt = first;
    for (int f = 0; f < F; ++f)
      if (active[f] && rate[f] > 0 && remaining[f] / rate[f] <= horizon)
        dt = std::max(dt, remaining[f] / rate[f]);
    t += dt;
    for (int f = 0; f < F; ++f) {
      if (!active[f]) continue;
      const bool ends = rate[f] > 0 && remaining[f] / rate[f] <= horizon;
      remaining[f] -= rate[f] * dt;
      if (ends) {
        active[f] = 0;
        --left;
        out.bottleneck_link = limit[f];
      }
    }
  }
  out.time_s = t;
  return out;
}

}  // namespace gf
