// Applying a generated netplan file inside a network namespace: the lab reads the host files
// `gpufabric configs` writes and turns them into `ip` commands, so the emulated hosts carry
// exactly the addresses, MTU, routes and policy rules a real node would get.
#pragma once

#include <string>
#include <vector>

#include "common/diag.h"

namespace gf {

struct NetplanRoute {
  std::string to, via, scope;
  int table = 0;  ///< 0: the main table
};

struct NetplanRule {
  std::string from;
  int table = 0;
};

struct NetplanInterface {
  std::string name;
  int mtu = 0;  ///< 0: leave as is
  std::vector<std::string> addresses;
  std::vector<NetplanRoute> routes;
  std::vector<NetplanRule> rules;
};

/// The `network.ethernets` of a netplan file (version 2): mtu, addresses, routes (to, via,
/// scope, table) and routing-policy (from, table). Other keys are errors naming file:line.
Result<std::vector<NetplanInterface>> parse_netplan(const std::string& text,
                                                    const std::string& file);

/// The `ip -n NETNS ...` commands that configure `i` (link MTU and state, addresses, routes,
/// rules), in order.
std::vector<std::vector<std::string>> netplan_ip_commands(const std::string& netns,
                                                          const NetplanInterface& i);

}  // namespace gf
