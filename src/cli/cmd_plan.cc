// gpufabric plan: technology, topology, switch counts, cabling and bill of materials.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "cli/version.h"
#include "common/output.h"
#include "config/addressing.h"
#include "plan/plan.h"
#include "report/plan_report.h"
#include "sim/checkpoint.h"
#include "spec/spec.h"

namespace gf::cli {
namespace {

struct PlanFlags {
  std::string spec, out;
  bool json = false;
};

int run(const PlanFlags& f) {
  Heartbeat alive("plan");
  auto loaded = load_planned_spec(f.spec, load_limits(false));
  if (!loaded) return fail(loaded.errors());
  const Plan* plan = &loaded->plan;
  // The address pools and network subnets the spec writes, which `configs` will hand out from:
  // one too small for the planned fabric is the spec's error here too, not first at `configs`.
  // A default pool is configs' concern alone (a plan needs no addresses).
  std::vector<Diagnostic> pool_errs;
  for (const auto& d : address_pool_errors(*plan, loaded->catalog, loaded->spec))
    if (loaded->spec.where.count(d.key))
      pool_errs.push_back(addressing_diagnostic(loaded->spec, d));
  if (!pool_errs.empty()) return fail(pool_errs);
  auto json = plan_json(*plan);
  json["gpufabric_version"] = build_version();
  // The checkpoint of the spec's model over the storage network (networks: and a workload).
  std::optional<CheckpointEstimate> ckpt;
  if (plan->networks && loaded->spec.workload) {
    const auto& w = *loaded->spec.workload;
    ckpt = checkpoint_estimate(*plan, w, nominal_dp_traffic(*plan, w));
    json["checkpoint"] = checkpoint_json(*ckpt);
  }
  if (!f.out.empty()) {
    if (auto code = write_out_folder(f.out,
                                     {{"plan.json", json.dump(2) + "\n"},
                                      {"plan.md", plan_markdown(*plan)},
                                      {"bom.csv", bom_csv(*plan)},
                                      {"cabling.csv", cabling_csv(*plan, loaded->catalog)}},
                                     f.json))
      return *code;
  }
  if (f.json)
    std::cout << json.dump(2) << "\n";
  else
    std::cout << plan_text(*plan) << (ckpt ? checkpoint_text(*ckpt) : "");
  return kExitOk;
}

}  // namespace

Command add_plan(CLI::App& root) {
  auto f = std::make_shared<PlanFlags>();
  CLI::App* a = root.add_subcommand("plan",
                                    "Which fabric to build: technology, topology, tiers, switch "
                                    "counts, cabling, cost and power.");
  a->add_option("SPEC", f->spec, "the cluster spec (YAML), e.g. examples/seed-70b-1024.yaml")
      ->required();
  a->add_option("-o,--out", f->out,
                "write plan.json, plan.md, bom.csv and cabling.csv into this folder")
      ->check(path_named());
  a->add_flag("--json", f->json, "print plan.json on stdout");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
