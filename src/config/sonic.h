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

namespace gf {

/// SONiC's MTU for RoCE ports (9100, the SONiC default jumbo size).
constexpr int kSonicMtu = 9100;
/// The VLAN that holds a leaf's host ports (SONiC and NVUE); its interface is the gateway.
constexpr int kSonicHostVlan = 1000;
/// The SONiC releases config_db.json is written for: the tables and keys hold from 202311
/// (YANG models, sonic-swss buffermgrd); the HWSKU names of the catalog are those of 202405 and
/// later (202311 calls the 7060X6's 128 x 400G SKU Arista-7060X6-64PE-128x400G).
inline constexpr const char* kSonicTarget = "SONiC 202405 and later";

/// The lossless priority group's profile in the traditional buffer model, for one port speed
/// and cable length. xoff, the headroom, is SONiC's own formula (sonic-swss 202311
/// cfgmgr/buffer_headroom_mellanox.lua, the one headroom formula SONiC ships), in bytes:
///   xoff = mtu + (mtu + 2 x cable x speed / v / 8 + mac_phy + peer_response) x occupancy,
/// rounded up to 1 KiB, with v = 1.98e8 m/s, mac_phy = 0.8 KiB, peer_response = the pause quanta
/// of the speed (IEEE 802.3 Annex 31B.3.7: 905 at 400G and 800G) x 512 bits, and occupancy the
/// worst-case cell use of small packets (cell / 64 bytes for cells over 128 bytes, all traffic
/// small). size, xon, xon_offset and dynamic_th are the platform's (catalog lossless_pg).
struct LosslessProfile {
  double cable_m = 0;  ///< the CABLE_LENGTH it is for (a length of pg_profile_lookup.ini)
  long long xon = 0, xoff = 0, size = 0, xon_offset = 0;
  int dynamic_th = 0;
  std::string name;  ///< pg_lossless_<speed Mb/s>_<cable>m_profile, buffermgrd's own naming
};
LosslessProfile sonic_lossless_profile(const SonicPlatform& platform, double gbps, double cable_m);
/// The CABLE_LENGTH of a run of `length_m` in the traditional model: the shortest length of the
/// platform's pg_profile_lookup.ini that is at least as long (so buffermgrd finds it), else
/// the run rounded up to a metre.
double sonic_cable_length(const SonicPlatform& platform, double length_m);

/// config_db.json of one switch. Errors (at fabric.switch) when the catalog has no SONiC
/// platform for the switch (sonic, serdes_lanes, asic_vendor in catalog/switches.yaml).
Result<nlohmann::json> sonic_config_db(const Plan& plan, const Catalog& catalog,
                                       const AddressPlan& a, const SwitchAddress& sw);
std::string sonic_frr_conf(const Plan& plan, const AddressPlan& a, const SwitchAddress& sw);

}  // namespace gf
