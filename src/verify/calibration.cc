#include "verify/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "common/csv.h"
#include "common/file.h"
#include "common/text.h"
#include "plan/plan.h"
#include "sim/collective.h"
#include "sim/nccl_constants.h"
#include "sim/step.h"
#include "spec/spec.h"
#include "topo/fabric.h"
#include "units/units.h"

namespace gf {
namespace {

// "multi" in the published rows means "at least 3 nodes" (the maintainers' rules of thumb hold
// from 3 nodes on); 4 is the smallest such cluster of whole rails.
constexpr int kMultiNodes = 4;
constexpr double kLargeMessageBytes = 32.0 * (1 << 20);
constexpr double kLargeDefaultBytes = 8.0 * (1LL << 30);  // "large" = nccl-tests' -e 8G

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

// A row's size: at most 10 TB, as simulate reads sizes (kMaxFlagBytes).
constexpr double kMaxRowBytes = 1e13;

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

// The catalog GPU a published hardware name means; "" when the catalog has none ("any" is
// the common case in the maintainers' rules of thumb, an H100).
std::string gpu_id(const std::string& hw) {
  // A PCIe card (no NVLink, its own power and clocks) is not the SXM module of its name: only
  // the card the catalog has (a100-pcie-40g) stands for one.
  if (hw.find("PCIE") != std::string::npos || hw.find("PCIe") != std::string::npos)
    return hw.find("A100") != std::string::npos && hw.find("80GB") == std::string::npos
               ? "a100-pcie-40g"
               : "";
  if (hw.find("A100") != std::string::npos) return "a100-sxm-80g";
  if (hw.find("H200") != std::string::npos) return "h200-sxm";
  if (hw.find("H800") != std::string::npos) return "h800-sxm";
  if (hw == "H20") return "h20";  // the 96 GB part; not H200, nor the 141 GB H20-3e
  if (hw.find("GB200") != std::string::npos) return "gb200";  // a node is a tray of 4
  if (hw.find("GB300") != std::string::npos) return "gb300";
  if (hw.find("B200") != std::string::npos) return "b200";
  if (hw.find("H100") != std::string::npos || hw == "any") return "h100-sxm";
  return "";
}

// The catalog NIC a published NIC means; "" when the catalog has none. "none" (one node) and
// an empty cell take the 400G NIC, which a single node does not use.
std::string nic_id(const std::string& nic) {
  if (nic.find("800G") != std::string::npos) return "cx8-800g";
  if (nic.find("400G") != std::string::npos) return "cx7-400g";
  if (nic.find("200G") != std::string::npos) return "cx6-200g";
  if (nic.find("100G") != std::string::npos) return "cx6-100g";
  if (nic.empty() || nic == "none") return "cx7-400g";
  return "";
}

// The run a row belongs to, for the per-source table: a "<repository or issue> (same ...)" row
// continues the run above when both name the same repository (their first word), and starts
// the run "<repository or issue>" otherwise.
std::string source_group(const std::string& source, const std::string& previous) {
  const size_t same = source.find("(same");
  if (same == std::string::npos) return source;
  std::string prefix = source.substr(0, same);
  while (!prefix.empty() && prefix.back() == ' ') prefix.pop_back();
  auto first_word = [](const std::string& s) { return s.substr(0, s.find(' ')); };
  if (!previous.empty() && first_word(previous) == first_word(prefix)) return previous;
  return prefix;
}

// The algorithm group a published `algo` cell belongs to: NCCL_ALGO's CollnetDirect is
// collnet, CollnetChain collnet_chain; alltoall and sendrecv have no NCCL algorithm (p2p).
/// The NCCL variables a row's run set (the nccl_env column: `NAME=VALUE` separated by spaces).
struct NcclEnv {
  std::optional<bool> nvls;     ///< NCCL_NVLS_ENABLE
  std::optional<bool> collnet;  ///< NCCL_COLLNET_ENABLE
  int min_channels = 0;         ///< NCCL_MIN_NCHANNELS (0: not set)
  int max_channels = 0;         ///< NCCL_MAX_NCHANNELS
  double buffsize = 0;          ///< NCCL_BUFFSIZE, bytes (0: not set)
  /// The IB transport's variables the run set, which the model does not take (NAME=VALUE as
  /// given, in the cell's order): recorded so that runs that set them are not grouped with runs
  /// that did not (data/calibration/README.md: flapping-airplanes' own A/B moves Ring all_reduce
  /// from 307 to 384 GB/s on 4 nodes with them).
  std::vector<std::string> unmodelled;
};

// The IB transport's variables a row may record, not modelled, and the values each takes:
// a count from 1 to 128 (QPs a connection), 0 or 1 (switches), 0 to 2 (relaxed ordering: 2 is
// NCCL's "if available"), or a size in bytes (the adaptive routing threshold).
struct UnmodelledVariable {
  const char* name;
  long long min, max;
};
constexpr UnmodelledVariable kUnmodelledNcclVariables[] = {{"NCCL_IB_QPS_PER_CONNECTION", 1, 128},
                                                           {"NCCL_IB_SPLIT_DATA_ON_QPS", 0, 1},
                                                           {"NCCL_IB_AR_THRESHOLD", 0, 1LL << 30},
                                                           {"NCCL_IB_PCI_RELAXED_ORDERING", 0, 2},
                                                           {"NCCL_IGNORE_CPU_AFFINITY", 0, 1}};

// A whole number as a run's script sets it: digits only, no sign, no leading zero but 0 itself;
// nullopt otherwise or past 18 digits.
std::optional<long long> plain_count(const std::string& value) {
  if (value.empty() || value.size() > 18 ||
      value.find_first_not_of("0123456789") != std::string::npos ||
      (value.size() > 1 && value[0] == '0'))
    return std::nullopt;
  return std::stoll(value);
}

// A row's cell the spec built from it refuses: the error at the row's line, not at a line of
// the spec text, which the user never saw, and keyed by the row's column: the spec key's last
// part, which names it (cluster.nodes: nodes; workload.parallelism.tp: tp), or the column
// `renames` gives it (the nccl CSV's hardware for cluster.gpu, the training CSV's interconnect
// for cluster.nic and fabric.technology).
// What makes the text no CSV (CsvTable::problem), at its line; nullopt when it is one.
std::optional<Diagnostic> csv_problem(const CsvTable& csv, const std::string& file) {
  if (csv.problem().empty()) return std::nullopt;
  return Diagnostic::at(file, csv.problem_line(), 0, "", csv.problem(),
                        "give the table as a CSV writer saves it (RFC 4180)");
}

using ColumnRenames = std::vector<std::pair<std::string_view, std::string_view>>;
std::vector<Diagnostic> at_row(std::vector<Diagnostic> errs, int lineno,
                               const ColumnRenames& renames) {
  for (auto& e : errs) {
    e.line = lineno;
    e.column = 0;
    if (const size_t dot = e.key.rfind('.'); dot != std::string::npos) e.key.erase(0, dot + 1);
    for (const auto& [key, column] : renames)
      if (e.key == key) e.key = column;
  }
  return errs;
}

Result<NcclEnv> parse_nccl_env(const std::string& cell, const std::string& file, int line) {
  NcclEnv e;
  std::istringstream in(cell);
  std::string word;
  std::set<std::string> seen;
  while (in >> word) {
    const size_t eq = word.find('=');
    const std::string name = word.substr(0, eq),
                      value = eq == std::string::npos ? "" : word.substr(eq + 1);
    std::optional<bool>* slot = name == "NCCL_NVLS_ENABLE"      ? &e.nvls
                                : name == "NCCL_COLLNET_ENABLE" ? &e.collnet
                                                                : nullptr;
    int* count = name == "NCCL_MIN_NCHANNELS"   ? &e.min_channels
                 : name == "NCCL_MAX_NCHANNELS" ? &e.max_channels
                                                : nullptr;
    const std::string hint =
        "use NCCL_NVLS_ENABLE=0|1, NCCL_COLLNET_ENABLE=0|1, NCCL_MIN_NCHANNELS=N, "
        "NCCL_MAX_NCHANNELS=N (N from 1 to 64) and NCCL_BUFFSIZE=BYTES (65536 to 1073741824), "
        "separated by spaces; recorded, not modelled: NCCL_IB_QPS_PER_CONNECTION=1..128, "
        "NCCL_IB_SPLIT_DATA_ON_QPS=0|1, NCCL_IB_AR_THRESHOLD=BYTES, "
        "NCCL_IB_PCI_RELAXED_ORDERING=0|1|2, NCCL_IGNORE_CPU_AFFINITY=0|1";
    if (!seen.insert(name).second)
      return Diagnostic::at(file, line, 0, "nccl_env", fmt::format("{} is set twice", name),
                            "give each variable once");
    if (const auto* u =
            std::find_if(std::begin(kUnmodelledNcclVariables), std::end(kUnmodelledNcclVariables),
                         [&](const UnmodelledVariable& v) { return name == v.name; });
        u != std::end(kUnmodelledNcclVariables)) {
      const auto v = plain_count(value);
      if (!v || *v < u->min || *v > u->max)
        return Diagnostic::at(file, line, 0, "nccl_env",
                              fmt::format("'{}' is not understood", word), hint);
      e.unmodelled.push_back(word);
      continue;
    }
    if (name == "NCCL_BUFFSIZE") {
      // Bytes as NCCL reads the variable: digits only (simulate --buffsize also takes K M G).
      long long v = 0;
      const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
      if (value.empty() || r.ec != std::errc() || r.ptr != value.data() + value.size() ||
          v < nccl::kBuffsizeMinBytes || v > nccl::kBuffsizeMaxBytes)
        return Diagnostic::at(file, line, 0, "nccl_env",
                              fmt::format("'{}' is not understood", word), hint);
      e.buffsize = static_cast<double>(v);
      continue;
    }
    if (count) {
      // The count as NCCL_DEBUG prints it (plain_count).
      const auto v = plain_count(value);
      if (!v || *v < 1 || *v > nccl::kMaxChannels)
        return Diagnostic::at(file, line, 0, "nccl_env",
                              fmt::format("'{}' is not understood", word), hint);
      *count = static_cast<int>(*v);
      continue;
    }
    if (!slot || (value != "0" && value != "1"))
      return Diagnostic::at(file, line, 0, "nccl_env", fmt::format("'{}' is not understood", word),
                            hint);
    *slot = value == "1";
  }
  return e;
}

std::string algorithm_group(const std::string& algo, Op op) {
  if (is_point_to_point(op)) return "p2p";
  if (algo.empty() || algo == "auto") return "auto";
  if (algo == "collnet_chain") return algo;
  if (algo.rfind("collnet", 0) == 0) return "collnet";
  return algo;
}

constexpr double kMiB = 1 << 20;

// Size bands of the targets: small < 1 MiB (latency), 1-16 MiB, >= 32 MiB.
std::string size_band(double bytes) {
  if (bytes < kMiB) return "small";
  if (bytes <= 16 * kMiB) return "mid";
  if (bytes >= kLargeMessageBytes) return "large";
  return "between";
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The figure a band is judged on: the ratio for small messages, |error| otherwise.
double judged(const CalibrationPoint& p) {
  return p.band == "small" ? p.ratio : std::fabs(p.error);
}

ErrorStats stats_of(const std::vector<const CalibrationPoint*>& pts) {
  ErrorStats e;
  std::vector<double> v;
  for (const auto* p : pts) v.push_back(judged(*p));
  e.count = static_cast<int>(v.size());
  if (!v.empty()) {
    e.median = median_of(v);
    e.worst = *std::max_element(v.begin(), v.end());
  }
  return e;
}

// The errors of one set's points, grouped, and the targets judged on them.
SetSummary summarize(const std::string& set, const std::vector<CalibrationPoint>& points,
                     const std::vector<SkippedRow>& skipped) {
  SetSummary out;
  out.set = set;
  std::vector<const CalibrationPoint*> mine;
  for (const auto& p : points)
    if (p.set == set) mine.push_back(&p);
  for (const auto& k : skipped)
    if (k.set == set) ++out.skipped;
  out.points = static_cast<int>(mine.size());
  auto in_band = [&](const std::string& band) {
    std::vector<const CalibrationPoint*> v;
    for (const auto* p : mine)
      if (p->band == band) v.push_back(p);
    return v;
  };
  out.small = stats_of(in_band("small"));
  out.mid = stats_of(in_band("mid"));
  out.large = stats_of(in_band("large"));
  // Groups in a fixed order: collective, algorithm, band as they first appear, sorted.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const CalibrationPoint*>>
      by_group, by_source;
  for (const auto* p : mine) {
    by_group[{p->collective, p->algorithm_group, p->band}].push_back(p);
    by_source[{p->source_group, "", p->band}].push_back(p);
  }
  for (const auto& [k, v] : by_group)
    out.groups.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), stats_of(v)});
  for (const auto& [k, v] : by_source)
    out.source_groups.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), stats_of(v)});
  out.targets = {
      {"large median |error|", "large", kTargetLargeMedian, out.large.median, out.large.count,
       out.large.median <= kTargetLargeMedian},
      {"large worst |error|", "large", kTargetLargeWorst, out.large.worst, out.large.count,
       out.large.worst <= kTargetLargeWorst},
      {"1-16 MiB median |error|", "mid", kTargetMidMedian, out.mid.median, out.mid.count,
       out.mid.median <= kTargetMidMedian},
      {"small worst latency ratio", "small", kTargetSmallRatio, out.small.worst, out.small.count,
       out.small.worst <= kTargetSmallRatio},
  };
  bool judged_any = false, all_met = true;
  for (const auto& t : out.targets) {
    if (t.count == 0) continue;
    judged_any = true;
    all_met = all_met && t.pass;
  }
  out.pass = judged_any && all_met;
  return out;
}

