// The simulator against published measurements (data/calibration/nccl-public.csv): the reader,
// the fit/test split and the per-set summary. No test here asserts an accuracy figure: the fit
// set is what constants were set from, and the test set's figures are the model's to earn (the
// targets are reported by `gpufabric calibrate`, not asserted).
#include "verify/calibration.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "common/csv.h"

namespace gf {
namespace {

const std::string kHeader =
    "source,hardware,nodes,gpus_per_node,nic,nics_per_node,fabric,nccl,collective,algo,bytes,"
    "busbw_gbs,time_us,note";

std::string shipped() {
  const std::string path = GPUFABRIC_SOURCE_DIR "/data/calibration/nccl-public.csv";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "missing " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

// Every shipped row is either simulated or listed as skipped with a reason, in its own set; both
// sets have points.
TEST(Calibration, PublishedNcclMeasurementsAreAllAccountedFor) {
  const std::string text = shipped();
  auto s = calibrate(text, "nccl-public.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  std::cout << calibration_summary_table(*s);
  EXPECT_TRUE(s->has_set_column);
  const CsvTable csv(text);
  EXPECT_EQ(s->points.size() + s->skipped_rows.size(), csv.rows());
  EXPECT_EQ(s->skipped.size(), s->skipped_rows.size());
  std::set<int> lines;
  for (const auto& p : s->points) {
    lines.insert(p.line);
    EXPECT_TRUE(std::isfinite(p.simulated) && p.simulated > 0) << "line " << p.line;
  }
  for (const auto& k : s->skipped_rows) {
    EXPECT_FALSE(k.reason.empty()) << "line " << k.line;
    EXPECT_TRUE(lines.insert(k.line).second) << "line " << k.line << " counted twice";
  }
  EXPECT_GT(s->fit.points, 0);
  EXPECT_GT(s->test.points, 0);
  EXPECT_EQ(s->fit.points + s->test.points, static_cast<int>(s->points.size()));
  EXPECT_EQ(s->fit.skipped + s->test.skipped, static_cast<int>(s->skipped_rows.size()));
  // Each point's set is the one its row names.
  for (const auto& p : s->points)
    for (size_t r = 0; r < csv.rows(); ++r)
      if (csv.line(r) == p.line) {
        EXPECT_EQ(p.set, csv.at(r, "set")) << "line " << p.line;
      }
  // The test set is not empty in any of the target's bands a user would look at first.
  EXPECT_GT(s->test.large.count, 0);
  EXPECT_EQ(s->pass, s->test.pass);
}

TEST(Calibration, RejectsAFileWithoutTheColumns) {
  auto s = calibrate("a,b,c\n1,2,3\n", "x.csv");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(format_diagnostic(s.errors()[0]).find("missing column"), std::string::npos);
}

// A file without the set column (a copy of an older nccl-public.csv, a user's own list) is read
// as all fit: nothing in it is claimed to be unseen.
TEST(Calibration, AFileWithoutTheSetColumnIsAllFit) {
  auto s = calibrate(kHeader +
                         "\nx,H100-SXM,1,8,none,0,NVLink4,,all_reduce,ring,1073741824,360,,n\n"
                         "y,H100-SXM,1,8,none,0,NVLink4,,all_gather,ring,1048576,22,,n\n",
                     "old.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  EXPECT_FALSE(s->has_set_column);
  ASSERT_EQ(s->points.size(), 2u);
  for (const auto& p : s->points) EXPECT_EQ(p.set, "fit");
  EXPECT_EQ(s->fit.points, 2);
  EXPECT_EQ(s->test.points, 0);
  EXPECT_FALSE(s->pass);  // no test set: nothing judged
  EXPECT_NE(calibration_summary_table(*s).find("no set column"), std::string::npos);
}

TEST(Calibration, TheSetColumnIsRead) {
  auto s = calibrate(kHeader +
                         ",set\nx,H100-SXM,1,8,none,0,NVLink4,,all_reduce,ring,1073741824,360,,n,"
                         "fit\ny,H100-SXM,1,8,none,0,NVLink4,,all_reduce,ring,1073741824,360,,n,"
                         "test\n",
                     "split.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  EXPECT_TRUE(s->has_set_column);
  ASSERT_EQ(s->points.size(), 2u);
  EXPECT_EQ(s->points[0].set, "fit");
  EXPECT_EQ(s->points[1].set, "test");
  EXPECT_EQ(s->fit.points, 1);
  EXPECT_EQ(s->test.points, 1);
}

// A set other than fit or test is bad input at its line and key, whatever else the row holds.
TEST(Calibration, ABadSetIsAnErrorAtItsLine) {
  auto s = calibrate(kHeader +
                         ",set\nx,H100-SXM,1,8,none,0,NVLink4,,all_reduce,ring,1073741824,360,,n,"
                         "fit\ny,H100-SXM,1,8,none,0,NVLink4,,all_reduce,ring,1073741824,360,,n,"
                         "tset\n",
                     "bad.csv");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(format_diagnostic(s.errors()[0]),
            "bad.csv:3: error: set: 'tset' is neither fit nor test (fit: a row constants may be "
            "set from; test: a row kept unseen)");
  auto blank = calibrate(kHeader +
                             ",set\nx,H100-SXM,1,8,none,0,NVLink4,,all_reduce,ring,1073741824,"
                             "360,,n,\n",
                         "blank.csv");
  ASSERT_FALSE(blank.ok());
  EXPECT_NE(format_diagnostic(blank.errors()[0]).find("blank.csv:2: error: set: ''"),
            std::string::npos);
}

// A fit row never reaches the test statistics: the fit row below is published at a figure the
// simulator cannot come near (1000x off), the test row at the same hardware and size at a
// plausible one. The test set's worst error must be the test row's own, whatever it is.
TEST(Calibration, FitRowsNeverEnterTheTestStatistics) {
  auto s = calibrate(kHeader +
                         ",set\nfit-src,H100-SXM,1,8,none,0,NVLink4,,all_reduce,ring,1073741824,"
                         "360000,,n,fit\ntest-src,H100-SXM,1,8,none,0,NVLink4,,all_reduce,ring,"
                         "1073741824,360,,n,test\nfit-src,H100-SXM,1,8,none,0,NVLink4,,all_reduce,"
                         "ring,8,,0.035,n,fit\n",
                     "sep.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  ASSERT_EQ(s->points.size(), 3u);
  const CalibrationPoint& fit_row = s->points[0];
  const CalibrationPoint& test_row = s->points[1];
  ASSERT_GT(std::fabs(fit_row.error), 0.99);
  EXPECT_EQ(s->test.large.count, 1);
  EXPECT_DOUBLE_EQ(s->test.large.worst, std::fabs(test_row.error));
  EXPECT_DOUBLE_EQ(s->test.large.median, std::fabs(test_row.error));
  EXPECT_EQ(s->test.small.count, 0);  // the small fit row stays in the fit set
  EXPECT_EQ(s->fit.small.count, 1);
  EXPECT_DOUBLE_EQ(s->fit.large.worst, std::fabs(fit_row.error));
  for (const auto& g : s->test.groups) EXPECT_LE(g.stats.worst, std::fabs(test_row.error));
  for (const auto& g : s->test.source_groups) EXPECT_EQ(g.collective, "test-src");
  // The test verdict is judged on the test row alone.
  EXPECT_EQ(s->test.targets.size(), 4u);
  for (const auto& t : s->test.targets) EXPECT_EQ(t.count, t.band == "large" ? 1 : 0);
}

// Rows the simulator cannot run are listed with the reason, not dropped and not approximated.
TEST(Calibration, UnrunnableRowsAreSkippedWithTheReason) {
  auto s =
      calibrate(kHeader +
                    ",set\n"
                    "a,H20-3e,8,8,not stated,,x,,alltoall,auto,8388608,24.44,,n,test\n"
                    "b,H100-SXM,2,8,EFA,32,EFA,,all_reduce,auto,1048576,15.95,,n,test\n"
                    "c,H100-SXM,2,8,not stated,,x,,all_reduce,auto,1048576,9.68,,n,test\n"
                    "d,B200,4,8,400G,8,InfiniBand NDR,,all_reduce,nvls,8589934592,350.8,,n,test\n"
                    "e,H100-PCIE,2,1,200G,1,InfiniBand,,sendrecv,auto,1070596096,14.61,,n,"
                    "test\n"
                    "f,H100-SXM,1,8,none,0,NVLink4,,all_reduce,ring,1073741824,360,,n,test\n"
                    "g,A100-PCIE-40GB,2,1,200G,1,InfiniBand,,sendrecv,auto,1070596096,14.61,,n,"
                    "test\n"
                    "h,A100 80GB PCIe,2,1,200G,1,InfiniBand,,sendrecv,auto,1070596096,14.61,,n,"
                    "test\n",
                "skip.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  ASSERT_EQ(s->skipped_rows.size(), 6u);
  EXPECT_NE(s->skipped_rows[0].reason.find("GPU 'H20-3e' is not in the catalog"), std::string::npos);
  EXPECT_NE(s->skipped_rows[1].reason.find("NIC 'EFA' is not in the catalog"), std::string::npos);
  EXPECT_NE(s->skipped_rows[2].reason.find("does not state the NIC"), std::string::npos);
  EXPECT_NE(s->skipped_rows[3].reason.find("all_reduce nvls is not simulated"), std::string::npos)
      << s->skipped_rows[3].reason;
  // A PCIe card is not the catalog's SXM module of the same name.
  EXPECT_NE(s->skipped_rows[4].reason.find("GPU 'H100-PCIE' is not in the catalog"),
            std::string::npos)
      << s->skipped_rows[4].reason;
  // The catalog's one card (a100-pcie-40g) stands for its runs; the 80 GB card is not it.
  EXPECT_NE(s->skipped_rows[5].reason.find("GPU 'A100 80GB PCIe' is not in the catalog"),
            std::string::npos)
      << s->skipped_rows[5].reason;
  EXPECT_EQ(s->test.skipped, 6);
  EXPECT_EQ(s->fit.skipped, 0);
  ASSERT_EQ(s->points.size(), 2u);
  EXPECT_EQ(s->points[1].hardware, "A100-PCIE-40GB");
  const std::string text = calibration_table(*s);
  EXPECT_NE(text.find("skipped: line 2 (test): GPU 'H20-3e'"), std::string::npos) << text;
}

// A GB200 row runs on the catalog's gb200, whose NVLink domain is a rack of 72 (a node a tray of
// 4 GPUs), not as an HGX B200 of 8: one rack of 18 trays is one domain, where NCCL runs NVLS with
// no NIC in the path.
TEST(Calibration, GraceBlackwellRowsRunOnTheRacksNvlinkDomain) {
  auto s = calibrate(kHeader +
                         ",set\n"
                         "cw,GB200,18,4,none,0,NVLink5 (NVL72),2.26.2,all_reduce,auto,8589934592,"
                         "834.57,,n,test\n",
                     "gb200.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  ASSERT_EQ(s->points.size(), 1u);
  EXPECT_EQ(s->points[0].simulated_algorithm, "nvls");
  EXPECT_EQ(s->points[0].nodes, 18);
  EXPECT_EQ(s->points[0].gpus_per_node, 4);
}

// NCCL_BUFFSIZE in the nccl_env column runs the row with that Simple buffer (a tree's longer
// fill at 1 GiB); a value outside 64 KiB..1 GiB, or not a number, is bad input at the cell.
TEST(Calibration, NcclBuffsizeOfARun) {
  auto time_of = [](const std::string& env) {
    auto s = calibrate(kHeader +
                           ",set,gpus_per_thread,nccl_env\n"
                           "r,H100-SXM,16,8,400G,8,InfiniBand NDR,2.29,all_reduce,tree,1073741824,"
                           "200,,n,test,," +
                           env + "\n",
                       "buf.csv");
    EXPECT_TRUE(s.ok()) << format_diagnostics(s.errors());
    return s.ok() && s->points.size() == 1 ? s->points[0].simulated : 0.0;
  };
  EXPECT_LT(time_of("NCCL_BUFFSIZE=16777216"), 0.95 * time_of(""));  // bus bandwidth, lower
  for (const char* bad : {"NCCL_BUFFSIZE=1024", "NCCL_BUFFSIZE=16M", "NCCL_BUFFSIZE="}) {
    auto s = calibrate(kHeader +
                           ",set,gpus_per_thread,nccl_env\n"
                           "r,H100-SXM,16,8,400G,8,InfiniBand NDR,2.29,all_reduce,tree,1073741824,"
                           "200,,n,test,," +
                           std::string(bad) + "\n",
                       "buf.csv");
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(format_diagnostics(s.errors()).find("buf.csv:2"), std::string::npos) << bad;
    EXPECT_NE(format_diagnostics(s.errors()).find("nccl_env"), std::string::npos) << bad;
  }
}

// A cell no row could mean is bad input at its line and column, not a row skipped for a reason
// that is not the one (a misspelt collective or algorithm, a size or figure that is no number,
// no node, an NCCL version that is none, more fields than the header).
TEST(Calibration, MalformedCellsAreErrorsAtTheirLine) {
  const std::string ok =
      "f,H100-SXM,1,8,none,0,NVLink4,2.24.3,all_reduce,ring,1073741824,360,,n,test";
  auto with = [&](int field, const std::string& v) {
    std::vector<std::string> f;
    for (size_t b = 0, e;; b = e + 1) {
      e = ok.find(',', b);
      f.push_back(ok.substr(b, e == std::string::npos ? std::string::npos : e - b));
      if (e == std::string::npos) break;
    }
    f[field] = v;
    std::string row;
    for (const auto& x : f) row += (row.empty() ? "" : ",") + x;
    return calibrate(kHeader + ",set\n" + ok + "\n" + row + "\n", "m.csv");
  };
  ASSERT_TRUE(with(0, "g").ok());
  for (auto [field, value, key] : {std::tuple{8, "allreduce", "collective"},
                                   {9, "bogus", "algo"},
                                   {10, "abc", "bytes"},
                                   {10, "0", "bytes"},
                                   {11, "-234.6", "busbw_gbs"},
                                   {11, "1e30", "busbw_gbs"},
                                   {2, "0", "nodes"},
                                   {3, "0", "gpus_per_node"},
                                   {7, "banana", "nccl"}}) {
    auto r = with(field, value);
    ASSERT_FALSE(r.ok()) << key << "=" << value;
    EXPECT_EQ(r.errors()[0].line, 3) << key;
    EXPECT_EQ(r.errors()[0].key, key) << value;
  }
  EXPECT_EQ(with(8, "allreduce").errors()[0].hint, "did you mean 'all_reduce'?");
  EXPECT_TRUE(with(9, "Ring").ok());  // NCCL_ALGO's own spelling
  auto extra = calibrate(kHeader + ",set\n" + ok + ",x,y,z\n", "m.csv");
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.errors()[0].message.find("fields, the header has"), std::string::npos);
}

// A CollnetDirect or CollnetChain row is CollNet, a time at 1 MiB or more is judged as the
// bandwidth it implies, and sizes fall in the targets' bands.
TEST(Calibration, GroupsAndBands) {
  auto s = calibrate(kHeader +
                         ",set\n"
                         "a,H100-SXM,1,8,none,0,NVLink4,,all_gather,ring,128,,35,n,test\n"
                         "a,H100-SXM,1,8,none,0,NVLink4,,all_gather,ring,4194304,88,,n,test\n"
                         "a,H100-SXM,1,8,none,0,NVLink4,,all_gather,ring,16777216,,70,n,test\n"
                         "a,H100-SXM,1,8,none,0,NVLink4,,all_gather,ring,25165824,230,,n,test\n"
                         "a,H100-SXM,1,8,none,0,NVLink4,,alltoall,,1073741824,300,,n,test\n"
                         "a (same run),B200,4,8,400G,8,InfiniBand NDR,,all_reduce,collnet_direct,"
                         "34359738368,605.9,,n,test\n",
                     "groups.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  ASSERT_EQ(s->points.size(), 6u) << calibration_table(*s);
  EXPECT_EQ(s->points[0].band, "small");
  EXPECT_EQ(s->points[0].kind, "latency");
  EXPECT_EQ(s->points[1].band, "mid");
  EXPECT_EQ(s->points[2].band, "mid");
  EXPECT_EQ(s->points[2].kind, "time");
  EXPECT_NEAR(s->points[2].error, s->points[2].published / s->points[2].simulated - 1, 1e-12);
  EXPECT_EQ(s->points[3].band, "between");
  EXPECT_EQ(s->points[4].algorithm_group, "p2p");
  EXPECT_EQ(s->points[5].algorithm_group, "collnet");
  EXPECT_EQ(s->points[5].source_group, "a");  // "(same ...)" takes the run above's source
  EXPECT_EQ(s->test.small.count, 1);
  EXPECT_EQ(s->test.mid.count, 2);
  EXPECT_EQ(s->test.large.count, 2);
  EXPECT_GE(s->test.small.worst, 1.0);  // a ratio
}

// together-nccl-tests' "nvls" configuration switches NVLS on and leaves NCCL_ALGO unset: NCCL
// chooses. Across nodes it disables NVLS without CollNet, so the choice is NVLS Tree on two
// B200 nodes and Ring from four on (use3a-ss: 717.2 = NVLS Tree's; 334.7 vs Ring's 334.8).
TEST(Calibration, AnAutoRunWithNvlsSwitchedOnIsChosenAsNcclChooses) {
  auto s = calibrate(kHeader +
                         ",set,gpus_per_thread,nccl_env\n"
                         "a,B200,2,8,400G,8,InfiniBand NDR,2.29.7,all_reduce,auto,17179869184,"
                         "717.2,,n,test,,NCCL_NVLS_ENABLE=1 NCCL_COLLNET_ENABLE=0\n"
                         "a,B200,4,8,400G,8,InfiniBand NDR,2.29.7,all_reduce,auto,17179869184,"
                         "334.7,,n,test,,NCCL_NVLS_ENABLE=1 NCCL_COLLNET_ENABLE=0\n"
                         "a,B200,4,8,400G,8,InfiniBand NDR,2.29.7,all_reduce,auto,17179869184,"
                         "543.8,,n,test,,NCCL_NVLS_ENABLE=0 NCCL_COLLNET_ENABLE=1\n",
                     "env.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  ASSERT_EQ(s->points.size(), 3u) << calibration_table(*s);
  EXPECT_EQ(s->points[0].algorithm_group, "auto, nvls on");
  EXPECT_EQ(s->points[0].simulated_algorithm, "nvls_tree");
  EXPECT_EQ(s->points[1].simulated_algorithm, "ring");
  EXPECT_EQ(s->points[2].algorithm_group, "auto, collnet on");
  // CollNet on: the tuner rates Chain above Direct on Blackwell (Direct's x.85), as NCCL does.
  EXPECT_EQ(s->points[2].simulated_algorithm, "collnet_chain");
  // One 1 KiB row whose run set `env`.
  auto with_env = [&](const std::string& env) {
    return calibrate(
        kHeader +
            ",set,gpus_per_thread,nccl_env\n"
            "a,B200,2,8,400G,8,InfiniBand NDR,2.29.7,all_reduce,auto,1024,,9,n,test,," +
            env + "\n",
        "env.csv");
  };
  auto bad = with_env("NCCL_ALGO=NVLS");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(format_diagnostic(bad.errors()[0]),
            "env.csv:2: error: nccl_env: 'NCCL_ALGO=NVLS' is not understood (use "
            "NCCL_NVLS_ENABLE=0|1, NCCL_COLLNET_ENABLE=0|1, NCCL_MIN_NCHANNELS=N, "
            "NCCL_MAX_NCHANNELS=N (N from 1 to 64) and NCCL_BUFFSIZE=BYTES (65536 to 1073741824), "
            "separated by spaces; recorded, not modelled: NCCL_IB_QPS_PER_CONNECTION=1..128, "
            "NCCL_IB_SPLIT_DATA_ON_QPS=0|1, NCCL_IB_AR_THRESHOLD=BYTES, "
            "NCCL_IB_PCI_RELAXED_ORDERING=0|1|2, NCCL_IGNORE_CPU_AFFINITY=0|1)");
  // The IB transport's variables are recorded, not modelled: the same time, and their own
  // inputs (not grouped with runs that did not set them); out of range, an error.
  auto plain = with_env(""), qps = with_env("NCCL_IB_QPS_PER_CONNECTION=2 NCCL_IB_AR_THRESHOLD=0");
  ASSERT_TRUE(plain.ok() && qps.ok()) << format_diagnostics(qps.errors());
  EXPECT_DOUBLE_EQ(qps->points[0].simulated, plain->points[0].simulated);
  EXPECT_NE(qps->points[0].inputs, plain->points[0].inputs);
  EXPECT_NE(qps->points[0].inputs.find("NCCL_IB_QPS_PER_CONNECTION=2, NCCL_IB_AR_THRESHOLD=0"),
            std::string::npos)
      << qps->points[0].inputs;
  for (const char* env : {"NCCL_IB_QPS_PER_CONNECTION=0", "NCCL_IB_QPS_PER_CONNECTION=129",
                          "NCCL_IB_SPLIT_DATA_ON_QPS=2", "NCCL_IB_AR_THRESHOLD=08",
                          "NCCL_IB_PCI_RELAXED_ORDERING=-1"})
    EXPECT_FALSE(with_env(env).ok()) << env;
  // Channel counts: digits from 1 to 64 only, and a variable once.
  for (const char* env : {"NCCL_MAX_NCHANNELS=0", "NCCL_MAX_NCHANNELS=65", "NCCL_MIN_NCHANNELS=+4",
                          "NCCL_MIN_NCHANNELS=08", "NCCL_MIN_NCHANNELS=", "NCCL_MAX_NCHANNELS=x",
                          "NCCL_MIN_NCHANNELS=4 NCCL_MIN_NCHANNELS=8"}) {
    auto r = with_env(env);
    ASSERT_FALSE(r.ok()) << env;
    EXPECT_EQ(r.errors()[0].key, "nccl_env") << env;
    EXPECT_EQ(r.errors()[0].line, 2) << env;
  }
  auto ok = with_env("NCCL_MIN_NCHANNELS=32 NCCL_MAX_NCHANNELS=64");
  EXPECT_TRUE(ok.ok()) << format_diagnostics(ok.errors());
}

// The host_cpu column: the x86 hosts' vendor where the source states it (blank: Intel). An AMD
// row across nodes is its own inputs (not grouped with Intel runs); on one node, where NCCL reads
// the GPU's row, it is not told apart. Anything but intel, amd or blank is bad input at the cell.
TEST(Calibration, HostCpuColumnIsReadAndChecked) {
  auto row = [&](int nodes, const std::string& host) {
    return calibrate(kHeader +
                         ",set,gpus_per_thread,nccl_env,host_cpu\n"
                         "a,H100-SXM," +
                         std::to_string(nodes) +
                         ",4,200G,4,InfiniBand,2.22.3,all_gather,auto,524288,,39.82,n,test,,," +
                         host + "\n",
                     "host.csv");
  };
  auto intel = row(2, ""), amd = row(2, "amd"), amd1 = row(1, "amd"), intel1 = row(1, "intel");
  for (auto* r : {&intel, &amd, &amd1, &intel1})
    ASSERT_TRUE(r->ok()) << format_diagnostics(r->errors());
  EXPECT_EQ(intel->points[0].simulated_protocol, "LL");
  EXPECT_EQ(amd->points[0].simulated_protocol, "LL128");
  EXPECT_NE(amd->points[0].inputs.find(", AMD hosts"), std::string::npos) << amd->points[0].inputs;
  EXPECT_EQ(intel->points[0].inputs.find("AMD"), std::string::npos) << intel->points[0].inputs;
  EXPECT_EQ(amd1->points[0].inputs, intel1->points[0].inputs);
  for (const char* bad : {"AMD", "epyc", "grace", " amd"}) {
    auto r = row(2, bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.errors()[0].key, "host_cpu") << bad;
    EXPECT_EQ(r.errors()[0].line, 2) << bad;
  }
}

// nccl-tests -g 8 (one thread drives a node's eight GPUs): a small call waits on the host.
TEST(Calibration, GpusPerThreadIsReadAndSetsTheHostFloor) {
  const std::string row = "a,H100-SXM,1,8,none,0,NVLink4,2.26.2,all_gather,ring,128,,35.05,n,fit,";
  auto s = calibrate(kHeader + ",set,gpus_per_thread\n" + row + "8\n" + row + "\n", "g.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  ASSERT_EQ(s->points.size(), 2u);
  EXPECT_GT(s->points[0].simulated, 30.0);
  EXPECT_LT(s->points[1].simulated, 20.0);
  auto bad = calibrate(kHeader + ",set,gpus_per_thread\n" + row + "many\n", "g.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(format_diagnostic(bad.errors()[0]).find("gpus_per_thread"), std::string::npos);
  // -g 3 or 16 on 8 GPUs a node: no thread drives such a share (simulate -g refuses it too).
  for (const char* g : {"3", "16"}) {
    auto odd = calibrate(kHeader + ",set,gpus_per_thread\n" + row + g + "\n", "g.csv");
    ASSERT_FALSE(odd.ok()) << g;
    EXPECT_EQ(odd.errors()[0].key, "gpus_per_thread") << g;
    EXPECT_EQ(odd.errors()[0].line, 2) << g;
  }
}

// A calibration CSV is user input: a figure tens of thousands of digits long overflowed the
// stack in std::regex, and a count past what std::atoi holds was undefined behaviour.
TEST(Calibration, HostileCellsAreBadInputNotACrash) {
  const std::string header = kHeader + "\n";
  const std::string row = "x,H100-SXM,1,8,none,0,NVLink4,2.26.2,all_reduce,ring,1048576,";
  // A 200,000-digit figure is named at its line and column, not repeated in full.
  auto s = calibrate(header + row + std::string(200000, '1') + ",,n\n", "c.csv");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.errors()[0].key, "busbw_gbs");
  EXPECT_LT(format_diagnostic(s.errors()[0]).size(), 300u);
  auto big = calibrate(header +
                           "x,H100-SXM,99999999999999999999,8,none,0,NVLink4,2.26.2,"
                           "all_reduce,ring,1048576,43.8,,n\n",
                       "c.csv");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(format_diagnostic(big.errors()[0]),
            "c.csv:2: error: nodes: '99999999999999999999' is not a whole number from 0 to "
            "100000000");
}

// Runs of the same inputs by different sources are set side by side with the least worst error
// one factor on the model could reach over them. Source a's two rows (1 and 8 GiB) are one run,
// their median q; sources b and f, at the same inputs, measured less (test rows: the test floor
// is theirs alone); source c ran 2 nodes and e drove 8 GPUs a thread (-g 8: other inputs, no
// group). Below 1 MiB q is the time: a's and d's latency rows as 1 + error, g's bus bandwidth at
// 512 KiB as 1 / (1 + error). No figure is the model's: each is worked out from the points' own
// errors.
TEST(Calibration, RunsOfTheSameInputsAreSetSideBySide) {
  const std::string one = ",H100-SXM,1,8,none,0,NVLink4,2.26.2,all_reduce,ring,";
  auto s = calibrate(kHeader + ",set,gpus_per_thread\n" +                     // line 1
                         "a" + one + "1073741824,360,,n,fit,\n" +             // 2
                         "a (same run)" + one + "8589934592,370,,n,fit,\n" +  // 3
                         "b" + one + "1073741824,300,,n,test,\n" +            // 4
                         "c,H100-SXM,2,8,400G,8,InfiniBand NDR,2.26.2,all_reduce,ring,1073741824,"
                         "300,,n,test,\n" +  // 5
                         "a (same run)" +
                         one + "8,,30,n,fit,\n" +                     // 6
                         "d" + one + "8,,60,n,test,\n" +              // 7
                         "d (same run)" + one + "16,,60,n,test,\n" +  // 8
                         "e" + one + "1073741824,200,,n,test,8\n" +   // 9
                         "f" + one + "1073741824,330,,n,test,\n" +    // 10
                         "g" + one + "524288,5,,n,test,\n",           // 11
                     "spread.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  ASSERT_EQ(s->points.size(), 10u);
  EXPECT_EQ(s->points[0].inputs, "H100-SXM 1 x 8, no NIC");
  EXPECT_EQ(s->points[3].inputs, "H100-SXM 2 x 8, 8 x 400G InfiniBand");
  EXPECT_EQ(s->points[7].inputs, "H100-SXM 1 x 8, no NIC, -g 8");
  ASSERT_EQ(s->spread.size(), 2u);
  const auto q = [&](int i) { return 1 + s->points[i].error; };
  const SpreadGroup* large = nullptr;
  const SpreadGroup* small = nullptr;
  for (const auto& g : s->spread) (g.band == "large" ? large : small) = &g;
  ASSERT_TRUE(large && small);
  ASSERT_EQ(large->runs.size(), 3u);  // a, b, f; not c (2 nodes) nor e (-g 8)
  EXPECT_EQ(large->runs[0].first_line, 2);
  EXPECT_EQ(large->runs[0].rows, 2);
  EXPECT_EQ(large->runs[0].set, "fit");
  EXPECT_EQ(large->runs[1].set, "test");
  EXPECT_TRUE(large->has_test);
  const double qa = (q(0) + q(1)) / 2, qb = q(2), qf = q(8);
  EXPECT_NEAR(large->runs[0].model_over_measured, qa, 1e-12);
  EXPECT_NEAR(large->runs[1].model_over_measured, qb, 1e-12);
  const double lo = std::min({qa, qb, qf}), hi = std::max({qa, qb, qf});
  EXPECT_NEAR(large->floor, (hi - lo) / (hi + lo), 1e-12);
  // The floor is what the best factor reaches: the outermost runs then sit at it.
  const double f = 2 / (lo + hi);
  EXPECT_NEAR(std::max({std::fabs(f * qa - 1), std::fabs(f * qb - 1), std::fabs(f * qf - 1)}),
              large->floor, 1e-12);
  EXPECT_GT(large->floor, 0.05);  // 360-370 against 300 GB/s, whatever the model says
  // The test floor: b and f alone (300 and 330 GB/s), narrower than with a's fit rows.
  EXPECT_NEAR(large->test_floor, std::fabs(qb - qf) / (qb + qf), 1e-12);
  EXPECT_LT(large->test_floor, large->floor);
  // Below 1 MiB, as times: a's 30 us, d's 60 us (two rows) and g's 512 KiB at 5 GB/s, whose
  // bandwidth error is turned into its time's.
  ASSERT_EQ(small->runs.size(), 3u);
  EXPECT_EQ(small->runs[1].rows, 2);
  const double ta = q(4), td = (q(5) + q(6)) / 2, tg = 1 / q(9);
  EXPECT_NEAR(small->runs[2].model_over_measured, tg, 1e-12);
  EXPECT_NEAR(small->floor, std::sqrt(std::max({ta, td, tg}) / std::min({ta, td, tg})), 1e-12);
  EXPECT_NEAR(small->test_floor, std::sqrt(std::max(td, tg) / std::min(td, tg)), 1e-12);
  EXPECT_GT(small->floor, 1.3);
  // The summary names the groups by their inputs, with both floors.
  const std::string table = calibration_summary_table(*s);
  EXPECT_NE(table.find("| H100-SXM 1 x 8, no NIC | all_reduce | ring | >= 32 MiB |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("2 rows from line 2, fit"), std::string::npos) << table;
  EXPECT_NE(table.find("Widest test floor >= 32 MiB"), std::string::npos) << table;
  const auto json = calibration_json(*s);
  EXPECT_EQ(json["spread"].size(), 2u);
  EXPECT_EQ(json["spread"][0]["runs"].size(), 3u);
}

// A training row's cell the spec refuses is the error at that row's line, not at a line of
// the spec text built from it.
// The CSV is read as RFC 4180 has it: a quoted note may hold commas, doubled quotes and line
// breaks, and the row keeps the line it starts on; a quote never closed, a NUL byte or a column
// named twice is an error at its line, not a row read askew ("set: '' is neither fit nor test").
TEST(Calibration, TheCsvIsReadAsRfc4180) {
  const std::string head =
      "source,hardware,nodes,gpus_per_node,nic,nics_per_node,fabric,nccl,collective,algo,bytes,"
      "busbw_gbs,time_us,note,set\n";
  const std::string row =
      "a,DGX H100,2,8,400G,8,infiniband,2.21,all_reduce,ring,1073741824,360.5,,";
  auto ok = calibrate(
      head + row + "\"a note, \"\"quoted\"\"\nover two lines\",test\n" + row + "x,test\n", "n.csv");
  ASSERT_TRUE(ok.ok()) << format_diagnostics(ok.errors());
  ASSERT_EQ(ok->points.size(), 2u);
  EXPECT_EQ(ok->points[0].line, 2);
  EXPECT_EQ(ok->points[1].line, 4);
  auto open = calibrate(head + row + "\"never closed,test\n" + row + "x,test\n", "o.csv");
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.errors()[0].line, 2);
  EXPECT_NE(open.errors()[0].message.find("never closed"), std::string::npos);
  auto twice = calibrate(
      "source,bytes,hardware,nodes,gpus_per_node,nic,collective,algo,bytes,"
      "busbw_gbs,time_us\n",
      "t.csv");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.errors()[0].message.find("'bytes' is named twice"), std::string::npos);
  auto nul = calibrate(head + row + std::string("x\0y,test\n", 9), "z.csv");
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.errors()[0].line, 2);
}

// The hardware and NIC columns take the catalog's ids as they are, beside published names.
TEST(Calibration, CatalogIdsAreTakenAsTheyAre) {
  const std::string head =
      "source,hardware,nodes,gpus_per_node,nic,nics_per_node,fabric,nccl,collective,algo,bytes,"
      "busbw_gbs,time_us,note,set\n";
  auto r = calibrate(head +
                         "a,h100-sxm,2,8,cx7-400g,8,infiniband,2.21,all_reduce,ring,1073741824,"
                         "360.5,,,test\n"
                         "b,DGX H100,2,8,400G,8,infiniband,2.21,all_reduce,ring,1073741824,"
                         "360.5,,,test\n",
                     "ids.csv");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_EQ(r->points.size(), 2u);
  EXPECT_DOUBLE_EQ(r->points[0].simulated, r->points[1].simulated);
}

// A row too large to simulate on this machine is refused before it is planned, at its line,
// as a spec of that size is: not memory exhausted.
TEST(Calibration, ARowBeyondTheMachinesMemoryIsTheErrorAtItsLine) {
  const std::string csv =
      "source,hardware,nodes,gpus_per_node,nic,nics_per_node,fabric,nccl,collective,algo,bytes,"
      "busbw_gbs,time_us,note,set\n"
      "a,DGX H100,2000000,8,400G,8,infiniband,2.21,all_reduce,ring,1073741824,360.5,,,fit\n";
  auto r = calibrate(csv, "big.csv", 1e9);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].line, 2);
  EXPECT_EQ(r.errors()[0].key, "nodes");
  EXPECT_NE(r.errors()[0].message.find("need about"), std::string::npos) << r.errors()[0].message;
}

TEST(Calibration, ATrainingRowsBadCellIsTheErrorAtItsLine) {
  const std::string csv =
      "source,gpu,interconnect,params,heads,hidden,layers,seq_len,vocab,tp,pp,dp,gpus,"
      "global_batch,precision,set,tflops_per_gpu,iteration_s\n"
      "a,a100-sxm-80g,8x200G HDR IB,1.7B,24,2304,24,2048,51200,1,1,32,32,512,fp16,fit,137,\n"
      "b,a100-sxm-80g,8x200G HDR IB,1.7B,24,2304,24,2048,51200,1,1,32,32,512,fp64,fit,137,\n";
  auto t = calibrate_training(csv, "runs.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.errors()[0].file, "runs.csv");
  EXPECT_EQ(t.errors()[0].line, 3);
  EXPECT_NE(t.errors()[0].message.find("'fp64'"), std::string::npos) << t.errors()[0].message;
  // A row the spec's checks refuse (a GPU the catalog does not have) is the error at its line
  // too, not one with "(line N)" in its message.
  const std::string pair =
      "source,gpu,interconnect,params,heads,hidden,layers,seq_len,vocab,tp,pp,dp,gpus,"
      "global_batch,set,tflops_per_gpu,iteration_s\n"
      "a,a100-sxm-80g,8x200G HDR IB,1.7B,24,2304,24,2048,51200,1,1,32,32,512,fit,137,\n"
      "b,h999-sxm,8x200G HDR IB,1.7B,24,2304,24,2048,51200,1,1,32,32,512,fit,137,\n";
  auto v = calibrate_training(pair, "runs.csv");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.errors()[0].line, 3);
  EXPECT_EQ(v.errors()[0].file, "runs.csv");
  EXPECT_EQ(v.errors()[0].key, "gpu");  // the column, not the spec's cluster.gpu
  EXPECT_NE(v.errors()[0].message.find("h999-sxm"), std::string::npos) << v.errors()[0].message;
  EXPECT_EQ(v.errors()[0].message.find("(line"), std::string::npos) << v.errors()[0].message;
}

}  // namespace gf
