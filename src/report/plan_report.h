// Plan and estimate results as JSON (the README's `plan` contract), Markdown, CSV and terminal
// text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "estimate/estimate.h"
#include "plan/plan.h"
#include "sim/checkpoint.h"

namespace gf {

nlohmann::json plan_json(const Plan& plan);
std::string plan_markdown(const Plan& plan);
std::string bom_csv(const Plan& plan);
/// The short summary `gpufabric plan` prints.
std::string plan_text(const Plan& plan);

/// The other networks (plan.networks) as JSON: plan.json's "networks" (null without them).
nlohmann::json networks_json(const Plan& plan);
/// The compute fabric and the other networks side by side (plan_text ends with it).
std::string networks_text(const Plan& plan);
/// A checkpoint write (and its cost to the step on converged ports) as JSON and text.
nlohmann::json checkpoint_json(const CheckpointEstimate& c);
std::string checkpoint_text(const CheckpointEstimate& c);

nlohmann::json estimate_json(const Estimate& e);
std::string estimate_text(const Estimate& e);

}  // namespace gf
