#include "verify/parsers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "common/text.h"
#include "sim/nccl_constants.h"

namespace gf {
namespace {

// Larger inputs are not tool outputs of one run; refuse rather than spend memory.
constexpr size_t kMaxInputBytes = 64u << 20;
constexpr const char* kTooLargeHint =
    "one tool output is read up to 64 MiB: give the run's own output, not several joined";

// libstdc++'s std::regex matches by recursion, a stack frame per character a match attempt
// takes: a line of some 50,000 characters overflowed the 8 MiB stack. The lines the patterns
// look for are a few hundred characters; longer lines are not matched.
constexpr size_t kMaxMatchedLine = 4096;

bool search(const std::string& line, std::smatch& m, const std::regex& re) {
  return line.size() <= kMaxMatchedLine && std::regex_search(line, m, re);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      if (!cur.empty() && cur.back() == '\r') cur.pop_back();
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A number as nccl-tests and perftest print them (%.2f, %.1e, ...); false for anything else.
bool number(const std::string& s, double& v) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  auto r = std::from_chars(b, e, v);
  return r.ec == std::errc() && r.ptr == e && std::isfinite(v);
}

constexpr const char* kAsPrintedHint = "give the tool's output as it printed it";
// A failed nccl-tests run prints a failure line per rank: a few are kept, each at most so long.
constexpr std::size_t kMaxQuotedFailures = 4;
constexpr std::size_t kMaxFailureChars = 200;
// The MTUs an interface can have on Linux: down to 0 (CAN devices have 16, tunnels may show 0)
// and up to the loopback's 65536 (IP_MAX_MTU 65535 + 1).
constexpr int kMinLinuxMtu = 0;
constexpr int kMaxLinuxMtu = 65536;
// nccl-tests prints algbw and busbw with two decimals: a figure's rounding, GB/s, with margin.
constexpr double kNcclTestsRounding = 0.01;
// and a relative margin beside the time's own rounding (printed_half_unit).
constexpr double kNcclTestsRelativeMargin = 0.005;

// Half a unit of a printed number's last digit (4212.6: 0.05; 1.3e+05: 5000; 1227163: 0.5).
double printed_half_unit(const std::string& s) {
  const size_t e = s.find_first_of("eE");
  const std::string mantissa = s.substr(0, e);
  const size_t dot = mantissa.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
  int exponent = 0;
  if (e != std::string::npos) exponent = std::atoi(s.c_str() + e + 1);
  return 0.5 * std::pow(10.0, exponent - decimals);
}
// The largest relative error the old nccl-tests' float error column showed on a correct result
// (float sums in another order): what diagnose took as a wrong result before.
constexpr double kOldErrorColumnTolerance = 1e-3;

Diagnostic at(const std::string& file, int line, const std::string& msg,
              const std::string& hint = "") {
  return Diagnostic::at(file, line, 0, "", msg, hint);
}

// Strips "[1,0]<stdout>:" (mpirun --tag-output) and similar rank prefixes.
std::string untag(const std::string& l) {
  static const std::regex tag(R"(^\[\d+,\d+\]<std(out|err)>:)");
  if (l.size() > kMaxMatchedLine) return l;
  return std::regex_replace(l, tag, "");
}

// A small non-negative integer from digits; false when it does not fit.
bool small_int(const std::string& s, int& v) {
  double d = 0;
  if (!number(s, d) || d < 0 || d > 1e9 || std::floor(d) != d) return false;
  v = static_cast<int>(d);
  return true;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

}  // namespace

const char* output_kind_name(OutputKind k) {
  switch (k) {
    case OutputKind::kNcclTests:
      return "nccl-tests";
    case OutputKind::kPerftest:
      return "perftest";
    case OutputKind::kIperf3:
      return "iperf3";
    case OutputKind::kNcclLog:
      return "nccl-debug-log";
    case OutputKind::kTopo:
      return "nvidia-smi-topo";
    case OutputKind::kIbvDevinfo:
      return "ibv_devinfo";
    case OutputKind::kEthtool:
      return "ethtool-stats";
    case OutputKind::kIpLink:
      return "ip-link";
    default:
      return "unknown";
  }
}

std::vector<Diagnostic> repeated_outputs(const std::vector<ToolOutput>& files,
                                         std::vector<bool>* repeated) {
  std::vector<Diagnostic> errs;
  if (repeated) repeated->assign(files.size(), false);
  std::multimap<size_t, size_t> by_hash;  // a text's hash: the files with it
  for (size_t i = 0; i < files.size(); ++i) {
    const size_t h = std::hash<std::string>{}(files[i].text);
    const auto [lo, hi] = by_hash.equal_range(h);
    const auto same =
        std::find_if(lo, hi, [&](const auto& e) { return files[e.second].text == files[i].text; });
    if (same == hi) {
      by_hash.emplace(h, i);
      continue;
    }
    errs.push_back(Diagnostic::in_file(
        files[i].file, "", fmt::format("the same output as {}", files[same->second].file),
        "give each run once"));
    if (repeated) (*repeated)[i] = true;
  }
  return errs;
}

namespace {

// The first 200 KB of the file's lines, each line's first 64 KiB: a line longer than any a tool
// prints (a binary blob, a runaway progress bar pasted in) hides no marker after it, and one JSON
// document on one line (iperf3 -J through jq -c) still shows its first keys.
std::string marker_head(const std::string& t) {
  constexpr std::size_t kHeadBytes = 200000, kLongestToolLine = 64 * 1024;
  std::string head;
  for (std::size_t at = 0; at < t.size() && head.size() < kHeadBytes;) {
    std::size_t end = t.find('\n', at);
    if (end == std::string::npos) end = t.size();
    head.append(t, at, std::min(end - at, kLongestToolLine)).push_back('\n');
    at = end + 1;
  }
  return head;
}

bool nccl_tests_markers(const std::string& head) {
  return head.find("out-of-place") != std::string::npos ||
         head.find("# Collective test starting") != std::string::npos ||
         head.find("Avg bus bandwidth") != std::string::npos;
}

}  // namespace

bool holds_nccl_tests_table(const ToolOutput& f) {
  return f.kind == OutputKind::kNcclTests ||
         (f.kind == OutputKind::kNcclLog && nccl_tests_markers(marker_head(f.text)));
}

OutputKind detect_output_kind(const std::string& t) {
  const std::string head = marker_head(t);
  // NCCL_DEBUG=INFO/WARN lines make a log, with an nccl-tests table among them or not (a run's
  // stdout with NCCL_DEBUG set): holds_nccl_tests_table tells the table apart.
  if (head.find("NCCL INFO") != std::string::npos || head.find("NCCL WARN") != std::string::npos)
    return OutputKind::kNcclLog;
  if (nccl_tests_markers(head)) return OutputKind::kNcclTests;
  if (head.find("BW peak") != std::string::npos || head.find("t_min[usec]") != std::string::npos ||
      head.find("\"BW_average\"") != std::string::npos)
    return OutputKind::kPerftest;
  // A run that failed before its test (no server, a refused connection) still writes its start
  // block: the target it was connecting to and its version line (iperf_api.c, iperf_json_start),
  // then "error" (iperf_json_finish).
  if (head.find("\"sum_sent\"") != std::string::npos ||
      head.find("\"test_start\"") != std::string::npos ||
      head.find("\"connecting_to\"") != std::string::npos ||
      head.find("\"iperf 3.") != std::string::npos)
    return OutputKind::kIperf3;
  if (head.find("NIC Legend") != std::string::npos ||
      (head.find("GPU0") != std::string::npos && head.find("CPU Affinity") != std::string::npos))
    return OutputKind::kTopo;
  if (head.find("hca_id:") != std::string::npos) return OutputKind::kIbvDevinfo;
  if (head.find("NIC statistics:") != std::string::npos) return OutputKind::kEthtool;
  static const std::regex iplink(R"(^\d+: [^:]+: <[^>]*> mtu \d+)");
  std::smatch m;
  for (const auto& l : lines_of(head))
    if (l.find("> mtu ") != std::string::npos && search(l, m, iplink)) return OutputKind::kIpLink;
  return OutputKind::kUnknown;
}

int back_to_back_calls(const NcclTestsRun& run) { return run.blocking ? 1 : run.iters; }

std::optional<Diagnostic> banner_gpus_error(const NcclTestsRun& run, int gpus_per_node,
                                            const std::string& whose, const std::string& file,
                                            const std::string& hint) {
  if (run.gpus_per_thread <= 0 || gpus_per_node % run.gpus_per_thread == 0) return std::nullopt;
  return Diagnostic::in_file(
      file, "nGpus",
      fmt::format("the banner's nGpus {} (nccl-tests -g, GPUs one thread drives) does not divide "
                  "{} {} GPUs a node",
                  run.gpus_per_thread, whose, gpus_per_node),
      hint);
}

std::optional<Diagnostic> device_gpu_error(const NcclTestsRun& run, const std::string& gpu_id,
                                           const std::string& file, const std::string& hint) {
  const std::string family = ascii_lower(gpu_id.substr(0, gpu_id.find('-')));
  const bool spec_card = ascii_lower(gpu_id).find("pcie") != std::string::npos;
  static const std::regex model_re(R"(^[a-z]{1,3}[0-9]{2,4}[a-z]?$)");
  for (const auto& device : run.devices) {
    bool names_family = false, names_a_model = false;
    std::string word;
    const std::string d = ascii_lower(device) + " ";
    if (const bool card = d.find("pcie") != std::string::npos; card != spec_card)
      return Diagnostic::in_file(
          file, "",
          fmt::format("the run's rank lines name {}, {}; the spec's GPUs are {}, {}", device,
                      card ? "a PCIe card" : "not a PCIe card", gpu_id,
                      spec_card ? "PCIe cards" : "not PCIe cards"),
          hint);
    for (char c : d) {
      if (std::isalnum(static_cast<unsigned char>(c))) {
        word += c;
        continue;
      }
      if (word.empty()) continue;
      names_family = names_family || word == family;
      names_a_model = names_a_model || std::regex_match(word, model_re);
      word.clear();
    }
    if (names_a_model && !names_family)
      return Diagnostic::in_file(
          file, "",
          fmt::format("the run's rank lines name {}; the spec's GPUs are {}", device, gpu_id),
          hint);
  }
  return std::nullopt;
}

int nodes_of(const NcclTestsRun& run, int gpus_per_node) {
  if (run.nodes > 0) return run.nodes;
  return std::max(1, (run.ranks + gpus_per_node - 1) / std::max(1, gpus_per_node));
}

std::optional<Op> op_of_columns(const NcclTestsRun& run) {
  // Bytes an element of nccl-tests' types (-d; nccl-tests src/common.cu test_typenames).
  static const std::map<std::string, int> kTypeBytes = {
      {"int8", 1}, {"uint8", 1}, {"int32", 4},  {"uint32", 4},   {"int64", 8},  {"uint64", 8},
      {"half", 2}, {"float", 4}, {"double", 8}, {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1}};
  const auto type = kTypeBytes.find(run.type);
  if (type == kTypeBytes.end() || run.redop.empty() || run.ranks < 2) return std::nullopt;
  // The largest row tells the count best (the small ones round to the 16-byte alignment).
  const NcclTestsRow* big = nullptr;
  for (const auto& r : run.rows)
    if (r.count > 0 && (!big || r.bytes > big->bytes)) big = &r;
  if (!big) return std::nullopt;
  const double per = big->bytes / (big->count * type->second);  // 1: the whole; ranks: a part
  const bool whole = std::abs(per - 1) < 1e-3;
  const bool part = std::abs(per - run.ranks) < 1e-3 * run.ranks;
  if (whole == part) return std::nullopt;
  const bool reduces = run.redop != "none";
  if (!run.root) {
    if (reduces && part) return Op::kReduceScatter;
    return std::nullopt;  // all_reduce or reduce, all_gather or alltoall, sendrecv or broadcast
  }
  if (*run.root >= 0) return reduces ? Op::kReduce : Op::kBroadcast;
  if (reduces) return whole ? Op::kAllReduce : Op::kReduceScatter;
  if (whole) return Op::kSendRecv;
  return std::nullopt;  // all_gather or alltoall
}

std::optional<Op> op_of(const NcclTestsRun& run, const std::string& file) {
  if (!run.collective.empty()) return parse_op(run.collective);
  // The file's name, with or without the test's underscores (all_reduce_perf, allreduce.txt),
  // against the collectives' names (kOpNames) the same way, the longest first, so that
  // allreduce is not read as reduce.
  auto bare = [](std::string_view s) {
    std::string out = ascii_lower(s);
    std::erase_if(out, [](char c) { return c == '_' || c == '-'; });
    return out;
  };
  const std::string name = bare(file.substr(file.find_last_of('/') + 1));
  std::vector<std::pair<std::string, Op>> ops;
  for (const auto& e : kOpNames) ops.push_back({bare(e.name), e.value});
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [n, op] : ops)
    if (name.find(n) != std::string::npos) return op;
  return op_of_columns(run);
}

Result<RunShape> run_shape(const NcclTestsRun& run, int nodes_given, int gpus_per_node_given,
                           int spec_gpus_per_node, const std::string& file,
                           const std::string& no_ranks_hint) {
  RunShape s;
  // A run's rank lines, where all are there, name its hosts. Fewer hosts than --nodes may be
  // one name on every container (--nodes says); more than --nodes is another run's output, as is
  // a --gpus-per-node other than the ranks a host.
  if (nodes_given > 0 && run.nodes > nodes_given)
    return Diagnostic::in_file(
        file, "--nodes",
        fmt::format("--nodes {}, but the run's rank lines name {} hosts", nodes_given, run.nodes),
        "leave --nodes out (the rank lines say), or give the output of a run on that many nodes");
  if (nodes_given > 0 && run.ranks > 0 && run.ranks % nodes_given != 0)
    return Diagnostic::in_file(
        file, "--nodes",
        fmt::format("{} ranks on --nodes {}: not the same GPUs on every node", run.ranks,
                    nodes_given),
        "give the nodes the run used");
  if (gpus_per_node_given > 0 && nodes_given == 0 && run.nodes > 0 && run.ranks > 0 &&
      run.ranks != gpus_per_node_given * run.nodes)
    return Diagnostic::in_file(
        file, "--gpus-per-node",
        fmt::format("--gpus-per-node {}, but the run's rank lines put {} ranks on {} hosts",
                    gpus_per_node_given, run.ranks, run.nodes),
        "leave --gpus-per-node out (the rank lines say)");
  const int hosts = nodes_given > 0 ? 0 : run.nodes;  // 0 where rank lines were left out
  if (hosts > 0) {
    if (run.ranks % hosts != 0)
      return Diagnostic::in_file(
          file, "",
          fmt::format("{} ranks on {} hosts: not the same GPUs on every node", run.ranks, hosts),
          "use runs that use every GPU of each node");
    s.nodes = hosts;
    s.gpus_per_node = run.ranks / hosts;
    return s;
  }
  s.gpus_per_node = gpus_per_node_given > 0 ? gpus_per_node_given : spec_gpus_per_node;
  s.nodes = nodes_given > 0 ? nodes_given
            : run.ranks > 0 ? std::max(1, run.ranks / std::max(1, s.gpus_per_node))
                            : 0;
  if (s.nodes == 0)
    return Diagnostic::in_file(
        file, "", "the output has no rank lines ('# Rank N ... on HOST'): its nodes are unknown",
        no_ranks_hint);
  return s;
}

std::optional<Diagnostic> shape_gpus_error(const RunShape& shape, int spec_gpus_per_node,
                                           const std::string& file, const std::string& hint) {
  if (shape.gpus_per_node == spec_gpus_per_node) return std::nullopt;
  return Diagnostic::in_file(file, "",
                             fmt::format("the run used {} GPUs per node; the spec's nodes have {}",
                                         shape.gpus_per_node, spec_gpus_per_node),
                             hint);
}

// Device names kept from the rank lines: a run's are one or two; a file of many is not one run's.
constexpr size_t kMaxDeviceNames = 16;

// Bounds on the banner's fields: -g up to a node's GPUs (the spec's own bound), -n up to what
// `simulate -n` takes.
constexpr int kMaxBannerGpus = static_cast<int>(kMaxSpecPerNode);
constexpr int kMaxBannerIters = nccl::kMaxNcclTestsIters;

bool reports_wrong_results(const std::string& column) {
  if (column == "N/A" || column == "0") return false;
  double v = 0;
  // The old float error column: a relative error, which float sums leave above 0.
  return !number(column, v) || v > kOldErrorColumnTolerance;
}

Result<NcclTestsRun> parse_nccl_tests(const std::string& text, const std::string& file) {
  if (text.size() > kMaxInputBytes)
    return at(file, 0, "file too large for a nccl-tests output", kTooLargeHint);
  NcclTestsRun run;
  const auto lines = lines_of(text);
  bool header = false, with_root = true;
  std::set<std::string> hosts;
  static const std::regex rank_re(R"(^#\s+Rank\s+(\d+)\s+(Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+))");
  static const std::regex test_re(R"(^# Collective test starting: (\w+?)_perf)");
  static const std::regex avg_re(R"(^# Avg bus bandwidth\s*:\s*(\S+))");
  static const std::regex elided_re(R"(^#\s+\.\.\.\s+ranks\s+\d+\s+to\s+\d+\s+on\s+nodes)");
  // The banner (util.cu@v2.19.6:625): nGpus is -g, the "iters:" after "warmup iters: W" is -n.
  static const std::regex gpus_re(R"(\bnGpus\s+(\S+))");
  static const std::regex iters_re(R"(\bwarmup iters:\s+\S+\s+iters:\s+(\S+))");
  // The NCCL release that ran: NCCL's own "NCCL version 2.24.3+cuda12.6" (NCCL_DEBUG=VERSION or
  // INFO), else the banner's "nccl-library=22403" (nccl-tests from 2.17: major x 10000 + minor x
  // 100 + patch, NCCL_VERSION_CODE).
  static const std::regex version_re(R"(\bNCCL version (\d+\.\d+\.\d+))");
  static const std::regex library_re(R"(\bnccl-library=(\d{5,6})\b)");
  int banner_line = 0, test_line = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i + 1);
    const std::string l = untag(lines[i]);
    std::smatch m;
    if (run.nccl_version.empty() || run.nccl_version_from_library) {
      if (search(l, m, version_re)) {
        run.nccl_version = m[1];
        run.nccl_version_line = ln;
        run.nccl_version_from_library = false;
      } else if (run.nccl_version.empty() && search(l, m, library_re)) {
        const long code = std::stol(m[1]);
        run.nccl_version = fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
        run.nccl_version_line = ln;
        run.nccl_version_from_library = true;
      }
    }
    // common.cu's NCCLCHECK / CUDACHECK / TESTCHECK print "HOST: Test NCCL failure FILE:LINE
    // 'reason'" (or CUDA, or a bare "Test failure") and end the run.
    if (l.find("Test NCCL failure") != std::string::npos ||
        l.find("Test CUDA failure") != std::string::npos ||
        l.find(" Test failure ") != std::string::npos) {
      if (run.failures.size() < kMaxQuotedFailures)
        run.failures.push_back({ln, quoted_excerpt(trim(l), kMaxFailureChars)});
      continue;
    }
    if (search(l, m, rank_re)) {
      int rank = 0;
      if (!small_int(m[1], rank)) return at(file, ln, "cannot read the rank number");
      run.ranks = std::max(run.ranks, rank + 1);
      hosts.insert(m[3]);
      // "... device 0 [0000:19:00] NVIDIA H100 80GB HBM3": the name after the PCI address.
      if (const size_t close = l.find(']'); close != std::string::npos) {
        const std::string device = trim(l.substr(close + 1));
        if (!device.empty() &&
            std::find(run.devices.begin(), run.devices.end(), device) == run.devices.end() &&
            run.devices.size() < kMaxDeviceNames)
          run.devices.push_back(device);
      }
      continue;
    }
    if (search(l, m, elided_re)) {
      run.ranks_elided = true;
      continue;
    }
    if (l.rfind("# Blocking Enabled", 0) == 0) {
      run.blocking = true;
      continue;
    }
    if (l.rfind("# nThread ", 0) == 0) {
      // Each field, where the banner has it, a whole number in nccl-tests' own bounds; a banner
      // that says otherwise was edited or cut, and the run's timing cannot be told from it.
      auto field = [&](const std::regex& re, int hi, int& out) -> bool {
        std::smatch f;
        int v = 0;
        if (!search(l, f, re)) return true;  // an older banner without it: the default
        if (!small_int(f[1], v) || v < 1 || v > hi) return false;
        out = v;
        return true;
      };
      int gpus = 0, iters = 0;
      for (const auto& [re, key, hi, out] :
           {std::tuple{&gpus_re, "nGpus", kMaxBannerGpus, &gpus},
            std::tuple{&iters_re, "iters", kMaxBannerIters, &iters}})
        if (!field(*re, hi, *out))
          return at(file, ln,
                    fmt::format("the banner's {} is not a whole number from 1 to {}", key, hi),
                    "keep the '# nThread ... nGpus G ... warmup iters: W iters: I' line as "
                    "nccl-tests printed it (G: its -g, I: its -n)");
      if (banner_line > 0 && (gpus != run.gpus_per_thread || iters != run.iters))
        return at(file, ln,
                  fmt::format("a second nccl-tests banner (nGpus {}, iters {}) differs from the "
                              "one on line {} (nGpus {}, iters {})",
                              gpus, iters, banner_line, run.gpus_per_thread, run.iters),
                  "give each run in a file of its own");
      if (!run.rows.empty()) {  // a banner after a table: the next run's
        // Named by its '# Collective test starting' line where one follows before its table.
        std::string next = "its banner";
        for (size_t k = i + 1; k < lines.size(); ++k) {
          const std::string n = untag(lines[k]);
          std::smatch t;
          if (search(n, t, test_re)) {
            next = t[1].str() + "_perf";
            break;
          }
          if (!n.empty() && n[0] != '#') break;
        }
        return at(file, ln,
                  fmt::format("a second nccl-tests run ({}) after the {} table of line {}", next,
                              run.collective.empty() ? std::string("nccl-tests")
                                                     : run.collective + "_perf",
                              run.rows.front().line),
                  "give each run in a file of its own (check and diagnose take several files)");
      }
      banner_line = ln;
      run.gpus_per_thread = gpus;
      run.iters = iters;
      continue;
    }
    if (search(l, m, test_re)) {
      // Two runs in one file (a loop's outputs appended to one log, a rerun added with >>): each
      // is its own run, and judging one of them would hide the other.
      if (test_line > 0)
        return at(file, ln,
                  fmt::format("a second nccl-tests run ({}_perf) after the {}_perf run of line {}",
                              m[1].str(), run.collective, test_line),
                  "give each run in a file of its own (check and diagnose take several files)");
      run.collective = m[1];
      test_line = ln;
      continue;
    }
    if (search(l, m, avg_re)) {
      double v = 0;
      if (!number(m[1], v))
        return at(file, ln, fmt::format("cannot read the average '{}'", m[1].str()));
      run.avg_busbw_gbs = v;
      run.has_avg = true;
      continue;
    }
    if (l.find("size") != std::string::npos && l.find("count") != std::string::npos &&
        l.find("redop") != std::string::npos) {
      header = true;
      with_root = l.find("root") != std::string::npos;
      continue;
    }
    if (l.empty() || l[0] == '#') continue;
    const auto w = words(l);
    if (!header) continue;  // banner lines before the table
    // size count type redop [root] time algbw busbw #wrong time algbw busbw #wrong
    const size_t need = with_root ? 13 : 12;
    double size = 0;
    if (w.empty()) continue;
    if (!number(w[0], size)) {
      // A warning line between rows; a row whose size does not read (1e400) is corrupt, not
      // skipped.
      if (std::isdigit(static_cast<unsigned char>(w[0][0])) && w.size() >= need)
        return at(file, ln, fmt::format("cannot read the size '{}'", w[0].substr(0, 40)),
                  kAsPrintedHint);
      continue;
    }
    if (w.size() < need)
      return at(
          file, ln,
          fmt::format("row has {} fields, {} expected: the output looks truncated", w.size(), need),
          "re-run the test or keep the complete output");
    NcclTestsRow row;
    row.line = ln;
    row.bytes = size;
    const size_t t = with_root ? 5 : 4;
    if (run.rows.empty()) {  // the columns that tell the collective (op_of_columns)
      run.type = w[2];
      run.redop = w[3];
      long long root = 0;
      if (with_root &&
          std::from_chars(w[4].data(), w[4].data() + w[4].size(), root).ec == std::errc())
        run.root = root;
    } else if (w[2] != run.type || w[3] != run.redop) {
      // Another test's table (all_gather's 'none' after all_reduce's 'sum'), run in the same
      // file without a banner between.
      return at(file, ln,
                fmt::format("a row of another test (type {}, redop {}) after rows of type {}, "
                            "redop {} from line {}",
                            w[2], w[3], run.type, run.redop, run.rows.front().line),
                "give each run in a file of its own");
    }
    if (!number(w[1], row.count) || !number(w[t], row.time_us) ||
        !number(w[t + 1], row.algbw_gbs) || !number(w[t + 2], row.busbw_gbs))
      return at(file, ln, "cannot read the numbers of this row");
    row.wrong = w[t + 3];
    row.wrong_in_place = w[t + 7];
    if (double v = 0; number(w[t + 6], v) && v >= 0) row.busbw_in_place_gbs = v;
    if (row.bytes > 0 && row.time_us == 0)
      return at(file, ln,
                "a time of 0 us: nccl-tests times every call at a microsecond or more, so the "
                "output was edited or corrupted",
                kAsPrintedHint);
    if (row.bytes < 0 || row.time_us < 0 || row.algbw_gbs < 0 || row.busbw_gbs < 0)
      return at(file, ln,
                "a negative size, time or bandwidth: nccl-tests prints none, so the output was "
                "edited or corrupted",
                kAsPrintedHint);
    // nccl-tests derives both bandwidths from one mean time: algbw is the size over it, busbw
    // algbw times the collective's bus factor, under 2 for every test (all_reduce's 2(n-1)/n;
    // nccl-tests src/common.cu and each *_perf's GetBw). Figures that disagree beyond their
    // printed rounding (the time's last digit, 1.3e+05 as much as 4 %) were not printed so.
    if (row.time_us > 0) {
      const double algbw = row.bytes / row.time_us / 1e3;
      const double time_share = printed_half_unit(w[t]) / row.time_us;
      if (std::abs(algbw - row.algbw_gbs) >
          kNcclTestsRounding + (time_share + kNcclTestsRelativeMargin) * algbw)
        return at(file, ln,
                  fmt::format("algbw {:g} GB/s is not the size over the time ({:g} B in {:g} us "
                              "is {:.2f} GB/s): the row was edited or corrupted",
                              row.algbw_gbs, row.bytes, row.time_us, algbw),
                  kAsPrintedHint);
    }
    // Each printed to its rounding: busbw's true value as low as busbw - r, algbw's as high as
    // algbw + r (a 512-rank all_reduce of 4 KiB prints 0.03 and 0.07 for 0.0334 and 0.0658).
    if (row.busbw_gbs - kNcclTestsRounding > 2 * (row.algbw_gbs + kNcclTestsRounding))
      return at(file, ln,
                fmt::format("busbw {:g} GB/s is more than twice algbw {:g}: no nccl-tests "
                            "collective's bus factor reaches 2, so the row was edited or corrupted",
                            row.busbw_gbs, row.algbw_gbs),
                kAsPrintedHint);
    // nccl-tests prints its sizes in increasing order (common.cu's loop from -b to -e): a size
    // below the last is another run's table, appended without its banner. One size printed
    // again at once is a size that rounds to the last one's elements (several rows of 0 bytes).
    if (!run.rows.empty() && size < run.rows.back().bytes)
      return at(file, ln,
                fmt::format("size {:.0f} after size {:.0f} of line {}: nccl-tests prints its "
                            "sizes in increasing order, so this is a second run's table",
                            size, run.rows.back().bytes, run.rows.back().line),
                "give each run in a file of its own (check and diagnose take several files)");
    if (run.rows.empty() || size > run.rows.back().bytes) run.rows.push_back(row);
  }
  if (!header) return at(file, 0, "no nccl-tests table (no 'size count type redop' header)");
  if (run.rows.empty() && !run.failures.empty())
    return at(file, run.failures.front().first,
              "the run failed before any size was timed: " + run.failures.front().second,
              "rerun with NCCL_DEBUG=INFO and give its log to gpufabric diagnose");
  if (run.rows.empty())
    return at(file, static_cast<int>(lines.size()), "the table has no rows: truncated output?");
  run.hosts.assign(hosts.begin(), hosts.end());
  run.nodes = run.ranks_elided ? 0 : static_cast<int>(hosts.size());
  return run;
}

