// Parsers on outputs of the real tools (tests/data/outputs), truncated and garbage input.
#include "verify/parsers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../../tests/support.h"

namespace gf {
namespace {

std::string fixture(const std::string& name) { return testing::output_fixture(name); }

// A file of tests/data/FOLDER, whole.
std::string test_data(const std::string& folder, const std::string& name) {
  std::ifstream in(std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/" + folder + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The first `n` lines of a text: a run cut short.
std::string head(const std::string& s, int n) {
  size_t p = 0;
  for (int i = 0; i < n && p != std::string::npos; ++i) p = s.find('\n', p + 1);
  return s.substr(0, p);
}

}  // namespace

TEST(Parsers, DetectsEveryKind) {
  EXPECT_EQ(detect_output_kind(fixture("nccl-tests-2node-allreduce.txt")), OutputKind::kNcclTests);
  EXPECT_EQ(detect_output_kind(fixture("all_reduce_perf-old-tagged.txt")), OutputKind::kNcclTests);
  EXPECT_EQ(detect_output_kind(fixture("ib_write_bw-400g.txt")), OutputKind::kPerftest);
  EXPECT_EQ(detect_output_kind(fixture("ib_write_lat.txt")), OutputKind::kPerftest);
  EXPECT_EQ(detect_output_kind(fixture("iperf3-tcp.json")), OutputKind::kIperf3);
  EXPECT_EQ(detect_output_kind(fixture("nccl-debug-ib-retry.log")), OutputKind::kNcclLog);
  EXPECT_EQ(detect_output_kind(fixture("nvidia-smi-topo.txt")), OutputKind::kTopo);
  EXPECT_EQ(detect_output_kind(fixture("ibv_devinfo.txt")), OutputKind::kIbvDevinfo);
  EXPECT_EQ(detect_output_kind(fixture("ethtool-S-pfc-storm.txt")), OutputKind::kEthtool);
  EXPECT_EQ(detect_output_kind(fixture("ip-d-link.txt")), OutputKind::kIpLink);
  EXPECT_EQ(detect_output_kind("hello world"), OutputKind::kUnknown);
  // A line longer than any tool prints (10 MB pasted in before the table) hides nothing after it;
  // junk made only of such lines is still no tool's.
  const std::string blob(10'000'000, 'x');
  EXPECT_EQ(detect_output_kind(blob + "\n" + fixture("nccl-tests-2node-allreduce.txt")),
            OutputKind::kNcclTests);
  EXPECT_EQ(detect_output_kind(blob + "\n" + blob), OutputKind::kUnknown);
  // One JSON document on one line longer than 64 KiB (iperf3 -J through jq -c): its first keys.
  std::string compact = fixture("iperf3-tcp.json");
  std::erase(compact, '\n');
  compact.insert(compact.size() - 1, ",\"pad\":\"" + std::string(100000, ' ') + "\"");
  EXPECT_EQ(detect_output_kind(compact), OutputKind::kIperf3);
  // A run that could not connect: iperf3's start block and its error, named as iperf3's.
  const std::string refused =
      "{\n\t\"start\":\t{\n\t\t\"connected\":\t[],\n\t\t\"version\":\t\"iperf 3.12\",\n"
      "\t\t\"connecting_to\":\t{\n\t\t\t\"host\":\t\"10.128.0.2\",\n\t\t\t\"port\":\t5201\n"
      "\t\t}\n\t},\n\t\"intervals\":\t[],\n\t\"end\":\t{\n\t},\n\t\"error\":\t\"unable to "
      "connect to server: Connection refused\"\n}\n";
  EXPECT_EQ(detect_output_kind(refused), OutputKind::kIperf3);
  const auto failed = parse_iperf3(refused, "r.json");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.errors().front().message.find(
                "iperf3 reported an error: unable to connect to server: Connection refused"),
            std::string::npos);
}

// A run of other GPUs than the spec's: another family, or a PCIe card against an SXM module of
// the same name (and the other way round).
TEST(Parsers, TheRunsDevicesAgainstTheSpecsGpu) {
  auto error_for = [](const std::string& device, const std::string& gpu) {
    NcclTestsRun run;
    run.devices = {device};
    const auto e = device_gpu_error(run, gpu, "run.out", "plan the GPUs that ran");
    return e ? e->message : std::string();
  };
  EXPECT_EQ(error_for("NVIDIA A100-SXM4-80GB", "a100-sxm-80g"), "");
  EXPECT_EQ(error_for("NVIDIA H100 80GB HBM3", "h100-sxm"), "");
  EXPECT_EQ(error_for("NVIDIA A100-PCIE-40GB", "a100-pcie-40g"), "");
  EXPECT_EQ(error_for("NVIDIA B200", "h100-sxm"),
            "the run's rank lines name NVIDIA B200; the spec's GPUs are h100-sxm");
  EXPECT_EQ(error_for("NVIDIA A100-PCIE-40GB", "a100-sxm-40g"),
            "the run's rank lines name NVIDIA A100-PCIE-40GB, a PCIe card; the spec's GPUs are "
            "a100-sxm-40g, not PCIe cards");
  EXPECT_EQ(error_for("NVIDIA H100 PCIe", "h100-sxm"),
            "the run's rank lines name NVIDIA H100 PCIe, a PCIe card; the spec's GPUs are "
            "h100-sxm, not PCIe cards");
  EXPECT_EQ(error_for("NVIDIA A100-SXM4-40GB", "a100-pcie-40g"),
            "the run's rank lines name NVIDIA A100-SXM4-40GB, not a PCIe card; the spec's GPUs "
            "are a100-pcie-40g, PCIe cards");
}

TEST(Parsers, NcclTestsCurrentLayout) {
  auto r = parse_nccl_tests(fixture("nccl-tests-2node-allreduce.txt"), "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->ranks, 16);
  EXPECT_EQ(r->nodes, 2);
  ASSERT_EQ(r->rows.size(), 8u);
  EXPECT_DOUBLE_EQ(r->rows.back().bytes, 8589934592.0);
  EXPECT_DOUBLE_EQ(r->rows.back().time_us, 32017);  // %.0f width
  EXPECT_DOUBLE_EQ(r->rows.back().busbw_gbs, 503.04);
  EXPECT_TRUE(r->has_avg);
  EXPECT_DOUBLE_EQ(r->avg_busbw_gbs, 189.283);
}

// gpufabric simulate's own table leaves rank lines out ('#  ... ranks 8 to N on nodes A to B'):
// the hosts it names are not the run's, so the nodes are left unknown (nodes_of: the ranks).
TEST(Parsers, NcclTestsWithRankLinesLeftOut) {
  std::string text = fixture("nccl-tests-2node-allreduce.txt");
  const size_t from = text.find("#  Rank  2 ");
  const size_t to = text.find("#  Rank 15 ");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  text.replace(from, to - from, "#  ... ranks 2 to 14 on nodes 1 to 2\n");
  auto r = parse_nccl_tests(text, "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_TRUE(r->ranks_elided);
  EXPECT_EQ(r->ranks, 16);
  EXPECT_EQ(r->nodes, 0);
  EXPECT_EQ(nodes_of(*r, 8), 2);
}

TEST(Parsers, NcclTestsOldLayoutWithMpirunTags) {
  auto r = parse_nccl_tests(fixture("all_reduce_perf-old-tagged.txt"), "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->ranks, 6);
  EXPECT_EQ(r->nodes, 3);
  ASSERT_EQ(r->rows.size(), 6u);
  EXPECT_EQ(r->rows[0].wrong, "5e-07");  // the float error column
  EXPECT_DOUBLE_EQ(r->rows[3].time_us, 14233);
  // The banner, old layout (no "agg iters"): -g and -n.
  EXPECT_EQ(r->gpus_per_thread, 1);
  EXPECT_EQ(r->iters, 20);
}

// Without the '# Collective test starting' banner the collective is the file's name (with or
// without underscores), else what the table's columns tell alone: the reduction, the root and
// the count against the size (nccl-tests' common.cu prints the per-rank count of the part
// collectives). all_gather and alltoall print alike, and the layout without a root column leaves
// the rooted collectives apart from the others: those are not guessed.
TEST(Parsers, TheCollectiveOfAnOutputWithoutItsBanner) {
  // Four ranks on two hosts, one 1 GiB row of `type` with `count`, `redop` and `root`.
  auto table = [](const std::string& count, const std::string& redop, const std::string& root) {
    std::string t = "# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor)\n";
    for (int r = 0; r < 4; ++r)
      t += fmt::format("#  Rank {} Group  0 Pid 1 on node{} device {} [0x18] NVIDIA H100\n", r,
                       r / 2, r % 2);
    t += "#       size         count      type   redop    root     time   algbw   busbw #wrong "
         "    time   algbw   busbw #wrong\n";
    return t + fmt::format(
                   "  1073741824 {} float {} {}  4212.6  254.89  254.89  0  4209.8  "
                   "255.06  255.06  0\n",
                   count, redop, root);
  };
  auto op = [](const std::string& text, const std::string& file) {
    auto r = parse_nccl_tests(text, file);
    EXPECT_TRUE(r.ok()) << format_diagnostics(r.errors());
    const auto o = r.ok() ? op_of(*r, file) : std::nullopt;
    return o ? std::string(op_name(*o)) : std::string("none");
  };
  const std::string whole = "268435456", part = "67108864";
  EXPECT_EQ(op(table(whole, "sum", "-1"), "run.txt"), "all_reduce");
  EXPECT_EQ(op(table(part, "sum", "-1"), "run.txt"), "reduce_scatter");
  EXPECT_EQ(op(table(whole, "sum", "0"), "run.txt"), "reduce");
  EXPECT_EQ(op(table(whole, "none", "0"), "run.txt"), "broadcast");
  EXPECT_EQ(op(table(whole, "none", "-1"), "run.txt"), "sendrecv");
  EXPECT_EQ(op(table(part, "none", "-1"), "run.txt"), "none");  // all_gather or alltoall
  // The name says, whatever the columns: underscores or not, all_reduce is not reduce.
  EXPECT_EQ(op(table(part, "none", "-1"), "logs/all_gather_perf.out"), "all_gather");
  EXPECT_EQ(op(table(part, "none", "-1"), "alltoall-8n.log"), "alltoall");
  EXPECT_EQ(op(table(whole, "sum", "-1"), "nccl-tests-2node-allreduce.txt"), "all_reduce");
  EXPECT_EQ(op(table(whole, "sum", "-1"), "reduce-scatter.txt"), "reduce_scatter");
  // The old layout (no root column): all_reduce and reduce print alike.
  auto old = parse_nccl_tests(fixture("all_reduce_perf-old-tagged.txt"), "f");
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->root.has_value());
  EXPECT_FALSE(op_of(*old, "old.txt").has_value());
}

// A row whose size does not read as a number, or whose time is 0, is corrupt: an error at its
// line, not a row left out or a measurement of nothing.
TEST(Parsers, NcclTestsRowsWithAnUnreadableSizeOrNoTimeAreErrors) {
  const std::string text = fixture("nccl-tests-2node-allreduce.txt");
  for (const auto& [from, to, says] :
       {std::tuple{"  1073741824     268435456", "      1e400     268435456",
                   "cannot read the size"},
        std::tuple{"4212.6  254.89  477.91", "  0.00    0.00    0.00", "a time of 0 us"}}) {
    std::string bad = text;
    const size_t at = bad.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bad.replace(at, std::string(from).size(), to);
    auto r = parse_nccl_tests(bad, "f");
    ASSERT_FALSE(r.ok()) << from;
    const std::string e = format_diagnostics(r.errors());
    EXPECT_NE(e.find("f:30:"), std::string::npos) << e;
    EXPECT_NE(e.find(says), std::string::npos) << e;
  }
}

// The banner's nGpus (-g) and timed iters (-n), not its "warmup iters" or "agg iters"; none: 0.
TEST(Parsers, NcclTestsBannerGpusAndIters) {
  std::string text = fixture("nccl-tests-2node-allreduce.txt");
  auto r = parse_nccl_tests(text, "f");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->gpus_per_thread, 1);
  EXPECT_EQ(r->iters, 20);
  const std::string banner = "# nThread 1 nGpus 1 ";
  const size_t at = text.find(banner);
  ASSERT_NE(at, std::string::npos);
  std::string g8 = text;
  g8.replace(at, banner.size(), "# nThread 1 nGpus 8 ");
  const size_t it = g8.find("iters: 20 agg iters: 1");
  ASSERT_NE(it, std::string::npos);
  g8.replace(it, 9, "iters: 50");
  auto e = parse_nccl_tests(g8, "f");
  ASSERT_TRUE(e.ok()) << format_diagnostics(e.errors());
  EXPECT_EQ(e->gpus_per_thread, 8);
  EXPECT_EQ(e->iters, 50);
  std::string none = text;
  none.erase(at, text.find('\n', at) + 1 - at);
  auto n = parse_nccl_tests(none, "f");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->iters, 0);
  EXPECT_EQ(n->gpus_per_thread, 0);
  std::string blocking = text;
  blocking.insert(blocking.find('\n', at) + 1,
                  "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n");
  auto b = parse_nccl_tests(blocking, "f");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->blocking);
  EXPECT_FALSE(r->blocking);
  std::string huge = text;
  huge.replace(huge.find("iters: 20 agg"), 9, "iters: 99999999999");
  auto h = parse_nccl_tests(huge, "f");
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.errors().front().message.find("iters"), std::string::npos);
  // Edited banners are errors naming the line and the field, not silently the defaults.
  const int banner_line =
      1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  for (const auto& [from, to, key] :
       {std::tuple{std::string("iters: 20 agg"), std::string("iters: 0 agg"), "iters"},
        std::tuple{std::string("iters: 20 agg"), std::string("iters: abc agg"), "iters"},
        std::tuple{std::string("nGpus 1 "), std::string("nGpus x "), "nGpus"}}) {
    std::string bad = text;
    bad.replace(bad.find(from), from.size(), to);
    auto e2 = parse_nccl_tests(bad, "f");
    ASSERT_FALSE(e2.ok()) << to;
    EXPECT_NE(e2.errors().front().message.find(key), std::string::npos) << to;
    EXPECT_EQ(e2.errors().front().line, banner_line) << to;
  }
  // Two runs in one file with different banners.
  const std::string line = text.substr(at, text.find('\n', at) + 1 - at);
  std::string two = text;
  std::string other = line;
  other.replace(other.find("iters: 20 agg"), 13, "iters: 50 agg");
  two.insert(two.find('\n', at) + 1, other);
  auto t2 = parse_nccl_tests(two, "f");
  ASSERT_FALSE(t2.ok());
  EXPECT_NE(t2.errors().front().message.find("second nccl-tests banner"), std::string::npos);
}

