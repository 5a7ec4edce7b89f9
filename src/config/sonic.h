// SONiC configuration of a RoCE switch: config_db.json (ports with their lanes, addresses, the
// lossless RoCE QoS of guide §4.2 and the buffers of the platform's buffer model) and the
// frr.conf the bgp container loads. Every key and the source that shows it valid are listed in
// docs/configs/sonic.md.
//
// BGP: frr.conf is authoritative. DEVICE_METADATA sets docker_routing_config_mode
// "split-unified" (the bgp container keeps /etc/frr/frr.conf and applies it with `vtysh -b`;
// "split" deletes frr.conf at start, sonic-buildimage dockers/docker-fpm-frr/docker_init.sh), and
// no BGP_NEIGHBOR is written: bgpcfgd acts on BGP_NEIGHBOR in every mode (bgpcfgd/main.py) and
// would add its own peer groups beside frr.conf's.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "config/addressing.h"
#include "plan/plan.h"
#include "plan/ports.h"
#include "plan/roce_qos.h"  // kSonicMtu, the headroom formula (sonic_lossless_profile)

namespace gf {

/// The VLAN that holds a leaf's host ports (SONiC and NVUE); its interface is the gateway.
constexpr int kSonicHostVlan = 1000;
/// The SONiC releases config_db.json is written for: the tables and keys hold from 202311
/// (YANG models, sonic-swss buffermgrd); the HWSKU names of the catalog are those of 202405 and
/// later (202311 calls the 7060X6's 128 x 400G SKU Arista-7060X6-64PE-128x400G).
inline constexpr const char* kSonicTarget = "SONiC 202405 and later";

/// config_db.json of one switch. Errors (at fabric.switch) when the catalog has no SONiC
/// platform for the switch (sonic, serdes_lanes, asic_vendor in catalog/switches.yaml).
Result<nlohmann::json> sonic_config_db(const Plan& plan, const Catalog& catalog,
                                       const AddressPlan& a, const SwitchAddress& sw);
std::string sonic_frr_conf(const Plan& plan, const AddressPlan& a, const SwitchAddress& sw);

}  // namespace gf