std::optional<std::string> perftest_run_failure(const std::string& text) {
  constexpr std::size_t kMaxReasonChars = 160;
  const std::string t = trim(text);
  if (t.empty()) return std::string("the output is empty");
  if (t[0] == '{') return std::nullopt;
  // A row under the '#bytes' header (its first word a number): the run printed its result.
  const auto lines = lines_of(text);
  bool table = false;
  for (const auto& l : lines) {
    if (l.find("#bytes") != std::string::npos) {
      table = true;
      continue;
    }
    const auto w = words(l);
    double v = 0;
    if (table && !w.empty() && number(w[0], v)) return std::nullopt;
  }
  // perftest's own errors (perftest_resources.c, perftest_communication.c), the shell's and
  // ssh's: the first line that names a failure.
  static constexpr const char* kMarkers[] = {"error",   "fail",      "couldn't", "unable",
                                             "refused", "no route",  "timed out", "not found",
                                             "denied",  "cannot",    "killed"};
  for (const auto& l : lines) {
    const std::string lower = ascii_lower(l);
    for (const char* m : kMarkers)
      if (lower.find(m) != std::string::npos) return quoted_excerpt(trim(l), kMaxReasonChars);
  }
  return std::string("it ended before its result table");
}

Result<PerftestRun> parse_perftest(const std::string& text, const std::string& file) {
  if (text.size() > kMaxInputBytes)
    return at(file, 0, "file too large for a perftest output", kTooLargeHint);
  PerftestRun run;
  const std::string trimmed = trim(text);
  if (!trimmed.empty() && trimmed[0] == '{') {
    // --out_json: {"results": {"MsgSize": ..., "BW_peak": ..., "BW_average": ..., "MsgRate": ...}}
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
      return at(file, 0, std::string("not valid JSON: ") + e.what());
    }
    const auto& r = j.contains("results") ? j["results"] : j;
    if (!r.is_object() || !r.contains("BW_average") || !r["BW_average"].is_number())
      return at(file, 0, "perftest JSON without results.BW_average");
    PerftestRun::Row row;
    for (const auto& [key, v] : {std::pair{"MsgSize", &row.bytes},
                                 {"n_iterations", &row.iterations},
                                 {"BW_peak", &row.bw_peak_gbps},
                                 {"BW_average", &row.bw_avg_gbps},
                                 {"MsgRate", &row.msg_rate_mpps}}) {
      if (!r.contains(key)) continue;
      if (!r[key].is_number())
        return at(file, 0, fmt::format("perftest JSON: {} is not a number", key));
      *v = r[key].get<double>();
    }
    // perftest writes the unit it was asked for; Gb/s with --report_gbits (as its README uses).
    if (j.contains("results") && r.contains("BW_average_unit") &&
        r["BW_average_unit"] == "MB/sec") {
      row.bw_avg_gbps *= 8.0 * 1.048576 / 1000;
      row.bw_peak_gbps *= 8.0 * 1.048576 / 1000;
    }
    if (row.bw_peak_gbps < 0 || row.bw_avg_gbps < 0)
      return at(file, 0, "perftest JSON: a negative bandwidth, which perftest never reports",
                kAsPrintedHint);
    run.rows.push_back(row);
    run.test = "perftest JSON";
    return run;
  }
  const auto lines = lines_of(text);
  bool in_table = false;
  bool msg_rate = false;  // the bandwidth table's header has the MsgRate column
  double bw_scale = 1;    // to Gb/s
  for (size_t i = 0; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i + 1);
    const std::string l = lines[i];
    if (l.find("Conflicting CPU frequency") != std::string::npos ||
        l.find("WARNING") != std::string::npos) {
      run.warnings.push_back(trim(l));
      continue;
    }
    if (l.find(" BW Test") != std::string::npos || l.find(" Latency Test") != std::string::npos) {
      run.test = trim(l);
      run.latency = l.find("Latency") != std::string::npos;
      run.directions = l.find("Bidirectional") != std::string::npos ? 2 : 1;
      continue;
    }
    auto field = [&](const char* key) -> std::string {
      const auto p = l.find(key);
      if (p == std::string::npos) return "";
      const auto c = l.find(':', p);
      if (c == std::string::npos) return "";
      auto w = words(l.substr(c + 1));
      return w.empty() ? "" : w[0];
    };
    if (l.find("Device") != std::string::npos && run.device.empty()) run.device = field("Device");
    if (l.find("Link type") != std::string::npos) run.link_type = field("Link type");
    if (l.find("Mtu") != std::string::npos) {
      std::string s = field("Mtu");
      s = s.substr(0, s.find('['));
      int mtu = 0;
      if (small_int(s, mtu)) run.mtu = mtu;  // informational: anything else leaves it unknown
    }
    if (l.find("#bytes") != std::string::npos) {
      in_table = true;
      if (l.find("[MB/sec]") != std::string::npos) bw_scale = 8.0 * 1.048576 / 1000;  // MiB/s
      if (l.find("[Gb/sec]") != std::string::npos) bw_scale = 1;
      msg_rate = l.find("MsgRate") != std::string::npos;
      continue;
    }
    if (!in_table) continue;
    if (l.find("----") != std::string::npos) {
      in_table = false;
      continue;
    }
    const auto w = words(l);
    if (w.empty()) continue;
    PerftestRun::Row row;
    row.line = ln;
    double v = 0;
    if (!number(w[0], row.bytes)) continue;
    if (run.latency) {
      if (w.size() < 6 || !number(w[1], row.iterations) || !number(w[2], row.t_min_us) ||
          !number(w[4], row.t_typical_us) || !number(w[5], row.t_avg_us))
        return at(file, ln, "latency row truncated or unreadable");
      // t_min, t_max, t_typical, t_avg and the percentiles are times: never negative.
      for (size_t k = 2; k < w.size(); ++k)
        if (number(w[k], v) && v < 0)
          return at(file, ln,
                    "a negative latency: perftest prints none, so the output was edited or "
                    "corrupted",
                    kAsPrintedHint);
    } else {
      if (w.size() < 4 || !number(w[1], row.iterations) || !number(w[2], v))
        return at(file, ln, "bandwidth row truncated or unreadable");
      row.bw_peak_gbps = v * bw_scale;
      if (!number(w[3], v)) return at(file, ln, "bandwidth row truncated or unreadable");
      row.bw_avg_gbps = v * bw_scale;
      // A row cut inside its last column still reads as numbers: one under a MsgRate header
      // must have that column too.
      if (msg_rate && (w.size() < 5 || !number(w[4], v)))
        return at(file, ln, "bandwidth row truncated or unreadable (no MsgRate column)");
      if (w.size() > 4 && number(w[4], v)) row.msg_rate_mpps = v;
      if (row.bw_peak_gbps < 0 || row.bw_avg_gbps < 0)
        return at(file, ln,
                  "a negative bandwidth: perftest prints none, so the output was edited or "
                  "corrupted",
                  kAsPrintedHint);
    }
    // perftest sizes and counts are whole and positive (--size, --iters): anything else was
    // edited or corrupted.
    if (row.bytes < 1 || std::floor(row.bytes) != row.bytes || row.iterations < 1 ||
        std::floor(row.iterations) != row.iterations)
      return at(file, ln,
                "a size or iteration count that is not a positive whole number: perftest prints "
                "none, so the output was edited or corrupted",
                kAsPrintedHint);
    run.rows.push_back(row);
  }
  // perftest closes its results table with a dashed line (RESULT_LINE of perftest_parameters.h,
  // printed after the report, as every fixture here ends): without it the output was cut, maybe
  // inside the last row's figures.
  if (in_table && !run.rows.empty())
    return at(file, run.rows.back().line,
              "truncated output: the results table ends without perftest's closing '----' "
              "line, so this row may be incomplete",
              kAsPrintedHint);
  if (run.rows.empty())
    return at(file, static_cast<int>(lines.size()),
              "no perftest results (no '#bytes' table with rows): truncated output?");
  return run;
}

