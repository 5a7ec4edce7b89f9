// What-if: failures, growth and faster NICs, re-routed and re-simulated on the fabric, with what
// the job should do about them (seed §7 "design for failure", §8 growth).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/diag.h"
#include "plan/plan.h"
#include "sim/collective.h"
#include "sim/step.h"
#include "spec/spec.h"

namespace gf {

/// What to change.
struct WhatIfOptions {
  std::vector<std::string> fail;  ///< "link:A:B", "switch:NAME", "node:NAME" (cabling.csv names)
  int grow_nodes = 0;             ///< --grow nodes=+N
  std::string nic;                ///< --nic: a rate ("800G") or a catalog id
  double probe_bytes = 1024.0 * 1024 * 1024;  ///< collective size compared (nccl-tests size)
  /// "link:A:B=200G" (a link trained at a lower speed, both directions), "switch:NAME=0.5"
  /// (every link of the switch at that fraction of its capacity).
  std::vector<std::string> degrade;
  std::vector<std::string> slow;  ///< "node:NAME=0.8": the node computes at that fraction
  bool links = false;             ///< keep the scenario's all_reduce traffic per link
  /// Memory each probe's flows may take, bytes (SimOptions::memory_budget_bytes; 0: no limit):
  /// beyond it the probe says so instead of exhausting the machine.
  size_t memory_budget_bytes = 0;
};

/// The scenario's all_reduce traffic per link, with the plan and fabric that name the links.
struct WhatIfLinks {
  Plan plan;
  Fabric fabric;
  CollectiveTraffic traffic;
};

/// One collective's bus bandwidth, or why it cannot run.
struct CollectiveProbe {
  std::string op;
  double busbw_gbs = 0;
  std::string algorithm;  ///< NCCL's choice at the probe size (nvls, ring, ...)
  /// Why each algorithm the model has cannot run here ("nvls: no path: ..."), to say why NCCL's
  /// choice changed.
  std::vector<std::pair<std::string, std::string>> unavailable;
  bool runs = true;
  std::string note;
};

/// One side of the comparison.
struct WhatIfSide {
  std::string label;
  long long gpus = 0;
  int nodes = 0;
  std::vector<CollectiveProbe> collectives;
  std::optional<StepResult> step;
  std::string step_note;  ///< why there is no step result
  int switches = 0;
  double network_capex_usd = 0, top_tier_free = 0;
  long long max_nodes_same_tiers = 0;
  int tiers = 0;
};

/// A node hit by the failures.
struct AffectedNode {
  std::string name;
  std::string state;  ///< "cut off" (a rail has no path left) or "degraded" (lost a plane)
  std::vector<std::string> lost;  ///< NIC ports that lost their link
  /// Cut off: each NIC without a port, and the NIC its GPUs send through once the job is
  /// restarted ("nic0 -> nic1"); empty where the node has no NIC left (or is down).
  std::vector<std::string> sends_through;
};

/// The comparison.
struct WhatIfResult {
  WhatIfSide baseline, scenario;
  std::optional<WhatIfSide> dropped;  ///< the job without the cut-off nodes
  /// The job restarted on every node, the GPUs of each NIC cut off sending through another NIC
  /// of their node (AffectedNode::sends_through); absent where a node has no NIC left.
  std::optional<WhatIfSide> restarted;
  std::vector<std::string> changes;
  std::vector<AffectedNode> affected;
  std::string recommendation;
  std::shared_ptr<const WhatIfLinks> links;  ///< with WhatIfOptions::links
  /// With WhatIfOptions::links, where the traffic is not the scenario's: whose it is, or why
  /// none was written.
  std::string links_note;
};

/// The plan's nodes by their cabling.csv names, in node order (node0001, ...).
std::vector<std::string> node_names(const Plan& plan, const Catalog& catalog, const Fabric& fabric);

/// Applies what-if's --fail items (link:A:B, switch:NAME, node:NAME with cabling.csv names) to
/// `fabric`, appending what each did to `changes`; errors name the flag and the unknown part.
std::vector<Diagnostic> fail_parts(const Plan& plan, const Catalog& catalog, Fabric& fabric,
                                   const std::vector<std::string>& items,
                                   std::vector<std::string>& changes);

/// The scenario's fabric alone, for a command that runs its own workload on it (replay): other
/// NICs (WhatIfOptions::nic), failed and degraded parts (fail, degrade), as what_if() builds its
/// scenario; grow and slow are not applied.
struct ScenarioFabric {
  Plan plan;
  Fabric fabric;
  std::vector<std::string> changes;
};
Result<ScenarioFabric> scenario_fabric(const Spec& spec, const Catalog& catalog, const Plan& plan,
                                       const WhatIfOptions& options);

Result<WhatIfResult> what_if(const Spec& spec, const Catalog& catalog, const Plan& plan,
                             const WhatIfOptions& options);

}  // namespace gf
