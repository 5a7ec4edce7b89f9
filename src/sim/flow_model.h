// Flow-level network model: flows share links max-min fairly; a fluid simulation advances them
// to completion, re-sharing bandwidth each time flows finish.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gf {

/// A set of flows. A flow has one rate; each of its path entries puts `coef` x that rate on a
/// link. A ring channel is one flow over every hop of its ring (coef 1 per hop, so the slowest
/// hop paces it, as a ring does); a connection spread over several QPs or paths has fractional
/// coefficients that sum to 1 per hop.
class FlowSet {
 public:
  struct Hop {
    int32_t link;
    float coef;
  };
  /// `max_bytes`: the memory the flows may take (0: no limit). Past it `add` records nothing
  /// more and `over_budget()` turns true, so that the caller reports the size instead of
  /// exhausting the machine's memory.
  explicit FlowSet(size_t max_bytes = 0) : max_bytes_(max_bytes) {}
  /// Adds a flow that moves `bytes` over every hop; returns its index, or -1 over the budget.
  int add(double bytes, const std::vector<Hop>& path);
  bool over_budget() const { return over_budget_; }
  /// Drops the flows from `flows` on (those added last).
  void truncate(int flows) {
    if (flows >= size()) return;
    bytes_.resize(static_cast<size_t>(flows));
    offset_.resize(static_cast<size_t>(flows) + 1);
    hops_.resize(static_cast<size_t>(offset_.back()));
  }
  /// Memory the flows take, counting the headroom a growing vector doubles into.
  static size_t memory_bytes(size_t flows, size_t hops) {
    return 2 * (flows * (sizeof(double) + sizeof(int64_t)) + hops * sizeof(Hop));
  }
  int size() const { return static_cast<int>(bytes_.size()); }
  double bytes(int f) const { return bytes_[f]; }
  const Hop* begin(int f) const { return hops_.data() + offset_[f]; }
  const Hop* end(int f) const { return hops_.data() + offset_[f + 1]; }
  size_t hop_count() const { return hops_.size(); }
  void reserve(size_t flows, size_t hops) {
    bytes_.reserve(flows);
    offset_.reserve(flows + 1);
    hops_.reserve(hops);
  }

 private:
  size_t max_bytes_ = 0;
  bool over_budget_ = false;
  std::vector<double> bytes_;
  std::vector<int64_t> offset_{0};
  std::vector<Hop> hops_;
};

/// Completion times closer than this (relative) are one event: rounding, not modelling.
constexpr double kFluidTie = 1e-9;

/// What the fluid simulation found.
struct FluidResult {
  double time_s = 0;                 ///< until the last flow completes
  int bottleneck_link = -1;          ///< the link that paced the last flow to finish
  std::vector<double> load_Bps;      ///< per link: traffic in the first sharing round (bytes/s)
  /// Per link: the most traffic at any time of the run (bytes/s); flows that speed up as others
  /// finish can load a link more than the first round did.
  std::vector<double> peak_load_Bps;
  std::vector<double> completion_s;  ///< per flow: when it finished (0 for an empty flow)
  int rounds = 0;                    ///< events at which rates were solved (the first included)
};

/// Max-min fair rates of the active flows (`active[f]`), capacities in bytes/s. `limit[f]`
/// receives the link that froze flow f.
void max_min_rates(const FlowSet& flows, const std::vector<double>& capacity,
                   const std::vector<uint8_t>& active, std::vector<double>& rate,
                   std::vector<int32_t>& limit);

/// Runs all flows to completion, exactly: whenever flows finish, the max-min rates of the flows
/// they shared links with (their connected component) are solved again. Flows finishing within
/// `tie` (relative) of each other finish together, at the later time: floating-point ties, not
/// an approximation (equal flows of a symmetric collective end in one event).
FluidResult run_fluid(const FlowSet& flows, const std::vector<double>& capacity,
                      double tie = kFluidTie);

}  // namespace gf
