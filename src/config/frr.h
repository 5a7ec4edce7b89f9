// FRR configuration of a routed fabric's switches (the underlay): eBGP per RFC 7938 with ECMP.
#pragma once

#include <functional>
#include <string>

#include "config/addressing.h"
#include "plan/plan.h"

namespace gf {

/// Widest ECMP FRR installs here (Debian's FRR is built with --enable-multipath=256; switch
/// ASICs commonly hold 64-128 next hops per group).
constexpr int kFrrMaximumPaths = 64;

/// The interface name of plan port `port` (from 1) in the standalone frr/ files, ip-plan.csv
/// and the lab: a Linux switch's front-panel port as Cumulus Linux names it (plan/ports.h
/// cumulus_port_name: swp<cage>, swp<cage>s<n> when the cage is broken out), so that frr/ is the
/// FRR of the Cumulus flavour and matches nvue/. SONiC's frr.conf names its own (EthernetN).
std::string frr_port_name(const Plan& plan, int port);

/// frr.conf of one switch: its loopback, routed ports with descriptions from the cabling plan,
/// the host gateway (leaves), and eBGP to every neighbour in peer groups per direction
/// (numbered /31 or unnumbered), as-path multipath relax and ECMP, installed as plain
/// multipath routes rather than kernel nexthop groups (see frr.cc). Ports are named by
/// `port_name` (port number from 1), the host gateway is on `hosts_interface`.
using PortNamer = std::function<std::string(int)>;
std::string frr_conf(const AddressPlan& a, const SwitchAddress& sw, const PortNamer& port_name,
                     const std::string& hosts_interface = "hosts");
/// The standalone frr/SWITCH.conf: ports named by frr_port_name.
std::string frr_conf(const Plan& plan, const AddressPlan& a, const SwitchAddress& sw);

}  // namespace gf