// What the model knows of a row's cluster, less its NCCL release and size (CalibrationPoint::
// inputs): "B200 8 x 8, 8 x 400G InfiniBand", with SHARP, the NCCL variables the run set and
// nccl-tests' -g where a thread drove several GPUs.
std::string inputs_label(const CalibrationPoint& p, const std::string& nic_cell, int nics,
                         bool roce, bool sharp, const NcclEnv& env, int gpus_per_thread) {
  std::string out = fmt::format("{} {} x {}, ", p.hardware, p.nodes, p.gpus_per_node);
  out += nic_cell == "none"
             ? std::string("no NIC")
             : fmt::format("{} x {} {}", nics, nic_cell, roce ? "RoCE" : "InfiniBand");
  if (sharp) out += " + SHARP";
  if (env.nvls && !*env.nvls) out += ", NCCL_NVLS_ENABLE=0";
  if (env.min_channels > 0) out += fmt::format(", NCCL_MIN_NCHANNELS={}", env.min_channels);
  if (env.max_channels > 0) out += fmt::format(", NCCL_MAX_NCHANNELS={}", env.max_channels);
  if (env.buffsize > 0) out += fmt::format(", NCCL_BUFFSIZE={:.0f}", env.buffsize);
  for (const auto& v : env.unmodelled) out += ", " + v;
  if (gpus_per_thread > 1) out += fmt::format(", -g {}", gpus_per_thread);
  return out;
}