Result<Iperf3Run> parse_iperf3(const std::string& text, const std::string& file) {
  if (text.size() > kMaxInputBytes)
    return at(file, 0, "file too large for an iperf3 output", kTooLargeHint);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    return at(file, 0, std::string("not valid iperf3 --json output: ") + e.what(),
              "run iperf3 with --json and keep the whole output");
  }
  if (!j.is_object()) return at(file, 0, "not an iperf3 JSON object");
  if (j.contains("error") && j["error"].is_string())
    return at(file, 0, "iperf3 reported an error: " + j["error"].get<std::string>());
  if (!j.contains("end") || !j["end"].is_object())
    return at(file, 0, "iperf3 JSON has no 'end' summary: truncated?");
  Iperf3Run r;
  const auto& start = j.value("start", nlohmann::json::object());
  if (start.is_object() && start.contains("test_start") && start["test_start"].is_object()) {
    const auto& t = start["test_start"];
    if (t.contains("protocol")) {
      if (!t["protocol"].is_string())
        return at(file, 0, "iperf3 JSON: start.test_start.protocol is not a string");
      r.protocol = t["protocol"].get<std::string>();
    }
    if (t.contains("num_streams")) {
      const auto& n = t["num_streams"];
      const double v = n.is_number() ? n.get<double>() : -1;
      if (v < 0 || v > 1e9 || std::floor(v) != v)
        return at(file, 0, "iperf3 JSON: start.test_start.num_streams is not a stream count");
      r.streams = static_cast<int>(v);
    }
  }
  const auto& end = j["end"];
  auto num = [](const nlohmann::json& o, const char* k) {
    return o.is_object() && o.contains(k) && o[k].is_number() ? o[k].get<double>() : 0.0;
  };
  if (end.contains("sum_sent")) {
    r.sent_bps = num(end["sum_sent"], "bits_per_second");
    r.retransmits = num(end["sum_sent"], "retransmits");
  }
  if (end.contains("sum_received")) r.received_bps = num(end["sum_received"], "bits_per_second");
  if (end.contains("sum")) {  // UDP
    r.sent_bps = r.received_bps = num(end["sum"], "bits_per_second");
    r.lost_percent = num(end["sum"], "lost_percent");
  }
  if (r.sent_bps <= 0 && r.received_bps <= 0)
    return at(file, 0, "iperf3 JSON without a throughput in end.sum_sent / end.sum");
  return r;
}

