#include "verify/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <regex>
#include <sstream>

#include "common/csv.h"
#include "plan/plan.h"
#include "sim/collective.h"
#include "sim/step.h"
#include "spec/spec.h"
#include "topo/fabric.h"

namespace gf {
namespace {

// "multi" in the published rows means "at least 3 nodes" (the maintainers' rules of thumb hold
// from 3 nodes on); 4 is the smallest such cluster of whole rails.
constexpr int kMultiNodes = 4;
constexpr double kLargeMessageBytes = 32.0 * (1 << 20);
constexpr double kLargeDefaultBytes = 8.0 * (1LL << 30);  // "large" = nccl-tests' -e 8G

std::string gpu_id(const std::string& hw) {
  if (hw.find("A100") != std::string::npos) return "a100-sxm-80g";
  if (hw.find("H200") != std::string::npos) return "h200-sxm";
  if (hw.find("B200") != std::string::npos) return "b200";
  return "h100-sxm";  // "any": the common case in the sources
}

std::string nic_id(const std::string& nic) {
  if (nic.find("100G") != std::string::npos && nic.find("400") == std::string::npos)
    return "cx6-100g";
  if (nic.find("200G") != std::string::npos) return "cx6-200g";
  if (nic.find("800G") != std::string::npos) return "cx8-800g";
  return "cx7-400g";
}

// libstdc++'s std::regex recurses once per character a match takes: a cell of some 50,000
// digits overflowed the stack. Figures are a few characters and notes a line; longer text is
// not matched.
constexpr size_t kMaxRangeChars = 64;
constexpr size_t kMaxNoteChars = 4096;

// "368-384" -> lo, hi; "192" -> both; "" -> false.
bool parse_range(const std::string& s, double& lo, double& hi) {
  static const std::regex re(R"(^\s*([0-9.]+)\s*(?:-\s*([0-9.]+))?\s*$)");
  if (s.size() > kMaxRangeChars) return false;
  std::smatch m;
  if (!std::regex_match(s, m, re)) return false;
  lo = std::strtod(m[1].str().c_str(), nullptr);
  hi = m[2].matched ? std::strtod(m[2].str().c_str(), nullptr) : lo;
  if (!std::isfinite(lo) || !std::isfinite(hi)) return false;
  return true;
}

// A count cell: blank is 0 (as std::atoi read it), else a whole number up to 1e8; a number
// past what std::atoi / std::atoll can hold was undefined behaviour.
Result<long long> count_cell(const std::string& s, const std::string& file, int line,
                             const char* column) {
  if (s.empty()) return 0LL;
  long long v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0 || v > 100'000'000)
    return Diagnostic::at(file, line, 0, column,
                          fmt::format("'{}' is not a whole number from 0 to 100000000", s));
  return v;
}

}  // namespace

