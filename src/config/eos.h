// Arista EOS configuration of a RoCE switch (guide §4.2): routed ports, lossless RoCE QoS
// (DSCP 26 -> TC 3 with PFC, CNP DSCP 48 -> strict priority, ECN on the RoCE queue, PFC
// watchdog) and the eBGP underlay with ECMP.
#pragma once

#include <string>

#include "config/addressing.h"
#include "plan/plan.h"
#include "plan/ports.h"

namespace gf {

/// EOS's largest L3 MTU, used on every fabric port.
constexpr int kEosMtu = 9214;
/// The EOS releases the configuration is written for: the 4.3x trains. The speed tokens of
/// broken-out cages (`speed 400g-4`, one of two 400G ports of an 8-lane cage) are the ones
/// cEOS-lab 4.35.1F accepts (batfish PR 9929) and AVD's eos_cli_config_gen lists
/// (docs/configs/eos.md).
inline constexpr const char* kEosTarget = "EOS 4.3x";

/// Ports are named by plan/ports.h (eos_port_name): Ethernet<cage>/<first lane>; every port
/// carries `speed <Gb/s>g-<lanes>`, and the unused ports of a used cage are set to the same
/// speed and shut, since EOS brings up Ethernet<cage>/5 only when /1 runs on 4 lanes.
std::string eos_config(const Plan& plan, const AddressPlan& a, const SwitchAddress& sw);

}  // namespace gf
