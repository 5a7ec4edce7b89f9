// Design-space sweep (guide §3.1): the cross-product of spec keys, each design planned,
// simulated and stepped; the Pareto frontier of cost against time; the best design for the
// spec's goal and budget.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/diag.h"
#include "spec/spec.h"

namespace gf {

/// One --vary: a spec key and the values it takes.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};
/// Parses "KEY=V1,V2,..." (`arg` names the flag in messages).
Result<SweepAxis> parse_vary(const std::string& text);

/// One evaluated design.
struct DesignResult {
  int index = 0;                    ///< 0-based, in cross-product order (last axis fastest)
  std::vector<KeyOverride> values;  ///< the axis values of this design
  bool ok = false;
  std::string error;  ///< why the combination is invalid, when !ok
  // The plan.
  std::string technology, topology, switch_id, nic;
  int gpus = 0, switches = 0;
  double capex_usd = 0, network_capex_usd = 0, power_w = 0;
  // The simulation: all_reduce over the whole cluster at the probe size.
  double busbw_gbs = 0;
  // The step (when the spec has a workload).
  bool has_step = false;
  double step_time_s = 0, comm_fraction = 0, gpu_utilization = 0;
  std::optional<double> mfu;  ///< model FLOPs utilisation (unknown without the model's FLOPs)
  double memory_bytes = 0;    ///< the peak stage's memory per GPU (every design fits)
  double time_to_train_s = 0, cost_to_train_usd = 0;
  // The spec's jobs (sim/jobs.h), when it has a jobs: section; `placement` may be swept.
  bool has_jobs = false;
  double jobs_worst_slowdown = 0, jobs_mean_slowdown = 0;
  double jobs_mean_step_s = 0;  ///< the jobs' steps together, averaged: the time without a workload
  std::string jobs_worst;       ///< the job slowed most
  bool constraints_met = true;  ///< the step's constraints (comm share, utilisation)
  /// The constraints missed, each as step prints it (constraint_text).
  std::vector<std::string> missed;
  bool within_budget = true;    ///< capex within constraints.budget (when set)
  bool pareto = false;          ///< on the cost-time frontier
  /// The time the frontier and the goal use: time to train, else step time, else 0.
  double time_s() const;
};

struct SweepResult {
  std::vector<SweepAxis> axes;
  std::vector<DesignResult> designs;  ///< every combination, valid or not, in order
  Goal goal = Goal::kTime;            ///< the spec's constraints.goal
  double budget_usd = 0;
  int best = -1;    ///< index of the best design; -1 when none qualifies
  std::string why;  ///< the reasoning for `best` (or why there is none)
};

/// Combinations in cross-product order.
long long design_count(const std::vector<SweepAxis>& axes);
std::vector<KeyOverride> design_values(const std::vector<SweepAxis>& axes, long long index);

/// Evaluates one design of the spec at `path` with `values` applied. Never fails: an invalid
/// combination is returned with ok = false and the reason.
DesignResult evaluate_design(const std::string& path, const std::vector<KeyOverride>& values,
                             int index);

/// Marks the frontier, picks the best design and explains it. `designs` may come from several
/// processes; they are sorted by index first.
SweepResult summarise_sweep(std::vector<SweepAxis> axes, std::vector<DesignResult> designs,
                            Goal goal, double budget_usd);

/// What a valid design's plan and simulation give, as JSON: technology, topology, switch, nic,
/// gpus, switches, capex_usd, network_capex_usd, power_w, busbw_gbs, constraints_met,
/// within_budget. sweep.json and the wire format below both carry these.
nlohmann::json design_plan_json(const DesignResult& d);
/// What its training step gives: step_time_s, comm_fraction, gpu_utilization, time_to_train_s,
/// cost_to_train_usd.
nlohmann::json design_step_json(const DesignResult& d);

/// What its jobs give: jobs_worst_slowdown, jobs_worst, jobs_mean_slowdown, jobs_mean_step_s.
nlohmann::json design_jobs_json(const DesignResult& d);

/// The axis key that is not a spec key: every job's placement policy (jobs --placement).
inline constexpr const char* kPlacementAxis = "placement";
/// With goal time, designs within this fraction of the fastest qualified design's time are as
/// fast as the model can tell, and the cheapest of them is the best: gpufabric's choice, well
/// under the collective model's own error on published runs (`calibrate`'s test set: 4 %
/// median at large sizes), so a fraction of a percent never buys a costlier design.
inline constexpr double kSweepTimeTie = 0.01;

/// A design result as JSON and back, exactly (doubles round-trip), for gathering results from
/// several processes.
nlohmann::json design_to_json(const DesignResult& d);
DesignResult design_from_json(const nlohmann::json& j);

/// Design indices [first, last) of `part` when `total` designs are split into `parts`.
std::pair<long long, long long> design_share(long long total, int part, int parts);

/// Evaluates the designs [first, last) on `threads` threads; `progress` (may be empty) is called
/// after each design with the number done so far.
std::vector<DesignResult> evaluate_designs(const std::string& path,
                                           const std::vector<SweepAxis>& axes, long long first,
                                           long long last, int threads,
                                           const std::function<void(long long)>& progress);

}  // namespace gf