// Runs of the same inputs, collective, algorithm and band from different sources, and the
// least worst error one factor on the model can reach over them (SpreadGroup). A row's q is
// model / measured as its band is judged: the bandwidth from 1 MiB (1 + error for busbw and
// time rows alike), the time below (1 + error for a latency row, 1 / (1 + error) for a busbw
// row there). A run's figure is the median of its rows' q. A factor f on the model makes a
// run's error f q - 1, whose worst over the runs is least at f = 2 / (q_min + q_max), giving
// (q_max - q_min) / (q_max + q_min); the time ratio max(f q, 1 / (f q)) is least at
// f = 1 / sqrt(q_min q_max), giving sqrt(q_max / q_min). Every run's median lies within its
// rows' range of q, so the rows spread at least as wide as the medians: for one f shared by the
// group, the floor bounds the rows' worst error too. A model that tells the runs apart by what
// the key leaves out (size, release) is not bound by it.
double spread_floor(const std::string& band, double lo, double hi) {
  return band == "small" ? std::sqrt(hi / lo) : (hi - lo) / (hi + lo);
}

std::vector<SpreadGroup> spread_groups(const std::vector<CalibrationPoint>& points) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, std::map<std::string, std::vector<const CalibrationPoint*>>> by_key;
  for (const auto& p : points)
    by_key[{p.inputs, p.collective, p.algorithm_group, p.band}][p.source_group].push_back(&p);
  std::vector<SpreadGroup> out;
  for (const auto& [key, sources] : by_key) {
    if (sources.size() < 2) continue;
    SpreadGroup g;
    std::tie(g.inputs, g.collective, g.algorithm, g.band) = key;
    for (const auto& [source, rows] : sources) {
      SpreadRun r;
      r.source = source;
      r.first_line = rows.front()->line;
      r.rows = static_cast<int>(rows.size());
      std::vector<double> q, test_q;
      std::set<std::string> sets;
      for (const auto* p : rows) {
        const bool time_sense = p->kind == "latency";
        const double v = (g.band == "small") == time_sense ? 1 + p->error : 1 / (1 + p->error);
        q.push_back(v);
        if (p->set == "test") test_q.push_back(v);
        sets.insert(p->set);
      }
      r.set = sets.size() == 1 ? *sets.begin() : "fit, test";
      r.model_over_measured = median_of(q);
      r.test_rows = static_cast<int>(test_q.size());
      if (!test_q.empty()) r.test_model_over_measured = median_of(test_q);
      g.runs.push_back(std::move(r));
    }
    std::sort(g.runs.begin(), g.runs.end(),
              [](const SpreadRun& a, const SpreadRun& b) { return a.first_line < b.first_line; });
    std::vector<double> all, tests;
    for (const auto& r : g.runs) {
      all.push_back(r.model_over_measured);
      if (r.test_rows > 0) tests.push_back(r.test_model_over_measured);
    }
    auto floor_of = [&](const std::vector<double>& v) {
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      return spread_floor(g.band, *lo, *hi);
    };
    g.has_test = !tests.empty();
    g.floor = floor_of(all);
    if (tests.size() >= 2) g.test_floor = floor_of(tests);
    out.push_back(std::move(g));
  }
  // Widest first; a small band's ratio r is set beside a bandwidth floor as (r - 1) / (r + 1),
  // the same spread of q.
  auto width = [](const SpreadGroup& g) {
    return g.band == "small" ? (g.floor * g.floor - 1) / (g.floor * g.floor + 1) : g.floor;
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const SpreadGroup& a, const SpreadGroup& b) { return width(a) > width(b); });
  return out;
}

// The modelled release a row's NCCL version runs with (nccl_release_of_version); a row that
// does not say runs the newest, as a spec that does not.
const char* modelled_release(const std::string& version) {
  return nccl_release_name(nccl_release_of_version(version).value_or(kNewestNccl));
}

}  // namespace

