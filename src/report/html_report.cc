#include "report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "report/step_report.h"
#include "report/step_trace.h"
#include "units/units.h"

namespace gf {

extern const char* const kJs_vega;
extern const char* const kJs_vega_lite;
extern const char* const kJs_vega_embed;

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

// JSON inside a <script> block: "</" must not close it.
std::string script_json(const nlohmann::json& j) {
  std::string s = j.dump();
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') {
      o += "<\\/";
      ++i;
    } else {
      o += s[i];
    }
  }
  return o;
}

// Diagram limits: how many boxes a tier shows before it summarises the rest.
constexpr int kMaxBoxesPerRow = 16;
constexpr int kMaxNodesDrawn = 8;

}  // namespace

std::string topology_svg(const Plan& p) {
  const Topology& t = p.topo;
  struct Row {
    std::string label, cls, detail;
    int count;
  };
  std::vector<Row> rows;
  const int planes = t.planes;
  if (t.kind == TopologyKind::kClos3)
    rows.push_back({"core", "core",
                    planes > 1 ? fmt::format("{} per plane", p.core_total / planes) : "",
                    p.core_total / planes});
  if (t.kind == TopologyKind::kDragonfly)
    rows.push_back(
        {"group spines", "spine",
         fmt::format("{} groups, {} global links per pair", t.pods, t.global_links_per_pair),
         p.spine_total / planes});
  else if (t.kind != TopologyKind::kSingle)
    rows.push_back({t.kind == TopologyKind::kClos3 ? "pod spines" : "spines", "spine",
                    t.kind == TopologyKind::kClos3
                        ? fmt::format("{} pods × {}", t.pods, t.spines_per_pod)
                        : "",
                    p.spine_total / planes});
  // One scalable unit expanded: its rail leaves and its nodes.
  rows.push_back({t.kind == TopologyKind::kSingle ? "switch" : "unit 1 leaves", "leaf",
                  t.rail_optimized && t.kind != TopologyKind::kSingle ? "one leaf per rail" : "",
                  t.kind == TopologyKind::kSingle ? 1 : t.leaves_per_unit});
  const int nodes = std::min(t.nodes_per_unit > 0 ? t.nodes_per_unit : p.nodes, p.nodes);
  rows.push_back(
      {"unit 1 nodes", "node",
       fmt::format("{} nodes × {} GPUs, {} NICs each", nodes, p.gpus_per_node, p.nics_per_node),
       nodes});

  // Layout: label column, boxes, then the count text; links drawn first, under the boxes.
  constexpr int kWidth = 1100, kLabelW = 150, kTextW = 330, kRowH = 70, kBoxH = 26, kGap = 6;
  std::string links, boxes;
  std::vector<double> prev_centres;
  int y = 30;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const int cap = row.cls == "node" ? kMaxNodesDrawn : kMaxBoxesPerRow;
    const int shown = std::min(row.count, cap);
    const int box_w = std::min(60, (kWidth - kLabelW - kTextW) / std::max(1, shown) - kGap);
    std::vector<double> centres;
    boxes +=
        fmt::format("<text x=\"10\" y=\"{}\" class=\"tier\">{}</text>", y + 18, esc(row.label));
    for (int i = 0; i < shown; ++i) {
      const int x = kLabelW + i * (box_w + kGap);
      centres.push_back(x + box_w / 2.0);
      boxes +=
          fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\"/>",
                      row.cls, x, y, box_w, kBoxH);
    }
    boxes += fmt::format(
        "<text x=\"{}\" y=\"{}\" class=\"count\">{}{}</text>", kLabelW + shown * (box_w + kGap) + 8,
        y + 18,
        row.count > shown ? fmt::format("… {} in all", row.count) : fmt::format("{}", row.count),
        row.detail.empty() ? "" : " · " + esc(row.detail));
    // Each box links to every box of the tier above (full mesh within a unit and its spines;
    // a node has one NIC per rail leaf).
    for (double a : centres)
      for (double b : prev_centres)
        links += fmt::format("<line x1=\"{:.0f}\" y1=\"{}\" x2=\"{:.0f}\" y2=\"{}\"/>", a, y, b,
                             y - kRowH + kBoxH);
    prev_centres = std::move(centres);
    y += kRowH;
  }
  if (t.units > 1) {
    boxes += fmt::format(
        "<text x=\"{}\" y=\"{}\" class=\"more\">+ {} more scalable units like "
        "unit 1 ({} leaves, {} nodes)</text>",
        kLabelW, y, t.units - 1, (t.units - 1) * t.leaves_per_unit, p.nodes - nodes);
    y += 30;
  }
  if (planes > 1) {
    boxes += fmt::format(
        "<text x=\"{}\" y=\"{}\" class=\"more\">× {} planes: every tier above "
        "is built {} times; each NIC port joins one plane</text>",
        kLabelW, y, planes, planes);
    y += 30;
  }
  // The other networks (spec networks:), side by side under the compute fabric: per network its
  // spines and leaves (or its one tier), drawn apart from the compute fabric as they are built.
  if (p.networks && !p.networks->nets.empty()) {
    const auto& nets = p.networks->nets;
    y += 10;
    boxes += fmt::format("<text x=\"10\" y=\"{}\" class=\"tier\">other networks ({})</text>", y + 4,
                         p.networks->isolation == Isolation::kVlan
                             ? "isolation: vlan, storage on the compute fabric's spines"
                             : "isolation: physical, switches of their own");
    y += 20;
    const int col_w = (kWidth - kLabelW) / static_cast<int>(nets.size());
    int bottom = y;
    for (size_t n = 0; n < nets.size(); ++n) {
      const NetworkPlan& net = nets[n];
      const int x0 = kLabelW + static_cast<int>(n) * col_w;
      int yy = y;
      boxes += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tier\">{}</text>", x0, yy + 12,
                           esc(network_kind_name(net.kind)));
      yy += 20;
      std::vector<double> upper;
      auto tier_row = [&](int count, const std::string& what, const std::string& sw) {
        const int shown = std::min(count, 8);
        const int bw = std::min(30, (col_w - 20) / std::max(1, shown) - 4);
        std::vector<double> centres;
        for (int i = 0; i < shown; ++i) {
          const int x = x0 + i * (bw + 4);
          centres.push_back(x + bw / 2.0);
          boxes += fmt::format(
              "<rect class=\"net{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"18\" rx=\"3\"/>", n, x,
              yy, bw);
        }
        for (double a : centres)
          for (double b : upper)
            links += fmt::format("<line x1=\"{:.0f}\" y1=\"{}\" x2=\"{:.0f}\" y2=\"{}\"/>", a, yy,
                                 b, yy - 28);
        upper = centres;
        boxes += fmt::format("<text x=\"{}\" y=\"{}\" class=\"count\">{} {} · {}</text>", x0,
                             yy + 32, count, esc(what), esc(sw));
        yy += 46;
      };
      if (net.spines > 0) tier_row(net.spines, "spines", net.spine_sw.id);
      tier_row(net.leaves, net.tiers > 1 ? "leaves" : "switches", net.sw.id);
      boxes +=
          fmt::format("<text x=\"{}\" y=\"{}\" class=\"count\">{} host ports at {:g}G{}</text>", x0,
                      yy, net.node_ports + net.other_ports, net.port_gbps,
                      net.uplinks_to_compute  ? " · uplinks to the compute spines"
                      : net.uplinks_to_inband ? " · uplinks into the in-band leaves"
                                              : "");
      bottom = std::max(bottom, yy + 10);
    }
    y = bottom;
  }
  return fmt::format(
      "<svg id=\"topology\" xmlns=\"http://www.w3.org/2000/svg\" width=\"100%\" "
      "style=\"max-width:{}px\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"fabric topology\">"
      "<style>.tier{{font:13px sans-serif;fill:#333}}.count,.more{{font:12px sans-serif;"
      "fill:#555}}.core{{fill:#6a51a3}}.spine{{fill:#3182bd}}.leaf{{fill:#31a354}}"
      ".node{{fill:#fd8d3c}}.net0{{fill:#756bb1}}.net1{{fill:#636363}}.net2{{fill:#969696}}"
      "line{{stroke:#bbb;stroke-width:0.6}}</style><g>{}</g><g>{}</g></svg>",
      kWidth, kWidth, y + 10, links, boxes);
}

