#include "sweep/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <thread>

#include "plan/plan.h"
#include "sim/collective.h"
#include "sim/jobs.h"
#include "sim/step.h"
#include "topo/fabric.h"
#include "units/units.h"
#include "verify/trace_readers.h"

namespace gf {
namespace {

// The design's problems on one line, without the file (the design's values say which).
std::string one_line(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds) {
    s += (s.empty() ? "" : "; ") + (d.key.empty() ? "" : d.key + ": ") + d.message;
    if (!d.hint.empty()) s += " (" + d.hint + ")";
  }
  return s;
}

std::string label(const std::vector<KeyOverride>& values) {
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : ", ") + v.key + "=" + v.value;
  return s;
}

// The frontier's time axis: the design's time, or (without a workload) the all_reduce time of
// the probe, which orders designs as their busbw does.
double frontier_time(const DesignResult& d) {
  if (!d.has_step && d.has_jobs) return d.jobs_mean_step_s;
  return d.has_step ? d.time_s() : (d.busbw_gbs > 0 ? kQuotedBytes / (d.busbw_gbs * 1e9) : 1e300);
}

std::string time_text(const DesignResult& d) {
  if (!d.has_step && d.has_jobs)
    return fmt::format("{} mean job step, worst slowdown {:.3f}x ({})",
                       units::format_seconds(d.jobs_mean_step_s), d.jobs_worst_slowdown,
                       d.jobs_worst);
  if (!d.has_step) return fmt::format("{:.0f} GB/s all_reduce busbw", d.busbw_gbs);
  return d.time_to_train_s > 0
             ? fmt::format("{} to train", units::format_seconds(d.time_to_train_s))
             : fmt::format("{} per step", units::format_seconds(d.step_time_s));
}

}  // namespace

double DesignResult::time_s() const { return time_to_train_s > 0 ? time_to_train_s : step_time_s; }