Result<CalibrationSummary> calibrate(const std::string& text, const std::string& file,
                                     double memory_bytes) {
  CalibrationSummary sum;
  const CsvTable csv(text);
  if (auto bad = csv_problem(csv, file)) return *bad;
  for (const char* need : {"hardware", "nodes", "gpus_per_node", "nic", "collective", "algo",
                           "bytes", "busbw_gbs", "time_us"})
    if (!csv.has(need))
      return Diagnostic::at(file, 1, 0, need, "missing column",
                            "the header needs hardware,nodes,gpus_per_node,nic,collective,algo,"
                            "bytes,busbw_gbs,time_us");
  sum.has_set_column = csv.has("set");
  auto cat = builtin_catalog();
  if (!cat) return cat.errors();
  std::string group;  // the source of the run the current row belongs to
  for (size_t row = 0; row < csv.rows(); ++row) {
    const int lineno = csv.line(row);
    auto col = [&](const char* name) { return csv.at(row, name); };
    CalibrationPoint p;
    p.line = lineno;
    p.source = col("source");
    group = source_group(p.source, group);
    p.source_group = group;
    // The set is checked first: a row of neither set is bad input whatever else it holds.
    p.set = sum.has_set_column ? col("set") : "fit";
    if (p.set != "fit" && p.set != "test")
      return Diagnostic::at(file, lineno, 0, "set",
                            fmt::format("'{}' is neither fit nor test", p.set),
                            "fit: a row constants may be set from; test: a row kept unseen");
    if (csv.fields(row) > csv.header().size())
      return Diagnostic::at(
          file, lineno, 0, "",
          fmt::format("{} fields, the header has {}", csv.fields(row), csv.header().size()),
          "quote a field that holds a comma (\"a, b\")");
    p.hardware = col("hardware");
    p.collective = col("collective");
    p.algorithm = col("algo");
    const std::string nodes = col("nodes"), bytes = col("bytes");
    const std::string note = col("note");
    auto skip = [&](std::string reason) {
      sum.skipped.push_back(fmt::format("line {} ({}): {}", lineno, p.set, reason));
      sum.skipped_rows.push_back({lineno, p.set, p.source_group, std::move(reason)});
    };
    auto op = parse_op(p.collective);
    if (!op)
      return Diagnostic::at(file, lineno, 0, "collective",
                            fmt::format("unknown collective '{}'", quoted_excerpt(p.collective)),
                            did_you_mean(p.collective, op_names()));
    if (const std::string v = col("nccl"); !v.empty() && !nccl_release_of_version(v))
      return Diagnostic::at(file, lineno, 0, "nccl",
                            fmt::format("'{}' is not an NCCL version", quoted_excerpt(v)),
                            "write it as NCCL prints it (2.24.3), or leave it blank");
    p.algorithm_group = algorithm_group(p.algorithm, *op);
    // The figure: bus bandwidth, a time, or a per-NIC bandwidth stated in the note.
    double lo = 0, hi = 0;
    for (const char* figure : {"busbw_gbs", "time_us"})
      if (const std::string v = col(figure); !v.empty() && !parse_range(v, lo, hi))
        return Diagnostic::at(
            file, lineno, 0, figure,
            fmt::format("'{}' is not a number or a range (lo-hi)", quoted_excerpt(v)),
            "a positive figure as the source prints it, e.g. 362.5 or 350-370");
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
        skip(fmt::format("no figure to compare ({})", note.empty() ? p.source : note));
        continue;
      }
    }
    p.published_lo = lo;
    p.published_hi = hi;
    p.published = (lo + hi) / 2;
    if (!(p.published > 0) || lo > hi)
      return Diagnostic::at(file, lineno, 0, p.kind == "busbw" ? "busbw_gbs" : "time_us",
                            "the published figure is not a positive number or range",
                            "give the figure the source prints, e.g. 362.5 or 350-370");
    const auto n = nodes == "multi" ? Result<long long>(kMultiNodes)
                                    : count_cell(nodes, file, lineno, "nodes");
    const auto gpn = count_cell(col("gpus_per_node"), file, lineno, "gpus_per_node");
    const auto npn = count_cell(col("nics_per_node"), file, lineno, "nics_per_node");
    for (const auto* v : {&n, &gpn, &npn})
      if (!*v) return v->errors();
    for (const auto& [v, column] : {std::pair{*n, "nodes"}, std::pair{*gpn, "gpus_per_node"}})
      if (v < 1)
        return Diagnostic::at(file, lineno, 0, column, "needs at least 1",
                              "the run's nodes and GPUs a node, as the source states them");
    p.nodes = static_cast<int>(*n);
    p.gpus_per_node = static_cast<int>(*gpn);
    if (bytes == "large") {
      p.bytes = kLargeDefaultBytes;
    } else {
      const auto r = std::from_chars(bytes.data(), bytes.data() + bytes.size(), p.bytes);
      if (r.ec != std::errc() || r.ptr != bytes.data() + bytes.size() || !(p.bytes >= 1) ||
          p.bytes > kMaxRowBytes)
        return Diagnostic::at(file, lineno, 0, "bytes",
                              fmt::format("'{}' is not a size in bytes", quoted_excerpt(bytes)),
                              "the message size nccl-tests prints (1048576), or 'large'");
    }
    p.large = p.bytes >= kLargeMessageBytes;
    p.band = size_band(p.bytes);
    if (p.kind == "latency" && p.band != "small") p.kind = "time";
    // Hardware the catalog lacks is listed as skipped, not approximated by something else.
    // A catalog id is taken as it is; a published name ("DGX H100") is mapped to one.
    const std::string gpu = cat->gpus.count(p.hardware) ? p.hardware : gpu_id(p.hardware);
    if (gpu.empty()) {
      skip(fmt::format("GPU '{}' is not in the catalog (catalog/gpus.yaml)", p.hardware));
      continue;
    }
    const std::string nic_cell = col("nic");
    p.nic = cat->nics.count(nic_cell) ? nic_cell : nic_id(nic_cell);
    if (p.nic.empty()) {
      skip(nic_cell == "not stated"
               ? std::string("the source does not state the NIC")
               : fmt::format("NIC '{}' is not in the catalog (catalog/nics.yaml)", nic_cell));
      continue;
    }
    // NCCL_NVLS_ENABLE / NCCL_COLLNET_ENABLE as the run set them (nccl_env): an auto run with
    // a feature switched on is grouped by that feature, but NCCL still chooses.
    auto env = parse_nccl_env(csv.has("nccl_env") ? col("nccl_env") : "", file, lineno);
    if (!env) return env.errors();
    if (p.algorithm_group == "auto" && env->collnet.value_or(false))
      p.algorithm_group = env->nvls.value_or(true) ? "auto, nvls+collnet on" : "auto, collnet on";
    else if (p.algorithm_group == "auto" && env->nvls.value_or(false))
      p.algorithm_group = "auto, nvls on";
    std::optional<Algorithm> forced;
    if (p.algorithm_group.rfind("auto", 0) != 0 && p.algorithm_group != "p2p") {
      forced = parse_algorithm(p.algorithm_group);
      if (!forced)
        return Diagnostic::at(file, lineno, 0, "algo",
                              fmt::format("unknown algorithm '{}'", quoted_excerpt(p.algorithm)),
                              "auto (NCCL's choice) or the NCCL_ALGO the run forced: " +
                                  names_joined(kAlgorithmNames, ", "));
    }
    int nics = static_cast<int>(*npn);
    if (nics <= 0) nics = std::min(p.gpus_per_node, 8);
    const bool roce = col("fabric").find("RoCE") != std::string::npos;
    const bool sharp = env->collnet.value_or(p.algorithm_group.rfind("collnet", 0) == 0 ||
                                             (note.find("SHARP") != std::string::npos &&
                                              note.find("SHARP inactive") == std::string::npos));
    // The hosts' CPU vendor where the source states it (host_cpu: intel or amd, the spec's
    // names; blank: the catalog's, Intel on x86).
    const std::string host_cell = csv.has("host_cpu") ? col("host_cpu") : "";
    const auto host = host_cell.empty() ? std::optional{HostCpuVendor::kAuto}
                                        : parse_name(kHostCpuVendorNames, host_cell);
    if (!host || (!host_cell.empty() && *host == HostCpuVendor::kAuto))
      return Diagnostic::at(file, lineno, 0, "host_cpu",
                            fmt::format("'{}' is neither intel nor amd", quoted_excerpt(host_cell)),
                            "the x86 hosts' CPU vendor as the source states it, or blank");
    const std::string spec_text = fmt::format(
        "name: calibration-line-{}\ncluster: {{gpu: {}, nodes: {}, gpus_per_node: {}, nic: {}, "
        "nics_per_node: {}, nccl: '{}'{}}}\nfabric: {{technology: {}, in_network_reduction: "
        "{}}}\n",
        lineno, gpu, p.nodes, p.gpus_per_node, p.nic, nics, modelled_release(col("nccl")),
        fmt::format(", host_cpu: {}", name_of(kHostCpuVendorNames, *host)),
        roce ? "roce" : "infiniband", sharp ? "on" : "off");
    // A row gpufabric cannot build or run is skipped with the model's own reason.
    auto first_error = [](const std::vector<Diagnostic>& e) {
      return e.empty() ? std::string("cannot be simulated") : e.front().message;
    };
    auto spec = parse_spec(spec_text, file);
    if (!spec) return at_row(spec.errors(), lineno, ColumnRenames{{"gpu", "hardware"}});
    // A row the machine cannot simulate is refused before it is planned, as a spec is.
    const LoadLimits limits{memory_bytes, true};
    const double need = estimated_memory_bytes(p.nodes, p.gpus_per_node, true);
    if (memory_bytes > 0 && need > memory_bytes)
      return Diagnostic::at(
          file, lineno, 0, "nodes",
          fmt::format("{} nodes x {} GPUs need about {} of memory to simulate; {} is available",
                      p.nodes, p.gpus_per_node, human_bytes(need), human_bytes(memory_bytes)),
          "check the row's node count, or run on a machine with more memory");
    auto errs = validate_spec(*spec, *cat);
    if (!errs.empty()) {
      skip(fmt::format("no spec of this hardware: {}", first_error(errs)));
      continue;
    }
    auto plan = make_plan(*spec, *cat);
    if (!plan) {
      skip(fmt::format("no plan: {}", first_error(plan.errors())));
      continue;
    }
    const Fabric fabric = Fabric::build(*plan, *cat);
    SimOptions o;
    o.op = *op;
    o.memory_budget_bytes = flows_budget_bytes(limits, p.nodes, p.gpus_per_node);
    o.algorithm = forced;
    o.nvls_enable = env->nvls.value_or(true);
    o.min_channels = env->min_channels;
    o.max_channels = env->max_channels;
    o.buffsize_bytes = env->buffsize;
    if (csv.has("gpus_per_thread") && !col("gpus_per_thread").empty()) {
      const auto g = count_cell(col("gpus_per_thread"), file, lineno, "gpus_per_thread");
      if (g && *g < 1)
        return Diagnostic::at(file, lineno, 0, "gpus_per_thread", "needs at least 1",
                              "nccl-tests' -g of the run (1: a process a GPU), or blank");
      if (!g) return g.errors();
      // One thread drives whole groups of a node's GPUs, as simulate -g takes it.
      if (*g > p.gpus_per_node || p.gpus_per_node % *g != 0)
        return Diagnostic::at(
            file, lineno, 0, "gpus_per_thread",
            fmt::format("-g {} does not divide the row's {} GPUs a node", *g, p.gpus_per_node),
            "nccl-tests' -g of the run: GPUs one thread drives, a divisor of gpus_per_node");
      o.gpus_per_thread = static_cast<int>(*g);
    }
    p.inputs = inputs_label(p, nic_cell, nics, roce, sharp, *env, o.gpus_per_thread);
    if (*host == HostCpuVendor::kAmd && p.nodes > 1) p.inputs += ", AMD hosts";  // across nodes
    auto model = CollectiveModel::build(fabric, *plan, o);
    if (!model) {
      skip(fmt::format("not simulated: {}", first_error(model.errors())));
      continue;
    }
    if (forced) {
      std::string why;
      for (const auto& a : model->algorithms())
        if (a.algorithm == *forced && !a.available) why = a.unavailable_reason;
      if (!why.empty()) {
        skip(fmt::format("{} {} is not simulated: {}", p.collective, p.algorithm_group, why));
        continue;
      }
    }
    const SizeResult r = model->at(p.bytes);
    p.simulated_algorithm = algorithm_name(r.algorithm);
    p.simulated_protocol = protocol_name(r.protocol);
    if (p.kind == "latency" || p.kind == "time")
      p.simulated = r.time_us;
    else if (p.kind == "busbw_per_nic")
      p.simulated = r.busbw_gbs * p.gpus_per_node / nics / p.gpus_per_node;
    else
      p.simulated = r.busbw_gbs;
    if (!std::isfinite(p.simulated) || !(p.simulated > 0)) {
      skip("the simulator gives no figure for it");
      continue;
    }
    // A time at 1 MiB or more is judged as the bandwidth it implies (bandwidth ~ 1 / time).
    p.error = p.kind == "time" ? p.published / p.simulated - 1
                               : (p.simulated - p.published) / p.published;
    p.ratio = std::max(p.simulated / p.published, p.published / p.simulated);
    sum.points.push_back(p);
  }
  std::vector<double> large;
  for (const auto& p : sum.points) {
    if (p.kind == "latency")
      sum.worst_latency_ratio = std::max(sum.worst_latency_ratio, p.ratio);
    else if (p.large)
      large.push_back(std::fabs(p.error));
  }
  if (!large.empty()) {
    sum.median_abs_error_large = median_of(large);
    sum.max_abs_error_large = *std::max_element(large.begin(), large.end());
  }
  sum.fit = summarize("fit", sum.points, sum.skipped_rows);
  sum.test = summarize("test", sum.points, sum.skipped_rows);
  sum.spread = spread_groups(sum.points);
  sum.pass = sum.test.pass;
  return sum;
}

