// The addresses and VLANs of the cluster's other networks (spec networks:): every out-of-band
// endpoint (BMCs, switch management ports, PDUs), the servers' in-band bond and storage ports,
// and the management interface each switch gets in its own configuration flavour.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/diag.h"
#include "common/output.h"
#include "config/addressing.h"
#include "plan/plan.h"
#include "spec/spec.h"

namespace gf {

/// One address on one of the other networks.
struct NetAddress {
  NetworkKind network = NetworkKind::kOob;
  std::string device, interface;  ///< "node001" "bmc"; "su01-r0-leaf" "mgmt0"; "node001" "bond0"
  std::string switch_name, switch_port;  ///< where it is cabled ("" for a bond)
  uint32_t ip = 0;
};

/// The addresses of every other network, each in its own subnet and VLAN.
struct NetAddressPlan {
  struct Net {
    NetworkKind kind = NetworkKind::kOob;
    Ipv4Prefix prefix;
    int vlan = 0;
    uint32_t gateway = 0;  ///< the subnet's first address (the router or the leaves' VRR)
  };
  std::vector<Net> nets;
  std::vector<NetAddress> addresses;
  const Net* net(NetworkKind k) const;
  /// The OOB address of a device's management port ("mgmt0"); nullptr when it has none.
  const NetAddress* mgmt_of(const std::string& device) const;
};

/// Numbers every endpoint of plan.networks in cabling order. Errors name the networks.*.subnet
/// that is too small.
Result<NetAddressPlan> plan_network_addresses(const Plan& plan, const Spec& spec);

/// ip-plan.csv's rows for the other networks (kind = the network, or <network>-gateway).
std::string network_ip_plan_rows(const NetAddressPlan& a);

/// A compute switch's management interface in each flavour, from its OOB address:
/// EOS `interface Management1` in VRF MGMT with its default route; SONiC's MGMT_INTERFACE and
/// MGMT_PORT tables; NVUE's eth0 in VRF mgmt.
std::string eos_management(const NetAddressPlan& a, const NetAddress& mgmt);
void sonic_management(const NetAddressPlan& a, const NetAddress& mgmt, nlohmann::json& config_db);
std::string nvue_management(const NetAddressPlan& a, const NetAddress& mgmt);

/// The files of the other networks: one NVUE script per Spectrum switch of the storage, in-band
/// and OOB networks (its VLAN on the host ports, eth0), and per GPU server a netplan file for its
/// in-band bond and storage ports (or, with isolation: vlan, the storage VLAN on its rails).
std::vector<OutputFile> network_files(const Plan& plan, const NetAddressPlan& a, const Spec& spec);

}  // namespace gf
