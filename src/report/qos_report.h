// The HTML report's QoS section: the spec's default qos run (qos/engine.h kQosDefaultPattern
// at kQosDefaultBytes, with the PFC, ECN and DCQCN the configurations set) as a table of its
// verdicts and two charts over the run, the RoCE queues of the fullest ports and the share of
// time the most paused ports spent paused. RoCE fabrics in the packet engine's range only.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "plan/plan.h"
#include "qos/engine.h"
#include "topo/fabric.h"

namespace gf {

/// The run the section shows.
struct QosSection {
  std::string traffic, settings;
  QosResult result;  ///< with its trace
};

/// Ports drawn in each chart at most: the fullest queues, the most paused.
constexpr int kQosChartPorts = 6;

/// The default run on `fab`, traced; nullopt (and `why` says why) when the fabric is not RoCE or
/// is out of the engine's range.
std::optional<QosSection> qos_section(const Plan& plan, const Catalog& catalog, const Fabric& fab,
                                      std::string& why);
/// The section's HTML (a <section> with the chart elements chart-qos-queue, chart-qos-pause).
std::string qos_section_html(const QosSection& s);
/// The section's two Vega-Lite charts, added to the page's `specs` under their element ids.
void add_qos_charts(const QosSection& s, nlohmann::json& specs);

}  // namespace gf
