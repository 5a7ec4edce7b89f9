// Arista EOS configuration of a RoCE switch (guide §4.2): routed ports, lossless RoCE QoS
// (DSCP 26 -> TC 3 with PFC, CNP DSCP 48 -> strict priority, ECN on the RoCE queue, PFC
// watchdog) and the eBGP underlay with ECMP.
#pragma once

#include <string>

#include "config/addressing.h"
#include "plan/plan.h"

namespace gf {

/// EOS's largest L3 MTU, used on every fabric port.
constexpr int kEosMtu = 9214;

/// EOS's name of front-panel port `port` (from 1): Ethernet<cage>/<first lane>, 8 lanes a cage.
std::string eos_port_name(const Plan& plan, int port);
std::string eos_config(const Plan& plan, const AddressPlan& a, const SwitchAddress& sw);

}  // namespace gf
