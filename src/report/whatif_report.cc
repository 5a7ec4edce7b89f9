#include "report/whatif_report.h"

#include <fmt/format.h>

#include "report/step_report.h"
#include "units/units.h"

namespace gf {
namespace {

nlohmann::json side_json(const WhatIfSide& s) {
  nlohmann::json c = nlohmann::json::object();
  for (const auto& p : s.collectives)
    c[p.op] = p.runs ? nlohmann::json{{"busbw_gbs", p.busbw_gbs}, {"algorithm", p.algorithm}}
                     : nlohmann::json{{"runs", false}, {"note", p.note}};
  nlohmann::json j = {{"label", s.label},
                      {"gpus", s.gpus},
                      {"nodes", s.nodes},
                      {"collectives", c},
                      {"switches", s.switches},
                      {"network_capex_usd", s.network_capex_usd},
                      {"top_tier_ports_free_fraction", s.top_tier_free},
                      {"max_nodes_same_tiers", s.max_nodes_same_tiers},
                      {"tiers", s.tiers}};
  if (s.step)
    j["step"] = {{"step_time_s", s.step->step_time_s},
                 {"comm_fraction", s.step->comm_fraction},
                 {"mfu", share_json(s.step->mfu)},
                 {"tokens_per_s", s.step->tokens_per_s},
                 {"time_to_train_s", s.step->time_to_train_s},
                 {"compute_s", s.step->compute_s}};
  if (s.step && s.step->straggler_node >= 0)
    j["step"]["straggler"] = {{"node_index", s.step->straggler_node},
                              {"stage_index", s.step->straggler_stage},
                              {"speed", s.step->straggler_speed},
                              {"added_s", s.step->straggler_s}};
  return j;
}

std::string side_line(const WhatIfSide& s) {
  std::string out = fmt::format("  {:<28} {:>6} GPUs", s.label, s.gpus);
  for (const auto& p : s.collectives)
    out += p.runs ? fmt::format("  {} {:.1f}", p.op, p.busbw_gbs) : fmt::format("  {} -", p.op);
  if (s.step)
    out += fmt::format("  step {}", units::format_seconds(s.step->step_time_s));
  else if (!s.step_note.empty())
    out += "  step -";
  return out + "\n";
}

}  // namespace

nlohmann::json what_if_json(const WhatIfResult& r) {
  nlohmann::json affected = nlohmann::json::array();
  for (const auto& a : r.affected)
    affected.push_back({{"node", a.name},
                        {"state", a.state},
                        {"lost", a.lost},
                        {"sends_through", a.sends_through}});
  nlohmann::json j = {{"baseline", side_json(r.baseline)},
                      {"scenario", side_json(r.scenario)},
                      {"changes", r.changes},
                      {"affected_nodes", affected},
                      {"recommendation", r.recommendation}};
  if (r.dropped) j["without_cut_off_nodes"] = side_json(*r.dropped);
  if (r.restarted) j["restarted"] = side_json(*r.restarted);
  return j;
}

std::string what_if_text(const WhatIfResult& r) {
  std::string s = "What-if (bus bandwidth in GB/s at the probe size)\n";
  s += side_line(r.baseline);
  s += side_line(r.scenario);
  if (r.restarted) s += side_line(*r.restarted);
  if (r.dropped) s += side_line(*r.dropped);
  // A "-" is a figure that cannot be had: said once, under the table.
  bool dash = false;
  for (const WhatIfSide* side : {&r.baseline, &r.scenario, r.restarted ? &*r.restarted : nullptr,
                                 r.dropped ? &*r.dropped : nullptr}) {
    if (!side) continue;
    for (const auto& p : side->collectives) dash = dash || !p.runs;
    dash = dash || (!side->step && !side->step_note.empty());
  }
  if (dash) s += "  (-: cannot run there; the changes below say why)\n";
  s += "\nChanges:\n";
  for (const auto& c : r.changes) s += "  - " + c + "\n";
  if (!r.affected.empty()) {
    s += fmt::format("\nAffected nodes ({}):\n", r.affected.size());
    size_t shown = 0;
    for (const auto& a : r.affected) {
      if (++shown > 20) {
        s += fmt::format("  ... and {} more\n", r.affected.size() - 20);
        break;
      }
      std::string lost;
      for (const auto& l : a.lost) lost += (lost.empty() ? "" : ", ") + l;
      std::string via;
      for (const auto& t : a.sends_through) via += (via.empty() ? "" : ", ") + t;
      s += fmt::format("  {:<12} {:<9} lost {}{}\n", a.name, a.state, lost,
                       via.empty() ? "" : "; restarted: " + via);
    }
  }
  if (!r.recommendation.empty()) s += "\nRecommendation: " + r.recommendation + "\n";
  return s;
}

}  // namespace gf
