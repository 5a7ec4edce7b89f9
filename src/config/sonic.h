// SONiC configuration of a RoCE switch: config_db.json (ports, addresses, BGP neighbours, the
// lossless RoCE QoS of guide §4.2) and the frr.conf its bgp container loads (split mode).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "config/addressing.h"
#include "config/ports.h"
#include "plan/plan.h"

namespace gf {

/// SONiC's MTU for RoCE ports (9100, the SONiC default jumbo size).
constexpr int kSonicMtu = 9100;
/// The VLAN that holds a leaf's host ports (SONiC and NVUE); its interface is the gateway.
constexpr int kSonicHostVlan = 1000;

/// Ports are named by config/ports.h (sonic_port_name).
nlohmann::json sonic_config_db(const Plan& plan, const Catalog& catalog, const AddressPlan& a,
                               const SwitchAddress& sw);
std::string sonic_frr_conf(const Plan& plan, const AddressPlan& a, const SwitchAddress& sw);

}  // namespace gf