std::string html_escape(const std::string& s) { return esc(s); }

std::string chart_page(const std::string& title, const std::string& body,
                       const nlohmann::json& specs) {
  std::string html = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">";
  html += "<title>" + esc(title) + "</title>";
  html +=
      "<style>body{font-family:sans-serif;max-width:1150px;margin:2em auto;color:#222}"
      "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px}"
      "td.n{text-align:right}.pass{color:#2a7}.fail{color:#c33}.warn{color:#b60}"
      "section{margin-bottom:2em}</style>";
  // Error capture first, so that an error while the libraries load is seen too; the marks sit on
  // <html>, which exists before <body>.
  html +=
      "<script>function gfErr(m){var d=document.documentElement.dataset;"
      "d.errors=(d.errors||'')+m+';';}"
      "window.addEventListener('error',function(e){gfErr(e.message);});"
      "window.addEventListener('unhandledrejection',function(e){gfErr(e.reason);});"
      "var gfConsoleError=console.error;console.error=function(){gfErr([].join.call(arguments,' "
      "'));"
      "gfConsoleError.apply(console,arguments);};</script>";
  // The libraries, inlined: nothing is fetched.
  html += "<script>" + std::string(kJs_vega) + "</script>";
  html += "<script>" + std::string(kJs_vega_lite) + "</script>";
  html += "<script>" + std::string(kJs_vega_embed) + "</script>";
  html += "</head><body>" + body;
  // The page reports on itself for the browser test: errors (uncaught, rejected, console.error),
  // how many charts rendered, and the data marks (points, bars) actually drawn in each.
  html += "<script>var B=document.body;var specs=" + script_json(specs) +
          ";var ids=Object.keys(specs);"
          "Promise.all(ids.map(function(id){"
          "return vegaEmbed('#'+id,specs[id],{renderer:'svg',actions:false});}))"
          ".then(function(){var total=0,empty=[];ids.forEach(function(id){"
          // Data marks only (role-mark), not the legend's symbols.
          "var n=document.querySelectorAll('#'+id+' .mark-symbol.role-mark path, '+"
          "'#'+id+' .mark-rect.role-mark path').length;"
          "total+=n;if(n===0)empty.push(id);});"
          "B.dataset.chartsRendered=String(ids.length);B.dataset.chartPoints=String(total);"
          "B.dataset.emptyCharts=empty.join(',');})"
          ".catch(function(e){gfErr(e);});"
          "</script></body></html>";
  return html;
}

