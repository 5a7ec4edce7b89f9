// NVIDIA Cumulus Linux NVUE commands for a RoCE switch: interfaces, lossless RoCE QoS, eBGP.
#pragma once

#include <string>

#include "config/addressing.h"

namespace gf {

/// Cumulus' jumbo MTU for fabric ports.
constexpr int kCumulusMtu = 9216;

/// `nv set` commands (a script ending in `nv config apply`) for one switch.
std::string nvue_commands(const AddressPlan& a, const SwitchAddress& sw);

}  // namespace gf
