#include "report/sweep_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/output.h"
#include "report/html_report.h"
#include "units/units.h"

namespace gf {
namespace {

constexpr double kSecondsPerDay = 86400;

// A design's values as key=value, without the keys in `skip`.
std::string values_text(const DesignResult& d, const std::set<std::string>& skip = {}) {
  std::string s;
  for (const auto& v : d.values)
    if (!skip.count(v.key)) s += (s.empty() ? "" : " ") + v.key + "=" + v.value;
  return s;
}

// The keys that take one value in every design of a sweep of several (a --vary with one value).
std::set<std::string> common_keys(const SweepResult& r) {
  std::set<std::string> common;
  if (r.designs.size() < 2) return common;
  for (const auto& v : r.designs.front().values) {
    bool same = true;
    for (const auto& d : r.designs) {
      const auto it = std::find_if(d.values.begin(), d.values.end(),
                                   [&](const auto& w) { return w.key == v.key; });
      same = same && it != d.values.end() && it->value == v.value;
    }
    if (same) common.insert(v.key);
  }
  return common;
}

std::string verdict(const DesignResult& d) {
  if (!d.ok) return "invalid";
  if (!d.within_budget) return "over budget";
  if (!d.constraints_met) {
    // Which, by name (the value and limit are in sweep.json's `missed`).
    std::string names;
    for (const auto& m : d.missed)
      names += (names.empty() ? "" : " and ") + m.substr(0, m.find(':'));
    return names.empty() ? "misses constraints" : "misses " + names;
  }
  return "ok";
}

}  // namespace

std::string sweep_csv(const SweepResult& r) {
  std::string out = "design";
  for (const auto& a : r.axes) out += "," + csv_field(a.key);
  out +=
      ",valid,technology,topology,switch,nic,gpus,switches,capex_usd,network_capex_usd,power_w,"
      "busbw_gbs,step_time_s,comm_fraction,gpu_utilization,mfu,memory_gib,time_to_train_s,"
      "cost_to_train_usd,"
      "constraints_met,within_budget,pareto,best,error";
  // The jobs' columns, last, when the spec has jobs: (sim/jobs.h).
  bool jobs = false;
  for (const auto& d : r.designs) jobs = jobs || d.has_jobs;
  out += jobs ? ",jobs_worst_slowdown,jobs_mean_slowdown,jobs_worst,jobs_mean_step_s\n" : "\n";
  // What a design did not compute is an empty cell, not a 0 a spreadsheet would average: an
  // invalid design has no plan, a spec without a workload no step, a spec without jobs no jobs.
  auto cell = [](bool has, const char* f, double v) {
    return has ? fmt::format(fmt::runtime(f), v) : std::string();
  };
  // So are its verdicts: an invalid design has no capex to hold against the budget, and only a
  // step has constraints (communication share, utilisation) to meet.
  auto flag = [](bool has, bool v) { return has ? std::string(v ? "true" : "false") : ""; };
  for (const auto& d : r.designs) {
    out += std::to_string(d.index + 1);
    for (const auto& v : d.values) out += "," + csv_field(v.value);
    const bool plan = d.ok, step = d.ok && d.has_step;
    out += fmt::format(
        ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", d.ok, d.technology,
        d.topology, csv_field(d.switch_id), csv_field(d.nic), cell(plan, "{:.0f}", d.gpus),
        cell(plan, "{:.0f}", d.switches), cell(plan, "{:.0f}", d.capex_usd),
        cell(plan, "{:.0f}", d.network_capex_usd), cell(plan, "{:.0f}", d.power_w),
        cell(plan, "{:.2f}", d.busbw_gbs), cell(step, "{:.4f}", d.step_time_s),
        cell(step, "{:.4f}", d.comm_fraction), cell(step, "{:.4f}", d.gpu_utilization),
        cell(step && d.mfu.has_value(), "{:.4f}", d.mfu.value_or(0)),
        cell(step, "{:.2f}", d.memory_bytes / units::kBytesPerGiB),
        cell(step, "{:.0f}", d.time_to_train_s), cell(step, "{:.0f}", d.cost_to_train_usd),
        flag(step, d.constraints_met), flag(plan, d.within_budget), d.pareto, d.index == r.best,
        csv_field(d.error));
    if (jobs) {
      const bool j = d.ok && d.has_jobs;
      out += fmt::format(",{},{},{},{}", cell(j, "{:.4f}", d.jobs_worst_slowdown),
                         cell(j, "{:.4f}", d.jobs_mean_slowdown), csv_field(d.jobs_worst),
                         cell(j, "{:.4f}", d.jobs_mean_step_s));
    }
    out += "\n";
  }
  return out;
}

nlohmann::json sweep_json(const SweepResult& r) {
  using nlohmann::json;
  json axes = json::array();
  for (const auto& a : r.axes) axes.push_back({{"key", a.key}, {"values", a.values}});
  json designs = json::array();
  for (const auto& d : r.designs) {
    json values = json::object();
    for (const auto& v : d.values) values[v.key] = v.value;
    json j = {{"design", d.index + 1}, {"values", values}, {"valid", d.ok}};
    if (!d.ok) {
      j["error"] = d.error;
    } else {
      j.update(design_plan_json(d));
      j["pareto"] = d.pareto;
      if (d.has_step)
        j.update(design_step_json(d));
      else
        j.erase("constraints_met");  // no step, no constraints to meet
      if (d.has_jobs) j.update(design_jobs_json(d));
    }
    designs.push_back(j);
  }
  json frontier = json::array();
  for (const auto& d : r.designs)
    if (d.pareto) frontier.push_back(d.index + 1);
  return {{"axes", axes},
          {"goal", goal_name(r.goal)},
          {"budget_usd", r.budget_usd},
          {"designs", designs},
          {"pareto", frontier},
          {"best", r.best >= 0 ? json(r.best + 1) : json(nullptr)},
          {"why", r.why}};
}

std::string sweep_table(const SweepResult& r) {
  // Keys every design shares are named once above the table; the values' column holds the rest,
  // as wide as its widest entry (at least 44), so the figures line up.
  const std::set<std::string> common = common_keys(r);
  std::string out;
  if (!common.empty()) {
    std::string shared;
    for (const auto& v : r.designs.front().values)
      if (common.count(v.key)) shared += (shared.empty() ? "" : " ") + v.key + "=" + v.value;
    out += "every design: " + shared + "\n";
  }
  std::size_t width = 44;
  for (const auto& d : r.designs) width = std::max(width, values_text(d, common).size());
  out += fmt::format("{:>6}  {:<{}} {:>9} {:>8} {:>12} {:>7} {:>6}  {}\n", "design", "values",
                     width, "capex", "busbw", "time", "comm", "mfu", "verdict");
  for (const auto& d : r.designs) {
    if (!d.ok) {
      out += fmt::format("{:>6}  {:<{}} invalid: {}\n", d.index + 1, values_text(d, common), width,
                         d.error);
      continue;
    }
    const std::string time =
        !d.has_step ? (d.has_jobs ? units::format_seconds(d.jobs_mean_step_s) + "/job" : "-")
        // Days where a run takes them, else the clock's own units (a short run read "0.0 d").
        : d.time_to_train_s >= kSecondsPerDay
            ? fmt::format("{:.1f} d", d.time_to_train_s / kSecondsPerDay)
        : d.time_to_train_s > 0 ? units::format_seconds(d.time_to_train_s)
                                : units::format_seconds(d.step_time_s) + "/step";
    // The communication share is a step's: "-" where no step was timed (no workload).
    const std::string comm = d.has_step ? fmt::format("{:.1f}%", 100 * d.comm_fraction) : "-";
    // MFU likewise, and "?" where the model's FLOPs are unknown (params alone).
    const std::string mfu = !d.has_step ? "-" : d.mfu ? fmt::format("{:.1f}%", 100 * *d.mfu) : "?";
    out += fmt::format(
        "{:>6}  {:<{}} {:>9} {:>6.0f}GB/s {:>12} {:>7} {:>6}  {}{}{}{}\n", d.index + 1,
        values_text(d, common), width, units::format_usd(d.capex_usd), d.busbw_gbs, time, comm, mfu,
        verdict(d), d.pareto ? ", pareto" : "", d.index == r.best ? ", BEST" : "",
        d.has_jobs ? fmt::format(", jobs worst {:.3f}x", d.jobs_worst_slowdown) : "");
  }
  out += "\nbest: " + (r.best >= 0 ? r.why : "none: " + r.why) + "\n";
  return out;
}

std::string sweep_html(const SweepResult& r, const std::string& spec_name) {
  using nlohmann::json;
  bool any_step = false;
  for (const auto& d : r.designs) any_step = any_step || (d.ok && d.has_step);
  json points = json::array();
  for (const auto& d : r.designs) {
    if (!d.ok) continue;
    points.push_back({{"design", d.index + 1},
                      {"values", values_text(d)},
                      {"capex", d.capex_usd},
                      {"time", any_step ? d.time_s() / kSecondsPerDay : d.busbw_gbs},
                      {"frontier", d.pareto ? "Pareto frontier" : "dominated"},
                      {"verdict", d.index == r.best ? "best" : verdict(d)}});
  }
  const std::string y_title = !any_step ? "all_reduce busbw at 1 GiB (GB/s)"
                                        : "time to train (days; step time when unknown)";
  json specs = json::object();
  specs["chart-frontier"] = {
      {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
      {"width", 760},
      {"height", 420},
      {"data", {{"values", points}}},
      {"layer",
       json::array(
           {{{"transform", json::array({{{"filter", "datum.frontier == 'Pareto frontier'"}}})},
             {"mark", {{"type", "line"}, {"color", "#888"}, {"strokeDash", {4, 3}}}},
             {"encoding",
              {{"x", {{"field", "capex"}, {"type", "quantitative"}}},
               {"y", {{"field", "time"}, {"type", "quantitative"}}}}}},
            {{"mark", {{"type", "point"}, {"filled", true}, {"size", 90}}},
             {"encoding",
              {{"x",
                {{"field", "capex"},
                 {"type", "quantitative"},
                 {"title", "cluster capex (USD)"},
                 {"axis", {{"format", "$.3s"}}},
                 {"scale", {{"zero", false}}}}},
               {"y",
                {{"field", "time"},
                 {"type", "quantitative"},
                 {"title", y_title},
                 {"scale", {{"zero", false}}}}},
               {"color", {{"field", "verdict"}, {"type", "nominal"}, {"title", "design"}}},
               {"shape", {{"field", "frontier"}, {"type", "nominal"}, {"title", "frontier"}}},
               {"tooltip", json::array({{{"field", "design"}},
                                        {{"field", "values"}},
                                        {{"field", "capex"}, {"format", "$.3s"}},
                                        {{"field", "time"}, {"format", ".3f"}}})}}}}})}};
  std::string body = fmt::format("<h1>Design sweep: {}</h1>", html_escape(spec_name));
  body +=
      fmt::format("<p><b>Best</b>: {}</p>", html_escape(r.best >= 0 ? r.why : "none: " + r.why));
  body +=
      "<section><h2>Cost against time</h2><div class=\"chart\" id=\"chart-frontier\"></div>"
      "</section><p>Every design is in <a href=\"sweep.csv\">sweep.csv</a> and "
      "<a href=\"sweep.json\">sweep.json</a>.</p>";
  return chart_page("gpufabric sweep: " + spec_name, body, specs);
}

}  // namespace gf
