#include "sim/flow_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gf {
namespace {
// After this many rounds the batching tolerance starts to double every 2 rounds.
constexpr int kRoundsAtBaseBatch = 4;
constexpr double kBatchGrowthBase = 0.05;
}  // namespace

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
  // Progressive filling by levels: every flow crossing a link whose fair share is the lowest
  // freezes at that share; repeat with what capacity is left. A level costs one pass over the
  // links still in use, so fabrics with few distinct shares (symmetric collectives) are cheap.
  constexpr double kEps = 1e-12;
  std::vector<uint8_t> frozen(F, 0);
  while (!used.empty()) {
    double low = std::numeric_limits<double>::infinity();
    size_t w = 0;
    for (int32_t l : used) {
      if (coef[l] <= kEps) continue;
      used[w++] = l;
      low = std::min(low, std::max(0.0, rem[l]) / coef[l]);
    }
    used.resize(w);
    if (used.empty()) break;
    const double cut = low * (1 + 1e-9) + 1e-300;
    for (size_t i = 0; i < used.size(); ++i) {
      const int32_t l = used[i];
      if (coef[l] <= kEps || std::max(0.0, rem[l]) / coef[l] > cut) continue;
      for (int64_t k = first[l]; k < first[l + 1]; ++k) {
        const int f = on_link[static_cast<size_t>(k)];
        if (frozen[f]) continue;
        frozen[f] = 1;
        rate[f] = low;
        limit[f] = l;
        for (const auto* h = flows.begin(f); h != flows.end(f); ++h) {
          rem[h->link] -= low * h->coef;
          coef[h->link] -= h->coef;
        }
      }
      coef[l] = 0;
    }
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
    const double b = out.rounds <= kRoundsAtBaseBatch
                         ? batch
                         : std::max(batch, kBatchGrowthBase) *
                               std::pow(2.0, (out.rounds - kRoundsAtBaseBatch) / 2.0);
    const double horizon = first * (1 + b);
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
