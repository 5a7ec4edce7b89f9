// The simulator against published measurements (data/calibration/nccl-public.csv).
// Prints every point's error; fails when the accuracy limits are missed.
#include "verify/calibration.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>

namespace gf {

TEST(Calibration, PublishedNcclMeasurements) {
  const std::string path = GPUFABRIC_SOURCE_DIR "/data/calibration/nccl-public.csv";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  auto s = calibrate(ss.str(), path);
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  std::cout << calibration_table(*s);
  EXPECT_GE(s->points.size(), 15u);
  EXPECT_LE(s->median_abs_error_large, kCalibrationMedianLimit);
  EXPECT_LE(s->max_abs_error_large, kCalibrationMaxLimit);
  EXPECT_LE(s->worst_latency_ratio, kCalibrationLatencyFactor);
  EXPECT_TRUE(s->pass);
}

TEST(Calibration, RejectsAFileWithoutTheColumns) {
  auto s = calibrate("a,b,c\n1,2,3\n", "x.csv");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(format_diagnostic(s.errors()[0]).find("missing column"), std::string::npos);
}

// A calibration CSV is user input: a figure tens of thousands of digits long overflowed the
// stack in std::regex, and a count past what std::atoi holds was undefined behaviour.
TEST(Calibration, HostileCellsAreBadInputNotACrash) {
  const std::string header =
      "source,hardware,nodes,gpus_per_node,nic,nics_per_node,fabric,nccl,collective,algo,bytes,"
      "busbw_gbs,time_us,note\n";
  const std::string row = "x,H100-SXM,1,8,none,0,NVLink4,2.26.2,all_reduce,ring,1048576,";
  auto s = calibrate(header + row + std::string(200000, '1') + ",,n\n", "c.csv");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  EXPECT_TRUE(s->points.empty());
  EXPECT_EQ(s->skipped.size(), 1u);
  auto big = calibrate(header +
                           "x,H100-SXM,99999999999999999999,8,none,0,NVLink4,2.26.2,"
                           "all_reduce,ring,1048576,43.8,,n\n",
                       "c.csv");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(format_diagnostic(big.errors()[0]),
            "c.csv:2: error: nodes: '99999999999999999999' is not a whole number from 0 to "
            "100000000");
}

}  // namespace gf
