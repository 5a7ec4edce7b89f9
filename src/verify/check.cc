#include "verify/check.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/text.h"
#include "sim/collective.h"
#include "topo/fabric.h"

namespace gf {
namespace {

// A single host's TCP streams reach about 100 Gbps; iperf3 checks connectivity, not RDMA.
constexpr double kTcpPracticalGbps = 100;
constexpr double kTcpShare = 0.9;
// nccl-tests sizes judged by check: the bandwidth-bound region the guide measures (§5.2:
// all_reduce_perf -b 1G -e 10G); below it NCCL's pipelining (NVLS especially) dominates.
constexpr double kJudgedBytes = 1024.0 * 1024 * 1024;

}  // namespace

Result<CheckResult> check_measurements(const Plan& plan, const Catalog& cat,
                                       const std::vector<ToolOutput>& files, double tolerance) {
  CheckResult res;
  std::vector<Diagnostic> errs;
  const Fabric fabric = Fabric::build(plan, cat);
  const double lane_gbps = plan.nic.rate_gbps / plan.topo.planes;
  for (const auto& f : files) {
    if (f.kind == OutputKind::kNcclTests) {
      auto run = parse_nccl_tests(f.text, f.file);
      if (!run) {
        errs.insert(errs.end(), run.errors().begin(), run.errors().end());
        continue;
      }
      const int nodes = nodes_of(*run, plan.gpus_per_node);
      if (nodes > plan.nodes) {
        errs.push_back(Diagnostic::in_file(
            f.file, "", fmt::format("the run used {} nodes; the plan has {}", nodes, plan.nodes)));
        continue;
      }
      const std::string op_name_s = run->collective.empty() ? "all_reduce" : run->collective;
      auto op = parse_op(op_name_s);
      if (!op) {
        errs.push_back(
            Diagnostic::in_file(f.file, "", fmt::format("unknown collective '{}'", op_name_s)));
        continue;
      }
      SimOptions o;
      o.op = *op;
      o.nodes = nodes;
      auto model = CollectiveModel::build(fabric, plan, o);
      if (!model) {
        errs.insert(errs.end(), model.errors().begin(), model.errors().end());
        continue;
      }
      const double node_line_gbs = plan.nic.rate_gbps * plan.nics_per_node / 8;
      for (const auto& row : run->rows) {
        if (row.bytes < 1 << 20) continue;  // small sizes measure latency, not the fabric
        const SizeResult sim = model->at(row.bytes);
        CheckRow c{f.file,
                   op_name_s,
                   "busbw_gbs",
                   row.bytes,
                   row.busbw_gbs,
                   sim.busbw_gbs,
                   sim.busbw_gbs > 0 ? row.busbw_gbs / sim.busbw_gbs : 0,
                   true,
                   ""};
        if (row.bytes < kJudgedBytes) {
          c.note = "not judged: below 1 GiB (pipelining, not the fabric)";
          c.judged = false;
        } else {
          c.ok = c.ratio >= 1 - tolerance;
        }
        if (nodes == 2 && row.busbw_gbs > node_line_gbs * 0.95)
          c.note = (c.note.empty() ? "" : c.note + "; ") +
                   "2-node runs use tree/NVLS-tree: busbw above the NICs' line rate is expected, "
                   "not a network measurement (nccl #812)";
        res.rows.push_back(c);
      }
    } else if (f.kind == OutputKind::kPerftest) {
      auto p = parse_perftest(f.text, f.file);
      if (!p) {
        errs.insert(errs.end(), p.errors().begin(), p.errors().end());
        continue;
      }
      if (p->latency) continue;
      for (const auto& row : p->rows) {
        CheckRow c{f.file,
                   "rdma",
                   "bw_gbps",
                   row.bytes,
                   row.bw_avg_gbps,
                   lane_gbps * kRdmaLineRateShare,
                   0,
                   true,
                   "guide §5.1: >= ~95% of line rate"};
        c.ratio = row.bw_avg_gbps / c.expected;
        c.ok = c.ratio >= 1 - 1e-9;
        res.rows.push_back(c);
      }
    } else if (f.kind == OutputKind::kIperf3) {
      auto r = parse_iperf3(f.text, f.file);
      if (!r) {
        errs.insert(errs.end(), r.errors().begin(), r.errors().end());
        continue;
      }
      CheckRow c{f.file,
                 "tcp",
                 "gbps",
                 0,
                 r->received_bps / 1e9,
                 std::min(lane_gbps, kTcpPracticalGbps) * kTcpShare,
                 0,
                 true,
                 "TCP connectivity: a host's streams reach ~100 Gbps, not RDMA line rate"};
      c.ratio = c.measured / c.expected;
      c.ok = c.ratio >= 1 - 1e-9;
      res.rows.push_back(c);
    } else if (f.kind == OutputKind::kUnknown) {
      errs.push_back(Diagnostic::in_file(
          f.file, "",
          "not a result check can read: expected the output of nccl-tests (e.g. "
          "all_reduce_perf), perftest (ib_write_bw, text or --out_json) or iperf3 --json",
          "give the tool's output file as it printed it"));
    } else {
      errs.push_back(Diagnostic::in_file(
          f.file, "",
          fmt::format("this is {} output; check compares nccl-tests, perftest and iperf3 "
                      "results with the plan",
                      output_kind_name(f.kind)),
          "use gpufabric diagnose for logs and system outputs"));
    }
  }
  if (!errs.empty()) return errs;
  bool any_judged = false, all_ok = true;
  for (const auto& r : res.rows) {
    if (!r.judged) continue;
    any_judged = true;
    all_ok = all_ok && r.ok;
  }
  res.verdict = !any_judged ? CheckVerdict::kNothingJudged
                : all_ok    ? CheckVerdict::kPass
                            : CheckVerdict::kFail;
  return res;
}

const char* check_verdict_name(CheckVerdict v) {
  switch (v) {
    case CheckVerdict::kPass:
      return "pass";
    case CheckVerdict::kFail:
      return "fail";
    case CheckVerdict::kNothingJudged:
      break;
  }
  return "nothing judged";
}

nlohmann::json check_json(const CheckResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : r.rows) {
    // The file name as the user gave it, which need not be UTF-8 (see findings_json).
    nlohmann::json j = {{"file", utf8_or_replacement(c.file)},
                        {"collective", utf8_or_replacement(c.collective)},
                        {"bytes", c.bytes},
                        {"ratio", c.ratio},
                        {"ok", c.ok},
                        {"note", utf8_or_replacement(c.note)}};
    if (c.what == "busbw_gbs") {
      j["measured_busbw_gbs"] = c.measured;
      j["expected_busbw_gbs"] = c.expected;
    } else {
      j["measured_gbps"] = c.measured;
      j["expected_gbps"] = c.expected;
    }
    rows.push_back(j);
  }
  return {{"verdict", check_verdict_name(r.verdict)}, {"rows", rows}};
}