namespace {

// NCCL's names, as its tuner prints them: the table's ncclFuncStr and ncclAlgoStr ("AllReduce",
// "CollNetDirect", "NVLSTree") and the per-call line's ncclAlgoToString ("COLLNET_DIRECT",
// collectives.cc@v2.29.7-1:62-73); case and underscores do not matter.
std::string nccl_key(std::string_view s) {
  std::string k;
  for (char c : s)
    if (c != '_' && c != ' ') k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k;
}
std::optional<Op> nccl_func(std::string_view s) {
  static const std::map<std::string, Op> m = {
      {"broadcast", Op::kBroadcast}, {"reduce", Op::kReduce},
      {"allgather", Op::kAllGather}, {"reducescatter", Op::kReduceScatter},
      {"allreduce", Op::kAllReduce}, {"sendrecv", Op::kSendRecv},
      {"alltoall", Op::kAlltoall}};
  auto it = m.find(nccl_key(s));
  return it == m.end() ? std::nullopt : std::optional<Op>(it->second);
}
std::optional<Algorithm> nccl_algo(std::string_view s) {
  static const std::map<std::string, Algorithm> m = {{"tree", Algorithm::kTree},
                                                     {"ring", Algorithm::kRing},
                                                     {"collnetdirect", Algorithm::kCollNet},
                                                     {"collnetchain", Algorithm::kCollNetChain},
                                                     {"nvls", Algorithm::kNvls},
                                                     {"nvlstree", Algorithm::kNvlsTree},
                                                     {"pat", Algorithm::kPat}};
  auto it = m.find(nccl_key(s));
  return it == m.end() ? std::nullopt : std::optional<Algorithm>(it->second);
}
// NCCL_ALGO_* and NCCL_PROTO_* in their enums' order (src/include/devcomm.h@v2.22.3-1), as the
// 2.20-2.23 per-call line prints them.
std::optional<Algorithm> nccl_algo_index(int i) {
  static constexpr Algorithm kByIndex[] = {
      Algorithm::kTree, Algorithm::kRing,     Algorithm::kCollNet, Algorithm::kCollNetChain,
      Algorithm::kNvls, Algorithm::kNvlsTree, Algorithm::kPat};
  if (i < 0 || i >= static_cast<int>(std::size(kByIndex))) return std::nullopt;
  return kByIndex[i];
}
std::optional<Protocol> nccl_proto_index(int i) {
  if (i < 0 || i > 2) return std::nullopt;
  return static_cast<Protocol>(i);  // LL, LL128, Simple: the same order as NCCL's
}

std::vector<std::string> bar_cells(std::string_view row) {
  std::vector<std::string> cells;
  size_t b = 0;
  for (size_t e; (e = row.find('|', b)) != std::string_view::npos; b = e + 1)
    cells.push_back(trim(std::string(row.substr(b, e - b))));
  const std::string tail = trim(std::string(row.substr(b)));
  if (!tail.empty()) cells.push_back(tail);
  return cells;
}

// One row of the tuner's table, or a per-call pick; a NCCL line that is neither is left alone.
// A row that starts a table's shape but breaks it is an error: the log is cut or not NCCL's.
class TunerReader {
 public:
  TunerReader(const std::string& file, NcclLog& log) : file_(file), log_(log) {}

