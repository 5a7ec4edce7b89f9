// Plan and estimate results as JSON (the README's `plan` contract), Markdown, CSV and terminal text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "estimate/estimate.h"
#include "plan/plan.h"

namespace gf {

nlohmann::json plan_json(const Plan& plan);
std::string plan_markdown(const Plan& plan);
std::string bom_csv(const Plan& plan);
/// The short summary `gpufabric plan` prints.
std::string plan_text(const Plan& plan);

nlohmann::json estimate_json(const Estimate& e);
std::string estimate_text(const Estimate& e);

}  // namespace gf
