#include "report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "config/config_set.h"
#include "config/frr.h"
#include "config/hosts.h"
#include "config/opensm.h"
#include "qos/report.h"
#include "report/jobs_report.h"
#include "report/plan_report.h"
#include "report/sim_report.h"
#include "report/step_report.h"
#include "sim/collective.h"
#include "sim/jobs.h"
#include "sim/step.h"
#include "topo/fabric.h"
#include "units/units.h"
#include "verify/trace_readers.h"

namespace gf {
namespace {

// Size step (×) on the busbw chart and in simulate.json (nccl-tests' -f 2, as `simulate` does).
constexpr double kSizeFactor = 2;

// One curve per available algorithm, each at the protocol NCCL's tuner picks for it (what
// `simulate --algo` prints and NCCL_ALGO alone runs).
void add_algorithm_curves(const CollectiveModel& model, const std::vector<double>& sizes,
                          std::vector<BusbwSeries>& out) {
  for (const auto& a : model.algorithms()) {
    if (!a.available) continue;
    BusbwSeries series{std::string(algorithm_name(a.algorithm)) + " (simulated)", {}};
    for (double s : sizes) {
      const double best = model.time_us(a.algorithm, s);
      if (best < 1e299)
        series.points.push_back(
            {s, s / (best * 1e-6) / 1e9 * bus_factor(Op::kAllReduce, model.ranks())});
    }
    out.push_back(series);
  }
}

// What-if rows: as planned, the first spine fails, the first leaf fails.
std::vector<ReportWhatIf> failure_rows(const Plan& plan, const Fabric& fabric, const SimOptions& o,
                                       double planned_busbw) {
  // A collective's bus bandwidth at the quoted size on `f` (0: it cannot run there).
  auto busbw_on = [&](const Fabric& f, const SimOptions& with) {
    auto m = CollectiveModel::build(f, plan, with);
    return m ? m->at(kQuotedBytes).busbw_gbs : 0.0;
  };
  SimOptions a2a = o;
  a2a.op = Op::kAlltoall;
  auto probe_on = [&](const Fabric& f) { return busbw_on(f, o); };
  auto alltoall_on = [&](const Fabric& f) { return busbw_on(f, a2a); };
  std::vector<ReportWhatIf> rows{{"as planned", planned_busbw, "", alltoall_on(fabric)}};
  if (plan.topo.kind != TopologyKind::kSingle && plan.spine_total > 0) {
    Fabric f = fabric;
    f.fail_vertex(f.spine_vertex(0, 0));
    const double ar = probe_on(f), at = alltoall_on(f);
    // The ring keeps to its rails; the alltoall's bytes cross the top tier and lose the spine's
    // share: say what each loses.
    auto change = [](double now, double before) -> std::string {
      if (now <= 0) return "cannot run";
      const double pct = before > 0 ? 100 * (now / before - 1) : 0;
      return std::abs(pct) < 0.5 ? "unchanged" : fmt::format("{:+.0f}%", pct);
    };
    rows.push_back(
        {"one spine fails", ar,
         fmt::format("the fabric routes around it: all_reduce {}, alltoall {}",
                     change(ar, planned_busbw), change(at, rows.front().alltoall_busbw_gbs)),
         at});
  }
  Fabric f = fabric;
  f.fail_vertex(f.leaf_vertex(0, 0));
  const double bw = probe_on(f);
  // What the failure leaves the nodes decides what to do: a single switch is every node's only
  // path; a top-of-rack leaf holds its nodes' every NIC; a rail leaf one NIC of each.
  const bool single = plan.topo.kind == TopologyKind::kSingle;
  const char* why = bw > 0   ? "nodes keep a path (another plane)"
                    : single ? "the fabric's only switch: every node is cut off, and nothing runs "
                               "until it is replaced (a single point of failure)"
                    : !plan.topo.rail_optimized
                        ? "its nodes have no NIC left: restart the job without them, or wait for "
                          "the leaf (gpufabric what-if prices it)"
                        : "its nodes are cut off from a rail: restart the job with their ports "
                          "left out, or without them (gpufabric what-if prices both)";
  rows.push_back({single ? "the switch fails" : "one leaf fails", bw, why, alltoall_on(f)});
  return rows;
}

// Each measured run, and once per (collective, nodes) the simulated curve of that job.
Result<std::vector<BusbwSeries>> measured_curves(const Plan& plan, const Fabric& fabric,
                                                 const std::vector<MeasuredRun>& measured,
                                                 const std::vector<double>& sizes) {
  std::vector<BusbwSeries> out;
  std::vector<std::pair<std::string, int>> drawn{{"all_reduce", plan.nodes}};
  for (const auto& m : measured) {
    const std::string op_s = m.op.empty() ? "all_reduce" : m.op;
    auto op = parse_op(op_s);
    if (!op)
      return Diagnostic::in_file(m.file, "--measured", fmt::format("unknown collective '{}'", op_s),
                                 "the report overlays nccl-tests runs of a known collective");
    if (m.nodes > plan.nodes)
      return Diagnostic::in_file(
          m.file, "--measured",
          fmt::format("the run used {} nodes; the plan has {}", m.nodes, plan.nodes),
          "overlay runs of this cluster");
    const std::pair<std::string, int> job{op_s, m.nodes};
    if (std::find(drawn.begin(), drawn.end(), job) == drawn.end()) {
      drawn.push_back(job);
      SimOptions o;
      o.op = *op;
      o.nodes = m.nodes;
      auto model = CollectiveModel::build(fabric, plan, o);
      if (!model) return model.errors();
      BusbwSeries sim{fmt::format("{} on {} nodes (simulated)", op_s, m.nodes), {}};
      for (double s : sizes) sim.points.push_back({s, model->at(s).busbw_gbs});
      out.push_back(sim);
    }
    out.push_back(m.series);
  }
  return out;
}

}  // namespace

MeasuredRun measured_run(const NcclTestsRun& run, const std::string& file, int gpus_per_node) {
  MeasuredRun m;
  m.file = file;
  m.op = run.collective;
  m.nodes = nodes_of(run, gpus_per_node);
  const std::string base = file.substr(file.find_last_of('/') + 1);
  m.series.name = fmt::format("measured: {} ({} nodes)", base, m.nodes);
  m.series.measured = true;
  for (const auto& r : run.rows) m.series.points.push_back({r.bytes, r.busbw_gbs});
  return m;
}

namespace {

// configs/ of the report and the lines that say what it holds.
Result<std::vector<OutputFile>> report_configs(const PlannedSpec& planned, ReportInputs& in) {
  auto set = config_files(planned, {});
  if (!set) return set.errors();
  std::vector<OutputFile> files;
  for (auto& [name, text] : set->files) files.push_back({"configs/" + name, std::move(text)});
  for (const auto& f : set->folders) in.config_links.push_back("configs/" + f);
  const Plan& plan = planned.plan;
  if (plan.technology == Technology::kInfiniband) {
    in.config_lines.push_back(fmt::format(
        "InfiniBand: the subnet manager (OpenSM, routing engine {}) configures the fabric; "
        "opensm/ holds its configuration and partitions, cabling.csv the cabling plan",
        opensm_routing_engine(plan)));
    return files;
  }
  const AddressPlan& a = set->addresses;
  long long asn_lo = 0, asn_hi = 0;
  std::set<long long> asns;
  for (const auto& sw : a.switches) asns.insert(sw.asn);
  if (!asns.empty()) asn_lo = *asns.begin(), asn_hi = *asns.rbegin();
  in.config_lines.push_back(fmt::format(
      "eBGP underlay (RFC 7938): {} switches with a /32 loopback each, {} routed links ({}), "
      "{} ASNs from {} to {}, ECMP up to {} paths",
      a.switches.size(), a.links.size(), a.unnumbered ? "BGP unnumbered" : "a /31 each",
      asns.size(), asn_lo, asn_hi, kFrrMaximumPaths));
  in.config_lines.push_back(fmt::format(
      "{} host subnets (one per leaf), {} host addresses, MTU {} on hosts; RoCE QoS: DSCP {} "
      "lossless with PFC on priority {}, CNPs DSCP {} strict priority, ECN on the RoCE queue",
      a.subnets.size(), a.hosts.size(), kHostMtu, kRoceDscp, kRocePriority, kCnpDscp));
  in.config_lines.push_back(
      "for FRR, Arista EOS, SONiC and Cumulus NVUE, per node host files and Ansible; "
      "prove the FRR flavour on an emulated fabric with gpufabric lab up|check SPEC");
  return files;
}

}  // namespace

Result<std::vector<OutputFile>> make_report(const PlannedSpec& planned,
                                            const std::vector<MeasuredRun>& measured,
                                            bool with_configs, const std::string& gpufabric_version,
                                            const std::optional<CheckResult>& measured_check) {
  const Plan& plan = planned.plan;
  const Fabric fabric = Fabric::build(plan, planned.catalog);
  const SimOptions o;
  auto model = CollectiveModel::build(fabric, plan, o);
  if (!model) return model.errors();

  ReportInputs in;
  in.measured_check = measured_check;
  in.plan = &plan;
  in.gpufabric_version = gpufabric_version;
  in.probe_bytes = kQuotedBytes;
  const SizeResult probe = model->at(kQuotedBytes);
  in.predicted_busbw_gbs = probe.busbw_gbs;
  in.predicted_algorithm =
      fmt::format("{} / {}", algorithm_name(probe.algorithm), protocol_name(probe.protocol));
  const auto sizes = size_sweep(static_cast<double>(kKiB), 8 * kQuotedBytes, kSizeFactor);
  BusbwSeries chosen{fmt::format("all_reduce on {} nodes, as NCCL chooses", plan.nodes), {}};
  for (double s : sizes) chosen.points.push_back({s, model->at(s).busbw_gbs});
  in.busbw.push_back(chosen);
  add_algorithm_curves(*model, sizes, in.busbw);
  auto overlays = measured_curves(plan, fabric, measured, sizes);
  if (!overlays) return overlays.errors();
  in.busbw.insert(in.busbw.end(), overlays->begin(), overlays->end());

  std::vector<OutputFile> files;
  if (planned.spec.workload) {
    auto step = simulate_step(planned.spec, plan, fabric);
    if (!step) return step.errors();
    in.step = *step;
    if (auto s = step_sensitivity(planned.spec, planned.catalog, plan)) in.sensitivity = *s;
    files.push_back({"step.json", step_json(*step, in.sensitivity).dump(2) + "\n"});
  }
  if (!planned.spec.jobs.empty()) {               // the jobs sharing the fabric (sim/jobs.h)
    auto traces = read_job_traces(planned.spec);  // a trace job's recorded step
    if (!traces) return traces.errors();
    JobsOptions jo;
    jo.traces = &*traces;
    auto jobs = simulate_jobs(planned.spec, planned.catalog, plan, jo);
    if (!jobs) return jobs.errors();
    const LinkNames names(plan, planned.catalog, *jobs->fabric);
    in.jobs_html = jobs_html_section(*jobs, names);
    // The run's load is per byte of payload (payload_bytes = 1) over the traffic's fluid time.
    in.jobs_heat = tier_heat(*jobs->fabric, jobs->run.load, 1.0, jobs->run.together_s);
    in.jobs_heat_label = fmt::format("{} jobs' step traffic together, {}", jobs->run.jobs.size(),
                                     units::format_seconds(jobs->run.together_s));
    files.push_back({"jobs.json", jobs_json(plan, *jobs, names).dump(2) + "\n"});
  }
  in.what_if = failure_rows(plan, fabric, o, in.predicted_busbw_gbs);
  if (auto t = collective_traffic(fabric, plan, o, *model, kQuotedBytes)) {
    in.link_heat = tier_heat(fabric, t->load, t->bytes, t->seconds);
    in.link_heat_label =
        fmt::format("all_reduce of {} on {} GPUs, {} / {}", units::format_bytes(t->bytes),
                    model->ranks(), algorithm_name(t->at.algorithm), protocol_name(t->at.protocol));
  }

  in.qos = qos_section(plan, planned.catalog, fabric, in.qos_absent);
  if (in.qos) {
    const QosRunInfo info{plan.name, in.qos->traffic, in.qos->settings, plan.topo.lane_gbps};
    files.push_back({"qos.json", qos_json(info, in.qos->result).dump(2) + "\n"});
  }
  const SimReport sim = simulate_sweep(plan, *model, size_sweep(8, 8 * kQuotedBytes, kSizeFactor),
                                       8, 8 * kQuotedBytes, kSizeFactor);
  auto plan_j = plan_json(plan);
  if (!gpufabric_version.empty()) plan_j["gpufabric_version"] = gpufabric_version;
  files.push_back({"plan.json", plan_j.dump(2) + "\n"});
  files.push_back({"plan.md", plan_markdown(plan)});
  files.push_back({"bom.csv", bom_csv(plan)});
  files.push_back({"cabling.csv", cabling_csv(plan, planned.catalog)});
  files.push_back({"simulate.json", sim_json(sim).dump(2) + "\n"});
  for (const auto& f : files) in.files.push_back(f.first);
  if (with_configs) {
    auto configs = report_configs(planned, in);
    if (!configs) return configs.errors();
    for (auto& f : *configs) files.push_back(std::move(f));
  }
  files.insert(files.begin(), {"report.html", report_html(in)});
  return files;
}

std::vector<std::string> stale_report_outputs(const std::string& dir,
                                              const std::vector<OutputFile>& files) {
  std::vector<std::string> out;
  for (const char* name : {"step.json", "jobs.json", "qos.json", "configs"}) {
    const bool written = std::any_of(files.begin(), files.end(), [&](const OutputFile& f) {
      return f.first == name || f.first.rfind(std::string(name) + "/", 0) == 0;
    });
    std::error_code ec;
    const auto path = std::filesystem::path(dir) / name;
    if (!written && std::filesystem::exists(path, ec)) out.push_back(path.string());
  }
  return out;
}

}  // namespace gf
