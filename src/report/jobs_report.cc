#include "report/jobs_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "common/output.h"
#include "report/html_report.h"
#include "report/sim_report.h"
#include "units/units.h"

namespace gf {
namespace {

std::string link_text(const Fabric& fab, const LinkNames& names, int32_t l) {
  return fmt::format("{} -> {} ({})", end_name(names.from(l)), end_name(names.to(l)),
                     link_tier_key(fab.links()[static_cast<size_t>(l)].cls));
}

std::string placement_label(std::optional<Placement> p) {
  return p ? placement_name(*p) : "listed";
}

std::string policy_label(std::optional<Placement> p) {
  return p ? placement_name(*p) : "as placed";
}

std::string job_names(const JobsRun& run, const std::vector<int>& jobs, const char* sep) {
  std::string s;
  for (int j : jobs) s += (s.empty() ? "" : sep) + run.jobs[static_cast<size_t>(j)].name;
  return s;
}

nlohmann::json link_json(const Fabric& fab, const LinkNames& names, int32_t l) {
  const LinkEnd a = names.from(l), b = names.to(l);
  return {{"from_device", a.device},
          {"from_port", a.port},
          {"to_device", b.device},
          {"to_port", b.port},
          {"tier", link_tier_key(fab.links()[static_cast<size_t>(l)].cls)},
          {"direction", link_direction(fab, l)}};
}

}  // namespace

std::string node_ranges(const std::vector<int>& nodes, const std::vector<std::string>& names,
                        int ranges) {
  std::vector<std::vector<int>> sorted_runs;  // runs of consecutive indices, in the list's order
  for (int n : nodes) {
    if (!sorted_runs.empty() && sorted_runs.back().back() + 1 == n)
      sorted_runs.back().push_back(n);
    else
      sorted_runs.push_back({n});
  }
  auto name = [&](int n) {
    return n >= 0 && n < static_cast<int>(names.size()) ? names[static_cast<size_t>(n)]
                                                        : fmt::format("#{}", n);
  };
  std::string s;
  for (size_t i = 0; i < sorted_runs.size() && static_cast<int>(i) < ranges; ++i) {
    const auto& r = sorted_runs[i];
    s += (s.empty() ? "" : ", ") +
         (r.size() == 1 ? name(r.front()) : name(r.front()) + "-" + name(r.back()));
  }
  if (static_cast<int>(sorted_runs.size()) > ranges)
    s += fmt::format(" and {} more ranges", sorted_runs.size() - static_cast<size_t>(ranges));
  return s;
}

std::string jobs_text(const Plan& plan, const JobsResult& r, const LinkNames& names, int top) {
  const Fabric& fab = *r.fabric;
  const JobsRun& run = r.run;
  std::string s = fmt::format(
      "# gpufabric jobs: {} ({} x {} {} GPUs, {}, {}, load balancing {}; scalable units of {} "
      "nodes)\n",
      plan.name, plan.nodes, plan.gpus_per_node, plan.gpu.id, technology_title(plan.technology),
      topology_kind_name(plan.topo.kind), load_balancing_name(run.load_balancing),
      r.nodes_per_unit);
  for (const auto& c : r.changes) s += "# " + c + "\n";
  s += fmt::format(
      "# {} job{}, {}; every job's step traffic at once on the fabric (the jobs' communication "
      "phases aligned: the worst case), exact max-min sharing: {}\n\n",
      run.jobs.size(), run.jobs.size() == 1 ? "" : "s",
      run.policy ? policy_label(run.policy) + " placement" : "as placed",
      units::format_seconds(run.together_s));
  s += fmt::format("{:<16} {:>7} {:<8} {:>5}  {:>11} {:>11} {:>9}  {}\n", "job", "GPUs", "placed",
                   "units", "step alone", "together", "slowdown", "meets");
  for (const auto& j : run.jobs) {
    std::string meets = "nobody";
    if (!j.meets.empty()) {
      meets.clear();
      for (const auto& m : j.meets) meets += (meets.empty() ? "" : ", ") + m;
      meets += fmt::format(" on {} links, the hottest at {:.1f}%", j.meeting_links,
                           100 * j.hottest_meeting_util);
    }
    s += fmt::format("{:<16} {:>7} {:<8} {:>5}  {:>11} {:>11} {:>8.3f}x  {}\n", j.name, j.gpus,
                     placement_label(j.placement), j.units, units::format_seconds(j.step_alone_s),
                     units::format_seconds(j.step_together_s), j.slowdown, meets);
  }
  // Memory, as `step` judges it: a workload job that does not fit cannot run as laid out.
  for (const auto& j : run.jobs) {
    if (!j.out_of_memory()) continue;
    s += fmt::format(
        "FAIL memory: {} does not fit in memory: {}: it cannot run as laid out ({}; `gpufabric "
        "step` on its workload shows what fills it)\n",
        j.name, memory_shortfall(j.step.memory, plan.gpu.id), kMemoryRemedy);
  }
  s += "\nnodes:\n";
  for (const auto& j : run.jobs)
    s += fmt::format("  {:<16} {}\n", j.name, node_ranges(j.nodes, r.node_names));
  bool traced = false;
  for (const auto& j : run.jobs) {
    if (!j.replay) continue;
    std::string files;
    for (const auto& t : j.traces) files += (files.empty() ? "" : ", ") + t;
    s += fmt::format(
        "{}{} replays {} ({}, {} of {} ranks traced): {}, {} collective calls simulated on its "
        "GPUs\n",
        traced ? "" : "\n", j.name, files,
        j.replay->step.empty() ? "the whole trace" : j.replay->step, j.replay->traced_ranks,
        j.replay->world,
        j.replay->timed ? "compute as recorded"
                        : "communication only (the log has no durations: its step is the calls "
                          "in order)",
        j.replay->collectives);
    traced = true;
  }
  bool any = false;
  for (const auto& j : run.jobs)
    for (const auto& c : j.comms)
      if (c.factor > 1 + 1e-9) {
        if (!any) s += "\ncommunication slowed by the other jobs (its flows together / alone):\n";
        any = true;
        s += fmt::format("  {:<16} {:<30} {:>7.3f}x  exposed {} -> {}\n", j.name, c.kind, c.factor,
                         units::format_seconds(c.exposed_s),
                         units::format_seconds(c.exposed_together_s));
      }
  if (!any) s += "\nno job's communication is slowed by another's\n";
  if (!run.meetings.empty()) {
    s += fmt::format(
        "\nwhere the jobs meet: {} directed links; the hottest (mean / peak "
        "utilisation over the traffic together, flows):\n",
        run.meetings.size());
    for (size_t i = 0; i < run.meetings.size() && static_cast<int>(i) < top; ++i) {
      const auto& m = run.meetings[i];
      s += fmt::format("  {}: {:.1f}% / {:.1f}%, {} flows; {}\n", link_text(fab, names, m.link),
                       100 * m.use.mean_util, 100 * m.use.peak_util, m.use.flows,
                       job_names(run, m.jobs, ", "));
    }
  } else {
    s += "\nthe jobs share no link\n";
  }
  if (r.compared.size() > 1) {
    // The run as asked stands for the policy every job shares, whose own row is not run again.
    std::string asked = "  (as asked)";
    if (!run.jobs.empty() && run.jobs.front().placement &&
        std::all_of(run.jobs.begin(), run.jobs.end(),
                    [&](const JobResult& j) { return j.placement == run.jobs.front().placement; }))
      asked = fmt::format("  (as asked: every job {}; this is the {} {} row)",
                          placement_name(*run.jobs.front().placement),
                          placement_name(*run.jobs.front().placement),
                          load_balancing_name(run.load_balancing));
    s += fmt::format(
        "\nplacement and load balancing compared:\n  {:<10} {:<14} {:>14} {:>14} "
        "{:>12} {:>9}\n",
        "placement", "balancing", "worst", "mean slowdown", "mean step", "meet");
    for (size_t i = 0; i < r.compared.size(); ++i) {
      const auto& c = r.compared[i];
      if (!c.runs) {
        s += fmt::format("  {:<10} {:<14} cannot run: {}\n", policy_label(c.policy),
                         load_balancing_name(c.load_balancing), c.note);
        continue;
      }
      s += fmt::format("  {:<10} {:<14} {:>13.3f}x {:>13.3f}x {:>12} {:>9}{}\n",
                       policy_label(c.policy), load_balancing_name(c.load_balancing),
                       c.worst_slowdown, c.mean_slowdown,
                       units::format_seconds(c.mean_step_together_s), c.meeting_links,
                       i == 0 ? asked : (static_cast<int>(i) == r.best ? "  <- best" : ""));
    }
  }
  s += "\nadvice: " + r.advice + "\n";
  return s;
}

nlohmann::json jobs_json(const Plan& plan, const JobsResult& r, const LinkNames& names, int top) {
  using nlohmann::json;
  const Fabric& fab = *r.fabric;
  const JobsRun& run = r.run;
  json j;
  j["name"] = plan.name;
  j["load_balancing"] = load_balancing_name(run.load_balancing);
  j["placement"] = policy_label(run.policy);
  j["nodes_per_unit"] = r.nodes_per_unit;
  j["together_s"] = run.together_s;
  j["worst_slowdown"] = run.worst_slowdown;
  j["worst_job"] = run.worst_job;
  j["mean_slowdown"] = run.mean_slowdown;
  j["changes"] = r.changes;
  json jobs = json::array();
  for (const auto& jr : run.jobs) {
    json comms = json::array();
    for (const auto& c : jr.comms)
      comms.push_back({{"kind", c.kind},
                       {"network", c.network},
                       {"fluid_alone_s", c.fluid_alone_s},
                       {"fluid_together_s", c.fluid_together_s},
                       {"factor", c.factor},
                       {"total_s", c.total_s},
                       {"exposed_s", c.exposed_s},
                       {"total_together_s", c.total_together_s},
                       {"exposed_together_s", c.exposed_together_s}});
    json nodes = json::array();
    for (int n : jr.nodes)
      nodes.push_back(n < static_cast<int>(r.node_names.size())
                          ? r.node_names[static_cast<size_t>(n)]
                          : std::to_string(n));
    json hot = nullptr;
    if (jr.hottest_meeting_link >= 0) {
      hot = link_json(fab, names, jr.hottest_meeting_link);
      hot["mean_util"] = jr.hottest_meeting_util;
    }
    jobs.push_back({{"name", jr.name},
                    {"placement", placement_label(jr.placement)},
                    {"gpus", jr.gpus},
                    {"nodes", nodes},
                    {"units", jr.units},
                    {"step_alone_s", jr.step_alone_s},
                    {"step_together_s", jr.step_together_s},
                    {"slowdown", jr.slowdown},
                    {"meets", jr.meets},
                    {"meeting_links", jr.meeting_links},
                    {"hottest_meeting_link", hot},
                    {"comms", comms}});
    // A trace job: what was replayed (the step and its predicted times, as replay's JSON).
    jobs.back()["source"] = jr.replay ? "trace" : "workload";
    if (jr.memory_judged())
      jobs.back()["memory"] = {{"total_bytes", jr.step.memory.peak().total_bytes()},
                               {"peak_stage", jr.step.memory.peak_stage},
                               {"hbm_bytes", jr.step.memory.hbm_bytes},
                               {"fits", jr.step.memory.fits}};
    if (jr.replay)
      jobs.back()["trace"] = {
          {"files", jr.traces},
          {"step", jr.replay->step},
          {"world", jr.replay->world},
          {"traced_ranks", jr.replay->traced_ranks},
          {"collectives", jr.replay->collectives},
          {"recorded_step_s", jr.replay->timed ? json(jr.replay->recorded.step_s) : json(nullptr)},
          {"predicted_step_s", jr.replay->predicted.step_s},
          {"notes", jr.replay->notes}};
  }
  j["jobs"] = jobs;
  json hottest = json::array();
  for (size_t i = 0; i < run.meetings.size() && static_cast<int>(i) < top; ++i) {
    const auto& m = run.meetings[i];
    json l = link_json(fab, names, m.link);
    l["bytes"] = m.use.bytes;
    l["capacity_gbps"] = m.use.capacity_Bps * 8 / 1e9;
    l["mean_util"] = m.use.mean_util;
    l["peak_util"] = m.use.peak_util;
    l["flows"] = m.use.flows;
    json who = json::array();
    for (int x : m.jobs) who.push_back(run.jobs[static_cast<size_t>(x)].name);
    l["jobs"] = who;
    hottest.push_back(l);
  }
  j["meetings"] = {{"links", run.meetings.size()}, {"hottest", hottest}};
  json compared = json::array();
  for (const auto& c : r.compared)
    compared.push_back({{"placement", policy_label(c.policy)},
                        {"load_balancing", load_balancing_name(c.load_balancing)},
                        {"runs", c.runs},
                        {"note", c.note},
                        {"worst_slowdown", c.worst_slowdown},
                        {"worst_job", c.worst_job},
                        {"mean_slowdown", c.mean_slowdown},
                        {"mean_step_together_s", c.mean_step_together_s},
                        {"meeting_links", c.meeting_links}});
  j["compared"] = compared;
  j["best"] = r.best;
  j["advice"] = r.advice;
  return j;
}

void write_jobs_links_csv(std::ostream& out, const JobsResult& r, const LinkNames& names) {
  const Fabric& fab = *r.fabric;
  const JobsRun& run = r.run;
  out << kLinksCsvHeader << ",jobs\n";
  long long rank = 0;
  std::vector<int> who;
  for (int32_t l : links_hottest_first(fab, run.load)) {
    const LinkUse u = link_use(fab, run.load, l, 1, run.together_s);
    const LinkEnd a = names.from(l), b = names.to(l);
    who.clear();
    for (uint64_t m = run.job_mask[static_cast<size_t>(l)]; m; m &= m - 1)
      who.push_back(std::countr_zero(m));
    out << fmt::format("{},{},{},{},{},{},{},{:g},{:.0f},{:.4f},{:.4f},{},{}\n", ++rank,
                       csv_field(a.device), csv_field(a.port), csv_field(b.device),
                       csv_field(b.port), link_tier_key(fab.links()[static_cast<size_t>(l)].cls),
                       link_direction(fab, l), u.capacity_Bps * 8 / 1e9, u.bytes, u.mean_util,
                       u.peak_util, u.flows, csv_field(job_names(run, who, ";")));
  }
}

std::string jobs_html_section(const JobsResult& r, const LinkNames& names) {
  const Fabric& fab = *r.fabric;
  const JobsRun& run = r.run;
  std::string s =
      "<section id=\"jobs\"><h2>Jobs sharing the fabric</h2><p>Every job's step traffic at "
      "once on the fabric (exact max-min sharing; the jobs' communication phases aligned, the "
      "worst case): each job's step alone at its placement and beside the others "
      "(<code>gpufabric jobs</code>).</p><table><tr><th>job</th><th>GPUs</th><th>placed</th>"
      "<th>units</th><th>step alone</th><th>together</th><th>slowdown</th><th>meets</th></tr>";
  for (const auto& j : run.jobs) {
    std::string meets;
    for (const auto& m : j.meets) meets += (meets.empty() ? "" : ", ") + m;
    s += fmt::format(
        "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td>"
        "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.3f}×</td><td>{}</td>"
        "</tr>",
        html_escape(j.name), j.gpus, placement_label(j.placement), j.units,
        units::format_seconds(j.step_alone_s), units::format_seconds(j.step_together_s), j.slowdown,
        meets.empty() ? "nobody" : html_escape(meets));
  }
  s += "</table>";
  if (!run.meetings.empty()) {
    s += fmt::format(
        "<h3>Where the jobs meet ({} links), the hottest</h3><table><tr><th>link</th>"
        "<th>mean</th><th>peak</th><th>jobs</th></tr>",
        run.meetings.size());
    for (size_t i = 0; i < run.meetings.size() && i < 8; ++i) {
      const auto& m = run.meetings[i];
      s += fmt::format(
          "<tr><td>{}</td><td class=\"n\">{:.1f}%</td><td class=\"n\">{:.1f}%</td><td>{}</td></tr>",
          html_escape(link_text(fab, names, m.link)), 100 * m.use.mean_util, 100 * m.use.peak_util,
          html_escape(job_names(run, m.jobs, ", ")));
    }
    s += "</table>";
  }
  if (r.compared.size() > 1) {
    s += "<h3>Placement and load balancing compared</h3><table><tr><th>placement</th>"
         "<th>load balancing</th><th>worst slowdown</th><th>mean slowdown</th></tr>";
    for (size_t i = 0; i < r.compared.size(); ++i) {
      const auto& c = r.compared[i];
      s += fmt::format(
          "<tr><td>{}{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
          policy_label(c.policy),
          static_cast<int>(i) == r.best ? " (best)" : (i == 0 ? " (as asked)" : ""),
          load_balancing_name(c.load_balancing),
          c.runs ? fmt::format("{:.3f}×", c.worst_slowdown) : "cannot run",
          c.runs ? fmt::format("{:.3f}×", c.mean_slowdown) : "");
    }
    s += "</table>";
  }
  s += "<p><b>Advice</b>: " + html_escape(r.advice) + "</p></section>";
  return s;
}

}  // namespace gf
