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
///
/// Unnumbered (addressing.unnumbered): eBGP over each port's IPv6 link-local address, IPv4 routes
/// over IPv6 next hops (RFC 8950), as FRR's `neighbor <port> interface` does. The fabric ports
/// get `ipv6 enable` and no IPv4 address; globally `ip routing ipv6 interfaces` (IPv4 routing
/// that includes ports without an IPv4 address, in place of `ip routing`) and
/// `ipv6 unicast-routing`; in `router bgp` one `neighbor interface EthernetX peer-group G
/// remote-as N` a port, and under `address-family ipv4` each group's `next-hop address-family
/// ipv6 originate` and `activate`. Written as AVD renders its underlay_rfc5549 design
/// (aristanetworks/avd c311e5f2, ansible_collections/arista/avd/molecule/
/// evpn_underlay_rfc5549_overlay_ebgp/intended/configs/DC1-SPINE1.cfg; router-bgp.j2 renders
/// `neighbor interface <name> peer-group <group> remote-as <asn>`, at 000975f4). Shown working on
/// cEOS 4.31.2F, inside the 4.3x target, with the note that without `ipv6 unicast-routing` EOS does
/// not look for link-local neighbours (blog.ipspace.net/2024/03/arista-interface-ebgp). No Arista
/// page at hand names the first release with `neighbor interface`.
std::string eos_config(const Plan& plan, const AddressPlan& a, const SwitchAddress& sw);

}  // namespace gf
