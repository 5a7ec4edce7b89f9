// gpufabric replay: a recorded step (PyTorch profiler traces, NCCL logs) on the planned fabric.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "common/file.h"
#include "common/output.h"
#include "plan/plan.h"
#include "report/replay_report.h"
#include "report/sim_report.h"
#include "sim/replay.h"
#include "sim/whatif.h"
#include "spec/spec.h"
#include "units/units.h"
#include "verify/trace_readers.h"

namespace gf::cli {
namespace {

struct ReplayFlags {
  std::vector<std::string> traces;
  std::string spec, out, links, step, nic, load_balancing;
  std::vector<std::string> fail, degrade, oversubscription;
  int tp = 0, pp = 0, dp = 0;
  bool json = false;
};

std::string fabric_words(const Plan& p) {
  return fmt::format("{} {}, {} GPUs, {} NICs, {} load balancing", technology_name(p.technology),
                     topology_kind_name(p.topo.kind), p.gpus, p.nic.id,
                     load_balancing_name(p.load_balancing));
}

int run(const ReplayFlags& f) {
  std::vector<Diagnostic> errs;
  ReplayOptions o;
  o.layout = {f.tp, f.pp, f.dp};
  if (!f.step.empty()) o.step = f.step;
  o.links = !f.links.empty();
  o.load_balancing = load_balancing_flag(f.load_balancing, errs);
  std::vector<double> ratios;
  for (const auto& x : f.oversubscription) {
    // The range fabric.oversubscription takes (spec reader): 1 (non-blocking) to 64.
    if (auto v = quantity_flag("--oversubscription", x, units::parse_ratio, 1, 64, false, errs))
      ratios.push_back(*v);
    else if (x.empty())
      errs.push_back(Diagnostic::flag("--oversubscription", "an empty ratio", "use 2 or 2:1"));
  }
  if (!errs.empty()) return fail(errs);
  Heartbeat alive("replay");
  auto loaded = load_planned_spec(f.spec, load_limits(true));
  if (!loaded) return fail(loaded.errors());
  auto traces = read_trace_files(f.traces);
  if (!traces) return fail(traces.errors());
  const Plan& plan = loaded->plan;
  const Fabric fabric = Fabric::build(plan, loaded->catalog);
  auto planned = replay_step(*traces, plan, fabric, o);
  if (!planned) return fail(planned.errors());

  ReplayReport report;
  report.traces = &*traces;
  report.spec_name = plan.name;
  report.fabric = fabric_words(plan);
  report.shape = fabric_shape(plan);
  report.planned = std::move(*planned);
  std::unique_ptr<ScenarioFabric> alt;
  if (!f.nic.empty() || !f.fail.empty() || !f.degrade.empty()) {
    WhatIfOptions w;
    w.nic = f.nic;
    w.fail = f.fail;
    w.degrade = f.degrade;
    auto s = scenario_fabric(loaded->spec, loaded->catalog, plan, w);
    if (!s) return fail(s.errors());
    alt = std::make_unique<ScenarioFabric>(std::move(*s));
    auto r = replay_step(*traces, alt->plan, alt->fabric, o);
    report.changes = alt->changes;
    // The traces replayed on this fabric, so what stops them there is the scenario's doing (a
    // group cut apart by a failed node or switch): a finding shown beside the replay, as
    // what-if shows a scenario that cannot run, not bad input.
    if (r)
      report.scenario = std::move(*r);
    else
      report.scenario_cannot_run = fmt::format(
          "{}; what-if prices restarting the job without what failed", r.errors().front().message);
  }

  for (double ratio : ratios) {
    auto a = replay_at_oversubscription(*traces, loaded->spec, loaded->catalog, plan, ratio, o);
    if (!a) return fail(a.errors());
    report.alternatives.push_back(std::move(*a));
  }

  // --links: the scenario's traffic when it runs, else this fabric's, each on its own fabric
  // (the load of one is not the other's: other NICs' rates, failed links).
  const bool on_scenario = report.scenario.has_value();
  const ReplayResult& linked = on_scenario ? *report.scenario : report.planned;
  const Plan& lplan = on_scenario ? alt->plan : plan;
  const Fabric& lfab = on_scenario ? alt->fabric : fabric;
  std::optional<CollectiveTraffic> traffic;
  std::unique_ptr<LinkNames> names;
  if (o.links && linked.load) {
    CollectiveTraffic t;
    t.label = "the replayed step's collectives";
    t.bytes = 1;  // the load holds the step's bytes per link
    t.seconds = linked.predicted.step_s;
    t.load = *linked.load;
    traffic = std::move(t);
    names = std::make_unique<LinkNames>(lplan, loaded->catalog, lfab);
  }
  auto json = replay_json(report);
  // A scenario that cannot run has no traffic: the links are this fabric's, and said to be.
  const std::string links_note =
      report.scenario_cannot_run.empty()
          ? ""
          : "this fabric's traffic: the scenario cannot run the traced job";
  if (traffic) {
    json["links"] = links_json(lfab, *names, *traffic);
    if (!links_note.empty()) json["links"]["note"] = links_note;
  }
  const std::string text =
      replay_text(report) + (traffic
                                 ? fmt::format("\nTraffic per link over the step{}:\n",
                                               links_note.empty() ? "" : " (" + links_note + ")") +
                                       links_text(lfab, *names, *traffic)
                                 : "");
  // The --links file is checked before the folder is written, and written after it: nothing is
  // left when either cannot be.
  if (traffic) {
    if (auto problem = output_file_problem(f.links, "--links")) return fail({*problem});
    json["links"]["file"] = f.links;
  }
  if (!f.out.empty()) {
    if (auto code = write_out_folder(
            f.out, {{"replay.json", json.dump(2) + "\n"}, {"replay.txt", text}}, f.json))
      return *code;
  }
  if (traffic) {
    auto w = write_output_file(f.links, "--links", [&](std::ostream& out) {
      write_links_csv(out, lfab, *names, *traffic);
    });
    if (!w) return fail(w.errors());
    if (!f.json) std::cerr << "wrote " << *w << "\n";
  }
  if (f.json)
    std::cout << json.dump(2) << "\n";
  else
    std::cout << text;
  return kExitOk;
}

}  // namespace

Command add_replay(CLI::App& root) {
  auto f = std::make_shared<ReplayFlags>();
  CLI::App* a = root.add_subcommand(
      "replay",
      "A recorded training step (PyTorch profiler traces, NCCL_DEBUG=INFO logs) replayed on the "
      "planned fabric: predicted step time and its breakdown, beside the recorded one.");
  a->add_option("TRACE", f->traces,
                "PyTorch profiler trace (.json, Chrome trace-event format) of one or more ranks, "
                "or an NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL log")
      ->required()
      ->expected(-1);
  a->add_option("--spec", f->spec, "the cluster spec (YAML) to replay on")->required();
  a->add_option("--tp", f->tp,
                "tensor parallelism the job ran with (with --pp, --dp: the layout; default: "
                "from the traces' process groups)")
      ->check(CLI::Range(1, static_cast<int>(kMaxFlagGpus)));
  a->add_option("--pp", f->pp, "pipeline parallelism the job ran with")
      ->check(CLI::Range(1, static_cast<int>(kMaxFlagGpus)));
  a->add_option("--dp", f->dp, "data parallelism the job ran with")
      ->check(CLI::Range(1, static_cast<int>(kMaxFlagGpus)));
  a->add_option("--step", f->step,
                "the step to replay, as the trace names it (ProfilerStep#12, or 12 for it; "
                "default: the last one with GPU kernels)");
  complete_with(
      a->add_option("--nic", f->nic,
                    "also replay with other NICs: a rate (800G) or a catalog id (as what-if)"),
      catalog_nic_ids);
  a->add_option("--fail", f->fail,
                "also replay with a failed link:A:B | link:A:PORT:B:PORT | switch:NAME | "
                "node:NAME, cabling.csv "
                "names (as what-if; repeatable)")
      ->allow_extra_args(false);
  a->add_option("--degrade", f->degrade,
                "also replay with link:A:B=RATE | switch:NAME=FRACTION degraded (as what-if; "
                "repeatable)")
      ->allow_extra_args(false);
  a->add_option("--oversubscription", f->oversubscription,
                "also replay on the spec re-planned at R:1 leaf oversubscription (2 or 2:1, 1 to "
                "64; the plan's switch and topology; repeatable: one row each)")
      ->allow_extra_args(false);
  complete_with(a->add_option("--load-balancing", f->load_balancing,
                              "override the plan's: " + names_joined(kLoadBalancingNames))
                    ->check(non_empty()),
                [] { return names_of(kLoadBalancingNames); });
  a->add_option("--links", f->links,
                "write the step's traffic per directed link to this CSV (as simulate --links; "
                "the scenario's with --nic/--fail/--degrade)")
      ->check(path_named());
  a->add_option("-o,--out", f->out, "write replay.json and replay.txt into this folder")
      ->check(path_named());
  a->add_flag("--json", f->json, "print the replay as JSON");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