Result<SweepAxis> parse_vary(const std::string& text) {
  const size_t eq = text.find('=');
  const auto bad = [&](const std::string& why) {
    return Diagnostic::flag("--vary", fmt::format("'{}': {}", text, why),
                            "write KEY=V1,V2,... such as cluster.nodes=128,256");
  };
  if (eq == std::string::npos || eq == 0) return bad("expected KEY=V1,V2,...");
  SweepAxis a;
  a.key = text.substr(0, eq);
  if (a.key.front() == '.' || a.key.back() == '.' || a.key.find("..") != std::string::npos)
    return bad("the key is not a dotted key path");
  const std::string rest = text.substr(eq + 1);
  for (size_t at = 0;;) {
    const size_t comma = rest.find(',', at);
    std::string v = rest.substr(at, comma == std::string::npos ? comma : comma - at);
    if (v.empty()) return bad("an empty value");
    if (std::find(a.values.begin(), a.values.end(), v) != a.values.end())
      return bad(fmt::format("'{}' is given twice", v));
    // `placement` is the sweep's own axis, a closed set: a slip is bad input, not a design.
    if (a.key == kPlacementAxis && !parse_name(kPlacementNames, v))
      return Diagnostic::flag("--vary", fmt::format("'{}': unknown placement '{}'", text, v),
                              placement_hint(v));
    a.values.push_back(v);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return a;
}

long long design_count(const std::vector<SweepAxis>& axes) {
  long long n = 1;
  for (const auto& a : axes) n *= static_cast<long long>(a.values.size());
  return axes.empty() ? 0 : n;
}

std::vector<KeyOverride> design_values(const std::vector<SweepAxis>& axes, long long index) {
  std::vector<KeyOverride> out(axes.size());
  for (size_t k = axes.size(); k-- > 0;) {
    const long long n = static_cast<long long>(axes[k].values.size());
    out[k] = {axes[k].key, axes[k].values[index % n]};
    index /= n;
  }
  return out;
}

DesignResult evaluate_design(const std::string& path, const std::vector<KeyOverride>& values,
                             int index) {
  DesignResult d;
  d.index = index;
  d.values = values;
  // `placement` places the spec's jobs; every other axis is a spec key.
  std::vector<KeyOverride> spec_values;
  std::optional<Placement> placement;
  for (const auto& v : values) {
    if (v.key != kPlacementAxis) {
      spec_values.push_back(v);
      continue;
    }
    placement = parse_name(kPlacementNames, v.value);
    if (!placement) {
      d.error = fmt::format("placement: unknown placement '{}' (use {})", v.value,
                            names_joined(kPlacementNames, ", "));
      return d;
    }
  }
  auto loaded = load_spec(path, spec_values);
  if (!loaded) {
    d.error = one_line(loaded.errors());
    return d;
  }
  const Spec& spec = loaded->spec;
  auto plan = make_plan(spec, loaded->catalog);
  if (!plan) {
    d.error = one_line(plan.errors());
    return d;
  }
  d.technology = technology_name(plan->technology);
  d.topology = topology_kind_name(plan->topo.kind);
  d.switch_id = plan->sw.id;
  d.nic = plan->nic.id;
  d.gpus = plan->nodes * plan->gpus_per_node;
  d.switches = plan->switch_total;
  d.capex_usd = plan->bom.capex_usd;
  d.network_capex_usd = plan->bom.network_capex_usd;
  d.power_w = plan->bom.power_w;
  const Fabric fabric = Fabric::build(*plan, loaded->catalog);
  auto model = CollectiveModel::build(fabric, *plan, SimOptions{});
  if (!model) {
    d.error = one_line(model.errors());
    return d;
  }
  d.busbw_gbs = model->at(kQuotedBytes).busbw_gbs;
  if (spec.workload) {
    auto step = simulate_step(spec, *plan, fabric);
    if (!step) {
      d.error = one_line(step.errors());
      return d;
    }
    if (!step->memory.fits) {
      d.error = "does not fit in memory: " + memory_shortfall(step->memory, plan->gpu.id);
      return d;
    }
    d.has_step = true;
    d.step_time_s = step->step_time_s;
    d.comm_fraction = step->comm_fraction;
    d.gpu_utilization = step->gpu_utilization;
    d.mfu = step->mfu;
    d.memory_bytes = step->memory.stages.empty() ? 0 : step->memory.peak().total_bytes();
    d.time_to_train_s = step->time_to_train_s;
    d.cost_to_train_usd = step->cost_to_train_usd;
    for (const auto& c : step->constraints) {
      d.constraints_met = d.constraints_met && c.pass;
      if (!c.pass) d.missed.push_back(constraint_text(c));
    }
  }
  if (placement && spec.jobs.empty()) {
    d.error = "placement: the spec has no jobs: section to place";
    return d;
  }
  if (!spec.jobs.empty()) {
    auto traces = read_job_traces(spec);  // a trace job's recorded step
    if (!traces) {
      d.error = one_line(traces.errors());
      return d;
    }
    JobsOptions jo;
    jo.placement = placement;
    jo.compare = false;
    jo.traces = &*traces;
    auto jobs = simulate_jobs(spec, loaded->catalog, *plan, jo);
    if (!jobs) {
      d.error = one_line(jobs.errors());
      return d;
    }
    d.has_jobs = true;
    d.jobs_worst_slowdown = jobs->run.worst_slowdown;
    d.jobs_mean_slowdown = jobs->run.mean_slowdown;
    d.jobs_worst = jobs->run.worst_job;
    for (const auto& j : jobs->run.jobs)
      d.jobs_mean_step_s += j.step_together_s / static_cast<double>(jobs->run.jobs.size());
  }
  const double budget = spec.constraints.budget_usd;
  d.within_budget = budget <= 0 || d.capex_usd <= budget;
  d.ok = true;
  return d;
}

nlohmann::json design_plan_json(const DesignResult& d) {
  return {{"technology", d.technology},
          {"topology", d.topology},
          {"switch", d.switch_id},
          {"nic", d.nic},
          {"gpus", d.gpus},
          {"switches", d.switches},
          {"capex_usd", d.capex_usd},
          {"network_capex_usd", d.network_capex_usd},
          {"power_w", d.power_w},
          {"busbw_gbs", d.busbw_gbs},
          {"constraints_met", d.constraints_met},
          {"within_budget", d.within_budget}};
}

nlohmann::json design_step_json(const DesignResult& d) {
  return {{"step_time_s", d.step_time_s},
          {"comm_fraction", d.comm_fraction},
          {"gpu_utilization", d.gpu_utilization},
          {"mfu", d.mfu ? nlohmann::json(*d.mfu) : nlohmann::json(nullptr)},
          {"memory_bytes", d.memory_bytes},
          {"time_to_train_s", d.time_to_train_s},
          {"cost_to_train_usd", d.cost_to_train_usd},
          {"missed", d.missed}};
}

nlohmann::json design_jobs_json(const DesignResult& d) {
  return {{"jobs_worst_slowdown", d.jobs_worst_slowdown},
          {"jobs_worst", d.jobs_worst},
          {"jobs_mean_slowdown", d.jobs_mean_slowdown},
          {"jobs_mean_step_s", d.jobs_mean_step_s}};
}

nlohmann::json design_to_json(const DesignResult& d) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& v : d.values) values.push_back({v.key, v.value});
  nlohmann::json j = {{"index", d.index},
                      {"values", values},
                      {"ok", d.ok},
                      {"error", d.error},
                      {"has_step", d.has_step}};
  j.update(design_plan_json(d));
  j.update(design_step_json(d));
  j["has_jobs"] = d.has_jobs;
  j.update(design_jobs_json(d));
  return j;
}