TEST(Parsers, NcclTestsDuplicatedBlocksAndTruncation) {
  const std::string one = fixture("nccl-tests-2node-allreduce.txt");
  // Cut in the middle of a row: an error naming the line.
  const std::string cut = one.substr(0, one.find("1390.5") + 3);
  auto bad = parse_nccl_tests(cut, "run.out");
  ASSERT_FALSE(bad.ok());
  EXPECT_GT(bad.errors()[0].line, 20);
  EXPECT_NE(format_diagnostic(bad.errors()[0]).find("truncated"), std::string::npos);
  // Header only.
  EXPECT_FALSE(parse_nccl_tests(head(one, 22), "f").ok());
  EXPECT_FALSE(parse_nccl_tests("garbage\n\x01\x02", "f").ok());
}

// Two tests' outputs in one file (a loop appending each *_perf to one log): an error at the
// second's line, whether its banner says so or only its rows do; read as one run, the second's
// rows had been taken as the first's collective (an all_reduce's figures checked as all_gather).
TEST(Parsers, NcclTestsTwoRunsInOneFileAreRefused) {
  auto calfit = [](const std::string& name) { return test_data("calfit", name); };
  const std::string both =
      calfit("2026-05-12-all_gather-ring-2n.out") + calfit("2026-05-12-all_reduce-ring-2n.out");
  auto r = parse_nccl_tests(both, "log");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors()[0].message.find("a second nccl-tests run (all_reduce_perf) after the "
                                       "all_gather_perf table of line"),
            std::string::npos)
      << r.errors()[0].message;
  std::string no_banner;
  std::istringstream lines(both);
  for (std::string l; std::getline(lines, l);)
    if (l.find("Collective test starting") == std::string::npos && l.rfind("# nThread", 0) != 0)
      no_banner += l + "\n";
  auto rows = parse_nccl_tests(no_banner, "log");
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.errors()[0].message.find("a row of another test (type float, redop sum) after "
                                          "rows of type float, redop none"),
            std::string::npos)
      << rows.errors()[0].message;
}

