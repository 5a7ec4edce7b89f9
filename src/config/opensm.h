// OpenSM (InfiniBand subnet manager) configuration for the planned fabric: the routing engine
// that fits the topology (adaptive routing where the switches and the spec ask for it) and the
// partitions.
#pragma once

#include <string>

#include "plan/networks.h"
#include "plan/plan.h"

namespace gf {

/// OpenSM's routing_engine list for the plan, tried in order (the last is the fallback).
std::string opensm_routing_engine(const Plan& plan);
std::string opensm_conf(const Plan& plan);
std::string opensm_partitions();
/// OpenSM for one of the other networks when its switches are InfiniBand (a storage fabric of
/// QM9700s): a subnet of its own, routed as its tiers ask (ftree on leaf/spine, minhop on one
/// switch), with its own SM away from the compute fabric's.
std::string opensm_network_conf(const Plan& plan, const NetworkPlan& net);

}  // namespace gf