Result<CalibrationSummary> calibrate(const std::string& text, const std::string& file) {
  CalibrationSummary sum;
  const CsvTable csv(text);
  for (const char* need : {"hardware", "nodes", "gpus_per_node", "nic", "collective", "algo",
                           "bytes", "busbw_gbs", "time_us"})
    if (!csv.has(need))
      return Diagnostic::at(file, 1, 0, need, "missing column",
                            "the header needs hardware,nodes,gpus_per_node,nic,collective,algo,"
                            "bytes,busbw_gbs,time_us");
  for (size_t row = 0; row < csv.rows(); ++row) {
    const int lineno = csv.line(row);
    auto col = [&](const char* name) { return csv.at(row, name); };
    CalibrationPoint p;
    p.line = lineno;
    p.source = col("source");
    p.hardware = col("hardware");
    p.collective = col("collective");
    p.algorithm = col("algo");
    const std::string nodes = col("nodes"), bytes = col("bytes");
    const std::string note = col("note");
    auto op = parse_op(p.collective);
    if (!op) {
      sum.skipped.push_back(fmt::format("line {}: unknown collective '{}'", lineno, p.collective));
      continue;
    }
    // The figure: bus bandwidth, a time, or a per-NIC bandwidth stated in the note.
    double lo = 0, hi = 0;
    if (parse_range(col("busbw_gbs"), lo, hi)) {
      p.kind = "busbw";
    } else if (parse_range(col("time_us"), lo, hi)) {
      p.kind = "latency";
    } else {
      static const std::regex per_nic(R"(([0-9.]+)(?:-([0-9.]+))? GB/s busbw per)");
      std::smatch m;
      if (note.size() <= kMaxNoteChars && std::regex_search(note, m, per_nic)) {
        p.kind = "busbw_per_nic";
        lo = std::strtod(m[1].str().c_str(), nullptr);
        hi = m[2].matched ? std::strtod(m[2].str().c_str(), nullptr) : lo;
      } else {
        sum.skipped.push_back(fmt::format("line {}: no figure to compare ({})", lineno,
                                          note.empty() ? p.source : note));
        continue;
      }
    }
    p.published_lo = lo;
    p.published_hi = hi;
    p.published = (lo + hi) / 2;
    const auto n = nodes == "multi" ? Result<long long>(kMultiNodes)
                                    : count_cell(nodes, file, lineno, "nodes");
    const auto gpn = count_cell(col("gpus_per_node"), file, lineno, "gpus_per_node");
    const auto npn = count_cell(col("nics_per_node"), file, lineno, "nics_per_node");
    for (const auto* v : {&n, &gpn, &npn})
      if (!*v) return v->errors();
    p.nodes = std::max(1, static_cast<int>(*n));
    p.gpus_per_node = std::max(1, static_cast<int>(*gpn));
    int nics = static_cast<int>(*npn);
    if (nics <= 0) nics = std::min(p.gpus_per_node, 8);
    p.nic = nic_id(col("nic"));
    p.bytes = bytes == "large" ? kLargeDefaultBytes : std::atof(bytes.c_str());
    p.large = p.bytes >= kLargeMessageBytes;
    const bool sharp = note.find("SHARP") != std::string::npos;
    const std::string spec_text = fmt::format(
        "name: calibration-line-{}\ncluster: {{gpu: {}, nodes: {}, gpus_per_node: {}, nic: {}, "
        "nics_per_node: {}}}\nfabric: {{technology: infiniband, in_network_reduction: {}}}\n",
        lineno, gpu_id(p.hardware), p.nodes, p.gpus_per_node, p.nic, nics, sharp ? "on" : "off");
    auto spec = parse_spec(spec_text, file);
    if (!spec) return spec.errors();
    auto cat = builtin_catalog();
    if (!cat) return cat.errors();
    auto errs = validate_spec(*spec, *cat);
    if (!errs.empty()) return errs;
    auto plan = make_plan(*spec, *cat);
    if (!plan) return plan.errors();
    const Fabric fabric = Fabric::build(*plan, *cat);
    SimOptions o;
    o.op = *op;
    if (!p.algorithm.empty() && p.algorithm != "auto") o.algorithm = parse_algorithm(p.algorithm);
    auto model = CollectiveModel::build(fabric, *plan, o);
    if (!model) return model.errors();
    const SizeResult r = model->at(p.bytes);
    p.simulated_algorithm = algorithm_name(r.algorithm);
    p.simulated_protocol = protocol_name(r.protocol);
    if (p.kind == "latency")
      p.simulated = r.time_us;
    else if (p.kind == "busbw_per_nic")
      p.simulated = r.busbw_gbs * p.gpus_per_node / nics / p.gpus_per_node;
    else
      p.simulated = r.busbw_gbs;
    p.error = (p.simulated - p.published) / p.published;
    sum.points.push_back(p);
  }
  std::vector<double> large;
  for (const auto& p : sum.points) {
    if (p.kind == "latency") {
      const double ratio = std::max(p.simulated / p.published, p.published / p.simulated);
      sum.worst_latency_ratio = std::max(sum.worst_latency_ratio, ratio);
    } else if (p.large) {
      large.push_back(std::fabs(p.error));
    }
  }
  std::sort(large.begin(), large.end());
  if (!large.empty()) {
    const size_t n = large.size();
    sum.median_abs_error_large = n % 2 ? large[n / 2] : (large[n / 2 - 1] + large[n / 2]) / 2;
    sum.max_abs_error_large = large.back();
  }
  sum.pass = !large.empty() && sum.median_abs_error_large <= kCalibrationMedianLimit &&
             sum.max_abs_error_large <= kCalibrationMaxLimit &&
             sum.worst_latency_ratio <= kCalibrationLatencyFactor;
  return sum;
}

bool is_training_csv(const std::string& text) {
  const std::string head = text.substr(0, text.find('\n'));
  return head.find("tflops_per_gpu") != std::string::npos;
}

