// What a qos run found, as text for a terminal, JSON and a per-port CSV. Pure: strings out.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "qos/collective.h"
#include "qos/engine.h"

namespace gf {

/// What was run, for the report's header.
struct QosRunInfo {
  std::string spec_name, traffic, settings;
  double line_gbps = 0;
};

/// The settings in one line: ECN thresholds, PFC and headroom, DCQCN and its parameters.
std::string qos_settings_line(const QosSettings& s);
/// Ports listed in the text report at most (the JSON and CSV hold every port).
constexpr int kQosTextPorts = 12;
std::string qos_text(const QosRunInfo& info, const QosResult& r);
nlohmann::json qos_json(const QosRunInfo& info, const QosResult& r);
std::string qos_ports_csv(const QosResult& r);

/// simulate --engine packet: the packet-level rows beside the flow-level ones, as "# " lines
/// that follow nccl-tests' table (so the table still parses as nccl-tests output), and as JSON.
std::string packet_sweep_text(const PacketSweep& s);
nlohmann::json packet_sweep_json(const PacketSweep& s);

}  // namespace gf