bool is_training_csv(const std::string& text) {
  const std::string head = text.substr(0, text.find('\n'));
  return head.find("tflops_per_gpu") != std::string::npos;
}

Result<TrainingCalibration> calibrate_training(const std::string& text, const std::string& file) {
  TrainingCalibration out;
  const CsvTable csv(text);
  if (auto bad = csv_problem(csv, file)) return *bad;
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
    // Optional columns: the training's number type and its gradients' (blank: bf16, and
    // Megatron-LM's default for it), TP communication overlapped with the GEMMs (yes: the run's
    // --tp-comm-overlap), context parallelism, interleaving, uneven stages, ZeRO stage.
    auto optional = [&](const char* name, const char* key, std::string& out) {
      if (!col(name).empty()) out += fmt::format("  {}: {}\n", key, col(name));
    };
    std::string extra, model_extra;
    for (const char* key : {"ffn_hidden", "kv_heads", "mlp", "attention", "dropout"})
      if (!col(key).empty()) model_extra += fmt::format(", {}: {}", key, col(key));
    optional("precision", "precision", extra);
    optional("grad_reduce", "grad_reduce", extra);
    if (csv.has("tp_overlap") && col("tp_overlap") == "yes") extra += "  tp_overlap: true\n";
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
        "vocab: {}{}}}\n  parallelism: {{tp: {}, pp: {}, dp: {}, cp: {}, zero: {}}}\n"
        "  global_batch: {}\n  micro_batch: {}\n  recompute: {}\n  sequence_parallel: {}\n{}",
        lineno, col("gpu"), p.gpus, nic, technology, p.params, col("heads"), col("hidden"),
        col("layers"), col("seq_len"), col("vocab"), model_extra, p.tp, p.pp, p.dp, cp, zero,
        col("global_batch"), mb, recompute, sp, extra);
    const ColumnRenames columns{{"nic", "interconnect"}, {"technology", "interconnect"}};
    auto spec = parse_spec(spec_text, file);
    if (!spec) return at_row(spec.errors(), lineno, columns);
    auto cat = builtin_catalog();
    if (!cat) return cat.errors();
    auto errs = validate_spec(*spec, *cat);
    if (!errs.empty()) return at_row(errs, lineno, columns);
    auto plan = make_plan(*spec, *cat);
    if (!plan) return at_row(plan.errors(), lineno, columns);
    const Fabric fabric_graph = Fabric::build(*plan, *cat);
    auto r = simulate_step(*spec, *plan, fabric_graph);
    if (!r) return at_row(r.errors(), lineno, columns);
    p.simulated = p.kind == "tflops_per_gpu" ? r->tflops_per_gpu : r->step_time_s;
    p.error = (p.simulated - p.published) / p.published;
    p.memory_bytes = r->memory.peak().total_bytes();
    p.hbm_bytes = r->memory.hbm_bytes;
    p.set = col("set").empty() ? "fit" : col("set");
    if (p.set != "fit" && p.set != "test" && p.set != "report")
      return Diagnostic::at(file, lineno, 0, "set",
                            fmt::format("'{}': expected fit, test or report", p.set));
    out.points.push_back(p);
  }
  std::vector<double> fit, test;
  for (const auto& p : out.points) {
    const double e = std::fabs(p.error);
    if (p.set == "fit") fit.push_back(e);
    if (p.set == "test") test.push_back(e);
    if (p.set == "report") out.max_abs_error_reported = std::max(out.max_abs_error_reported, e);
  }
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  auto worst = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  };
  out.fit_points = static_cast<int>(fit.size());
  out.test_points = static_cast<int>(test.size());
  out.max_abs_error_fit = worst(fit);
  out.max_abs_error_test = worst(test);
  out.median_abs_error_fit = median(fit);
  out.median_abs_error_test = median(test);
  out.pass = !test.empty() && out.max_abs_error_test <= kTrainingLimit;
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
        100 * p.error,
        p.set == "fit"      ? " (fit)"
        : p.set == "report" ? " (reported)"
                            : "",
        p.memory_bytes / units::kBytesPerGiB, p.hbm_bytes / units::kBytesPerGiB,
        p.memory_bytes > p.hbm_bytes ? " (does not fit)" : "");
  }
  s += fmt::format(
      "\nfit set: {} rows, median |error| {:.1f}%, worst {:.1f}% (constants may be "
      "set from these)\n",
      t.fit_points, 100 * t.median_abs_error_fit, 100 * t.max_abs_error_fit);
  if (t.test_points == 0)
    s += "test set: no rows, so nothing is judged on unseen data. FAIL\n";
  else
    s += fmt::format(
        "test set: {} rows, median |error| {:.1f}%, worst {:.1f}% (limit {:.0f}%). {}\n",
        t.test_points, 100 * t.median_abs_error_test, 100 * t.max_abs_error_test,
        100 * kTrainingLimit, t.pass ? "PASS" : "FAIL");
  if (t.max_abs_error_reported > 0)
    s += fmt::format("Rows marked report (not held to the limit): worst |error| {:.1f}%.\n",
                     100 * t.max_abs_error_reported);
  return s;
}

