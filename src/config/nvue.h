// NVIDIA Cumulus Linux NVUE commands for a RoCE switch: interfaces (with the breakout of the
// switch's cages), lossless RoCE QoS, eBGP. The commands and the sources that show each valid,
// per release, are in docs/configs/cumulus.md.
#pragma once

#include <string>

#include "config/addressing.h"
#include "plan/plan.h"
#include "plan/ports.h"

namespace gf {

/// Cumulus' jumbo MTU for fabric ports.
constexpr int kCumulusMtu = 9216;

/// A Cumulus Linux 5.x release (the spec's addressing.cumulus_version).
struct CumulusRelease {
  int major = 5, minor = 14;
  bool at_least(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
};
/// "5.14" -> {5, 14}; the spec reader has checked the form (spec/spec.cc).
CumulusRelease parse_cumulus_release(const std::string& text);
/// The oldest release the commands are for: `link breakout 2x` is NVUE's syntax from 5.4.0
/// (NVUE command reference, "nv set interface <interface-id> link breakout <mode-id>").
inline constexpr CumulusRelease kCumulusOldest{5, 4};
/// From 5.15, NVUE's booleans are enabled/disabled (were on/off) and an interface's IPv4
/// address is `ipv4 address` (was `ip address`): Cumulus Linux 5.15 "New and Changed NVUE
/// Commands".
inline constexpr CumulusRelease kCumulusEnabledWords{5, 15};

/// `nv set` commands for one switch, a script that ends in `nv config apply` and
/// `nv config save` (the startup configuration survives a reboot even with auto save off).
/// Ports are swp<cage>, or swp<cage>s<n> on cages broken out with `link breakout <n>x`.
std::string nvue_commands(const Plan& plan, const AddressPlan& a, const SwitchAddress& sw,
                          const CumulusRelease& release = {});

}  // namespace gf