Result<TrainingCalibration> calibrate_training(const std::string& text, const std::string& file) {
  TrainingCalibration out;
  const CsvTable csv(text);
  for (const char* need : {"gpu", "params", "heads", "hidden", "layers", "seq_len", "vocab", "tp",
                           "pp", "dp", "gpus", "global_batch", "tflops_per_gpu", "iteration_s"})
    if (!csv.has(need)) return Diagnostic::at(file, 1, 0, need, "missing column");
  for (size_t row = 0; row < csv.rows(); ++row) {
    const int lineno = csv.line(row);
    auto col = [&](const char* name) { return csv.at(row, name); };
    TrainingPoint p;
    p.line = lineno;
    p.source = col("source");
    p.params = col("params");
    const auto gpus = count_cell(col("gpus"), file, lineno, "gpus");
    const auto tp = count_cell(col("tp"), file, lineno, "tp");
    const auto pp = count_cell(col("pp"), file, lineno, "pp");
    const auto dp = count_cell(col("dp"), file, lineno, "dp");
    for (const auto* v : {&gpus, &tp, &pp, &dp})
      if (!*v) return v->errors();
    p.gpus = *gpus;
    p.tp = std::max(1, static_cast<int>(*tp));
    p.pp = std::max(1, static_cast<int>(*pp));
    p.dp = std::max(1, static_cast<int>(*dp));
    double lo = 0, hi = 0;
    if (parse_range(col("tflops_per_gpu"), lo, hi)) {
      p.kind = "tflops_per_gpu";
    } else if (parse_range(col("iteration_s"), lo, hi)) {
      p.kind = "iteration_s";
    } else {
      continue;
    }
    p.published = (lo + hi) / 2;
    // The interconnect column names the NIC rate: "8x200G HDR IB per node".
    const std::string fabric = col("interconnect");
    const std::string nic = fabric.find("400G") != std::string::npos ? "cx7-400g" : "cx6-200g";
    const std::string technology = fabric.find("RoCE") != std::string::npos ? "roce" : "infiniband";
    // Optional columns: context parallelism, interleaving, uneven stages, ZeRO stage.
    auto optional = [&](const char* name, const char* key, std::string& out) {
      if (!col(name).empty()) out += fmt::format("  {}: {}\n", key, col(name));
    };
    std::string extra;
    optional("virtual_pipeline", "virtual_pipeline", extra);
    optional("first_stage_layers", "first_stage_layers", extra);
    optional("last_stage_layers", "last_stage_layers", extra);
    const std::string cp = col("cp").empty() ? "1" : col("cp");
    const std::string zero = col("zero").empty() ? "0" : col("zero");
    const std::string mb = col("micro_batch").empty() ? "1" : col("micro_batch");
    const std::string sp = col("sequence_parallel") == "yes" ? "true" : "false";
    const std::string recompute = col("recompute").empty() ? "none" : col("recompute");
    const std::string spec_text = fmt::format(
        "name: training-line-{}\ncluster: {{gpu: {}, gpus: {}, nic: {}}}\n"
        "fabric: {{technology: {}, in_network_reduction: off}}\n"
        "workload:\n  model: {{params: {}, heads: {}, hidden: {}, layers: {}, seq_len: {}, "
        "vocab: {}}}\n  parallelism: {{tp: {}, pp: {}, dp: {}, cp: {}, zero: {}}}\n"
        "  global_batch: {}\n  micro_batch: {}\n  recompute: {}\n  sequence_parallel: {}\n{}",
        lineno, col("gpu"), p.gpus, nic, technology, p.params, col("heads"), col("hidden"),
        col("layers"), col("seq_len"), col("vocab"), p.tp, p.pp, p.dp, cp, zero,
        col("global_batch"), mb, recompute, sp, extra);
    auto spec = parse_spec(spec_text, file);
    if (!spec) return spec.errors();
    auto cat = builtin_catalog();
    if (!cat) return cat.errors();
    auto errs = validate_spec(*spec, *cat);
    if (!errs.empty()) {
      for (auto& e : errs) e.message += fmt::format(" (line {})", lineno);
      return errs;
    }
    auto plan = make_plan(*spec, *cat);
    if (!plan) return plan.errors();
    const Fabric fabric_graph = Fabric::build(*plan, *cat);
    auto r = simulate_step(*spec, *plan, fabric_graph);
    if (!r) return r.errors();
    p.simulated = p.kind == "tflops_per_gpu" ? r->tflops_per_gpu : r->step_time_s;
    p.error = (p.simulated - p.published) / p.published;
    p.memory_bytes = r->memory.peak().total_bytes();
    p.hbm_bytes = r->memory.hbm_bytes;
    p.memory_bytes = r->memory.peak().total_bytes();
    p.hbm_bytes = r->memory.hbm_bytes;
    p.set = col("set");
    if (!p.set.empty() && p.set != "check" && p.set != "report")
      return Diagnostic::at(file, lineno, 0, "set",
                            fmt::format("'{}': expected check, report or nothing", p.set));
    double& worst = p.gated() ? out.max_abs_error : out.max_abs_error_reported;
    worst = std::max(worst, std::fabs(p.error));
    out.points.push_back(p);
  }
  const bool any_gated =
      std::any_of(out.points.begin(), out.points.end(), [](const auto& p) { return p.gated(); });
  out.pass = any_gated && out.max_abs_error <= kTrainingLimit;
  return out;
}

