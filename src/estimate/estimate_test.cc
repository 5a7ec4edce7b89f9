#include "estimate/estimate.h"

#include <gtest/gtest.h>

namespace gf {

// The guide's figures (seed §1 and §3.2).
TEST(Estimate, Guide175BPayload) {
  EstimateInput in{.params = 175e9, .precision = Precision::kFp16, .gpus = 1024, .link_bits_per_s = 400e9};
  auto e = estimate(in);
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(e->payload_bytes, 350e9);
}

TEST(Estimate, GuideWorkedExample70B) {
  EstimateInput in{.params = 70e9,
                   .precision = Precision::kBf16,
                   .gpus = 1024,
                   .link_bits_per_s = 400e9,
                   .compute_time_s = 10,
                   .steps = 100000};
  auto e = estimate(in);
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(e->traffic_bytes_simple, 280e9);
  EXPECT_NEAR(e->traffic_factor, 2.0 * 1023 / 1024, 1e-12);
  EXPECT_NEAR(e->traffic_bytes, 279.73e9, 0.01e9);
  EXPECT_DOUBLE_EQ(e->link_bytes_per_s, 50e9);
  EXPECT_NEAR(e->comm_time_simple_s, 5.6, 1e-9);
  EXPECT_NEAR(e->comm_time_s, 5.59, 0.01);
  EXPECT_NEAR(e->comm_fraction, 0.36, 0.005);  // "5.6 / 15.6 = 36 %"
}

// --params 70 is 70 parameters, which no one trains: a note says how to write 70 billion.
TEST(Estimate, ABareSmallCountIsNoted) {
  EstimateInput in{
      .params = 70, .precision = Precision::kBf16, .gpus = 1024, .link_bits_per_s = 400e9};
  auto e = estimate(in);
  ASSERT_TRUE(e.ok());
  ASSERT_FALSE(e->notes.empty());
  EXPECT_NE(e->notes.back().find("70 parameters: a count without a suffix is parameters; 70B is "
                                 "70 billion"),
            std::string::npos)
      << e->notes.back();
  in.params = 70e9;
  auto big = estimate(in);
  ASSERT_TRUE(big.ok());
  for (const auto& n : big->notes) EXPECT_EQ(n.find("without a suffix"), std::string::npos);
}

TEST(Estimate, GuideMultiplierEffect) {
  // 1 s vs 10 s all-reduce over 100,000 steps: ~28 h vs ~280 h.
  for (auto [t, hours] : {std::pair{1.0, 27.8}, std::pair{10.0, 277.8}}) {
    EstimateInput in{.params = 70e9, .gpus = 1024, .comm_time_s = t, .steps = 100000};
    auto e = estimate(in);
    ASSERT_TRUE(e.ok());
    EXPECT_NEAR(e->comm_hours, hours, 0.1);
  }
}

TEST(Estimate, FactorsPerCollective) {
  EXPECT_DOUBLE_EQ(traffic_factor("all_reduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(traffic_factor("all_gather", 8), 0.875);
  EXPECT_DOUBLE_EQ(traffic_factor("broadcast", 8), 1.0);
  EXPECT_DOUBLE_EQ(traffic_factor("all_reduce", 1), 0.0);
  // Each collective's own formula and its limit for many GPUs: the guide's 2 is all_reduce's.
  EXPECT_STREQ(traffic_factor_formula("all_reduce"), "2(N-1)/N");
  EXPECT_STREQ(traffic_factor_formula("all_gather"), "(N-1)/N");
  EXPECT_STREQ(traffic_factor_formula("alltoall"), "(N-1)/N");
  EXPECT_STREQ(traffic_factor_formula("broadcast"), "1");
  EXPECT_DOUBLE_EQ(traffic_factor_limit("all_reduce"), 2.0);
  EXPECT_DOUBLE_EQ(traffic_factor_limit("reduce_scatter"), 1.0);
  EstimateInput in;
  in.params = 70e9;
  in.gpus = 1024;
  in.link_bits_per_s = 400e9;
  in.collective = "all_gather";
  auto e = estimate(in);
  ASSERT_TRUE(e.ok());
  EXPECT_NEAR(e->traffic_bytes_simple, e->payload_bytes, 1e-6);
  EXPECT_NEAR(e->traffic_factor, 1023.0 / 1024, 1e-12);
}

TEST(Estimate, RejectsBadInputWithAllErrors) {
  EstimateInput in{.params = -1, .gpus = 1, .collective = "allreduce"};
  auto e = estimate(in);
  ASSERT_FALSE(e.ok());
  EXPECT_GE(e.errors().size(), 4u);
  bool hinted = false;
  for (const auto& d : e.errors())
    hinted = hinted || d.hint.find("all_reduce") != std::string::npos;
  EXPECT_TRUE(hinted);
}

// The guide's 2 bytes a bf16 gradient are not what Megatron-LM reduces: the estimate says so
// beside the guide's figures (unchanged), and says nothing where the guide's type is the one
// reduced (fp16, fp32).
TEST(Estimate, NotesMegatronsFp32GradientsBesideTheGuidesFigures) {
  EstimateInput in;
  in.params = 70e9;
  in.gpus = 1024;
  in.link_bits_per_s = 400e9;
  auto bf16 = estimate(in);
  ASSERT_TRUE(bf16.ok());
  EXPECT_DOUBLE_EQ(bf16->payload_bytes, 140e9);
  ASSERT_EQ(bf16->notes.size(), 1u);
  EXPECT_NE(bf16->notes[0].find("in fp32 by default, 2x these bytes"), std::string::npos)
      << bf16->notes[0];
  in.precision = Precision::kFp16;
  EXPECT_TRUE(estimate(in)->notes.empty());
}

}  // namespace gf
