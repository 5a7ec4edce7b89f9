// OpenSM (InfiniBand subnet manager) configuration for the planned fabric: the routing engine
// that fits the topology (adaptive routing where the switches and the spec ask for it) and the
// partitions.
#pragma once

#include <string>

#include "plan/plan.h"

namespace gf {

/// OpenSM's routing_engine list for the plan, tried in order (the last is the fallback).
std::string opensm_routing_engine(const Plan& plan);
std::string opensm_conf(const Plan& plan);
std::string opensm_partitions();

}  // namespace gf