// The same test run twice in one file (a rerun appended with >>): the second run is refused at
// its banner, or without one at its first row, whose size is below the last (nccl-tests prints
// its sizes in increasing order). Its figures had been dropped unseen behind the first run's: a
// rerun at 60 % passed. Sizes that round to the same elements (rows of 0 bytes) stay one run.
TEST(Parsers, NcclTestsTheSameTestTwiceInOneFileIsRefused) {
  const std::string one = fixture("nccl-tests-2node-allreduce.txt");
  auto twice = parse_nccl_tests(one + one, "log");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.errors()[0].message.find("a second nccl-tests run (its banner) after the "),
            std::string::npos)
      << twice.errors()[0].message;
  std::string table;  // the rows alone, as a log that kept no banner
  std::istringstream lines(one);
  for (std::string l; std::getline(lines, l);)
    if (!l.empty() && l[0] != '#') table += l + "\n";
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  auto alone = parse_nccl_tests(header + table, "log");
  ASSERT_TRUE(alone.ok()) << alone.errors()[0].message;
  auto appended = parse_nccl_tests(header + table + table, "log");
  ASSERT_FALSE(appended.ok());
  EXPECT_NE(appended.errors()[0].message.find("nccl-tests prints its sizes in increasing order"),
            std::string::npos)
      << appended.errors()[0].message;
  EXPECT_EQ(appended.errors()[0].line, 2 + static_cast<int>(alone->rows.size()));
  const std::string zeros =
      "           0             0     float     sum      -1     0.16    0.00    0.00      0     "
      "0.15    0.00    0.00      0\n"
      "           0             0     float     sum      -1     0.17    0.00    0.00      0     "
      "0.15    0.00    0.00      0\n";
  auto rounded = parse_nccl_tests(header + zeros + table, "log");
  ASSERT_TRUE(rounded.ok()) << rounded.errors()[0].message;
  EXPECT_EQ(rounded->rows.size(), alone->rows.size() + 1);
}

