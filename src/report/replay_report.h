// Replay results as text and JSON (the README's `replay` contract).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/replay.h"

namespace gf {

/// What was replayed where: the traces, the fabric, and an optional scenario beside it.
struct ReplayReport {
  std::vector<TracedRank> const* traces = nullptr;  ///< for their files and formats
  std::string spec_name, fabric;                    ///< "seed-70b-1024", "infiniband clos2, ..."
  ReplayResult planned;
  std::optional<ReplayResult> scenario;  ///< with --nic / --fail / --degrade
  std::vector<std::string> changes;      ///< what the scenario changed
  /// Why the traced job cannot run in the scenario (a group cut apart), where it cannot: the
  /// recorded fabric's replay is still shown; empty otherwise.
  std::string scenario_cannot_run;
  /// The spec's alternatives (--oversubscription), each a row beside this fabric's.
  std::vector<ReplayAlternative> alternatives;
  std::string shape;  ///< this fabric in the alternatives' words (fabric_shape)
};

nlohmann::json replay_json(const ReplayReport& r);
std::string replay_text(const ReplayReport& r);

}  // namespace gf