  std::optional<Diagnostic> line(int ln, std::string_view msg) {
    const std::vector<std::string> cells = bar_cells(msg);
    if (cells.size() >= 2 && cells[0] == "Algorithm") {
      algos_.clear();
      protos_.clear();
      for (size_t i = 1; i < cells.size(); ++i) {
        if (cells[i].empty()) continue;
        auto a = nccl_algo(cells[i]);
        algos_.push_back(a);  // an unknown (newer) algorithm keeps its place, unread
      }
      if (algos_.empty()) return bad(ln, "an 'Algorithm' row of the tuning table names none");
      if (algos_.front() == Algorithm::kTree) ++log_.tuner_tables;  // every table's first block
      return std::nullopt;
    }
    if (algos_.empty()) return pick(ln, msg);
    if (cells.size() >= 2 && cells[0] == "Protocol") {
      for (size_t i = 1; i < cells.size(); ++i) {
        auto p = parse_protocol(cells[i]);
        if (!p) return bad(ln, fmt::format("unknown protocol '{}' in the tuning table", cells[i]));
        protos_.push_back(*p);
      }
      return std::nullopt;
    }
    if (cells.size() >= 2 && cells[0] == "Max NThreads") return std::nullopt;
    if (cells.size() < 2) return pick(ln, msg);
    // A row of the table: a function's name (one gpufabric does not know keeps the table's
    // shape and is read past), then latency/bandwidth cells.
    auto op = nccl_func(cells[0]);
    if (!op && cells[1].find('/') == std::string::npos) return pick(ln, msg);
    const size_t want = algos_.size() * kProtocols;
    if (protos_.size() < want) return bad(ln, "a tuning-table row before its 'Protocol' row");
    if (cells.size() - 1 != want)
      return bad(
          ln, fmt::format("a tuning-table row of {} cells, {} expected", cells.size() - 1, want));
    for (size_t i = 0; i < want; ++i) {
      const std::string& c = cells[i + 1];
      const size_t slash = c.find('/');
      double lat = 0, bw = 0;
      if (slash == std::string::npos || !number(trim(c.substr(0, slash)), lat) ||
          !number(trim(c.substr(slash + 1)), bw) || lat < 0 || bw < 0)
        return bad(ln, fmt::format("tuning-table cell '{}' is not 'latency/bandwidth'", c));
      const auto& a = algos_[i / kProtocols];
      if (op && a) log_.tuner.push_back({ln, *op, *a, protos_[i], lat, bw});
    }
    return std::nullopt;
  }