DesignResult design_from_json(const nlohmann::json& j) {
  DesignResult d;
  d.index = j.at("index").get<int>();
  for (const auto& v : j.at("values")) d.values.push_back({v.at(0), v.at(1)});
  d.ok = j.at("ok");
  d.error = j.at("error");
  d.technology = j.at("technology");
  d.topology = j.at("topology");
  d.switch_id = j.at("switch");
  d.nic = j.at("nic");
  d.gpus = j.at("gpus");
  d.switches = j.at("switches");
  d.capex_usd = j.at("capex_usd");
  d.network_capex_usd = j.at("network_capex_usd");
  d.power_w = j.at("power_w");
  d.busbw_gbs = j.at("busbw_gbs");
  d.has_step = j.at("has_step");
  d.step_time_s = j.at("step_time_s");
  d.comm_fraction = j.at("comm_fraction");
  d.gpu_utilization = j.at("gpu_utilization");
  if (j.contains("mfu") && !j.at("mfu").is_null()) d.mfu = j.at("mfu").get<double>();
  d.memory_bytes = j.value("memory_bytes", 0.0);
  d.time_to_train_s = j.at("time_to_train_s");
  d.cost_to_train_usd = j.at("cost_to_train_usd");
  d.constraints_met = j.at("constraints_met");
  if (j.contains("missed")) d.missed = j.at("missed").get<std::vector<std::string>>();
  d.within_budget = j.at("within_budget");
  d.has_jobs = j.value("has_jobs", false);
  d.jobs_worst_slowdown = j.value("jobs_worst_slowdown", 0.0);
  d.jobs_mean_slowdown = j.value("jobs_mean_slowdown", 0.0);
  d.jobs_worst = j.value("jobs_worst", std::string());
  d.jobs_mean_step_s = j.value("jobs_mean_step_s", 0.0);
  return d;
}

std::pair<long long, long long> design_share(long long total, int part, int parts) {
  parts = std::max(1, parts);
  return {total * part / parts, total * (part + 1) / parts};
}

std::vector<DesignResult> evaluate_designs(const std::string& path,
                                           const std::vector<SweepAxis>& axes, long long first,
                                           long long last, int threads,
                                           const std::function<void(long long)>& progress) {
  std::vector<DesignResult> out(static_cast<size_t>(std::max(0LL, last - first)));
  std::atomic<long long> next{first};
  std::atomic<long long> done{0};
  std::mutex progress_mu;
  auto work = [&] {
    for (long long i = next++; i < last; i = next++) {
      out[static_cast<size_t>(i - first)] =
          evaluate_design(path, design_values(axes, i), static_cast<int>(i));
      const long long n = ++done;
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mu);
        progress(n);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, threads); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return out;
}