std::string training_table(const TrainingCalibration& t) {
  std::string s =
      "| line | model | GPUs (tp x pp x dp) | published | simulated | error | memory per GPU "
      "|\n|---:|---|---|---:|---:|---:|---:|\n";
  for (const auto& p : t.points) {
    const std::string unit = p.kind == "tflops_per_gpu" ? "TFLOP/s per GPU" : "s per iteration";
    s += fmt::format(
        "| {} | {} | {} ({} x {} x {}) | {:g} {} | {:.3g} {} | {:+.1f}%{} | {:.1f} of {:.0f} "
        "GiB{} |\n",
        p.line, p.params, p.gpus, p.tp, p.pp, p.dp, p.published, unit, p.simulated, unit,
        100 * p.error, p.gated() ? "" : " (reported)", p.memory_bytes / 1073741824.0,
        p.hbm_bytes / 1073741824.0, p.memory_bytes > p.hbm_bytes ? " (does not fit)" : "");
  }
  s += fmt::format("\nWorst |error| {:.1f}% (limit {:.0f}%). {}\n", 100 * t.max_abs_error,
                   100 * kTrainingLimit, t.pass ? "PASS" : "FAIL");
  if (t.max_abs_error_reported > 0)
    s += fmt::format("Rows marked report (not held to the limit): worst |error| {:.1f}%.\n",
                     100 * t.max_abs_error_reported);
  return s;
}

std::string calibration_table(const CalibrationSummary& s) {
  std::string out =
      "| line | hardware | nodes x GPUs | collective | algo | size | published | simulated | "
      "error |\n|---:|---|---|---|---|---:|---:|---:|---:|\n";
  for (const auto& p : s.points) {
    const std::string unit = p.kind == "latency" ? "us" : "GB/s";
    const std::string pub = p.published_lo != p.published_hi
                                ? fmt::format("{:g}-{:g} {}", p.published_lo, p.published_hi, unit)
                                : fmt::format("{:g} {}", p.published, unit);
    const std::string what = p.kind == "busbw_per_nic" ? " per NIC" : "";
    out += fmt::format(
        "| {} | {} | {} x {} | {} | {} (sim: {}/{}) | {} | {}{} | {:.1f} {}{} | "
        "{:+.1f}% |\n",
        p.line, p.hardware, p.nodes, p.gpus_per_node, p.collective,
        p.algorithm.empty() ? "auto" : p.algorithm, p.simulated_algorithm, p.simulated_protocol,
        p.bytes >= 1 ? fmt::format("{:.0f}", p.bytes) : "-", pub, what, p.simulated, unit, what,
        100 * p.error);
  }
  out += fmt::format(
      "\nLarge messages (>= 32 MiB): median |error| {:.1f}% (limit {:.0f}%), worst {:.1f}% (limit "
      "{:.0f}%). Small-message latency: worst ratio {:.2f}x (limit {:.0f}x). {}\n",
      100 * s.median_abs_error_large, 100 * kCalibrationMedianLimit, 100 * s.max_abs_error_large,
      100 * kCalibrationMaxLimit, s.worst_latency_ratio, kCalibrationLatencyFactor,
      s.pass ? "PASS" : "FAIL");
  for (const auto& k : s.skipped) out += "skipped: " + k + "\n";
  return out;
}

nlohmann::json calibration_json(const CalibrationSummary& s) {
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : s.points)
    pts.push_back({{"line", p.line},
                   {"source", p.source},
                   {"hardware", p.hardware},
                   {"nodes", p.nodes},
                   {"gpus_per_node", p.gpus_per_node},
                   {"collective", p.collective},
                   {"algorithm", p.algorithm},
                   {"bytes", p.bytes},
                   {"kind", p.kind},
                   {"published", p.published},
                   {"simulated", p.simulated},
                   {"error", p.error},
                   {"simulated_algorithm", p.simulated_algorithm},
                   {"simulated_protocol", p.simulated_protocol}});
  return {{"points", pts},
          {"median_abs_error_large", s.median_abs_error_large},
          {"max_abs_error_large", s.max_abs_error_large},
          {"worst_latency_ratio", s.worst_latency_ratio},
          {"skipped", s.skipped},
          {"pass", s.pass}};
}

}  // namespace gf