 private:
  static constexpr size_t kProtocols = 3;  // NCCL_NUM_PROTOCOLS

  std::optional<Diagnostic> bad(int ln, const std::string& what) const {
    return at(file_, ln, what, "give the log as NCCL wrote it (NCCL_DEBUG=INFO), whole");
  }

  std::optional<Diagnostic> pick(int ln, std::string_view msg) {
    if (msg.find(" Bytes -> Algo ") == std::string_view::npos) return std::nullopt;
    static const std::regex now_re(
        R"(^(\w+): (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\})");
    static const std::regex old_re(
        R"(^(?:(\w+): )?(\d+) Bytes -> Algo (\d+) proto (\d+) time ([0-9.eE+-]+))");
    const std::string l(msg);
    std::smatch m;
    NcclLog::TunerPick p;
    p.line = ln;
    double bytes = 0;
    if (search(l, m, now_re)) {
      auto op = nccl_func(m[1].str());
      auto a = nccl_algo(m[3].str());
      auto pr = parse_protocol(m[4].str());
      int lo = 0, hi = 0;
      if (!op || !a || !pr || !number(m[2], bytes) || !small_int(m[5], lo) ||
          !small_int(m[6], hi) || hi < lo)
        return std::nullopt;  // a collective or algorithm gpufabric does not model
      p.op = op;
      p.algorithm = *a;
      p.protocol = *pr;
      p.channels = hi - lo + 1;
    } else if (search(l, m, old_re)) {
      int ai = 0, pi = 0;
      double est = 0;
      auto a = small_int(m[3], ai) ? nccl_algo_index(ai) : std::nullopt;
      auto pr = small_int(m[4], pi) ? nccl_proto_index(pi) : std::nullopt;
      if (!a || !pr || !number(m[2], bytes) || !number(m[5], est)) return std::nullopt;
      if (m[1].matched) p.op = nccl_func(m[1].str());
      p.algorithm = *a;
      p.protocol = *pr;
      p.estimate_us = est;
    } else {
      return std::nullopt;
    }
    if (bytes > 9e18) return std::nullopt;
    p.bytes = static_cast<long long>(bytes);
    log_.picks.push_back(p);
    return std::nullopt;
  }

