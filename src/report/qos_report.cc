#include "report/qos_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "qos/report.h"
#include "report/html_report.h"
#include "units/units.h"

namespace gf {
namespace {

// The ports of a run ordered by `key`, largest first, at most kQosChartPorts of those with a
// positive key.
template <class Key>
std::vector<const QosPortStats*> top_ports(const QosResult& r, Key key) {
  std::vector<const QosPortStats*> p;
  for (const QosPortStats& s : r.ports)
    if (key(s) > 0) p.push_back(&s);
  std::stable_sort(p.begin(), p.end(), [&](auto* a, auto* b) { return key(*a) > key(*b); });
  if (p.size() > static_cast<size_t>(kQosChartPorts)) p.resize(kQosChartPorts);
  return p;
}

std::string port_name(const QosPortStats& p) { return p.device + " -> " + p.peer; }

nlohmann::json line_chart(const std::string& title, const nlohmann::json& values,
                          const std::string& y, const std::string& y_title,
                          const nlohmann::json& y_scale) {
  return {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
          {"width", 760},
          {"height", 260},
          {"title", title},
          {"data", {{"values", values}}},
          {"mark", {{"type", "line"}, {"point", {{"size", 10}}}, {"strokeWidth", 1}}},
          {"encoding",
           {{"x", {{"field", "t_us"}, {"type", "quantitative"}, {"title", "time (us)"}}},
            {"y", {{"field", y}, {"type", "quantitative"}, {"title", y_title}, {"scale", y_scale}}},
            {"color",
             {{"field", "port"},
              {"type", "nominal"},
              {"title", "port (egress)"},
              {"legend", {{"orient", "bottom"}, {"columns", 2}, {"labelLimit", 480}}}}},
            {"tooltip", nlohmann::json::array({{{"field", "port"}},
                                               {{"field", "t_us"}},
                                               {{"field", y}, {"title", y_title}}})}}}};
}

}  // namespace

std::optional<QosSection> qos_section(const Plan& plan, const Catalog& catalog, const Fabric& fab,
                                      std::string& why) {
  if (plan.technology != Technology::kRoce) {
    why = fmt::format("{} has no PFC, ECN or DCQCN to simulate", technology_name(plan.technology));
    return std::nullopt;
  }
  auto traffic = qos_traffic(plan, fab, kQosDefaultPattern, 0, kQosDefaultBytes);
  if (!traffic) {
    why = traffic.errors().front().message;
    return std::nullopt;
  }
  QosSettings s;
  s.trace = true;
  QosSection q;
  q.traffic = traffic->what;
  q.settings = qos_settings_line(s);
  q.result = run_qos(plan, catalog, fab, traffic->flows, s);
  return q;
}

std::string qos_section_html(const QosSection& s) {
  const QosResult& r = s.result;
  const std::string esc_traffic = html_escape(s.traffic);
  std::string h = "<section id=\"qos\"><h2>RoCE QoS at packet level</h2>";
  h += fmt::format(
      "<p>What <code>gpufabric qos SPEC</code> runs by default: {}, on the RoCE data path with "
      "the QoS the configurations set ({}). Simulated {:.3g} ms: {} data packets, {} ECN marks, "
      "{} CNPs, {} PFC pause frames, {} drops; {:.1f} GB/s of payload against the flow-level "
      "model's {:.1f} GB/s.</p><ul>",
      esc_traffic, html_escape(s.settings), r.time_s * 1e3, r.packets, r.ecn_marks, r.cnps,
      r.pause_frames, r.drops, r.throughput_Bps / 1e9, r.fluid_throughput_Bps / 1e9);
  for (const QosVerdict& v : r.verdicts) {
    h += fmt::format("<li><b class=\"{}\">{}</b> {}: {}", v.pass ? "pass" : "fail",
                     v.pass ? "PASS" : "FAIL", html_escape(v.name), html_escape(v.detail));
    if (!v.pass && !v.setting.empty()) h += " <i>Change:</i> " + html_escape(v.setting);
    h += "</li>";
  }
  h += "</ul><div class=\"chart\" id=\"chart-qos-queue\"></div>"
       "<div class=\"chart\" id=\"chart-qos-pause\"></div>"
       "<p><code>qos -o DIR</code> writes every port's counters (ports.csv).</p></section>";
  return h;
}

void add_qos_charts(const QosSection& s, nlohmann::json& specs) {
  using nlohmann::json;
  const QosResult& r = s.result;
  const QosTrace& tr = r.trace;
  std::unordered_map<int, size_t> column;  // link -> its column in the trace
  for (size_t i = 0; i < tr.links.size(); ++i) column[tr.links[i]] = i;
  const size_t n = tr.links.size();
  auto series = [&](const std::vector<const QosPortStats*>& ports, bool paused_share) {
    json values = json::array();
    for (const QosPortStats* p : ports) {
      const auto c = column.find(p->link);
      if (c == column.end()) continue;
      for (size_t t = 0; t < tr.t_s.size(); ++t) {
        const double t_us = tr.t_s[t] * 1e6;
        if (!paused_share) {
          values.push_back({{"port", port_name(*p)},
                            {"t_us", t_us},
                            {"queue_kib", tr.queue[t * n + c->second] / 1024.0}});
        } else if (t > 0) {
          // The share of the interval since the previous sample that the egress was paused.
          const double dt = t_us - tr.t_s[t - 1] * 1e6;
          const double dp = tr.paused_us[t * n + c->second] - tr.paused_us[(t - 1) * n + c->second];
          values.push_back({{"port", port_name(*p)},
                            {"t_us", t_us},
                            {"paused_pct", dt > 0 ? std::clamp(100 * dp / dt, 0.0, 100.0) : 0.0}});
        }
      }
    }
    return values;
  };
  auto by_queue = top_ports(r, [](const QosPortStats& p) { return p.peak_queue_bytes; });
  specs["chart-qos-queue"] = line_chart(
      fmt::format("RoCE queue (priority {}) of the {} fullest ports", kRocePriority,
                  by_queue.size()),
      series(by_queue, false), "queue_kib", "peak queue in the interval (KiB)", json::object());
  auto by_pause = top_ports(r, [](const QosPortStats& p) { return p.paused_s; });
  std::string title =
      fmt::format("Share of time paused by PFC: the {} most paused ports", by_pause.size());
  if (by_pause.empty()) {
    // Nothing paused: the fullest ports, at 0, say so rather than an empty chart.
    by_pause = by_queue;
    title = "No PFC pause in this run: the fullest ports, never paused";
  }
  specs["chart-qos-pause"] =
      line_chart(title, series(by_pause, true), "paused_pct", "paused (% of the interval)",
                 {{"domain", json::array({0, 100})}});
}

}  // namespace gf
