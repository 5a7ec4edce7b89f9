// Sweep outputs: sweep.csv, sweep.json, the terminal table and sweep.html (the frontier chart).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sweep/sweep.h"

namespace gf {

std::string sweep_csv(const SweepResult& r);
nlohmann::json sweep_json(const SweepResult& r);
std::string sweep_table(const SweepResult& r);
/// A self-contained page: capex against time for every valid design, the frontier joined.
std::string sweep_html(const SweepResult& r, const std::string& spec_name);

}  // namespace gf