// The NCCL release a run names: NCCL's own "NCCL version" line, else the nccl-tests banner's
// nccl-library code (major x 10000 + minor x 100 + patch); NCCL's line wins where both are.
TEST(Parsers, NcclTestsRunsNameTheirNcclRelease) {
  const std::string table = fixture("nccl-tests-2node-allreduce.txt");
  auto none = parse_nccl_tests(table, "run.out");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->nccl_version, "");
  const std::string banner = "# nccl-tests version 2.17.9 nccl-headers=22403 nccl-library=22403\n";
  auto library = parse_nccl_tests(banner + table, "run.out");
  ASSERT_TRUE(library.ok());
  EXPECT_EQ(library->nccl_version, "2.24.3");
  EXPECT_EQ(library->nccl_version_line, 1);
  EXPECT_TRUE(library->nccl_version_from_library);
  auto both = parse_nccl_tests(
      banner + "host:1:1 [0] NCCL INFO NCCL version 2.24.3+cuda12.6\n" + table, "run.out");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->nccl_version, "2.24.3");
  EXPECT_EQ(both->nccl_version_line, 2);
  EXPECT_FALSE(both->nccl_version_from_library);
}

// nccl-tests prints no negative figure, and derives algbw (the size over the time) and busbw
// (algbw times a bus factor under 2) from one time: a row that breaks either was edited or
// corrupted, an error at its line. Both #wrong columns are read.
TEST(Parsers, NcclTestsRowsThatWereNotPrintedSoAreErrors) {
  const std::string one = fixture("nccl-tests-2node-allreduce.txt");
  const std::string row =
      "  1073741824     268435456     float     sum      -1   4212.6  254.89  477.91      0   "
      "4209.8  255.06  478.23      0";
  ASSERT_NE(one.find(row), std::string::npos);
  auto with = [&](const std::string& edited) {
    std::string t = one;
    t.replace(t.find(row), row.size(), edited);
    return parse_nccl_tests(t, "run.out");
  };
  auto error_of = [&](const std::string& edited) {
    auto r = with(edited);
    return r.ok() ? std::string() : format_diagnostics(r.errors());
  };
  std::string e = error_of(
      "  1073741824     268435456     float     sum      -1   4212.6  254.89  -477.91      0   "
      "4209.8  255.06  478.23      0");
  EXPECT_NE(e.find("run.out:30:"), std::string::npos) << e;
  EXPECT_NE(e.find("negative"), std::string::npos) << e;
  e = error_of(  // the time multiplied, the bandwidths left
      "  1073741824     268435456     float     sum      -1   42126.0  254.89  477.91      0   "
      "4209.8  255.06  478.23      0");
  EXPECT_NE(e.find("algbw 254.89 GB/s is not the size over the time"), std::string::npos) << e;
  e = error_of(
      "  1073741824     268435456     float     sum      -1   4212.6  254.89  4779.1      0   "
      "4209.8  255.06  478.23      0");
  EXPECT_NE(e.find("busbw 4779.1 GB/s is more than twice algbw 254.89"), std::string::npos) << e;
  // Each bandwidth rounded to two places: 0.07 beside 0.03 is a 512-rank all_reduce's 0.0658
  // beside 0.0334 (4 KiB in 122.6 us), as nccl-tests prints it.
  const std::string small =
      "        1024           256     float     sum      -1    58.77    0.02    0.03      0    "
      "58.12    0.02    0.03      0";
  ASSERT_NE(one.find(small), std::string::npos);
  std::string four_kib = one;
  four_kib.replace(four_kib.find(small), small.size(),
                   "        4096          1024     float     sum      -1   122.64    0.03    "
                   "0.07      0   121.13    0.03    0.07      0");
  auto rounded = parse_nccl_tests(four_kib, "run.out");
  EXPECT_TRUE(rounded.ok()) << format_diagnostics(rounded.errors());
  // The time's printed precision is the rounding allowed: 4.2e+03 stands for 4150-4250 us.
  EXPECT_EQ(error_of("  1073741824     268435456     float     sum      -1   4.2e+03  254.89  "
                     "477.91      0   4209.8  255.06  478.23      0"),
            "");
  auto wrong = with(
      "  1073741824     268435456     float     sum      -1   4212.6  254.89  477.91      0   "
      "4209.8  255.06  478.23    999");
  ASSERT_TRUE(wrong.ok()) << format_diagnostics(wrong.errors());
  const auto at_1g = std::find_if(wrong->rows.begin(), wrong->rows.end(),
                                  [](const NcclTestsRow& r) { return r.bytes == 1073741824; });
  ASSERT_NE(at_1g, wrong->rows.end());
  const NcclTestsRow& w = *at_1g;
  EXPECT_EQ(w.wrong, "0");
  EXPECT_EQ(w.wrong_in_place, "999");
  EXPECT_FALSE(reports_wrong_results(w.wrong));
  EXPECT_TRUE(reports_wrong_results(w.wrong_in_place));
  EXPECT_FALSE(reports_wrong_results("N/A"));
  EXPECT_FALSE(reports_wrong_results("1e-05"));  // the old float error column, a correct sum
  EXPECT_TRUE(reports_wrong_results("0.5"));
}

