#include "verify/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <optional>

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
// A judged nccl-tests row this many times the simulated busbw is more than the plan's links
// carry: the spec describes another cluster, or the output was edited. The simulator's largest
// underestimate of a published run from 32 MiB is 1.23x (gpufabric calibrate
// data/calibration/nccl-public.csv: flapping-airplanes' sendrecv, 2026-12-06), well under it.
constexpr double kAboveSimulatedRatio = 1.5;
const char* const kAboveLinksNote =
    "above what the plan's links carry: check that the spec describes this cluster (cluster.gpu, "
    "nic, nics_per_node, fabric.in_network_reduction), and the output as the tool printed it";
const char* const kAbovePortNote =
    "above one port's line rate, which no port carries: check the spec's NIC (cluster.nic, "
    "fabric.planes) and the output as the tool printed it";

void mark(CheckRow& c, CheckMark m, const std::string& note) {
  c.mark = m;
  if (!note.empty()) c.note = c.note.empty() ? note : note + "; " + c.note;
}

// One port's figure (perftest, iperf3): above its line rate, else below what it should reach.
void mark_port(CheckRow& c, double lane_gbps) {
  if (c.measured > lane_gbps * kAbovePortLineRateShare)
    mark(c, CheckMark::kAbove, kAbovePortNote);
  else if (c.ratio < 1 - 1e-9)
    mark(c, CheckMark::kBelow, "");
}

// What check --json and the text say of each verdict, in the order of CheckVerdict.
struct VerdictWords {
  const char* name;  ///< check --json's "verdict"
  const char* line;  ///< the text's last line
};
constexpr VerdictWords kVerdictWords[] = {
    {"pass", "Verdict: PASS\n"},
    {"fail", "Verdict: FAIL"},  // then why, from the rows' marks (check_text)
    {"nothing judged",
     "Verdict: NOTHING JUDGED (no nccl-tests size of 1 GiB or more, no perftest bandwidth and no "
     "iperf3 result: rerun with larger sizes, e.g. -e 8G)\n"},
};
static_assert(std::size(kVerdictWords) ==
              static_cast<std::size_t>(CheckVerdict::kNothingJudged) + 1);

