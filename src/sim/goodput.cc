#include "sim/goodput.h"

#include <algorithm>
#include <cmath>

namespace gf {

double young_interval_s(double write_s, double mtbf_s) {
  return write_s > 0 && mtbf_s > 0 ? std::sqrt(2 * write_s * mtbf_s) : 0;
}

double daly_interval_s(double write_s, double mtbf_s) {
  if (write_s <= 0 || mtbf_s <= 0) return 0;
  if (write_s >= 2 * mtbf_s) return mtbf_s;
  const double x = write_s / (2 * mtbf_s);
  return std::sqrt(2 * write_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - write_s;
}

namespace {

// Useful time over wall time at interval tau (see expected_goodput); 0 when the job cannot
// progress.
double goodput_at(double tau, double delta, double restart, double mtbf) {
  if (tau <= 0) return delta <= 0 && mtbf > 0 ? std::max(0.0, 1 - restart / mtbf) : 0;
  const double loss = mtbf > 0 ? (restart + (tau + delta) / 2) / mtbf : 0;
  if (loss >= 1) return 0;
  return (1 - loss) / (1 + delta / tau);
}

}  // namespace

Goodput expected_goodput(const GoodputOptions& o) {
  Goodput g;
  const double ref_hours = kReferenceDays * 24;
  const double ref_nodes = kReferenceGpus / kReferenceGpusPerNode;
  for (const auto& c : kReferenceCauses) {
    double per_hour = c.interruptions / ref_hours;  // the reference job's
    if (c.scope == FailureScope::kGpu) per_hour *= o.gpus / kReferenceGpus;
    if (c.scope == FailureScope::kNode) per_hour *= o.nodes / ref_nodes;
    g.causes.push_back({c.name, per_hour});
    g.interruptions_per_hour += per_hour;
  }
  std::stable_sort(
      g.causes.begin(), g.causes.end(),
      [](const GoodputCause& a, const GoodputCause& b) { return a.per_hour > b.per_hour; });
  g.mtbf_s = g.interruptions_per_hour > 0 ? 3600 / g.interruptions_per_hour : 0;
  g.checkpoint_bytes = o.params * kCheckpointBytesPerParam;
  g.checkpoint_write_s = o.storage_write_Bps > 0 ? g.checkpoint_bytes / o.storage_write_Bps : 0;
  g.restart_s =
      o.relaunch_s + (o.storage_read_Bps > 0 ? g.checkpoint_bytes / o.storage_read_Bps : 0);
  g.young_s = young_interval_s(g.checkpoint_write_s, g.mtbf_s);
  g.daly_s = daly_interval_s(g.checkpoint_write_s, g.mtbf_s);
  g.interval_given = o.interval_s > 0;
  g.interval_s = g.interval_given ? o.interval_s : g.daly_s;
  g.goodput = goodput_at(g.interval_s, g.checkpoint_write_s, g.restart_s, g.mtbf_s);
  g.goodput_at_optimum = goodput_at(g.daly_s, g.checkpoint_write_s, g.restart_s, g.mtbf_s);
  g.progresses = g.goodput > 0;
  g.useful_s = o.useful_s;
  if (g.progresses && o.useful_s > 0) {
    g.wall_s = o.useful_s / g.goodput;
    g.lost_s = g.wall_s - o.useful_s;
    g.expected_interruptions = g.wall_s / 3600 * g.interruptions_per_hour;
  }
  return g;
}

}  // namespace gf
