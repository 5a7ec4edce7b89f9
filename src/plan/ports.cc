#include "plan/ports.h"

#include <fmt/format.h>

#include <set>

namespace gf {

PortSlot port_slot(const Plan& plan, int port) {
  if (auto s = plan.sw.slot(port, plan.topo.lane_gbps)) return *s;
  PortSlot s;
  s.cage = port;
  s.lanes = plan.sw.lanes_per_cage;
  return s;
}

std::vector<int> cage_ports(const Plan& plan, const std::vector<int>& used) {
  std::set<int> out;
  for (int p : used) {
    const PortSlot s = port_slot(plan, p);
    const int first = p - s.subport;
    for (int k = 0; k < s.subports; ++k) out.insert(first + k);
  }
  return {out.begin(), out.end()};
}

std::string panel_port_name(const Plan& plan, int port) {
  const PortSlot s = port_slot(plan, port);
  if (s.subports == 1) return std::to_string(s.cage);
  return fmt::format("{}/{}", s.cage, s.subport + 1);
}

std::string eos_port_name(const Plan& plan, int port) {
  const PortSlot s = port_slot(plan, port);
  return fmt::format("Ethernet{}/{}", s.cage, s.first_lane + 1);
}

std::string eos_speed(const Plan& plan) {
  const PortSlot s = port_slot(plan, 1);
  return fmt::format("{:g}g-{}", plan.topo.lane_gbps, s.lanes);
}

std::string sonic_port_name(const Plan& plan, int port) {
  const PortSlot s = port_slot(plan, port);
  return fmt::format("Ethernet{}", (s.cage - 1) * plan.sw.lanes_per_cage + s.first_lane);
}

std::string sonic_port_alias(const Plan& plan, int port) {
  const PortSlot s = port_slot(plan, port);
  if (s.subports == 1) return fmt::format("etp{}", s.cage);
  return fmt::format("etp{}{}", s.cage, static_cast<char>('a' + s.subport));
}

std::string sonic_port_lanes(const Plan& plan, int port) {
  std::string out;
  for (int l : plan.sw.asic_lanes(port_slot(plan, port)))
    out += (out.empty() ? "" : ",") + std::to_string(l);
  return out;
}

std::string cumulus_port_name(const Plan& plan, int port) {
  const PortSlot s = port_slot(plan, port);
  if (s.subports == 1) return fmt::format("swp{}", s.cage);
  return fmt::format("swp{}s{}", s.cage, s.subport);
}

std::string cumulus_breakout(const Plan& plan) {
  const PortSlot s = port_slot(plan, 1);
  return s.subports == 1 ? "" : fmt::format("{}x", s.subports);
}

}  // namespace gf