namespace {

// The most spans the report's timeline draws: a browser keeps a chart of a few thousand marks
// responsive; step.trace.json keeps them all.
constexpr size_t kTimelineMaxSpans = 4000;

// A heat map of link utilisation per tier: links per (tier, utilisation bin).
nlohmann::json heat_spec(const std::vector<TierHeat>& heat, const char* x_title) {
  using json = nlohmann::json;
  json cells = json::array();
  for (const auto& h : heat)
    for (int b = 0; b < kUtilBins; ++b)
      cells.push_back(
          {{"tier", link_tier_key(h.cls)},
           {"utilisation", fmt::format("{}-{}%", 100 * b / kUtilBins, 100 * (b + 1) / kUtilBins)},
           {"links", h.bins[static_cast<size_t>(b)]},
           {"busy_of_all", fmt::format("{} of {}", h.busy, h.links)}});
  json order = json::array();
  for (int b = 0; b < kUtilBins; ++b)
    order.push_back(fmt::format("{}-{}%", 100 * b / kUtilBins, 100 * (b + 1) / kUtilBins));
  return {
      {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
      {"width", 600},
      {"data", {{"values", cells}}},
      {"mark", "rect"},
      {"encoding",
       {{"x", {{"field", "utilisation"}, {"type", "ordinal"}, {"sort", order}, {"title", x_title}}},
        {"y", {{"field", "tier"}, {"type", "nominal"}, {"sort", nullptr}, {"title", "tier"}}},
        {"color",
         {{"field", "links"},
          {"type", "quantitative"},
          {"scale", {{"type", "symlog"}, {"scheme", "orangered"}}},
          {"title", "links"}}},
        {"tooltip", json::array({{{"field", "tier"}},
                                 {{"field", "utilisation"}},
                                 {{"field", "links"}},
                                 {{"field", "busy_of_all"}, {"title", "busy links"}}})}}}};
}

// The step's trace (report/step_trace.h) as a Vega-Lite Gantt chart: a row per stage and stream,
// a bar per span. Stages are drawn in order until kTimelineMaxSpans; the title says when some
// are left out.
nlohmann::json step_timeline_spec(const StepResult& r) {
  using json = nlohmann::json;
  const json trace = step_trace(r);
  std::map<long long, std::string> process;
  std::map<std::pair<long long, long long>, std::string> thread;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "M" || !e.contains("args") || !e["args"].contains("name")) continue;
    const long long pid = e.value("pid", 0LL);
    if (e.value("name", "") == "process_name") process[pid] = e["args"]["name"];
    if (e.value("name", "") == "thread_name")
      thread[{pid, e.value("tid", 0LL)}] = e["args"]["name"];
  }
  json rows = json::array();
  std::set<long long> drawn;
  size_t total_stages = process.size();
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    const long long pid = e.value("pid", 0LL);
    if (rows.size() >= kTimelineMaxSpans && !drawn.count(pid)) continue;
    drawn.insert(pid);
    const double ts = e.value("ts", 0.0), dur = e.value("dur", 0.0);
    rows.push_back({{"track", process[pid] + " / " + thread[{pid, e.value("tid", 0LL)}]},
                    {"span", e.value("name", "")},
                    {"kind", e.value("cat", "")},
                    {"start_ms", ts / 1000},
                    {"end_ms", (ts + dur) / 1000}});
  }
  const std::string title =
      drawn.size() < total_stages
          ? fmt::format("the first {} of {} pipeline stages", drawn.size(), total_stages)
          : std::string("every pipeline stage");
  return {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
          {"width", 700},
          {"title", title},
          {"data", {{"values", rows}}},
          {"mark", "bar"},
          {"encoding",
           {{"y", {{"field", "track"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
            {"x", {{"field", "start_ms"}, {"type", "quantitative"}, {"title", "ms into the step"}}},
            {"x2", {{"field", "end_ms"}}},
            {"color", {{"field", "kind"}, {"type", "nominal"}}},
            {"tooltip", json::array({{{"field", "span"}},
                                     {{"field", "track"}},
                                     {{"field", "start_ms"}},
                                     {{"field", "end_ms"}}})}}}};
}

}  // namespace

std::string report_html(const ReportInputs& in) {
  using nlohmann::json;
  const Plan& p = *in.plan;
  // Verdict first: constraints of the step, or the plan alone.
  std::string verdict = "PLAN";
  bool pass = true;
  // The step's constraints and its memory, as `step` judges them (exit 1 on either).
  if (in.step) {
    for (const auto& c : in.step->constraints) pass = pass && c.pass;
    pass = pass && in.step->memory.fits;
    verdict = pass ? "PASS" : "FAIL";
  }

  std::string body;
  body += fmt::format("<h1>Fabric report: {}</h1>", esc(p.name));
  body += "<section id=\"answer\"><h2>The answer</h2><ul>";
  body += fmt::format(
      "<li><b>Build</b>: {} × {} {} GPUs ({} GPUs), {} × {} per node, <b>{}</b>, "
      "{} with {} × {} switches.</li>",
      p.nodes, p.gpus_per_node, esc(p.gpu.id), p.gpus, p.nics_per_node, esc(p.nic.id),
      technology_title(p.technology), topology_kind_name(p.topo.kind), p.switch_total,
      esc(p.sw.id));
  body += fmt::format(
      "<li><b>Network capex</b> {} ({} per GPU, {:.1f}% of the cluster's {}); "
      "network power {}.</li>",
      units::format_usd(p.bom.network_capex_usd), units::format_usd(p.bom.network_usd_per_gpu),
      100 * p.bom.network_share, units::format_usd(p.bom.capex_usd),
      units::format_power(p.bom.network_power_w));
  body += fmt::format(
      "<li><b>Predicted all_reduce</b> bus bandwidth at {} ({:.0f} bytes): {:.0f} "
      "GB/s ({}).</li>",
      units::format_bytes(in.probe_bytes), in.probe_bytes, in.predicted_busbw_gbs,
      esc(in.predicted_algorithm));
  if (in.step) {
    body += fmt::format(
        "<li><b>Training step</b> {}: communication {:.1f}% (limit {:.0f}%), GPU utilisation "
        "{:.1f}% (floor {:.0f}%), MFU {}. Verdict: <b class=\"{}\">{}</b>.</li>",
        units::format_seconds(in.step->step_time_s), 100 * in.step->comm_fraction,
        100 * in.step->constraints[0].limit, 100 * in.step->gpu_utilization,
        100 * in.step->constraints[1].limit, share_text(in.step->mfu, "unknown"),
        pass ? "pass" : "fail", verdict);
    if (!in.step->memory.stages.empty()) {
      const StepMemory& m = in.step->memory;
      body += fmt::format(
          "<li><b>Memory per GPU</b>: {:.1f} GiB needed (pipeline stage {}), {:.1f} GiB of HBM: "
          "<b class=\"{}\">{}</b>.</li>",
          m.peak().total_bytes() / units::kBytesPerGiB, m.peak().stage + 1,
          m.hbm_bytes / units::kBytesPerGiB, m.fits ? "pass" : "fail",
          m.fits ? "fits" : fmt::format("does not fit: the layout cannot run ({})", kMemoryRemedy));
    }
    if (in.step->time_to_train_s > 0)
      body += fmt::format("<li><b>Time and cost to train</b>: {} and {}.</li>",
                          units::format_seconds(in.step->time_to_train_s),
                          units::format_usd(in.step->cost_to_train_usd));
  }
  if (in.measured_check) {
    // The --measured runs, judged as gpufabric check judges them (1 GiB and up, its default
    // tolerance): the overlay alone showed them without a verdict.
    int judged = 0, below = 0, above = 0, wrong = 0;
    for (const auto& r : in.measured_check->rows) {
      if (!r.judged) continue;
      ++judged;
      below += r.mark == CheckMark::kBelow;
      above += r.mark == CheckMark::kAbove;
      wrong += r.mark == CheckMark::kWrong;
    }
    const CheckVerdict v = in.measured_check->verdict;
    body += fmt::format(
        "<li><b>Measured runs</b> (--measured), judged as <code>gpufabric check</code> judges "
        "them: {} size{} of 1 GiB or more, {} more than {:.0f}% below the simulated bus "
        "bandwidth, {} above what the links carry, {} with wrong results. Verdict: <b "
        "class=\"{}\">{}</b>.</li>",
        judged, judged == 1 ? "" : "s", below, 100 * kDefaultBusbwTolerance, above, wrong,
        v == CheckVerdict::kFail ? "fail" : "pass",
        v == CheckVerdict::kPass   ? "PASS"
        : v == CheckVerdict::kFail ? "FAIL"
                                   : "NOTHING JUDGED (no size of 1 GiB or more)");
  }
  body += fmt::format("<li><b>Why {}</b>: {}</li></ul></section>",
                      p.technology == Technology::kInfiniband ? "InfiniBand" : "RoCE",
                      esc(p.technology_reason));
  body += "<section><h2>Topology</h2>" + topology_svg(p) + "</section>";
  body +=
      "<section><h2>Bill of materials</h2><table><tr><th>category</th><th>item</th><th>role</th>"
      "<th>qty</th><th>unit</th><th>total</th><th>power</th><th>source</th></tr>";
  for (const auto& it : p.bom.items)
    body += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">"
        "{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
        esc(it.category), esc(it.id), esc(it.role), it.qty, units::format_usd(it.unit_usd),
        units::format_usd(it.unit_usd * it.qty), units::format_power(it.unit_w * it.qty),
        esc(it.source));
  body += "</table></section>";
  body +=
      "<section><h2>Bus bandwidth against message size</h2><div class=\"chart\" "
      "id=\"chart-busbw\"></div></section>";
  if (!in.link_heat.empty())
    body += fmt::format(
        "<section><h2>Link utilisation per tier</h2><p>{}: how many directed links of each tier "
        "run at each utilisation, time-averaged over the collective (<code>simulate --links "
        "FILE.csv</code> lists every link).</p><div class=\"chart\" id=\"chart-links\"></div>"
        "</section>",
        esc(in.link_heat_label));
  if (in.qos) body += qos_section_html(*in.qos);
  if (in.step) {
    body += "<section><h2>Training step</h2><div class=\"chart\" id=\"chart-step\"></div>";
    body +=
        "<h3>One step as a timeline</h3><p>The same schedule as <code>step -o DIR</code>'s "
        "step.trace.json (open that in Perfetto for every stage): each pipeline stage's forwards "
        "and backwards in Megatron-LM's order, the exposed communication and the bubble on "
        "their own tracks.</p><div class=\"chart\" id=\"chart-timeline\"></div>";
    if (!in.sensitivity.empty()) body += "<div class=\"chart\" id=\"chart-sensitivity\"></div>";
    body += "</section>";
  }
  body += in.jobs_html;
  if (!in.jobs_heat.empty())
    body += fmt::format(
        "<section><h2>Link utilisation per tier, the jobs together</h2><p>{}: how many directed "
        "links of each tier run at each utilisation, time-averaged over the jobs' traffic "
        "(<code>jobs --links FILE.csv</code> lists every link).</p><div class=\"chart\" "
        "id=\"chart-jobs-links\"></div></section>",
        esc(in.jobs_heat_label));
  if (!in.what_if.empty()) {
    body +=
        "<section><h2>What if</h2><table><tr><th>scenario</th><th>all_reduce busbw</th>"
        "<th>alltoall busbw</th><th>note</th></tr>";
    auto bw = [](double gbs) { return gbs > 0 ? fmt::format("{:.0f} GB/s", gbs) : "cannot run"; };
    for (const auto& w : in.what_if)
      body += fmt::format(
          "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
          esc(w.scenario), bw(w.busbw_gbs), bw(w.alltoall_busbw_gbs), esc(w.note));
    body += "</table></section>";
  }
  body += "<section><h2>Warnings and notes</h2><ul>";
  for (const auto& w : p.warnings) body += "<li class=\"warn\">" + esc(w) + "</li>";
  for (const auto& n : p.notes) body += "<li>" + esc(n) + "</li>";
  if (!in.qos_absent.empty()) body += "<li>No RoCE QoS section: " + esc(in.qos_absent) + "</li>";
  if (p.warnings.empty() && p.notes.empty() && in.qos_absent.empty()) body += "<li>none</li>";
  body += "</ul></section>";
  if (!in.config_links.empty()) {
    body += "<section><h2>Configurations</h2><ul>";
    for (const auto& l : in.config_lines) body += "<li>" + esc(l) + "</li>";
    body += "</ul><p>";
    for (const auto& f : in.config_links) body += fmt::format("<a href=\"{0}\">{0}</a> ", esc(f));
    body += "</p></section>";
  }
  body += "<section><h2>Files</h2><ul>";
  for (const auto& f : in.files) body += fmt::format("<li><a href=\"{0}\">{0}</a></li>", esc(f));
  body += "</ul></section>";
  if (!in.gpufabric_version.empty())
    body += fmt::format("<footer><p>Made by gpufabric {}.</p></footer>", esc(in.gpufabric_version));

  // Charts.
  json points = json::array();
  for (const auto& s : in.busbw)
    for (const auto& [b, v] : s.points)
      // A measured 0.00 GB/s at 8 bytes is a real reading and is drawn; sizes must be > 0 for
      // the log axis.
      if (b > 0 && v >= 0)
        points.push_back({{"bytes", b},
                          {"busbw", v},
                          {"series", s.name},
                          {"source", s.measured ? "measured" : "simulated"}});
  json specs = json::object();
  specs["chart-busbw"] = {
      {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
      {"width", 760},
      {"height", 360},
      {"data", {{"values", points}}},
      {"mark", {{"type", "line"}, {"point", true}}},
      {"encoding",
       {{"x",
         {{"field", "bytes"},
          {"type", "quantitative"},
          {"scale", {{"type", "log"}, {"base", 2}}},
          {"title", "message size"},
          {"axis",
           {{"labelOverlap", true},
            // Binary units, as nccl-tests sizes are powers of two.
            {"labelExpr",
             "datum.value >= 1073741824 ? format(datum.value / 1073741824, '~g') + ' GiB' "
             ": datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + ' MiB' "
             ": datum.value >= 1024 ? format(datum.value / 1024, '~g') + ' KiB' "
             ": datum.value + ' B'"}}}}},
        {"y", {{"field", "busbw"}, {"type", "quantitative"}, {"title", "bus bandwidth (GB/s)"}}},
        {"color",
         {{"field", "series"},
          {"type", "nominal"},
          {"title", "algorithm / run"},
          {"legend", {{"orient", "bottom"}, {"columns", 2}, {"labelLimit", 480}}}}},
        {"strokeDash",
         {{"field", "source"},
          {"type", "nominal"},
          {"title", "source"},
          {"scale", {{"domain", json::array({"simulated", "measured"})}}}}},
        {"tooltip",
         json::array({{{"field", "series"}}, {{"field", "bytes"}}, {{"field", "busbw"}}})}}}};
  if (!in.link_heat.empty())
    specs["chart-links"] = heat_spec(in.link_heat, "mean utilisation over the collective");
  if (!in.jobs_heat.empty())
    specs["chart-jobs-links"] = heat_spec(in.jobs_heat, "mean utilisation over the jobs' traffic");
  if (in.step) {
    json bars = json::array();
    bars.push_back({{"kind", "compute"}, {"seconds", in.step->compute_s}});
    if (in.step->bubble_s > 0)
      bars.push_back({{"kind", "pipeline bubble"}, {"seconds", in.step->bubble_s}});
    for (const auto& c : in.step->comms)
      bars.push_back({{"kind", c.kind + " (exposed)"}, {"seconds", c.exposed_s}});
    specs["chart-step"] = {
        {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
        {"width", 700},
        {"data", {{"values", bars}}},
        {"mark", "bar"},
        {"encoding",
         {{"y",
           {{"field", "kind"},
            {"type", "nominal"},
            {"sort", nullptr},
            {"title", "part of the step"}}},
          {"x", {{"field", "seconds"}, {"type", "quantitative"}, {"title", "seconds per step"}}}}}};
    specs["chart-timeline"] = step_timeline_spec(*in.step);
    if (!in.sensitivity.empty()) {
      json rows = json::array();
      for (const auto& s : in.sensitivity)
        rows.push_back({{"scenario", s.label}, {"seconds", s.result.step_time_s}});
      specs["chart-sensitivity"] = {
          {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
          {"width", 700},
          {"title", "Do we need faster NICs? Step time per scenario"},
          {"data", {{"values", rows}}},
          {"mark", "bar"},
          {"encoding",
           {{"y", {{"field", "scenario"}, {"type", "nominal"}, {"sort", nullptr}}},
            {"x", {{"field", "seconds"}, {"type", "quantitative"}, {"title", "step time (s)"}}}}}};
    }
  }
  if (in.qos) add_qos_charts(*in.qos, specs);
  return chart_page(fmt::format("gpufabric report: {}", p.name), body, specs);
}

}  // namespace gf
