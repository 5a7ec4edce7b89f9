#include "report/replay_report.h"

#include <fmt/format.h>

#include "units/units.h"

namespace gf {
namespace {

nlohmann::json times_json(const StepTimes& t) {
  return {{"step_time_s", t.step_s},
          {"compute_s", t.compute_s},
          {"exposed_comm_s", t.exposed_comm_s},
          {"other_s", t.other_s}};
}

nlohmann::json result_json(const ReplayResult& r) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : r.groups)
    groups.push_back({{"name", g.name},
                      {"desc", g.desc},
                      {"size", g.size},
                      {"first_rank", g.first_rank},
                      {"stride", g.stride},
                      {"siblings", g.siblings},
                      {"role", g.role},
                      {"source", g.source}});
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& b : r.breakdown)
    rows.push_back({{"group", b.group},
                    {"op", b.op},
                    {"calls", b.calls},
                    {"bytes", b.bytes},
                    {"recorded_s", b.recorded_s},
                    {"simulated_s", b.simulated_s},
                    {"recorded_exposed_s", b.recorded_exposed_s},
                    {"predicted_exposed_s", b.predicted_exposed_s},
                    {"simulated", b.simulated},
                    {"busbw_gbs", b.busbw_gbs}});
  nlohmann::json j = {{"world", r.world},
                      {"traced_ranks", r.traced_ranks},
                      {"step", r.step},
                      {"kernels", r.kernels},
                      {"collectives", r.collectives},
                      {"timed", r.timed},
                      {"predicted", times_json(r.predicted)},
                      {"groups", groups},
                      {"breakdown", rows},
                      {"notes", r.notes}};
  j["recorded"] = r.timed ? times_json(r.recorded) : nlohmann::json(nullptr);
  j["difference"] = r.timed && r.recorded.step_s > 0
                        ? nlohmann::json(r.predicted.step_s / r.recorded.step_s - 1)
                        : nlohmann::json(nullptr);
  return j;
}

std::string sec(double s) { return units::format_seconds(s); }

std::string pct(double x) { return fmt::format("{:+.1f}%", 100 * x); }

}  // namespace

nlohmann::json replay_json(const ReplayReport& r) {
  nlohmann::json traces = nlohmann::json::array();
  if (r.traces)
    for (const auto& t : *r.traces)
      traces.push_back({{"file", t.file},
                        {"format", t.format},
                        {"rank", t.rank},
                        {"kernels", t.kernels.size()},
                        {"collectives", t.collectives.size()}});
  nlohmann::json j = result_json(r.planned);
  j["spec"] = r.spec_name;
  j["fabric"] = r.fabric;
  j["traces"] = traces;
  if (r.scenario) {
    j["scenario"] = result_json(*r.scenario);
    j["scenario"]["changes"] = r.changes;
  } else if (!r.scenario_cannot_run.empty()) {
    j["scenario"] = {{"cannot_run", r.scenario_cannot_run}, {"changes", r.changes}};
  }
  if (!r.alternatives.empty()) {
    nlohmann::json alts = nlohmann::json::array();
    for (const auto& a : r.alternatives) {
      nlohmann::json x = result_json(a.result);
      x["label"] = a.label;
      x["kind"] = a.kind;
      x["asked"] = a.asked;
      x["built"] = a.built;
      x["fabric"] = a.fabric;
      x["vs_planned"] =
          r.planned.predicted.step_s > 0
              ? nlohmann::json(a.result.predicted.step_s / r.planned.predicted.step_s - 1)
              : nlohmann::json(nullptr);
      alts.push_back(std::move(x));
    }
    j["alternatives"] = alts;
  }
  return j;
}

