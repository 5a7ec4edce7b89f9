// What-if results as text and JSON (the README's `what-if` contract).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/whatif.h"

namespace gf {

nlohmann::json what_if_json(const WhatIfResult& r);
std::string what_if_text(const WhatIfResult& r);

}  // namespace gf