// nccl-tests: the bus bandwidth of each size from 1 MiB against the simulated collective at the
// run's node count; sizes below kJudgedBytes are shown, not judged.
void nccl_tests_rows(const NcclTestsRun& run, const std::string& file, const Plan& plan,
                     const Fabric& fabric, double tolerance, std::vector<CheckRow>& rows,
                     std::vector<Diagnostic>& errs) {
  // The collective: the banner's, else the file's name; an output with neither is not guessed
  // (an all_gather judged as an all_reduce fails at 0.6).
  const auto op = op_of(run, file);
  if (!op) {
    errs.push_back(Diagnostic::in_file(
        file, "",
        run.collective.empty() ? "the output does not say which collective it ran"
                               : fmt::format("unknown collective '{}'", run.collective),
        "keep the '# Collective test starting: X_perf' line, or name the file after the test "
        "(all_gather_perf.out)"));
    return;
  }
  const std::string op_name_s(op_name(*op));
  // The nodes and GPUs a node it ran on, from its rank lines: the model simulates those.
  const auto shape = run_shape(run, 0, 0, plan.gpus_per_node, file,
                               "keep the rank lines as nccl-tests printed them");
  if (!shape) {
    errs.insert(errs.end(), shape.errors().begin(), shape.errors().end());
    return;
  }
  const int nodes = shape->nodes;
  if (nodes > plan.nodes) {
    errs.push_back(Diagnostic::in_file(
        file, "", fmt::format("the run used {} nodes; the plan has {}", nodes, plan.nodes)));
    return;
  }
  if (auto e = shape_gpus_error(
          *shape, plan.gpus_per_node, file,
          "check runs that use every GPU of each node, against the spec of that cluster")) {
    errs.push_back(*e);
    return;
  }
  if (auto e = device_gpu_error(run, plan.gpu.id, file,
                                "check a run against the spec of the cluster it ran on")) {
    errs.push_back(*e);
    return;
  }
  if (auto e = banner_gpus_error(
          run, plan.gpus_per_node, "the spec's", file,
          "keep the banner as nccl-tests printed it, or check it against the spec it ran on")) {
    errs.push_back(*e);
    return;
  }
  SimOptions o;
  o.op = *op;
  o.nodes = nodes;
  // The NCCL release: the spec's cluster.nccl where it names one, else the one the run printed
  // (its tuner picks algorithms and protocols by its own terms: a 2.18 run judged by 2.30's
  // NVLS Tree reads 19 % low), else the newest. Said on the file's first row.
  std::string release_note;
  if (!run.nccl_version.empty()) {
    const auto ran = nccl_release_of_version(run.nccl_version);
    const std::string where =
        fmt::format("{}:{}'s {}", file, run.nccl_version_line,
                    run.nccl_version_from_library ? "nccl-library" : "'NCCL version'");
    if (!plan.nccl_given && ran) {
      o.nccl = *ran;
      release_note = fmt::format(
          "simulated with NCCL {} as the run ran ({} {}; the spec names no "
          "cluster.nccl)",
          nccl_release_name(*ran), where, run.nccl_version);
    } else if (ran && *ran != plan.nccl) {
      release_note = fmt::format(
          "simulated with the spec's cluster.nccl {}; the run ran NCCL {} ({}): set cluster.nccl "
          "to the run's to judge it by its own release",
          nccl_release_name(plan.nccl), run.nccl_version, where);
    }
  }
  if (run.gpus_per_thread > 0) o.gpus_per_thread = run.gpus_per_thread;
  if (const int calls = back_to_back_calls(run); calls > 0) o.iters = calls;
  auto model = CollectiveModel::build(fabric, plan, o);
  if (!model) {
    errs.insert(errs.end(), model.errors().begin(), model.errors().end());
    return;
  }
  // Where the expectation reduces in the switches (CollNet, or NVLS across scale-up domains,
  // which NCCL runs over CollNet; an NVL72 rack's trays are one domain), a run made without them
  // (NCCL uses SHARP only with NCCL_COLLNET_ENABLE=1 and its plugin) is judged against it: the
  // same fabric without in-network reduction, built once it is needed, says whether that is all
  // that is missing.
  auto in_switches = [domains = model->domains()](Algorithm a) {
    return a == Algorithm::kCollNet || a == Algorithm::kCollNetChain ||
           (a == Algorithm::kNvls && domains > 1);
  };
  std::optional<CollectiveModel> plain;
  const double node_line_gbs = plan.nic.rate_gbps * plan.nics_per_node / 8;
  for (const auto& row : run.rows) {
    // Small sizes measure latency, not the fabric; a wrong result fails at any size.
    const bool wrong =
        reports_wrong_results(row.wrong) || reports_wrong_results(row.wrong_in_place);
    if (row.bytes < 1 << 20 && !wrong) continue;
    const SizeResult sim = model->at(row.bytes);
    // nccl-tests times each size out of place and in place: both runs are judged, the lower
    // one's busbw standing for the row (an in-place run at 60 % had passed behind its twin), the
    // higher one's where it is above what the links carry.
    const bool in_place_lower =
        row.busbw_in_place_gbs >= 0 && row.busbw_in_place_gbs < row.busbw_gbs;
    const double measured = in_place_lower ? row.busbw_in_place_gbs : row.busbw_gbs;
    CheckRow c{.file = file,
               .collective = op_name_s,
               .what = "busbw_gbs",
               .bytes = row.bytes,
               .measured = measured,
               .expected = sim.busbw_gbs,
               .ratio = sim.busbw_gbs > 0 ? measured / sim.busbw_gbs : 0};
    c.expected_as =
        fmt::format("{}/{}{}", algorithm_name(sim.algorithm), protocol_name(sim.protocol),
                    in_switches(sim.algorithm) ? "+SHARP" : "");
    const bool two_node_tree = nodes == 2 && measured > node_line_gbs * 0.95;
    if (wrong) {
      mark(c, CheckMark::kWrong,
           fmt::format("nccl-tests counted wrong results (#wrong {} out of place, {} in place): "
                       "data was corrupted on a link, a NIC or a GPU; find where (gpufabric "
                       "diagnose, per-node runs) before trusting any bandwidth",
                       row.wrong, row.wrong_in_place));
    } else if (row.bytes < kJudgedBytes) {
      c.note =
          "not judged: below 1 GiB, where the pipeline's fill and NCCL's protocol and "
          "channel choice weigh as much as the fabric";
      c.judged = false;
    } else if (const double high = std::max(row.busbw_gbs, row.busbw_in_place_gbs);
               sim.busbw_gbs > 0 && high / sim.busbw_gbs > kAboveSimulatedRatio) {
      // Above what the links carry, either run (the simulation runs the 2-node tree too).
      c.measured = high;
      c.ratio = high / sim.busbw_gbs;
      mark(c, CheckMark::kAbove, kAboveLinksNote);
    } else if (c.ratio < 1 - tolerance) {
      mark(c, CheckMark::kBelow,
           in_place_lower && row.busbw_gbs >= (1 - tolerance) * sim.busbw_gbs
               ? fmt::format("the in-place run's; out of place {:.1f}", row.busbw_gbs)
               : "");
      if (in_switches(sim.algorithm)) {
        if (!plain) {
          Plan without_sharp = plan;
          without_sharp.in_network_reduction = false;
          auto m = CollectiveModel::build(fabric, without_sharp, o);
          if (m) plain = std::move(*m);
        }
        const SizeResult bare = plain ? plain->at(row.bytes) : SizeResult{};
        if (bare.busbw_gbs > 0 && measured >= (1 - tolerance) * bare.busbw_gbs)
          c.note =
              (c.note.empty() ? "" : c.note + "; ") +
              fmt::format(
                  "as the fabric without in-network reduction ({:.1f} as {}/{}): was SHARP off in "
                  "the run? NCCL reduces in the switches only with NCCL_COLLNET_ENABLE=1 and the "
                  "SHARP plugin (gpufabric configs' host files set them); or plan without it "
                  "(fabric.in_network_reduction: off)",
                  bare.busbw_gbs, algorithm_name(bare.algorithm), protocol_name(bare.protocol));
      }
    }
    // A 2-node run above the NICs' line rate is the algorithm's doing, which the expectation
    // runs too: said where the row is within it, not beside an ABOVE it contradicts.
    if (two_node_tree && c.mark != CheckMark::kAbove)
      c.note = (c.note.empty() ? "" : c.note + "; ") +
               fmt::format(
                   "a 2-node run's {} sends less over the network than the ring that "
                   "busbw counts: busbw above the NICs' line rate is expected, not a "
                   "network measurement (nccl #812)",
                   algorithm_name(sim.algorithm));
    if (!release_note.empty()) {  // once, on the file's first row
      c.note = release_note + (c.note.empty() ? "" : "; " + c.note);
      release_note.clear();
    }
    rows.push_back(c);
  }
}