std::string replay_text(const ReplayReport& r) {
  const ReplayResult& p = r.planned;
  std::string out;
  if (r.traces)
    for (const auto& t : *r.traces)
      out += fmt::format("trace {}: {}{}, {} kernels, {} collectives\n", t.file, t.format,
                         t.rank >= 0 ? fmt::format(", rank {}", t.rank) : "", t.kernels.size(),
                         t.collectives.size());
  out += fmt::format("replayed {}: {} of {} ranks traced, {} kernels, {} collective calls\n",
                     p.step.empty() ? "the whole trace" : p.step, p.traced_ranks, p.world,
                     p.kernels, p.collectives);
  out += fmt::format("on {} ({})\n\n", r.spec_name, r.fabric);

  const bool scen = r.scenario.has_value();
  const bool cannot = !scen && !r.scenario_cannot_run.empty();
  out += fmt::format("  {:<24} {:>12} {:>14}{}\n", "", p.timed ? "recorded" : "", "this fabric",
                     scen || cannot ? fmt::format(" {:>14}", "scenario") : "");
  auto row = [&](const char* label, auto get) {
    std::string line = fmt::format("  {:<24} {:>12} {:>14}", label,
                                   p.timed ? sec(get(p.recorded)) : "-", sec(get(p.predicted)));
    if (scen) line += fmt::format(" {:>14}", sec(get(r.scenario->predicted)));
    if (cannot) line += fmt::format(" {:>14}", "cannot run");
    out += line + "\n";
  };
  row("step time", [](const StepTimes& t) { return t.step_s; });
  row("compute", [](const StepTimes& t) { return t.compute_s; });
  row("exposed communication", [](const StepTimes& t) { return t.exposed_comm_s; });
  row("other (host gaps)", [](const StepTimes& t) { return t.other_s; });
  if (p.timed && p.recorded.step_s > 0) {
    out += fmt::format("\n  this fabric vs recorded: {} step time",
                       pct(p.predicted.step_s / p.recorded.step_s - 1));
    if (scen)
      out += fmt::format("; scenario vs this fabric: {}",
                         pct(r.scenario->predicted.step_s / p.predicted.step_s - 1));
    out += "\n";
  } else if (!p.timed) {
    out += "\n  the log has no durations: communication only, calls in order per stream\n";
  }
  if (cannot)
    out += fmt::format("\n  the scenario cannot run the traced job: {}\n", r.scenario_cannot_run);

  if (!r.alternatives.empty()) {
    // Each alternative is the same step re-simulated there: compute as recorded.
    out += "\nOn the spec's alternatives (compute as recorded, collectives simulated there):\n";
    out += fmt::format("  {:<26} {:>12} {:>14} {:>9}  {}\n", "fabric", "step time", "exposed comm",
                       "vs this", "built");
    out += fmt::format("  {:<26} {:>12} {:>14} {:>9}  {}\n", "this fabric", sec(p.predicted.step_s),
                       sec(p.predicted.exposed_comm_s), "", r.shape);
    if (scen)
      out +=
          fmt::format("  {:<26} {:>12} {:>14} {:>9}  {}\n", "scenario",
                      sec(r.scenario->predicted.step_s), sec(r.scenario->predicted.exposed_comm_s),
                      pct(r.scenario->predicted.step_s / p.predicted.step_s - 1),
                      "--nic/--fail/--degrade, below");
    for (const auto& a : r.alternatives)
      out += fmt::format("  {:<26} {:>12} {:>14} {:>9}  {}\n", a.label,
                         sec(a.result.predicted.step_s), sec(a.result.predicted.exposed_comm_s),
                         pct(a.result.predicted.step_s / p.predicted.step_s - 1), a.fabric);
  }

  // The groups' names and descriptions as the trace gives them (PyTorch's "TENSOR_MODEL_PARALLEL_
  // GROUP", Megatron's hashes), their columns as wide as the longest, up to kNameColumnMax; a
  // longer one is shortened in the middle, its end kept (the JSON has every name whole).
  constexpr size_t kNameColumn = 22, kNameColumnMax = 48;
  auto fit = [&](const std::string& s) {
    if (s.size() <= kNameColumnMax) return s;
    const size_t tail = (kNameColumnMax - 3) / 2;
    return s.substr(0, kNameColumnMax - 3 - tail) + "..." + s.substr(s.size() - tail);
  };
  size_t gw = kNameColumn, dw = kNameColumn;
  for (const auto& g : p.groups) {
    gw = std::max(gw, fit(g.name).size());
    dw = std::max(dw, fit(g.desc).size());
  }
  for (const auto& b : p.breakdown) gw = std::max(gw, fit(b.group).size());
  out += "\nProcess groups on the fabric:\n";
  out += fmt::format("  {:<{}} {:<{}} {:>5} {:>6} {:>6} {:>8}  {}\n", "group", gw, "desc", dw,
                     "size", "stride", "role", "siblings", "from");
  for (const auto& g : p.groups)
    out += fmt::format("  {:<{}} {:<{}} {:>5} {:>6} {:>6} {:>8}  {}\n", fit(g.name), gw,
                       fit(g.desc), dw, g.size, g.stride, g.role, g.siblings, g.source);

  out += "\nCollectives (most exposed first):\n";
  out += fmt::format("  {:<{}} {:<14} {:>6} {:>10} {:>11} {:>11} {:>11} {:>11} {:>9}\n", "group",
                     gw, "op", "calls", "bytes", "recorded", "simulated", "exp. rec.", "exp. pred.",
                     "busbw");
  for (const auto& b : p.breakdown)
    out +=
        fmt::format("  {:<{}} {:<14} {:>6} {:>10} {:>11} {:>11} {:>11} {:>11} {:>9}\n",
                    fit(b.group), gw, b.op.substr(0, 14), b.calls, units::format_bytes(b.bytes),
                    p.timed ? sec(b.recorded_s) : "-", b.simulated ? sec(b.simulated_s) : "as rec.",
                    p.timed ? sec(b.recorded_exposed_s) : "-", sec(b.predicted_exposed_s),
                    b.simulated ? fmt::format("{:.1f}", b.busbw_gbs) : "-");
  if ((scen || cannot) && !r.changes.empty()) {
    out += "\nScenario:\n";
    for (const auto& c : r.changes) out += "  " + c + "\n";
  }
  for (const auto& n : p.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace gf
