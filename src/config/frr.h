// FRR configuration of a routed fabric's switches (the underlay): eBGP per RFC 7938 with ECMP.
#pragma once

#include <functional>
#include <string>

#include "config/addressing.h"

namespace gf {

/// Widest ECMP FRR installs here (Debian's FRR is built with --enable-multipath=256; switch
/// ASICs commonly hold 64-128 next hops per group).
constexpr int kFrrMaximumPaths = 64;

/// frr.conf of one switch: its loopback, routed ports with descriptions from the cabling plan,
/// the host gateway (leaves), and eBGP to every neighbour in peer groups per direction
/// (numbered /31 or unnumbered), as-path multipath relax and ECMP, installed as plain
/// multipath routes rather than kernel nexthop groups (see frr.cc). Ports are named by
/// `port_name` (port number from 1), swpN by default.
using PortNamer = std::function<std::string(int)>;
std::string swp_name(int port);
std::string frr_conf(const AddressPlan& a, const SwitchAddress& sw,
                     const PortNamer& port_name = swp_name,
                     const std::string& hosts_interface = "hosts");

}  // namespace gf
