#include "sim/flow_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

namespace gf {

int FlowSet::add(double bytes, const std::vector<Hop>& path) {
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
  for (size_t l = 0; l < L; ++l) first[l + 1] += first[l];
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
  using Entry = std::pair<double, int32_t>;  // fair share, link
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (size_t l = 0; l < L; ++l)
    if (coef[l] > 1e-12) heap.push({rem[l] / coef[l], static_cast<int32_t>(l)});
  std::vector<uint8_t> frozen(F, 0);
  while (!heap.empty()) {
    const auto [share, l] = heap.top();
    heap.pop();
    if (coef[l] <= 1e-12) continue;
    const double now = rem[l] / coef[l];
    if (now > share * (1 + 1e-12) + 1e-300) continue;  // stale entry
    const double r = std::max(0.0, now);
    for (int64_t i = first[l]; i < first[l + 1]; ++i) {
      const int f = on_link[static_cast<size_t>(i)];
      if (frozen[f]) continue;
      frozen[f] = 1;
      rate[f] = r;
      limit[f] = l;
      for (const auto* h = flows.begin(f); h != flows.end(f); ++h) {
        rem[h->link] -= r * h->coef;
        coef[h->link] -= h->coef;
        if (h->link != l && coef[h->link] > 1e-12)
          heap.push({std::max(0.0, rem[h->link]) / coef[h->link], h->link});
      }
    }
    coef[l] = 0;
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
    double dt = std::numeric_limits<double>::infinity();
    for (int f = 0; f < F; ++f)
      if (active[f] && rate[f] > 0) dt = std::min(dt, remaining[f] / rate[f]);
    if (!std::isfinite(dt)) {
      // Flows with no capacity left (all their links saturated by zero-capacity links) never end.
      out.time_s = std::numeric_limits<double>::infinity();
      return out;
    }
    t += dt;
    for (int f = 0; f < F; ++f) {
      if (!active[f]) continue;
      remaining[f] -= rate[f] * dt;
      if (remaining[f] <= rate[f] * dt * batch + 1e-9 * flows.bytes(f)) {
        // Flows this close to done finish with this round (error bounded by `batch` x dt).
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
