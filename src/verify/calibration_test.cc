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

}  // namespace gf
