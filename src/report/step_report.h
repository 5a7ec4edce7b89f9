// Training-step results as text and JSON (the README's `step` contract).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/step.h"

namespace gf {

nlohmann::json step_json(const StepResult& r, const std::vector<StepScenario>& sensitivity);
std::string step_text(const std::string& name, const StepResult& r,
                      const std::vector<StepScenario>& sensitivity);
/// The peak stage's memory per GPU against HBM, and a PASS/FAIL line.
std::string memory_text(const StepMemory& m);

}  // namespace gf
