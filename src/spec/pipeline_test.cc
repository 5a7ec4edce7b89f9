#include "spec/pipeline.h"

#include <gtest/gtest.h>

#include <numeric>

namespace gf {
namespace {

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

}  // namespace

TEST(Pipeline, EvenWhenTheLayersDivide) {
  auto l = pipeline_layout(96, 8, 1);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->layers, std::vector<int>(8, 12));
  EXPECT_EQ(l->rule, "even");
  EXPECT_FALSE(l->embedding_counted);
}

TEST(Pipeline, Llama3With126LayersOn16StagesCountsEmbeddingAndLoss) {
  // Llama 3 405B: 16 stages of 8, one layer fewer on the first and the last (126 = 16 x 8 - 2).
  auto l = pipeline_layout(126, 16, 1);
  ASSERT_TRUE(l.ok()) << format_diagnostics(l.errors());
  EXPECT_EQ(l->layers.front(), 7);
  EXPECT_EQ(l->layers.back(), 7);
  for (int i = 1; i < 15; ++i) EXPECT_EQ(l->layers[i], 8);
  EXPECT_TRUE(l->embedding_counted && l->loss_counted);
  EXPECT_EQ(sum(l->layers), 126);
  // Interleaved over 2 chunks: 32 chunks of 4 less the same two layers.
  auto v = pipeline_layout(126, 16, 2);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(sum(v->layers), 126);
}

TEST(Pipeline, LossAloneWhenOneLayerShort) {
  auto l = pipeline_layout(31, 4, 1);  // 32 = 4 x 8: the last stage gives one layer to the loss
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->layers, (std::vector<int>{8, 8, 8, 7}));
  EXPECT_TRUE(l->loss_counted);
  EXPECT_FALSE(l->embedding_counted);
}

TEST(Pipeline, UnevenFirstAndLastOtherwise) {
  // 100 on 8: neither 100, 101 nor 102 divide; 13 on the six middle stages, 11 on each end.
  auto l = pipeline_layout(100, 8, 1);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->layers, (std::vector<int>{11, 13, 13, 13, 13, 13, 13, 11}));
  EXPECT_EQ(sum(l->layers), 100);
}

TEST(Pipeline, FirstAndLastAsGivenAndChecked) {
  auto l = pipeline_layout(126, 16, 1, 5, 9);  // 112 left for 14 stages: 8 each
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->layers.front(), 5);
  EXPECT_EQ(l->layers.back(), 9);
  EXPECT_EQ(l->layers[1], 8);
  EXPECT_EQ(sum(l->layers), 126);
  auto bad = pipeline_layout(126, 16, 1, 6, 6);  // 114 over 14 stages does not divide
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].key, "workload.first_stage_layers");
  EXPECT_NE(bad.errors()[0].message.find("114"), std::string::npos);
  auto only_last = pipeline_layout(10, 2, 1, 0, 4);
  ASSERT_TRUE(only_last.ok());
  EXPECT_EQ(only_last->layers, (std::vector<int>{6, 4}));
}

TEST(Pipeline, RefusesWhatMegatronCannotPlace) {
  auto l = pipeline_layout(7, 4, 2);  // 8 chunks: 7, 8 (one layer a chunk, none left) and 9 fail
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.errors()[0].key, "workload.parallelism.pp");
  EXPECT_NE(l.errors()[0].hint.find("first_stage_layers"), std::string::npos);
}

}  // namespace gf