nlohmann::json training_json(const TrainingCalibration& t) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : t.points)
    points.push_back({{"line", p.line},
                      {"source", p.source},
                      {"params", p.params},
                      {"gpus", p.gpus},
                      {"tp", p.tp},
                      {"pp", p.pp},
                      {"dp", p.dp},
                      {"kind", p.kind},
                      {"published", p.published},
                      {"simulated", p.simulated},
                      {"error", p.error},
                      {"set", p.set},
                      {"memory_bytes", p.memory_bytes},
                      {"hbm_bytes", p.hbm_bytes}});
  return {{"points", points},
          {"sets",
           {{"fit",
             {{"points", t.fit_points},
              {"median_abs_error", t.median_abs_error_fit},
              {"max_abs_error", t.max_abs_error_fit}}},
            {"test",
             {{"points", t.test_points},
              {"median_abs_error", t.median_abs_error_test},
              {"max_abs_error", t.max_abs_error_test}}}}},
          {"max_abs_error_reported", t.max_abs_error_reported},
          {"limit", kTrainingLimit},
          {"pass", t.pass}};
}

namespace {

std::string band_name(const std::string& band) {
  if (band == "small") return "< 1 MiB";
  if (band == "mid") return "1-16 MiB";
  if (band == "large") return ">= 32 MiB";
  return "16-32 MiB";
}

// "3.1%" for bandwidth bands, "1.23x" for the small band; "-" with no points.
std::string figure(const std::string& band, int count, double v) {
  if (count == 0) return "-";
  return band == "small" ? fmt::format("{:.2f}x", v) : fmt::format("{:.1f}%", 100 * v);
}

// A target's limit as the table states it: "15%", or "1.5x" for the small band.
std::string limit_figure(const std::string& band, double limit) {
  return band == "small" ? fmt::format("{:.1f}x", limit) : fmt::format("{:.0f}%", 100 * limit);
}

// The target of a band as the issue states it, and whether the group meets it.
std::string target_cell(const std::string& band, const ErrorStats& e) {
  if (e.count == 0) return "";
  if (band == "large") {
    const bool ok = e.median <= kTargetLargeMedian && e.worst <= kTargetLargeWorst;
    return fmt::format("median <= {:.0f}%, worst <= {:.0f}%: {}", 100 * kTargetLargeMedian,
                       100 * kTargetLargeWorst, ok ? "pass" : "FAIL");
  }
  if (band == "mid")
    return fmt::format("median <= {:.0f}%: {}", 100 * kTargetMidMedian,
                       e.median <= kTargetMidMedian ? "pass" : "FAIL");
  if (band == "small")
    return fmt::format("within {:.1f}x: {}", kTargetSmallRatio,
                       e.worst <= kTargetSmallRatio ? "pass" : "FAIL");
  return "no target";
}

std::string points_table(const CalibrationSummary& s, const std::string& set) {
  std::string out =
      "| line | hardware | nodes x GPUs | collective | algo | size | published | simulated | "
      "error |\n|---:|---|---|---|---|---:|---:|---:|---:|\n";
  for (const auto& p : s.points) {
    if (p.set != set) continue;
    const bool t = p.kind == "latency" || p.kind == "time";
    const std::string unit = t ? "us" : "GB/s";
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
  return out;
}

std::string set_summary(const SetSummary& x, bool judged) {
  std::string out = fmt::format("### {} set: {} points simulated, {} rows skipped\n\n", x.set,
                                x.points, x.skipped);
  out +=
      "| collective | algorithm | size | n | median | worst | target |\n"
      "|---|---|---|---:|---:|---:|---|\n";
  for (const auto& g : x.groups)
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", g.collective, g.algorithm,
                    band_name(g.band), g.stats.count, figure(g.band, g.stats.count, g.stats.median),
                    figure(g.band, g.stats.count, g.stats.worst), target_cell(g.band, g.stats));
  for (const auto* b : {"small", "mid", "large"}) {
    const ErrorStats& e = std::string(b) == "small" ? x.small
                          : std::string(b) == "mid" ? x.mid
                                                    : x.large;
    out +=
        fmt::format("| **all** | **all** | {} | {} | {} | {} | {} |\n", band_name(b), e.count,
                    figure(b, e.count, e.median), figure(b, e.count, e.worst), target_cell(b, e));
  }
  out += "\n| source | size | n | median | worst |\n|---|---|---:|---:|---:|\n";
  for (const auto& g : x.source_groups)
    out += fmt::format("| {} | {} | {} | {} | {} |\n", g.collective, band_name(g.band),
                       g.stats.count, figure(g.band, g.stats.count, g.stats.median),
                       figure(g.band, g.stats.count, g.stats.worst));
  out += fmt::format("\nTargets on the {} set{}:\n\n", x.set,
                     judged ? "" : " (shown for reference: the verdict is the test set's)");
  out += "| target | limit | measured | n | verdict |\n|---|---:|---:|---:|---|\n";
  for (const auto& t : x.targets) {
    out += fmt::format("| {} | {} | {} | {} | {} |\n", t.name, limit_figure(t.band, t.limit),
                       figure(t.band, t.count, t.measured), t.count,
                       t.count == 0 ? "no rows"
                       : t.pass     ? "pass"
                                    : "FAIL");
  }
  out += "\n";
  return out;
}

// Groups the summary shows; --json lists every one.
constexpr size_t kSpreadGroupsShown = 12;

std::string spread_table(const CalibrationSummary& s) {
  std::string out = "### Same inputs, different runs\n\n";
  if (s.spread.empty())
    return out +
           "No two sources measured the same inputs, collective, algorithm and size band.\n\n";
  out += fmt::format(
      "{} groups of rows that different sources measured on the same hardware, nodes, NICs, "
      "fabric, NCCL variables and -g, with the same collective, algorithm and size band (the "
      "release and the size may differ: the model accounts for both). Each run: the median of "
      "model / measured over its rows (bandwidth; below 1 MiB, time), at the CSV line of its "
      "first row. The floor is the least worst error one factor on the model, shared by the "
      "group, can reach over the runs (|error|; below 1 MiB, the time ratio); the test floor the "
      "same over the runs' test rows alone, which the test set's targets judge. A model that "
      "tells the runs apart by their sizes or releases is not bound by either.{}\n\n",
      s.spread.size(),
      s.spread.size() > kSpreadGroupsShown
          ? fmt::format(" The {} widest; --json lists all.", kSpreadGroupsShown)
          : std::string());
  out +=
      "| inputs | collective | algorithm | size | runs: model / measured | floor | test floor |\n"
      "|---|---|---|---|---|---:|---:|\n";
  for (size_t i = 0; i < s.spread.size() && i < kSpreadGroupsShown; ++i) {
    const SpreadGroup& g = s.spread[i];
    std::string runs;
    for (const auto& r : g.runs) {
      if (!runs.empty()) runs += "; ";
      runs += r.rows == 1
                  ? fmt::format("{:.2f} (line {}, {})", r.model_over_measured, r.first_line, r.set)
                  : fmt::format("{:.2f} ({} rows from line {}, {})", r.model_over_measured, r.rows,
                                r.first_line, r.set);
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", g.inputs, g.collective,
                       g.algorithm, band_name(g.band), runs, figure(g.band, 1, g.floor),
                       g.test_floor > 0 ? figure(g.band, 1, g.test_floor) : "-");
  }
  // Against the test set's worst-case targets: where the test rows of one group spread wider
  // than a worst-case limit, one factor per group cannot meet it.
  for (const auto* band : {"large", "small"}) {
    const SpreadGroup* widest = nullptr;
    for (const auto& g : s.spread)
      if (g.band == band && g.test_floor > 0 && (!widest || g.test_floor > widest->test_floor))
        widest = &g;
    const double limit = std::string(band) == "large" ? kTargetLargeWorst : kTargetSmallRatio;
    if (!widest) {
      out += fmt::format("\nNo two runs of the same inputs have test rows {}.", band_name(band));
      continue;
    }
    out += fmt::format(
        "\nWidest test floor {}: {} ({}, {} {}), against the test set's worst-case target of {}: "
        "{}.",
        band_name(band), figure(band, 1, widest->test_floor), widest->inputs, widest->collective,
        widest->algorithm, limit_figure(band, limit),
        widest->test_floor > limit ? "one factor per group cannot meet it there"
                                   : "the spread between runs does not rule it out");
  }
  return out + "\n\n";
}

}  // namespace