// perftest bandwidth tests: each size against kRdmaLineRateShare of a rail's line rate.
void perftest_rows(const PerftestRun& p, const std::string& file, double lane_gbps,
                   std::vector<CheckRow>& rows) {
  // A latency test is shown, not judged: its floor is its path's, which a file alone does not
  // name (the acceptance runbook's results folder does: check SPEC RESULTS/).
  if (p.latency) {
    for (const auto& row : p.rows)
      rows.push_back(CheckRow{.file = file,
                              .collective = "rdma",
                              .what = "lat_us",
                              .bytes = row.bytes,
                              .measured = row.t_typical_us,
                              .note = "t_typical, us: latency is not judged without its path "
                                      "(check SPEC RESULTS/ judges it against its path's floor)",
                              .judged = false});
    return;
  }
  // A bidirectional test (-b) reports both directions' sum: judged against both line rates.
  const double line = lane_gbps * p.directions;
  for (const auto& row : p.rows) {
    CheckRow c{.file = file,
               .collective = "rdma",
               .what = "bw_gbps",
               .bytes = row.bytes,
               .measured = row.bw_avg_gbps,
               .expected = line * kRdmaLineRateShare,
               .note = p.directions == 2 ? "guide §5.1: >= ~95% of line rate, each direction "
                                           "(a bidirectional test: both directions' sum)"
                                         : "guide §5.1: >= ~95% of line rate"};
    c.ratio = row.bw_avg_gbps / c.expected;
    mark_port(c, line);
    rows.push_back(c);
  }
}

// iperf3: what a host's TCP streams practically reach.
CheckRow iperf3_row(const Iperf3Run& r, const std::string& file, double lane_gbps) {
  CheckRow c{.file = file,
             .collective = "tcp",
             .what = "gbps",
             .measured = r.received_bps / 1e9,
             .expected = std::min(lane_gbps, kTcpPracticalGbps) * kTcpShare,
             .note = "TCP connectivity: a host's streams reach ~100 Gbps, not RDMA line rate"};
  c.ratio = c.measured / c.expected;
  mark_port(c, lane_gbps);
  return c;
}

}  // namespace

