// gpufabric step: one training step on the planned fabric, and what it means for training.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "common/output.h"
#include "plan/plan.h"
#include "report/plan_report.h"
#include "report/step_report.h"
#include "report/step_trace.h"
#include "sim/checkpoint.h"
#include "sim/step.h"
#include "spec/spec.h"
#include "topo/fabric.h"
#include "units/units.h"

namespace gf::cli {
namespace {

struct StepFlags {
  std::string spec, out;
  bool json = false, no_sensitivity = false, no_concurrency = false;
};

int run(const StepFlags& f) {
  Heartbeat alive("step");
  auto loaded = load_planned_spec(f.spec, load_limits(true));
  if (!loaded) return fail(loaded.errors());
  const Plan* plan = &loaded->plan;
  const Fabric fabric = Fabric::build(*plan, loaded->catalog);
  StepOptions options;
  options.concurrency = !f.no_concurrency;
  auto r = simulate_step(loaded->spec, *plan, fabric, {}, {}, options);
  if (!r) return fail(r.errors());
  std::vector<StepScenario> sens;
  if (!f.no_sensitivity) {
    auto s = step_sensitivity(loaded->spec, loaded->catalog, *plan, options);
    if (s) sens = *s;
  }
  if (!f.out.empty()) {
    if (auto code =
            write_out_folder(f.out, {{"step.trace.json", step_trace(*r).dump() + "\n"}}, f.json))
      return *code;
  }
  // The checkpoint over the storage network, against the simulated DP all-reduce (networks:).
  std::optional<CheckpointEstimate> ckpt;
  if (plan->networks && loaded->spec.workload)
    ckpt = checkpoint_estimate(*plan, *loaded->spec.workload, step_dp_traffic(*r, *plan));
  if (f.json) {
    auto j = step_json(*r, sens);
    if (ckpt) j["checkpoint"] = checkpoint_json(*ckpt);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << step_text(plan->name, *r, sens) << (ckpt ? checkpoint_text(*ckpt) : "");
  }
  bool pass = r->memory.fits;
  for (const auto& c : r->constraints) pass = pass && c.pass;
  if (!r->memory.fits)
    std::cerr << fmt::format("error: the step does not fit in memory: {} ({})\n",
                             memory_shortfall(r->memory, plan->gpu.id), kMemoryRemedy);
  return pass ? kExitOk : kExitFindings;
}

}  // namespace

Command add_step(CLI::App& root) {
  auto f = std::make_shared<StepFlags>();
  CLI::App* a = root.add_subcommand(
      "step",
      "How a training step splits into compute and communication on the planned fabric; time and "
      "cost to train; memory per GPU against HBM (exit 1 when a constraint fails or the step "
      "does not fit in memory).");
  a->add_option("SPEC", f->spec, "the cluster spec with a workload section (YAML)")->required();
  a->add_flag("--no-sensitivity", f->no_sensitivity,
              "skip the NIC x0.5 / x2 / 2:1-oversubscription table");
  a->add_flag("--no-concurrency", f->no_concurrency,
              "simulate each parallel dimension's communication alone on the fabric, as if the "
              "others' traffic were not on the same links at the same time (for comparison)");
  a->add_option("-o,--out", f->out,
                "write step.trace.json (Chrome trace-event timeline of one step, for Perfetto) "
                "into this folder")
      ->check(path_named());
  a->add_flag("--json", f->json, "print the result as JSON");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
