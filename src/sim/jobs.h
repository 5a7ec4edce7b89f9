// Many jobs on one fabric: each job of the spec's `jobs:` placed on its nodes (packed, spread,
// random or listed), its training step simulated there, and every job's step traffic run
// together on the fabric with the exact max-min fluid model, to see what the jobs cost each
// other: per job its step alone and together, the slowdown, the links where jobs meet; and which
// placement and load balancing keep the worst slowdown lowest. Pure: a spec and a plan in,
// figures out.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "plan/plan.h"
#include "sim/link_load.h"
#include "sim/replay.h"
#include "sim/step.h"
#include "spec/spec.h"
#include "topo/fabric.h"

namespace gf {

/// What to run.
struct JobsOptions {
  /// Every job that has a placement policy placed with this one instead (explicit node lists
  /// stay as listed); nullopt: each job's own.
  std::optional<Placement> placement;
  std::vector<std::string> fail;  ///< what-if's --fail items (cabling.csv names)
  /// Also run every placement policy with every compared load balancing, for the advice.
  bool compare = true;
  /// Per job of spec.jobs, the ranks its `trace:` files hold (verify/read_job_traces); a trace
  /// job is replayed from them on its placement (sim/replay.h). Null: the spec has no trace job,
  /// or its traces were not read (then a trace job is an error naming its key).
  const std::vector<std::vector<TracedRank>>* traces = nullptr;
};

/// The load-balancing modes the comparison runs (fabric.load_balancing): per-flow ECMP, ECMP
/// over several QPs per connection, adaptive routing.
inline constexpr LoadBalancing kComparedLoadBalancing[] = {
    LoadBalancing::kEcmp, LoadBalancing::kEcmpMultiQp, LoadBalancing::kAdaptive};

/// One kind of a job's step communication, alone and beside the other jobs.
struct JobComm {
  /// The step's: dp_allreduce, pp_sendrecv, ep_alltoall, ...; a trace job's: its process group's
  /// role and operation, "dp all_reduce (pg 2)".
  std::string kind;
  bool network = false;  ///< its flows cross NIC links (not only NVLink)
  /// Its flows' completion in the fluid model: the job's step traffic alone on the fabric, and
  /// with every other job's at once; factor = together / alone (1: untouched).
  double fluid_alone_s = 0, fluid_together_s = 0, factor = 1;
  double total_s = 0, exposed_s = 0;                    ///< the step's, alone
  double total_together_s = 0, exposed_together_s = 0;  ///< slowed by `factor`
};

/// One job: where it runs and what sharing costs it.
struct JobResult {
  std::string name;
  std::optional<Placement> placement;  ///< nullopt: an explicit node list
  std::vector<int> nodes;              ///< node indices in rank order (rank r: nodes[r / G])
  int units = 0;                       ///< scalable units its nodes are in
  long long gpus = 0;
  StepResult step;  ///< alone on the fabric, at its placement (a workload job)
  /// A trace job: its recorded step replayed alone on its placement, collectives simulated on
  /// its GPUs, compute as recorded (as `gpufabric replay` on those GPUs).
  std::optional<ReplayResult> replay;
  std::vector<std::string> traces;  ///< a trace job's files, as the spec wrote them
  double step_alone_s = 0, step_together_s = 0;
  double slowdown = 1;  ///< step_together_s / step_alone_s
  std::vector<JobComm> comms;
  std::vector<std::string> meets;  ///< the other jobs its flows share links with
  long long meeting_links = 0;     ///< links it shares with another job
  int32_t hottest_meeting_link = -1;
  double hottest_meeting_util = 0;  ///< that link's mean utilisation over the together run
  /// Whether its memory was judged: a workload job's step (a trace job has no memory model).
  bool memory_judged() const { return !replay && !step.memory.stages.empty(); }
  /// A workload job whose layout does not fit in its GPUs' memory (`step`'s FAIL memory).
  bool out_of_memory() const { return memory_judged() && !step.memory.fits; }
};

/// A link that flows of two or more jobs cross.
struct MeetingLink {
  int32_t link = -1;
  std::vector<int> jobs;  ///< indices into JobsRun::jobs
  LinkUse use;            ///< over the together run
};

/// One run: every job placed, its step alone, and every job's traffic together.
struct JobsRun {
  std::optional<Placement> policy;  ///< the policy of every non-listed job; nullopt: each its own
  LoadBalancing load_balancing = LoadBalancing::kEcmp;
  std::vector<JobResult> jobs;
  double worst_slowdown = 1, mean_slowdown = 1;
  std::string worst_job;
  double together_s = 0;           ///< the fluid time of every job's step traffic together
  LinkLoad load;                   ///< per link, every job's traffic together (payload_bytes = 1)
  std::vector<uint64_t> job_mask;  ///< per link: bit j when job j's flows cross it
  std::vector<MeetingLink> meetings;  ///< hottest first
};

/// One entry of the placement comparison.
struct JobsComparison {
  std::optional<Placement> policy;  ///< nullopt: the spec's own placements
  LoadBalancing load_balancing = LoadBalancing::kEcmp;
  bool runs = true;
  std::string note;  ///< why it cannot run
  double worst_slowdown = 0, mean_slowdown = 0, mean_step_together_s = 0;
  std::string worst_job;
  long long meeting_links = 0;
};

/// Whether `c` is better than `than` by more than the comparison table shows: a lower worst
/// slowdown (printed to 0.001x), else the same and a shorter mean step together (printed to 3
/// significant figures). A gain within that is no reason to advise a change.
bool improves_on(const JobsComparison& c, const JobsComparison& than);

/// The answer: the run as asked, the comparison and the advice.
struct JobsResult {
  JobsRun run;
  std::vector<JobsComparison> compared;  ///< policies x load balancings, as asked first
  int best = -1;                         ///< index into compared
  std::string advice;
  std::vector<std::string> changes;      ///< what --fail did
  std::shared_ptr<const Fabric> fabric;  ///< the fabric the jobs ran on (failures applied)
  std::vector<std::string> node_names;   ///< cabling.csv names by node index
  int nodes_per_unit = 0;
};

/// Nodes per scalable unit as placement counts them (the plan's unit; all nodes when it has
/// none).
int placement_unit(const Plan& plan);

/// Places the jobs of `spec` on `plan`'s nodes: explicit lists first (names checked against
/// `node_names`, "did you mean" for an unknown one), then each other job in spec order by its
/// policy (or `policy`) on the nodes left, skipping `unusable` ones. Returns per job its nodes
/// in rank order: listed as listed, placed ones ascending (as a scheduler's sorted host list
/// ranks them). Errors name the spec's file, line and key.
Result<std::vector<std::vector<int>>> place_jobs(const Spec& spec, const Plan& plan,
                                                 const std::vector<std::string>& node_names,
                                                 std::optional<Placement> policy,
                                                 const std::vector<uint8_t>& unusable = {});

/// Runs the spec's jobs on the plan's fabric. Pure.
Result<JobsResult> simulate_jobs(const Spec& spec, const Catalog& catalog, const Plan& plan,
                                 const JobsOptions& options);

}  // namespace gf