TEST(Parsers, Perftest) {
  auto bw = parse_perftest(fixture("ib_write_bw-400g.txt"), "f");
  ASSERT_TRUE(bw.ok()) << format_diagnostics(bw.errors());
  EXPECT_EQ(bw->device, "mlx5_0");
  EXPECT_EQ(bw->link_type, "IB");
  EXPECT_EQ(bw->mtu, 4096);
  ASSERT_EQ(bw->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(bw->rows[0].bw_avg_gbps, 391.24);
  EXPECT_EQ(bw->warnings.size(), 2u);  // "BW peak won't be measured", CPU frequency
  auto mb = parse_perftest(fixture("ib_write_bw-slow-mb.txt"), "f");
  ASSERT_TRUE(mb.ok());
  EXPECT_NEAR(mb->rows[0].bw_avg_gbps, 24302.17 * 8 * 1.048576 / 1000, 1e-6);  // MiB/s
  auto lat = parse_perftest(fixture("ib_write_lat.txt"), "f");
  ASSERT_TRUE(lat.ok());
  EXPECT_TRUE(lat->latency);
  EXPECT_DOUBLE_EQ(lat->rows[0].t_typical_us, 1.07);
  // A negative time is corrupt input, as a negative bandwidth is (it had read as a short path).
  for (const char* figure : {"1.03 ", "1.07 "}) {
    std::string neg = fixture("ib_write_lat.txt");
    const size_t at = neg.find(figure);
    ASSERT_NE(at, std::string::npos);
    neg.insert(at, "-");
    auto bad = parse_perftest(neg, "lat.txt");
    ASSERT_FALSE(bad.ok()) << figure;
    EXPECT_EQ(bad.errors()[0].line, 16);
    EXPECT_NE(bad.errors()[0].message.find("a negative latency"), std::string::npos);
  }
  auto json = parse_perftest(
      R"({"results": {"MsgSize": 65536, "n_iterations": 5000, "BW_peak": 0, "BW_average": 392.5, "MsgRate": 0.74}})",
      "f");
  ASSERT_TRUE(json.ok());
  EXPECT_DOUBLE_EQ(json->rows[0].bw_avg_gbps, 392.5);
  EXPECT_FALSE(parse_perftest(head(fixture("ib_write_bw-400g.txt"), 19), "f").ok());
  // Cut inside the last row: the figures left still read as numbers (391.24 as 39), and a row
  // cut after BW average lacks its MsgRate. Both are truncated output at the row's line, as is
  // a table without perftest's closing dashed line.
  const std::string whole = fixture("ib_write_bw-400g.txt");
  const size_t avg = whole.find("391.24");
  ASSERT_NE(avg, std::string::npos);
  for (const std::string& cut : {whole.substr(0, avg + 2), whole.substr(0, avg + 6) + "\n",
                                 whole.substr(0, whole.rfind("\n-") + 1)}) {
    auto r = parse_perftest(cut, "bw.txt");
    ASSERT_FALSE(r.ok()) << cut;
    EXPECT_EQ(r.errors()[0].file, "bw.txt");
    EXPECT_GT(r.errors()[0].line, 0);
    EXPECT_NE(r.errors()[0].message.find("truncated"), std::string::npos) << r.errors()[0].message;
  }
}

TEST(Parsers, Iperf3) {
  auto r = parse_iperf3(fixture("iperf3-tcp.json"), "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->protocol, "TCP");
  EXPECT_EQ(r->streams, 8);
  EXPECT_NEAR(r->received_bps, 158.96e9, 0.01e9);
  EXPECT_DOUBLE_EQ(r->retransmits, 1432);
  auto udp = parse_iperf3(
      R"({"start": {"test_start": {"protocol": "UDP", "num_streams": 1}}, "end": {"sum": {"bits_per_second": 9.4e9, "lost_percent": 0.3}}})",
      "f");
  ASSERT_TRUE(udp.ok());
  EXPECT_DOUBLE_EQ(udp->lost_percent, 0.3);
  EXPECT_FALSE(parse_iperf3(fixture("iperf3-tcp.json").substr(0, 500), "f").ok());
  EXPECT_FALSE(parse_iperf3(R"({"error": "unable to connect to server"})", "f").ok());
}

TEST(Parsers, NcclDebugLogs) {
  auto s = parse_nccl_log(fixture("nccl-debug-socket-fallback.log"), "f");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->version, "2.18.5+cuda12.2");
  EXPECT_EQ(s->nranks, 16);
  EXPECT_EQ(s->network, "Socket");
  EXPECT_EQ(s->net_socket, 2);
  EXPECT_EQ(s->p2p, 2);
  EXPECT_EQ(s->no_ib_device.size(), 1u);
  auto ib = parse_nccl_log(fixture("nccl-debug-ib-retry.log"), "f");
  ASSERT_TRUE(ib.ok());
  EXPECT_EQ(ib->network, "IB");
  EXPECT_EQ(ib->ib_devices.size(), 4u);
  EXPECT_EQ(ib->ib_devices[0], "mlx5_0:1/RoCE");
  EXPECT_EQ(ib->net_ib, 2);
  EXPECT_EQ(ib->net_ib_gdr, 1);
  EXPECT_TRUE(ib->nvls);
  EXPECT_GE(ib->errors.size(), 2u);
  EXPECT_FALSE(parse_nccl_log("just text\n", "f").ok());
}

TEST(Parsers, NcclTuningTableAndPicks) {
  // NCCL 2.29.7 as printed (eunomia-bpf/nccl-eBPF docs/tmp/default-suboptimal-search.md, see
  // tests/data/outputs/README.md): three blocks of the table, then the picks per call.
  auto log = parse_nccl_log(fixture("nccl-2.29.7-tuning-socket-2rank.log"), "f");
  ASSERT_TRUE(log.ok()) << log.errors()[0].message;
  EXPECT_EQ(log->version, "2.29.7+cuda12.9");
  EXPECT_EQ(log->tuner_tables, 1);
  EXPECT_EQ(log->tuner.size(), 5u * 9 + 5u * 9 + 5u * 3);
  auto cell = [&](Op op, Algorithm a, Protocol p) {
    for (const auto& e : log->tuner)
      if (e.op == op && e.algorithm == a && e.protocol == p) return e;
    return NcclLog::TunerEntry{};
  };
  const auto bl = cell(Op::kBroadcast, Algorithm::kRing, Protocol::kLL);
  EXPECT_EQ(bl.line, 8);
  EXPECT_DOUBLE_EQ(bl.latency_us, 9.3);
  EXPECT_DOUBLE_EQ(bl.bandwidth_GBs, 1.2);
  EXPECT_DOUBLE_EQ(cell(Op::kAllReduce, Algorithm::kTree, Protocol::kSimple).latency_us, 36.4);
  EXPECT_DOUBLE_EQ(cell(Op::kAllReduce, Algorithm::kCollNetChain, Protocol::kLL128).latency_us,
                   8.5);
  EXPECT_DOUBLE_EQ(cell(Op::kReduceScatter, Algorithm::kPat, Protocol::kSimple).bandwidth_GBs, 3.6);
  ASSERT_EQ(log->picks.size(), 72u);
  EXPECT_EQ(log->picks[4].op, Op::kBroadcast);
  EXPECT_EQ(log->picks[4].bytes, 16384);
  EXPECT_EQ(log->picks[4].protocol, Protocol::kLL);
  EXPECT_EQ(log->picks[4].channels, 2);
  EXPECT_EQ(log->picks[5].protocol, Protocol::kSimple);
  EXPECT_EQ(log->picks[5].algorithm, Algorithm::kRing);
  EXPECT_FALSE(log->picks[5].estimate_us);
  // 2.20-2.22: no collective, indices, the estimate (nccl issue 1453's form).
  auto old =
      parse_nccl_log("h:1:1 [0] NCCL INFO 131072 Bytes -> Algo 0 proto 1 time 51.603912\n", "f");
  ASSERT_TRUE(old.ok());
  ASSERT_EQ(old->picks.size(), 1u);
  EXPECT_FALSE(old->picks[0].op);
  EXPECT_EQ(old->picks[0].algorithm, Algorithm::kTree);
  EXPECT_EQ(old->picks[0].protocol, Protocol::kLL128);
  EXPECT_NEAR(*old->picks[0].estimate_us, 51.603912, 1e-9);
}

TEST(Parsers, NcclTuningTableCutOrGarbledIsAnErrorAtItsLine) {
  const std::string text = fixture("nccl-2.29.7-tuning-socket-2rank.log");
  std::vector<std::string> lines;
  for (size_t b = 0, e; (e = text.find('\n', b)) != std::string::npos; b = e + 1)
    lines.push_back(text.substr(b, e - b));
  auto join = [](const std::vector<std::string>& ls) {
    std::string out;
    for (const auto& l : ls) out += l + "\n";
    return out;
  };
  auto cut = lines;  // the AllGather row cut inside its fifth cell
  cut[9] = cut[9].substr(0, cut[9].find("|    11.6/") + 8);
  auto r = parse_nccl_log(join(cut), "nccl.log");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].line, 10);
  EXPECT_NE(r.errors()[0].message.find("cells"), std::string::npos) << r.errors()[0].message;
  auto garbled = lines;
  const size_t at = garbled[7].find("9.3/");
  garbled[7].replace(at, 4, "9.3|");
  EXPECT_FALSE(parse_nccl_log(join(garbled), "nccl.log").ok());
  auto nan = lines;
  nan[7].replace(nan[7].find("9.3/   1.2"), 10, "9.3/   nan");
  auto n = parse_nccl_log(join(nan), "nccl.log");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.errors()[0].line, 8);
  // A row before its table's Protocol row.
  auto early = lines;
  early.erase(early.begin() + 5);
  EXPECT_FALSE(parse_nccl_log(join(early), "nccl.log").ok());
}

