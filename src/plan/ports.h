// The port model: the names the cabling plan and every configuration flavour give one switch
// port, all from the catalog's model of the switch's cages (catalog/catalog.h: Switch::slot).
// Port N of the plan (cabling.csv's port number, from 1) is sub-port S of cage C, on `lanes` of
// the cage's 8 lanes. A 64 x 800G switch run at 400G has its 128 ports two to a cage: port 65 is
// cage 33, sub-port 0 (lanes 1-4), port 66 the same cage's sub-port 1 (lanes 5-8). In the plan
// layer so that cabling.csv (plan) and the configurations (config) name ports from one model;
// the sources for each flavour's naming are in docs/configs/.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace gf {

/// Where port `port` (from 1) of the plan's switches sits at the plane's port speed. A port the
/// switch lacks (never in a valid plan) is given a cage of its own.
PortSlot port_slot(const Plan& plan, int port);
/// Every port (from 1) of the cages that `used` touches, ascending: the siblings of a used
/// breakout port must be set up too (EOS's /5 exists only when /1 runs on 4 lanes).
std::vector<int> cage_ports(const Plan& plan, const std::vector<int>& used);

/// The front-panel name, NOS-neutral (cabling.csv's a_port_name, b_port_name): the cage, and
/// when the cage is broken out "/" and the sub-port from 1 in lane order ("33/2": cage 33's
/// second port, lanes 5-8). The NOSes number the same sub-port differently (EOS by first lane,
/// /5; Cumulus from 0, s1; SONiC by letter, etp33b), so the cabling plan names what is on the
/// front panel and docs/configs/README.md maps it to each.
std::string panel_port_name(const Plan& plan, int port);

/// EOS: Ethernet<cage>/<first lane> ("Ethernet33/5": cage 33, lanes 5-8; EOS User Manual,
/// Layer 1 Profiles: cage N exposes EthernetN/1 ... /8, one per lane; docs/configs/eos.md).
std::string eos_port_name(const Plan& plan, int port);
/// EOS's speed of the plan's ports: <Gb/s>g-<lanes> ("400g-4": 400G on 4 lanes).
std::string eos_speed(const Plan& plan);

/// SONiC: Ethernet<8 x (cage - 1) + first lane> (the device folder's port_config.ini;
/// docs/configs/sonic.md).
std::string sonic_port_name(const Plan& plan, int port);
/// SONiC's alias of the port (platform.json's breakout names): etp<cage>, with a, b, ... per
/// sub-port when the cage is broken out.
std::string sonic_port_alias(const Plan& plan, int port);
/// SONiC's PORT lanes: the ASIC lanes, comma-separated ("273,274,275,276"); empty when the
/// catalog has no serdes_lanes for the switch.
std::string sonic_port_lanes(const Plan& plan, int port);

/// Cumulus Linux: swp<cage>, or swp<cage>s<sub-port> (from s0) when the cage is broken out
/// (Cumulus Linux 5.12, Switch Port Attributes: the breakout ports of swp1 are swp1s0, swp1s1,
/// ...; docs/configs/cumulus.md). The frr/ files and the lab name ports so too.
std::string cumulus_port_name(const Plan& plan, int port);
/// The NVUE breakout of the plan's cages ("2x"), empty when they run unsplit.
std::string cumulus_breakout(const Plan& plan);

}  // namespace gf