SweepResult summarise_sweep(std::vector<SweepAxis> axes, std::vector<DesignResult> designs,
                            Goal goal, double budget_usd) {
  SweepResult r;
  r.axes = std::move(axes);
  r.goal = goal;
  r.budget_usd = budget_usd;
  std::sort(designs.begin(), designs.end(),
            [](const DesignResult& a, const DesignResult& b) { return a.index < b.index; });
  r.designs = std::move(designs);
  auto& ds = r.designs;
  // Pareto frontier of capex against time: no other design is as cheap and as fast, and
  // strictly better in one.
  for (auto& d : ds) {
    if (!d.ok) continue;
    d.pareto = true;
    for (const auto& e : ds) {
      if (!e.ok || &e == &d) continue;
      const bool no_worse = e.capex_usd <= d.capex_usd && frontier_time(e) <= frontier_time(d);
      const bool better = e.capex_usd < d.capex_usd || frontier_time(e) < frontier_time(d);
      if (no_worse && better) {
        d.pareto = false;
        break;
      }
    }
  }
  // The best design for the goal among those that meet the constraints within the budget.
  std::vector<const DesignResult*> qualified;
  int valid = 0;
  for (const auto& d : ds) {
    valid += d.ok;
    if (d.ok && d.within_budget && d.constraints_met) qualified.push_back(&d);
  }
  const bool by_cost = goal == Goal::kCost;
  // With goal time, the designs within kSweepTimeTie of the fastest are tied: the cheapest of
  // them first, then the rest by time.
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto* d : qualified) fastest = std::min(fastest, frontier_time(*d));
  auto tied = [&](const DesignResult* d) {
    return !by_cost && frontier_time(*d) <= fastest * (1 + kSweepTimeTie);
  };
  auto better = [&](const DesignResult* a, const DesignResult* b) {
    if (tied(a) != tied(b)) return tied(a);
    const auto ka = by_cost || tied(a) ? std::pair{a->capex_usd, frontier_time(*a)}
                                       : std::pair{frontier_time(*a), a->capex_usd};
    const auto kb = by_cost || tied(b) ? std::pair{b->capex_usd, frontier_time(*b)}
                                       : std::pair{frontier_time(*b), b->capex_usd};
    return ka < kb;
  };
  std::sort(qualified.begin(), qualified.end(), better);
  const std::string budget_text =
      budget_usd > 0 ? fmt::format(" within the {} budget", units::format_usd(budget_usd)) : "";
  if (qualified.empty()) {
    r.why = valid == 0 ? "no combination is valid; see the errors per design"
                       : fmt::format(
                             "none of the {} valid designs meets the constraints{}; relax "
                             "constraints or the budget, or vary more keys",
                             valid, budget_text);
    return r;
  }
  const DesignResult& b = *qualified.front();
  r.best = b.index;
  // Without a workload no constraint is judged (they are the step's), and without jobs either
  // no step is timed: the designs are ranked by the all_reduce busbw alone, and said to be.
  const bool timed = b.has_step || b.has_jobs;
  // Without a step, time_text is the busbw already: named once.
  const std::string busbw = timed ? fmt::format(", {:.0f} GB/s all_reduce busbw", b.busbw_gbs) : "";
  // Where a cheaper design within the tie beat the fastest, say so.
  const bool cheaper_tie = !by_cost && frontier_time(b) > fastest;
  const char* fastest_word = timed ? "the shortest time" : "the highest all_reduce busbw";
  r.why = fmt::format(
      "design {} ({}): {} of the {} {}{} ({}, capex {}{}, goal: {}){}", b.index + 1,
      label(b.values),
      by_cost ? "the lowest capex"
      : cheaper_tie
          ? fmt::format("the cheapest within {:g}% of {}", 100 * kSweepTimeTie, fastest_word)
          : std::string(fastest_word),
      qualified.size(), b.has_step ? "designs that meet the constraints" : "valid designs",
      budget_text, time_text(b), units::format_usd(b.capex_usd), busbw, by_cost ? "cost" : "time",
      timed ? "" : "; the spec has no workload, so no step was timed and no constraint judged");
  if (qualified.size() > 1) {
    const DesignResult& n = *qualified[1];
    r.why += fmt::format("; runner-up: design {} ({}), {}, capex {}", n.index + 1, label(n.values),
                         time_text(n), units::format_usd(n.capex_usd));
  }
  return r;
}

}  // namespace gf