TEST(Parsers, SystemOutputs) {
  auto t = parse_topo(fixture("nvidia-smi-topo.txt"), "f");
  ASSERT_TRUE(t.ok()) << format_diagnostics(t.errors());
  EXPECT_EQ(t->gpus.size(), 4u);
  EXPECT_EQ(t->nics.size(), 4u);
  EXPECT_EQ(t->link["GPU0"]["NIC0"], "PIX");
  EXPECT_EQ(t->link["GPU2"]["NIC2"], "PXB");
  EXPECT_EQ(t->nic_device["NIC1"], "mlx5_1");
  auto d = parse_ibv_devinfo(fixture("ibv_devinfo.txt"), "f");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0].ports[0].state, "PORT_ACTIVE");
  EXPECT_EQ((*d)[1].ports[0].active_mtu, 1024);
  EXPECT_EQ((*d)[1].ports[0].link_layer, "Ethernet");
  auto e = parse_ethtool(fixture("ethtool-S-pfc-storm.txt"), "f");
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(e->counters["rx_prio3_pause"], 8811209);
  EXPECT_FALSE(parse_ethtool("NIC statistics:\n  rx_packets: lots\n", "f").ok());
  auto ip = parse_ip_link(fixture("ip-d-link.txt"), "f");
  ASSERT_TRUE(ip.ok());
  ASSERT_EQ(ip->size(), 4u);
  EXPECT_EQ((*ip)[2].name, "ens1np0");
  EXPECT_EQ((*ip)[2].mtu, 9000);
  EXPECT_EQ((*ip)[2].state, "UP");
}