  const std::string& file_;
  NcclLog& log_;
  std::vector<std::optional<Algorithm>> algos_;
  std::vector<Protocol> protos_;
};

}  // namespace

Result<NcclLog> parse_nccl_log(const std::string& text, const std::string& file) {
  if (text.size() > kMaxInputBytes)
    return at(file, 0, "file too large for an NCCL log", kTooLargeHint);
  NcclLog log;
  const auto lines = lines_of(text);
  static const std::regex version_re(R"(NCCL version (\S+))");
  static const std::regex nranks_re(R"(nranks (\d+))");
  static const std::regex network_re(R"(Using network (\S+))");
  static const std::regex ib_re(R"(NET/IB : Using (.*?)( ; OOB|$))");
  static const std::regex dev_re(R"(\[\d+\](\S+))");
  static const std::regex via_re(R"(via (\S+))");
  bool any = false;
  TunerReader tuner(file, log);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i + 1);
    const std::string& l = lines[i];
    if (l.find("NCCL") == std::string::npos) continue;
    any = true;
    if (const size_t info = l.find("NCCL INFO "); info != std::string::npos)
      if (auto err = tuner.line(ln, std::string_view(l).substr(info + 10))) return *err;
    std::smatch m;
    if (log.version.empty() && search(l, m, version_re)) log.version = m[1];
    int nranks = 0;
    if (search(l, m, nranks_re) && small_int(m[1], nranks))
      log.nranks = std::max(log.nranks, nranks);
    if (search(l, m, network_re)) log.network = m[1];
    if (l.find("NET/IB : No device found") != std::string::npos)
      log.no_ib_device.push_back({ln, l});
    if (search(l, m, ib_re)) {
      if (log.ib_devices_line == 0) log.ib_devices_line = ln;
      const std::string list = m[1];
      for (std::sregex_iterator it(list.begin(), list.end(), dev_re), e; it != e; ++it)
        log.ib_devices.push_back((*it)[1]);
    }
    if (search(l, m, via_re)) {
      const std::string v = m[1];
      log.transports.push_back({ln, v});
      if (v.rfind("NET/IB", 0) == 0) {
        ++log.net_ib;
        if (v.find("GDRDMA") != std::string::npos) ++log.net_ib_gdr;
      }
      if (v.rfind("NET/Socket", 0) == 0) {
        ++log.net_socket;
        log.socket_fallback.push_back({ln, l});
      }
      if (v.rfind("P2P", 0) == 0) ++log.p2p;
      if (v.rfind("SHM", 0) == 0) ++log.shm;
    }
    if (l.find("NVLS multicast support is available") != std::string::npos) log.nvls = true;
    if (l.find("CollNet") != std::string::npos && l.find("enabled") != std::string::npos)
      log.collnet = true;
    if (l.find("NCCL WARN") != std::string::npos ||
        l.find("Transport retry count exceeded") != std::string::npos ||
        l.find("unhandled system error") != std::string::npos ||
        l.find("Timeout") != std::string::npos)
      log.errors.push_back({ln, l});
  }
  if (!any)
    return at(file, 0, "no NCCL lines: not an NCCL_DEBUG=INFO log", "run with NCCL_DEBUG=INFO");
  if (log.network.empty() && log.net_socket > 0) log.network = "Socket";
  return log;
}

Result<TopoMatrix> parse_topo(const std::string& text, const std::string& file) {
  if (text.size() > kMaxInputBytes)
    return at(file, 0, "file too large for nvidia-smi output", kTooLargeHint);
  TopoMatrix t;
  const auto lines = lines_of(text);
  std::vector<std::string> cols;
  static const std::regex legend_re(R"(^\s*(NIC\d+):\s*(\S+))");
  for (size_t i = 0; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i + 1);
    const std::string& l = lines[i];
    std::smatch m;
    if (search(l, m, legend_re)) {
      t.nic_device[m[1]] = m[2];
      continue;
    }
    auto w = words(l);
    if (w.empty()) continue;
    if (cols.empty() && w[0] == "GPU0") {
      for (const auto& x : w)
        if (x.rfind("GPU", 0) == 0 || x.rfind("NIC", 0) == 0 || x.rfind("mlx", 0) == 0)
          cols.push_back(x);
        else
          break;
      continue;
    }
    if (cols.empty() || w[0].rfind("GPU", 0) != 0) continue;
    // "X" is printed padded (" X "); the row has one entry per column after its name.
    if (w.size() < cols.size() + 1)
      return at(file, ln,
                fmt::format("row {} has {} entries, {} columns expected", w[0], w.size() - 1,
                            cols.size()));
    t.gpus.push_back(w[0]);
    t.line[w[0]] = ln;
    for (size_t c = 0; c < cols.size(); ++c)
      if (cols[c].rfind("GPU", 0) != 0) t.link[w[0]][cols[c]] = w[c + 1];
  }
  if (cols.empty()) return at(file, 0, "no 'GPU0 GPU1 ...' header: not nvidia-smi topo -m output");
  for (const auto& c : cols)
    if (c.rfind("GPU", 0) != 0) t.nics.push_back(c);
  return t;
}

