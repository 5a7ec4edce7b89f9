// Training-step results as text and JSON (the README's `step` contract).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/step.h"

namespace gf {

nlohmann::json step_json(const StepResult& r, const std::vector<StepScenario>& sensitivity);
std::string step_text(const std::string& name, const StepResult& r,
                      const std::vector<StepScenario>& sensitivity);
/// A share that may be unknown (MFU without the model's FLOPs or the GPU's peak): the number,
/// or null in JSON; "12.3%", or `unknown` in text.
nlohmann::json share_json(const std::optional<double>& share);
std::string share_text(const std::optional<double>& share, const std::string& unknown);
/// The peak stage's memory per GPU against HBM, and a PASS/FAIL line.
std::string memory_text(const StepMemory& m);

}  // namespace gf