TEST(Parsers, Perfquery) {
  auto acceptance = [](const std::string& name) { return test_data("acceptance", name); };
  auto x = parse_perfquery(acceptance("perfquery-x.txt"), "f");
  ASSERT_TRUE(x.ok()) << format_diagnostics(x.errors());
  EXPECT_TRUE(x->extended);
  EXPECT_EQ(x->lid, 1907);
  EXPECT_EQ(x->port, 1);
  EXPECT_DOUBLE_EQ(x->counters["PortRcvData"], 41279122301887);
  EXPECT_DOUBLE_EQ(x->counters["LinkDownedCounter"], 1);
  EXPECT_EQ(x->line["SymbolErrorCounter"], 13);
  auto b = parse_perfquery(acceptance("perfquery.txt"), "f");
  ASSERT_TRUE(b.ok()) << format_diagnostics(b.errors());
  EXPECT_FALSE(b->extended);
  EXPECT_DOUBLE_EQ(b->counters["SymbolErrorCounter"], 1542);
  // Not perfquery; two ports in one file; a value that is not a count: each names its line.
  EXPECT_FALSE(parse_perfquery("PortSelect:....1\n", "f").ok());
  auto two = parse_perfquery(acceptance("perfquery.txt") + acceptance("perfquery.txt"), "f");
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.errors()[0].line, 22);
  // The runbook reads both blocks of one port: the basic one's errors, the extended one's data.
  std::string both = acceptance("perfquery.txt"), x2 = acceptance("perfquery-x.txt");
  both.replace(both.find("Lid 1922"), 8, "Lid 1907");
  auto merged = parse_perfquery(both + x2, "f");
  ASSERT_TRUE(merged.ok()) << format_diagnostics(merged.errors());
  EXPECT_TRUE(merged->extended);
  EXPECT_DOUBLE_EQ(merged->counters["PortRcvData"], 41279122301887);  // 64-bit, not saturated
  EXPECT_GT(merged->line["PortRcvData"], 22);                         // from the second block
  EXPECT_FALSE(parse_perfquery(x2 + x2, "f").ok());  // the same block twice is two ports' worth
  auto bad = parse_perfquery("# Port counters: Lid 1 port 1\nSymbolErrorCounter:.....lots\n", "f");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].line, 2);
  EXPECT_FALSE(parse_perfquery("# Port counters: Lid 1 port 1\n", "f").ok());  // truncated
}

// JSON fields of the wrong type are bad input; nlohmann's value() and get() threw type_error
// 302 out of the parser (an internal error, exit 3).
TEST(Parsers, JsonFieldsOfTheWrongTypeAreErrors) {
  auto p = parse_perftest(R"({"results": {"MsgSize": "65536", "BW_average": 392.5}})", "f");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.errors()[0].message, "perftest JSON: MsgSize is not a number");
  auto i = parse_iperf3(
      R"({"start": {"test_start": {"protocol": 6}}, "end": {"sum": {"bits_per_second": 1e9}}})",
      "f");
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.errors()[0].message, "iperf3 JSON: start.test_start.protocol is not a string");
  for (const char* streams : {"1e300", "-1", "2.5", "\"8\""}) {
    auto n = parse_iperf3(fmt::format(R"({{"start": {{"test_start": {{"num_streams": {}}}}},
                                          "end": {{"sum": {{"bits_per_second": 1e9}}}}}})",
                                      streams),
                          "f");
    ASSERT_FALSE(n.ok()) << streams;
    EXPECT_NE(n.errors()[0].message.find("num_streams"), std::string::npos);
  }
}