Result<std::vector<IbvDevice>> parse_ibv_devinfo(const std::string& text, const std::string& file) {
  if (text.size() > kMaxInputBytes)
    return at(file, 0, "file too large for ibv_devinfo output", kTooLargeHint);
  std::vector<IbvDevice> out;
  const auto lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i + 1);
    const auto w = words(lines[i]);
    if (w.size() < 2) continue;
    const std::string k = w[0];
    if (k == "hca_id:") {
      out.push_back({w[1], "", {}});
      continue;
    }
    if (out.empty()) continue;
    auto& d = out.back();
    if (k == "transport:") d.transport = w[1];
    if (k == "port:") {
      int n = 0;
      if (!small_int(w[1], n)) return at(file, ln, "cannot read the port number");
      d.ports.push_back({n, ln, "", "", "", "", 0});
    }
    if (d.ports.empty()) continue;
    auto& p = d.ports.back();
    if (k == "state:") p.state = w[1];
    if (k == "link_layer:") p.link_layer = w[1];
    if (k == "active_width:") p.active_width = w[1];
    if (k == "active_speed:") p.active_speed = w.size() > 2 ? w[1] + " " + w[2] : w[1];
    if (k == "active_mtu:") {
      // One of the IB MTUs (ibv_mtu: 256 to 4096), as "4096 (5)"; anything else was edited.
      int v = 0;
      if (!small_int(w[1], v) || (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096))
        return at(file, ln, "active_mtu is not an InfiniBand MTU (256, 512, 1024, 2048, 4096)",
                  kAsPrintedHint);
      p.active_mtu = v;
    }
  }
  if (out.empty()) return at(file, 0, "no 'hca_id:' lines: not ibv_devinfo output");
  return out;
}

Result<EthtoolStats> parse_ethtool(const std::string& text, const std::string& file) {
  if (text.size() > kMaxInputBytes)
    return at(file, 0, "file too large for ethtool output", kTooLargeHint);
  EthtoolStats s;
  const auto lines = lines_of(text);
  bool started = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i + 1);
    const std::string l = trim(lines[i]);
    if (l == "NIC statistics:") {
      started = true;
      continue;
    }
    if (!started || l.empty()) continue;
    const auto c = l.rfind(':');
    if (c == std::string::npos) return at(file, ln, "expected 'counter: value'");
    double v = 0;
    if (!number(trim(l.substr(c + 1)), v)) return at(file, ln, "counter value is not a number");
    if (v < 0)
      return at(file, ln,
                "a negative counter: ethtool -S prints unsigned counters, so the output was "
                "edited or corrupted",
                kAsPrintedHint);
    const std::string name = trim(l.substr(0, c));
    s.counters[name] = v;
    s.line[name] = ln;
  }
  if (!started) return at(file, 0, "no 'NIC statistics:' header: not ethtool -S output");
  return s;
}

Result<PerfqueryCounters> parse_perfquery(const std::string& text, const std::string& file) {
  if (text.size() > kMaxInputBytes)
    return at(file, 0, "file too large for perfquery output", kTooLargeHint);
  static const std::regex head_re(R"(^# Port (extended )?counters: Lid (\d+) port (\d+))");
  PerfqueryCounters q;
  const auto lines = lines_of(text);
  int header = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i + 1);
    const std::string l = trim(lines[i]);
    std::smatch m;
    if (search(l, m, head_re)) {
      int lid = 0, port = 0;
      if (!small_int(m[2].str(), lid) || !small_int(m[3].str(), port))
        return at(file, ln, "cannot read the LID or the port number");
      // One port per file; its basic and its extended (-x) counters may follow each other, the
      // extended ones (64-bit data counters) read last.
      if (header && (lid != q.lid || port != q.port || m[1].matched == q.extended))
        return at(file, ln,
                  fmt::format("a second port's counters (the first at line {}): one port per file",
                              header),
                  "read each port on its own: perfquery -C DEVICE -P PORT; perfquery -x -C "
                  "DEVICE -P PORT");
      header = ln;
      q.extended = q.extended || m[1].matched;
      q.lid = lid;
      q.port = port;
      continue;
    }
    if (!header || l.empty() || l[0] == '#') continue;
    // "SymbolErrorCounter:..............0": the name, a colon, dots, the value.
    const auto c = l.find(':');
    if (c == std::string::npos || c == 0) return at(file, ln, "expected 'Counter:....value'");
    const std::string name = l.substr(0, c);
    size_t v0 = c + 1;
    while (v0 < l.size() && l[v0] == '.') ++v0;
    const std::string value = trim(l.substr(v0));
    double v = 0;
    if (value.rfind("0x", 0) == 0) {  // CounterSelect, CapMask: hexadecimal, not a count
      uint64_t h = 0;
      const auto r = std::from_chars(value.data() + 2, value.data() + value.size(), h, 16);
      if (value.size() == 2 || r.ec != std::errc() || r.ptr != value.data() + value.size())
        return at(file, ln, "counter value is not a number");
      v = static_cast<double>(h);
    } else if (!number(value, v) || v < 0) {
      return at(file, ln, fmt::format("{}: counter value '{}' is not a count", name, value));
    }
    q.counters[name] = v;
    q.line[name] = ln;
  }
  if (!header)
    return at(file, 0, "no '# Port counters: Lid N port N' header: not perfquery output");
  if (q.counters.empty())
    return at(file, static_cast<int>(lines.size()), "no counters after the header: truncated?");
  return q;
}

Result<std::vector<IpLinkInterface>> parse_ip_link(const std::string& text,
                                                   const std::string& file) {
  if (text.size() > kMaxInputBytes)
    return at(file, 0, "file too large for ip link output", kTooLargeHint);
  std::vector<IpLinkInterface> out;
  static const std::regex re(R"(^\d+: ([^:@ ]+)(@\S+)?: <[^>]*> mtu (\S+)(.*state (\S+))?)");
  const auto lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!search(lines[i], m, re)) continue;
    IpLinkInterface f;
    f.name = m[1];
    if (!small_int(m[3], f.mtu) || f.mtu < kMinLinuxMtu || f.mtu > kMaxLinuxMtu)
      return at(file, static_cast<int>(i + 1),
                fmt::format("cannot read the MTU '{}' (Linux keeps it within {} and {})",
                            quoted_excerpt(m[3].str()), kMinLinuxMtu, kMaxLinuxMtu),
                kAsPrintedHint);
    f.state = m[5].matched ? m[5].str() : "";
    f.line = static_cast<int>(i + 1);
    out.push_back(f);
  }
  if (out.empty()) return at(file, 0, "no interfaces: not 'ip link' output");
  return out;
}

}  // namespace gf