std::string calibration_summary_table(const CalibrationSummary& s) {
  std::string out;
  if (!s.has_set_column)
    out += "(the file has no set column: every row is read as fit, and there is no test set)\n\n";
  out += set_summary(s.fit, false);
  out += set_summary(s.test, true);
  out += spread_table(s);
  out += fmt::format("Test set: {}.\n", s.test.points == 0 ? "no points, nothing judged"
                                        : s.pass           ? "every judged target met (PASS)"
                                                           : "targets missed (FAIL)");
  return out;
}

std::string calibration_table(const CalibrationSummary& s) {
  std::string out;
  for (const auto* set : {"fit", "test"}) {
    out += fmt::format("## {} set\n\n", set);
    out += points_table(s, set);
    out += "\n";
  }
  out += "## Summary\n\n" + calibration_summary_table(s);
  if (!s.skipped.empty()) out += "\n";
  for (const auto& k : s.skipped) out += "skipped: " + k + "\n";
  return out;
}

namespace {

nlohmann::json stats_json(const ErrorStats& e) {
  return {{"count", e.count}, {"median", e.median}, {"worst", e.worst}};
}

nlohmann::json set_json(const SetSummary& x) {
  nlohmann::json groups = nlohmann::json::array(), sources = nlohmann::json::array(),
                 targets = nlohmann::json::array();
  for (const auto& g : x.groups)
    groups.push_back({{"collective", g.collective},
                      {"algorithm", g.algorithm},
                      {"band", g.band},
                      {"count", g.stats.count},
                      {"median", g.stats.median},
                      {"worst", g.stats.worst}});
  for (const auto& g : x.source_groups)
    sources.push_back({{"source", g.collective},
                       {"band", g.band},
                       {"count", g.stats.count},
                       {"median", g.stats.median},
                       {"worst", g.stats.worst}});
  for (const auto& t : x.targets)
    targets.push_back({{"name", t.name},
                       {"band", t.band},
                       {"limit", t.limit},
                       {"measured", t.measured},
                       {"count", t.count},
                       {"pass", t.pass}});
  // small: the ratio max(sim/pub, pub/sim); mid and large: |relative error| of bandwidth
  return {
      {"points", x.points},       {"skipped", x.skipped},         {"small", stats_json(x.small)},
      {"mid", stats_json(x.mid)}, {"large", stats_json(x.large)}, {"groups", groups},
      {"sources", sources},       {"targets", targets},           {"pass", x.pass}};
}

}  // namespace

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
                   {"simulated_protocol", p.simulated_protocol},
                   {"set", p.set},
                   {"source_group", p.source_group},
                   {"algorithm_group", p.algorithm_group},
                   {"band", p.band},
                   {"inputs", p.inputs},
                   {"ratio", p.ratio}});
  nlohmann::json skipped_rows = nlohmann::json::array();
  for (const auto& k : s.skipped_rows)
    skipped_rows.push_back(
        {{"line", k.line}, {"set", k.set}, {"source", k.source}, {"reason", k.reason}});
  nlohmann::json spread = nlohmann::json::array();
  for (const auto& g : s.spread) {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& r : g.runs)
      runs.push_back({{"source", r.source},
                      {"set", r.set},
                      {"first_line", r.first_line},
                      {"rows", r.rows},
                      {"model_over_measured", r.model_over_measured},
                      {"test_rows", r.test_rows}});
    // floor: |error| for mid and large, the time ratio for small (as the band is judged)
    spread.push_back(
        {{"inputs", g.inputs},
         {"collective", g.collective},
         {"algorithm", g.algorithm},
         {"band", g.band},
         {"runs", runs},
         {"floor", g.floor},
         {"test_floor", g.test_floor > 0 ? nlohmann::json(g.test_floor) : nlohmann::json(nullptr)},
         {"has_test", g.has_test}});
  }
  return {{"points", pts},
          {"spread", spread},
          {"median_abs_error_large", s.median_abs_error_large},
          {"max_abs_error_large", s.max_abs_error_large},
          {"worst_latency_ratio", s.worst_latency_ratio},
          {"skipped", s.skipped},
          {"skipped_rows", skipped_rows},
          {"has_set_column", s.has_set_column},
          {"sets", {{"fit", set_json(s.fit)}, {"test", set_json(s.test)}}},
          {"pass", s.pass}};
}

}  // namespace gf