// A number too large for an int was converted all the same (undefined behaviour, UBSan's
// float-cast-overflow): a port or an MTU must be a whole number up to 1e9.
TEST(Parsers, NumbersTooLargeForTheFieldAreNotCast) {
  auto d = parse_ibv_devinfo("hca_id:\tmlx5_0\n\t\tport:\t1e300\n", "f");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.errors()[0].line, 2);
  // An active_mtu that is not an InfiniBand MTU (too large, negative, not a number) is an
  // error at its line, not an unknown that lets every check pass.
  for (const char* bad : {"9e99 (5)", "-1024 (5)", "nan", "9000 (5)"}) {
    auto mtu = parse_ibv_devinfo(
        std::string("hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tactive_mtu:\t") + bad + "\n", "f");
    ASSERT_FALSE(mtu.ok()) << bad;
    EXPECT_EQ(mtu.errors()[0].line, 3) << bad;
  }
  auto good =
      parse_ibv_devinfo("hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tactive_mtu:\t4096 (5)\n", "f");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ((*good)[0].ports[0].active_mtu, 4096);
  for (const char* bad : {"99999999999", "-1500", "nan"}) {
    auto ip = parse_ip_link(
        std::string("2: ens1np0: <UP,LOWER_UP> mtu ") + bad + " qdisc mq state UP\n", "f");
    ASSERT_FALSE(ip.ok()) << bad;
    EXPECT_NE(ip.errors()[0].message.find("cannot read the MTU"), std::string::npos) << bad;
  }
  // ethtool -S counters are unsigned.
  auto neg = parse_ethtool("NIC statistics:\n     rx_prio3_pause: -50000\n", "f");
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.errors()[0].line, 2);
  auto bw = fixture("ib_write_bw-400g.txt");
  const auto at = bw.find("4096[B]");
  ASSERT_NE(at, std::string::npos);
  auto pt = parse_perftest(bw.replace(at, 4, "1e300"), "f");
  ASSERT_TRUE(pt.ok());
  EXPECT_EQ(pt->mtu, 0);  // unknown
  // perftest's sizes and iteration counts are positive whole numbers.
  for (const auto& [from, to] : {std::pair{" 65536      2862390", " -65536      2862390"},
                                 std::pair{" 65536      2862390", " 65536      -2862390"},
                                 std::pair{" 65536      2862390", " 65536.5      2862390"}}) {
    std::string edited = fixture("ib_write_bw-400g.txt");
    const auto row = edited.find(from);
    ASSERT_NE(row, std::string::npos);
    auto e = parse_perftest(edited.replace(row, std::string(from).size(), to), "f");
    ASSERT_FALSE(e.ok()) << to;
    EXPECT_NE(e.errors()[0].message.find("positive whole number"), std::string::npos);
  }
}

// std::regex recurses once per character a match attempt takes: a line of ~50,000 characters
// overflowed the stack (a segmentation fault). Such lines are not matched.
TEST(Parsers, LongLinesDoNotOverflowTheStack) {
  const std::string tag = "gpu-node-02:39102:39180 [0] NCCL INFO ";
  const std::string long_run(1 << 20, 'a');
  auto log = parse_nccl_log(tag + "NCCL version 2.21.5\n" + tag + "NET/IB : Using " + long_run +
                                "\n" + tag + "Channel 00/0 : 0[0] -> 1[1] via " + long_run + "\n",
                            "f");
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->version, "2.21.5");
  EXPECT_TRUE(log->ib_devices.empty());
  EXPECT_TRUE(log->transports.empty());
  const std::string ip = "1: lo: <" + long_run + "> mtu 65536\n";
  EXPECT_EQ(detect_output_kind(ip), OutputKind::kUnknown);
  EXPECT_FALSE(parse_ip_link(ip, "f").ok());
  EXPECT_FALSE(parse_nccl_tests("# Rank" + std::string(1 << 20, ' ') + "0 Pid 1 on h\n", "f").ok());
  EXPECT_FALSE(parse_topo("NIC0: " + long_run + "\n", "f").ok());
  // A line at the limit is still read.
  const std::string names = "[0]mlx5_0:1/IB " + std::string(3000, ' ');
  auto ok = parse_nccl_log(tag + "NET/IB : Using " + names + "; OOB ib0\n", "f");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->ib_devices.size(), 1u);
}

// Inputs the fuzzer (or a review while fuzzing) found, kept in tests/data/fuzz-regressions:
// each once crashed a parser or threw out of it.
TEST(Parsers, FuzzRegressions) {
  int seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GPUFABRIC_SOURCE_DIR) +
                                                           "/tests/data/fuzz-regressions")) {
    if (e.path().filename().string().rfind("parsers-", 0) != 0) continue;
    ++seen;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string t = ss.str();
    EXPECT_NO_THROW({
      (void)parse_nccl_tests(t, "f");
      (void)parse_perftest(t, "f");
      (void)parse_iperf3(t, "f");
      (void)parse_nccl_log(t, "f");
      (void)parse_topo(t, "f");
      (void)parse_ibv_devinfo(t, "f");
      (void)parse_ethtool(t, "f");
      (void)parse_ip_link(t, "f");
      (void)parse_perfquery(t, "f");
      (void)detect_output_kind(t);
    }) << e.path();
  }
  EXPECT_GE(seen, 5);
}

}  // namespace gf

namespace gf {
TEST(Parsers, NcclTestsNumberFormatsAndNA) {
  const std::string t =
      "# Collective test starting: all_gather_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      " 17179869184    268435456     float    none      -1  1.3e+05  131.92  123.67    N/A  "
      "1.3e+05  132.01  123.76    N/A\n"
      "# Avg bus bandwidth    : 123.67 \n";
  auto r = parse_nccl_tests(t, "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->collective, "all_gather");
  EXPECT_DOUBLE_EQ(r->rows[0].time_us, 1.3e5);
  EXPECT_EQ(r->rows[0].wrong, "N/A");
}
}  // namespace gf
