// FRR configuration of a routed fabric's switches (the underlay): eBGP per RFC 7938 with ECMP.
#pragma once

#include <string>

#include "config/addressing.h"

namespace gf {

/// Widest ECMP FRR installs here (Debian's FRR is built with --enable-multipath=256; switch
/// ASICs commonly hold 64-128 next hops per group).
constexpr int kFrrMaximumPaths = 64;

/// frr.conf of one switch: its loopback, routed ports with descriptions from the cabling plan,
/// the host gateway (leaves), and eBGP to every neighbour in peer groups per direction
/// (numbered /31 or unnumbered), as-path multipath relax and ECMP. Ports are named swpN.
std::string frr_conf(const AddressPlan& a, const SwitchAddress& sw);

}  // namespace gf