Result<CheckResult> check_measurements(const Plan& plan, const Catalog& cat,
                                       const std::vector<ToolOutput>& files, double tolerance) {
  CheckResult res;
  std::vector<Diagnostic> errs;
  const Fabric fabric = Fabric::build(plan, cat);
  const double lane_gbps = plan.nic.rate_gbps / plan.topo.planes;
  // The same output given twice would count its rows twice.
  if (auto twice = repeated_outputs(files); !twice.empty()) return twice;
  for (const auto& f : files) {
    if (holds_nccl_tests_table(f)) {  // NCCL_DEBUG lines among its rows or not
      with_parsed(parse_nccl_tests, f, errs, [&](const auto& run) {
        nccl_tests_rows(run, f.file, plan, fabric, tolerance, res.rows, errs);
      });
    } else if (f.kind == OutputKind::kPerftest) {
      with_parsed(parse_perftest, f, errs,
                  [&](const auto& p) { perftest_rows(p, f.file, lane_gbps, res.rows); });
    } else if (f.kind == OutputKind::kIperf3) {
      with_parsed(parse_iperf3, f, errs,
                  [&](const auto& r) { res.rows.push_back(iperf3_row(r, f.file, lane_gbps)); });
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
    all_ok = all_ok && r.ok();
  }
  res.verdict = !any_judged ? CheckVerdict::kNothingJudged
                : all_ok    ? CheckVerdict::kPass
                            : CheckVerdict::kFail;
  return res;
}

namespace {
// A mark's word in check --json ("mark") and in the text's last column.
struct MarkWords {
  const char* json;
  const char* text;
  const char* why;  ///< the failed verdict's reason
};
constexpr MarkWords kMarkWords[] = {
    {"ok", "ok", ""},
    {"below", "BELOW", "measurements below expectation"},
    {"above", "ABOVE", "measurements above what the plan's links carry"},
    {"wrong", "WRONG", "nccl-tests counted wrong results"},
};
static_assert(std::size(kMarkWords) == static_cast<std::size_t>(CheckMark::kWrong) + 1);
const MarkWords& words_of(CheckMark m) { return kMarkWords[static_cast<std::size_t>(m)]; }
}  // namespace

const char* check_verdict_name(CheckVerdict v) {
  return kVerdictWords[static_cast<std::size_t>(v)].name;
}

nlohmann::json check_json(const CheckResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : r.rows) {
    // The file name as the user gave it, which need not be UTF-8 (see findings_json).
    nlohmann::json j = {
        {"file", utf8_or_replacement(c.file)},
        {"collective", utf8_or_replacement(c.collective)},
        {"bytes", c.bytes},
        {"ratio", c.ratio},
        {"ok", c.judged ? nlohmann::json(c.ok()) : nlohmann::json(nullptr)},
        {"mark", c.judged ? nlohmann::json(words_of(c.mark).json) : nlohmann::json(nullptr)},
        {"judged", c.judged},
        {"note", utf8_or_replacement(c.note)}};
    if (c.what == "busbw_gbs") {
      j["measured_busbw_gbs"] = c.measured;
      j["expected_busbw_gbs"] = c.expected;
      j["expected_as"] = c.expected_as;
    } else if (c.what == "lat_us") {  // a latency: no expectation, no ratio
      j["measured_latency_us"] = c.measured;
      j["ratio"] = nullptr;
    } else {
      j["measured_gbps"] = c.measured;
      j["expected_gbps"] = c.expected;
    }
    rows.push_back(j);
  }
  return {{"verdict", check_verdict_name(r.verdict)}, {"rows", rows}};
}

std::string check_text(const CheckResult& r) {
  std::string s = fmt::format("{:<34} {:<10} {:>12} {:>10} {:>10} {:<19} {:>7}  {}\n", "file",
                              "what", "size", "measured", "expected", "expected as", "ratio", "");
  for (const auto& c : r.rows) {
    const std::string file =
        c.file.size() > 34 ? "..." + c.file.substr(c.file.size() - 31) : c.file;
    // A row without an expectation (a latency) shows "-" for it and its ratio.
    const bool expects = c.expected > 0;
    s += fmt::format(
        "{:<34} {:<10} {:>12} {:>10.1f} {:>10} {:<19} {:>7}  {}{}\n", file, c.collective,
        c.bytes > 0 ? fmt::format("{:.0f}", c.bytes) : "-", c.measured,
        expects ? fmt::format("{:.1f}", c.expected) : "-",
        c.expected_as.empty() ? "-" : c.expected_as, expects ? fmt::format("{:.2f}", c.ratio) : "-",
        !c.judged ? "-" : words_of(c.mark).text, c.note.empty() ? "" : "  (" + c.note + ")");
  }
  // The measured and expected columns are in each tool's unit: said where rows of several mix.
  std::vector<std::string> units;
  auto unit_of = [&](const std::string& what, const char* unit) {
    if (std::any_of(r.rows.begin(), r.rows.end(), [&](const CheckRow& c) { return c.what == what; }))
      units.push_back(unit);
  };
  unit_of("busbw_gbs", "busbw GB/s (nccl-tests)");
  unit_of("bw_gbps", "Gb/s (perftest bandwidth)");
  unit_of("gbps", "Gb/s (iperf3)");
  unit_of("lat_us", "us (perftest latency)");
  if (units.size() > 1) s += fmt::format("units: {}\n", fmt::join(units, "; "));
  s += kVerdictWords[static_cast<std::size_t>(r.verdict)].line;
  if (r.verdict == CheckVerdict::kFail) {
    std::vector<std::string> why;
    for (CheckMark m : {CheckMark::kBelow, CheckMark::kAbove, CheckMark::kWrong})
      if (std::any_of(r.rows.begin(), r.rows.end(),
                      [&](const CheckRow& c) { return c.judged && c.mark == m; }))
        why.push_back(words_of(m).why);
    s += fmt::format(" ({})\n", fmt::join(why, "; "));
  }
  return s;
}

}  // namespace gf
