// gpufabric jobs: the spec's jobs placed on the fabric, their step traffic run together, what
// they cost each other and which placement and load balancing keep that lowest.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "common/output.h"
#include "plan/plan.h"
#include "report/jobs_report.h"
#include "sim/jobs.h"
#include "spec/spec.h"
#include "verify/trace_readers.h"

namespace gf::cli {
namespace {

struct JobsFlags {
  std::string spec, placement, out, links;
  std::vector<std::string> fail;
  bool json = false, no_compare = false;
};

int run(const JobsFlags& f) {
  JobsOptions o;
  o.fail = f.fail;
  o.compare = !f.no_compare;
  if (!f.placement.empty()) {
    o.placement = parse_name(kPlacementNames, f.placement);
    if (!o.placement) {
      return fail(
          {Diagnostic::flag("--placement", fmt::format("unknown placement '{}'", f.placement),
                            placement_hint(f.placement))});
    }
  }
  for (const auto& item : f.fail)
    if (item.empty())
      return fail(
          {Diagnostic::flag("--fail", "an empty item", "use link:A:B, switch:NAME or node:NAME")});
  Heartbeat alive("jobs");
  auto loaded = load_planned_spec(f.spec, load_limits(true));
  if (!loaded) return fail(loaded.errors());
  const Plan& plan = loaded->plan;
  auto traces = read_job_traces(loaded->spec);
  if (!traces) return fail(traces.errors());
  o.traces = &*traces;
  auto r = simulate_jobs(loaded->spec, loaded->catalog, plan, o);
  if (!r) return fail(r.errors());
  const LinkNames names(plan, loaded->catalog, *r->fabric);
  // Files first: a failure to write leaves nothing half-written and prints no result (the
  // --links file is checked before the folder is written).
  if (!f.links.empty() && !f.out.empty())
    if (auto problem = output_file_problem(f.links, "--links")) return fail({*problem});
  if (!f.out.empty()) {
    std::ostringstream csv;
    write_jobs_links_csv(csv, *r, names);
    if (auto code = write_out_folder(f.out,
                                     {{"jobs.json", jobs_json(plan, *r, names).dump(2) + "\n"},
                                      {"jobs.txt", jobs_text(plan, *r, names)},
                                      {"jobs-links.csv", csv.str()}},
                                     f.json))
      return *code;
  }
  if (!f.links.empty()) {
    auto w = write_output_file(f.links, "--links",
                               [&](std::ostream& out) { write_jobs_links_csv(out, *r, names); });
    if (!w) return fail(w.errors());
    if (!f.json) std::cerr << "wrote " << *w << "\n";
  }
  if (f.json) {
    auto j = jobs_json(plan, *r, names);
    if (!f.links.empty()) j["links_file"] = f.links;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << jobs_text(plan, *r, names);
  }
  // A workload job that does not fit in memory is a finding, as in `step`.
  for (const auto& j : r->run.jobs)
    if (j.out_of_memory()) return kExitFindings;
  return kExitOk;
}

}  // namespace

Command add_jobs(CLI::App& root) {
  auto f = std::make_shared<JobsFlags>();
  CLI::App* a = root.add_subcommand(
      "jobs",
      "Many jobs on one fabric: the spec's jobs: placed on their nodes, every job's step traffic "
      "run together; per job its step alone and together, the slowdown and the links where the "
      "jobs meet; which placement and load balancing keep the worst slowdown lowest. A job is a "
      "workload: or a trace: (profiler traces, NCCL logs) replayed on its placement. Exit 1 when "
      "a workload job does not fit in its GPUs' memory (FAIL memory, as `step` judges it).");
  a->add_option("SPEC", f->spec, "the cluster spec with a jobs: section (YAML)")->required();
  complete_with(a->add_option("--placement", f->placement,
                              "place every job that has a policy this way instead (listed nodes "
                              "stay): " +
                                  names_joined(kPlacementNames)),
                [] { return names_of(kPlacementNames); });
  a->add_option(
      "--fail", f->fail,
      "link:A:B | link:A:PORT:B:PORT | switch:NAME | node:NAME with cabling.csv names, as what-if "
      "(repeatable)");
  a->add_option("--links", f->links,
                "write every job's traffic per directed link to this CSV (simulate --links' "
                "columns and the jobs crossing each link)")
      ->check(path_named());
  a->add_option("-o,--out", f->out, "write jobs.json, jobs.txt and jobs-links.csv into this folder")
      ->check(path_named());
  a->add_flag("--no-compare", f->no_compare,
              "skip the comparison of placements and load balancings (the run as asked only)");
  a->add_flag("--json", f->json, "print the result as JSON");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
