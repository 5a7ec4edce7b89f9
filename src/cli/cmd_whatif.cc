// gpufabric what-if: failures, growth and NIC upgrades, re-routed and re-simulated.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "plan/plan.h"
#include "report/whatif_report.h"
#include "sim/whatif.h"
#include "spec/spec.h"
#include "units/units.h"

namespace gf::cli {
namespace {

/// --grow: nodes added at once; a million is far beyond any expansion (and what the planner
/// sizes in seconds).
constexpr double kMaxGrowNodes = 1e6;

struct WhatIfFlags {
  std::string spec, grow, nic, bytes = "1G";
  std::vector<std::string> fail;
  bool json = false;
};

int run(const WhatIfFlags& f) {
  WhatIfOptions o;
  o.fail = f.fail;
  o.nic = f.nic;
  std::vector<Diagnostic> errs;
  if (!f.grow.empty()) {
    const std::string prefix = "nodes=+";
    if (f.grow.rfind(prefix, 0) != 0)
      errs.push_back(Diagnostic::flag("--grow", fmt::format("cannot read '{}'", f.grow),
                                      "use --grow nodes=+N, e.g. nodes=+32"));
    else if (auto n = quantity_flag("--grow", f.grow.substr(prefix.size()), units::parse_count, 1,
                                    kMaxGrowNodes, true, errs))
      o.grow_nodes = static_cast<int>(*n);
  }
  if (auto b = nccl_bytes_flag("--bytes", f.bytes, 1, errs)) o.probe_bytes = *b;
  if (o.fail.empty() && o.grow_nodes == 0 && o.nic.empty())
    errs.push_back(Diagnostic::flag(
        "--fail", "nothing to change",
        "give --fail link:A:B | switch:NAME | node:NAME, --grow nodes=+N or --nic 800G"));
  if (!errs.empty()) return fail(errs);
  Heartbeat alive("what-if");
  auto loaded = load_and_plan(f.spec, load_limits(true));
  if (!loaded) return fail(loaded.errors());
  const Plan* plan = &loaded->plan;
  auto r = what_if(loaded->spec, loaded->catalog, *plan, o);
  if (!r) return fail(r.errors());
  if (f.json)
    std::cout << what_if_json(*r).dump(2) << "\n";
  else
    std::cout << what_if_text(*r);
  return kExitOk;
}

}  // namespace

Command add_what_if(CLI::App& root) {
  auto f = std::make_shared<WhatIfFlags>();
  CLI::App* a = root.add_subcommand(
      "what-if",
      "What a failed link, switch or node, growth, or faster NICs do to the fabric and the job.");
  a->add_option("SPEC", f->spec, "the cluster spec (YAML)")->required();
  a->add_option("--fail", f->fail,
                "link:A:B | switch:NAME | node:NAME with cabling.csv names, e.g. "
                "switch:su01-r0-leaf (repeatable)");
  a->add_option("--grow", f->grow, "add nodes: nodes=+N");
  complete_with(
      a->add_option("--nic", f->nic, "other NICs: a rate (800G) or a catalog id (cx8-800g)"),
      catalog_nic_ids);
  a->add_option("--bytes", f->bytes, "collective size compared, as nccl-tests (K M G binary)")
      ->capture_default_str();
  a->add_flag("--json", f->json, "print the comparison as JSON");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