std::string check_text(const CheckResult& r) {
  std::string s = fmt::format("{:<34} {:<10} {:>12} {:>10} {:>10} {:>7}  {}\n", "file", "what",
                              "size", "measured", "expected", "ratio", "");
  for (const auto& c : r.rows) {
    const std::string file =
        c.file.size() > 34 ? "..." + c.file.substr(c.file.size() - 31) : c.file;
    s += fmt::format("{:<34} {:<10} {:>12.0f} {:>10.1f} {:>10.1f} {:>7.2f}  {}{}\n", file,
                     c.collective, c.bytes, c.measured, c.expected, c.ratio, c.ok ? "ok" : "BELOW",
                     c.note.empty() ? "" : "  (" + c.note + ")");
  }
  switch (r.verdict) {
    case CheckVerdict::kPass:
      s += "Verdict: PASS\n";
      break;
    case CheckVerdict::kFail:
      s += "Verdict: FAIL (measurements below expectation)\n";
      break;
    case CheckVerdict::kNothingJudged:
      s += "Verdict: NOTHING JUDGED (no nccl-tests size of 1 GiB or more, no perftest bandwidth "
           "and no iperf3 result: rerun with larger sizes, e.g. -e 8G)\n";
      break;
  }
  return s;
}

}  // namespace gf
