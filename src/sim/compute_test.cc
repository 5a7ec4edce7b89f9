#include "sim/compute.h"

#include <gtest/gtest.h>

namespace gf {
namespace {

// An A100-like GPU with round figures.
KernelRates rates() {
  KernelRates k;
  k.matrix_flops = k.bf16_matrix_flops = 300e12;
  k.gemm_efficiency = 0.7;
  k.attention_efficiency = 0.5;
  k.vector_flops = 20e12;
  k.hbm_Bps = 2e12;
  return k;
}

LayerShape gpt(double hidden, int tp) {
  LayerShape s;
  s.tokens = s.context = 2048;
  s.hidden = hidden;
  s.heads = hidden / 128;
  s.kv_heads = s.heads;
  s.ffn = 4 * hidden;
  s.tp = tp;
  return s;
}

TEST(Compute, WideLayersRunAtTheGemmRate) {
  // 24 T h^2 / tp FLOPs of linear layers forward; at h = 25600 they are nearly all the time.
  const LayerShape s = gpt(25600, 8);
  const LayerTime t = layer_time(s, rates(), Recompute::kNone);
  const double gemm_flops = 24 * s.tokens * s.hidden * s.hidden / s.tp;
  EXPECT_NEAR(t.gemm_s / 3, gemm_flops / (300e12 * 0.7), 0.01 * t.gemm_s);
  EXPECT_GT(t.gemm_s / t.total(), 0.9);
  // A narrow model spends a larger share outside the GEMMs.
  const LayerTime narrow = layer_time(gpt(2048, 1), rates(), Recompute::kNone);
  EXPECT_LT(narrow.gemm_s / narrow.total(), t.gemm_s / t.total());
}

TEST(Compute, RecomputationRepeatsWhatItSays) {
  LayerShape s = gpt(8192, 8);
  s.attention = AttentionKernel::kUnfused;
  const LayerTime none = layer_time(s, rates(), Recompute::kNone);
  const LayerTime full = layer_time(s, rates(), Recompute::kFull);
  const LayerTime sel = layer_time(s, rates(), Recompute::kSelective);
  EXPECT_NEAR(full.backward_s - none.backward_s, none.forward_s, 1e-12);
  EXPECT_GT(sel.recompute_s, 0);
  EXPECT_LT(sel.recompute_s, 0.5 * none.forward_s);
  // FlashAttention's backward recomputes the scores itself: selective adds nothing.
  s.attention = AttentionKernel::kFlash;
  EXPECT_EQ(layer_time(s, rates(), Recompute::kSelective).recompute_s, 0);
  for (const auto& t : {none, full, sel})
    EXPECT_NEAR(t.gemm_s + t.attention_s + t.memory_s, t.total(), 1e-12);
}

TEST(Compute, SequenceParallelismShrinksOnlyTheElementwiseWork) {
  LayerShape s = gpt(8192, 8);
  const LayerTime off = layer_time(s, rates(), Recompute::kNone);
  s.sequence_parallel = true;
  const LayerTime on = layer_time(s, rates(), Recompute::kNone);
  EXPECT_DOUBLE_EQ(on.gemm_s, off.gemm_s);
  EXPECT_LT(on.memory_s, off.memory_s);
}

TEST(Compute, UnfusedAttentionWritesTheScores) {
  LayerShape s = gpt(4096, 1);
  s.tokens = s.context = 8192;
  const LayerTime flash = layer_time(s, rates(), Recompute::kNone);
  s.attention = AttentionKernel::kUnfused;
  const LayerTime unfused = layer_time(s, rates(), Recompute::kNone);
  EXPECT_GT(unfused.total(), flash.total());
  EXPECT_GT(unfused.memory_s, flash.memory_s);  // the s x s softmax through HBM
}

TEST(Compute, ShapesFromTheSpec) {
  WorkloadSpec w;
  w.model.hidden = 16384;
  w.model.heads = 128;
  w.model.seq_len = 8192;
  w.model.mlp = MlpKind::kSwiglu;
  w.parallelism.tp = 8;
  w.parallelism.cp = 2;
  w.micro_batch = 1;
  LayerShape s = layer_shape(w);
  EXPECT_EQ(s.tokens, 4096);   // b s / cp
  EXPECT_EQ(s.context, 8192);  // a query attends over the whole sequence
  EXPECT_EQ(s.kv_heads, 128);
  EXPECT_EQ(static_cast<long long>(s.ffn) % 256, 0);
  EXPECT_NEAR(3 * s.ffn, 8 * 16384, 256 * 3);  // SwiGLU's three matrices ~ GeLU's two of 4h
  // Grouped-query attention: fewer key/value heads, a narrower QKV GEMM.
  const double mha = layer_time(s, rates(), Recompute::kNone).gemm_s;
  w.model.kv_heads = 8;
  s = layer_shape(w);
  EXPECT_LT(layer_time(s, rates(), Recompute::kNone).gemm_s, mha);
}

TEST(Compute, OptimizerAndOutputLayer) {
  // 30 bytes a parameter through HBM at 0.9 of 2 TB/s.
  EXPECT_NEAR(optimizer_time(1e9, rates()), 30e9 / (0.9 * 2e12), 1e-9);
  EXPECT_EQ(optimizer_time(0, rates()), 0);
  const LayerShape s = gpt(8192, 8);
  const double out = output_layer_time(s, 128256, rates());
  // Forward and twice backward of the logits GEMM at least.
  EXPECT_GT(out, 3 * 2 * s.tokens * s.hidden * 128256 / 8 / (300e12 * 0.7));
  EXPECT_EQ(output_layer_time(s, 0, rates()), 0);
}

// FP8 training runs the linear layers' GEMMs at the FP8 rate; attention's core and the LM head
// stay at BF16's (Megatron-LM's defaults). An FP8 layer's GEMMs take half the time at most,
// its attention the same; they had both halved.
TEST(Compute, Fp8SpeedsUpTheLinearLayersOnly) {
  auto cat = builtin_catalog();
  ASSERT_TRUE(cat.ok());
  const GpuModel& h100 = cat->gpus.at("h100-sxm");
  const KernelRates bf16 = kernel_rates(h100, Precision::kBf16),
                    fp8 = kernel_rates(h100, Precision::kFp8);
  EXPECT_NEAR(fp8.matrix_flops, 2 * bf16.matrix_flops, 0.01 * bf16.matrix_flops);  // 1979, 989
  EXPECT_DOUBLE_EQ(fp8.bf16_matrix_flops, bf16.matrix_flops);
  LayerShape s = gpt(8192, 8);
  s.attention = AttentionKernel::kFlash;
  const LayerTime a = layer_time(s, bf16, Recompute::kSelective),
                  b = layer_time(s, fp8, Recompute::kSelective);
  EXPECT_LT(b.gemm_s, 0.6 * a.gemm_s);
  EXPECT_GE(b.gemm_s, 0.5 * a.gemm_s);
  EXPECT_DOUBLE_EQ(b.attention_s, a.attention_s);
  EXPECT_DOUBLE_EQ(output_layer_time(s, 128256, fp8), output_layer_time(s, 128256, bf16));
}

TEST(Compute, CatalogFigures) {
  auto cat = builtin_catalog();
  ASSERT_TRUE(cat.ok());
  for (const auto& [id, g] : cat->gpus) {
    const KernelRates k = kernel_rates(g, Precision::kBf16);
    EXPECT_TRUE(k.usable()) << g.id;
    EXPECT_FALSE(g.hbm_source.empty()) << g.id;
    EXPECT_FALSE(g.kernel_efficiency_source.empty()) << g.id;
  }
  GpuModel bare;
  bare.bf16_tflops = 100;
  EXPECT_FALSE(kernel_rates(bare, Precision::kBf16).usable());
}

}  // namespace
}  // namespace gf
