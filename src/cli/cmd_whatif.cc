// gpufabric what-if: failures, growth and NIC upgrades, re-routed and re-simulated.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "common/output.h"
#include "plan/plan.h"
#include "report/sim_report.h"
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
  std::string spec, grow, nic, bytes = "1G", links;
  std::vector<std::string> fail, degrade, slow;
  bool json = false;
};

int run(const WhatIfFlags& f) {
  WhatIfOptions o;
  o.fail = f.fail;
  o.nic = f.nic;
  o.degrade = f.degrade;
  o.slow = f.slow;
  o.links = !f.links.empty();
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
  // One change an element: a repeat (or a second rate for it) is a slip, not a second change.
  for (const auto& [flag, values] :
       {std::pair{"--fail", &f.fail}, std::pair{"--degrade", &f.degrade},
        std::pair{"--slow", &f.slow}}) {
    std::set<std::string> seen;
    for (const auto& v : *values) {
      const std::string element = v.substr(0, v.find('='));
      if (!seen.insert(element).second)
        errs.push_back(Diagnostic::flag(flag, fmt::format("'{}' is given twice", element),
                                        "give each element once"));
    }
  }
  if (auto b = nccl_bytes_flag("--bytes", f.bytes, 1, errs)) o.probe_bytes = *b;
  // Nothing asked for (a --grow whose value was refused above already said so).
  if (f.grow.empty() && o.fail.empty() && o.nic.empty() && o.degrade.empty() && o.slow.empty())
    errs.push_back(Diagnostic::error(
        "what-if needs at least one change to compare with the plan, and none was given",
        "give one or more of --fail link:A:B | switch:NAME | node:NAME, --degrade "
        "link:A:B=200G | switch:NAME=0.5, --slow node:NAME=0.8, --grow nodes=+N, --nic 800G"));
  if (!errs.empty()) return fail(errs);
  Heartbeat alive("what-if");
  const LoadLimits limits = load_limits(true);
  auto loaded = load_planned_spec(f.spec, limits);
  if (!loaded) return fail(loaded.errors());
  const Plan* plan = &loaded->plan;
  // As simulate, each probe's flows' budget, beside the plan's and the scenario's fabrics.
  o.memory_budget_bytes =
      flows_budget_bytes(limits, plan->nodes + o.grow_nodes, plan->gpus_per_node, 2);
  auto r = what_if(loaded->spec, loaded->catalog, *plan, o);
  if (!r) return fail(r.errors());
  std::unique_ptr<LinkNames> names;
  if (r->links) {
    names = std::make_unique<LinkNames>(r->links->plan, loaded->catalog, r->links->fabric);
    auto w = write_output_file(f.links, "--links", [&](std::ostream& out) {
      write_links_csv(out, r->links->fabric, *names, r->links->traffic);
    });
    if (!w) return fail(w.errors());
    if (!f.json) std::cerr << "wrote " << *w << "\n";
  }
  if (!f.links.empty() && !r->links_note.empty())
    std::cerr << (r->links ? "note" : "warning") << ": --links " << f.links << ": " << r->links_note
              << "\n";
  if (f.json) {
    auto j = what_if_json(*r);
    if (r->links) {
      j["links"] = links_json(r->links->fabric, *names, r->links->traffic);
      j["links"]["file"] = f.links;
    }
    if (!r->links_note.empty()) j["links_note"] = r->links_note;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << what_if_text(*r);
    if (r->links) {
      std::cout << (r->links_note.empty() ? "\nScenario:\n" : "\nRestarted, ports left out:\n");
      std::cout << links_text(r->links->fabric, *names, r->links->traffic);
    }
  }
  return kExitOk;
}

}  // namespace

Command add_what_if(CLI::App& root) {
  auto f = std::make_shared<WhatIfFlags>();
  CLI::App* a = root.add_subcommand(
      "what-if",
      "What a failed link, switch or node, growth, or faster NICs do to the fabric and the job.");
  a->add_option("SPEC", f->spec, "the cluster spec (YAML)")->required();
  a->add_option(
      "--fail", f->fail,
      "link:A:B | link:A:PORT:B:PORT (one of parallel cables; a node's port is its nicN, one "
      "of its cables to one switch) | switch:NAME | node:NAME "
      "with cabling.csv names, e.g. "
      "switch:su01-r0-leaf (repeatable)");
  a->add_option("--degrade", f->degrade,
                "link:A:B=RATE (a link trained at a lower speed, e.g. "
                "link:node001:su01-r0-leaf=200G) | switch:NAME=FRACTION (every port at that "
                "fraction of its capacity, e.g. switch:spine01=0.5); repeatable");
  a->add_option("--slow", f->slow,
                "node:NAME=SPEED: a straggler node computing at that fraction of the others' "
                "speed, e.g. node:node001=0.8 (repeatable)");
  a->add_option("--links", f->links,
                "write the scenario's all_reduce traffic per directed link at --bytes to this CSV "
                "(as simulate --links)")
      ->check(path_named());
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
