#include "sim/memory.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/checkpoint.h"

namespace gf {
namespace {

constexpr double kGiB = 1073741824.0;

// GPT-3 175B as Korthikanti et al. (arXiv 2205.05198, table 3) ran it on Megatron-LM: 96 layers,
// hidden 12288, 96 heads, sequence 2048, vocabulary 51200, tp 8, pp 8, selective recomputation
// with sequence parallelism, microbatch 1, 64 microbatches.
WorkloadSpec gpt3_175b() {
  WorkloadSpec w;
  w.model = {175e9, 96, 12288, 96, 2048, 51200, 0, 0};
  w.model.attention = AttentionKernel::kUnfused;  // Megatron-LM's kernels of 2022
  w.model.dropout = 0.1;
  w.precision = Precision::kBf16;
  w.parallelism = {8, 8, 1, 1, 1, 0};
  w.global_batch = 64;
  w.micro_batch = 1;
  w.recompute = Recompute::kSelective;
  w.sequence_parallel = true;
  return w;
}

StepMemory memory_of(const WorkloadSpec& w, double microbatches, double hbm_gib = 80) {
  auto layout = pipeline_layout(w.model.layers, w.parallelism.pp, w.virtual_pipeline);
  EXPECT_TRUE(layout.ok());
  return step_memory(w, *layout, microbatches, 0, hbm_gib * kGiB);
}

}  // namespace

TEST(Memory, Gpt3On8x8FitsIn80GB) {
  // Worked by hand. Embedding V h = 51200 x 12288 = 629,145,600; a layer (175e9 - V h) / 96 =
  // 1,816,363,066.7 parameters. Stage 0: 12 layers + embedding = 22,425,502,400, / tp 8 =
  // 2,803,187,800 a GPU. Bytes: weights 2 -> 5.221 GiB, fp32 main gradients 4 -> 10.443 GiB,
  // Adam (fp32 master, m, v) 12 -> 31.328 GiB.
  // Activations: 34 s b h / t = 34 x 2048 x 12288 / 8 = 106,954,752 B a layer; 1F1B keeps pp = 8
  // microbatches on stage 0: 96 layer-microbatches = 10,267,656,192 B, plus the embedding's
  // 8 x (8 s + s h) / t = 25,182,208 B -> 9.586 GiB.
  // NCCL: 2 communicators (tp, pp) x 16 channels x 2 peers x 9,633,792 B = 0.574 GiB.
  // Total 61,366,781,488 B = 57.15 GiB < 80 GiB.
  const StepMemory m = memory_of(gpt3_175b(), 64);
  ASSERT_EQ(m.stages.size(), 8u);
  EXPECT_EQ(m.peak_stage, 0);
  const StageMemory& p = m.peak();
  EXPECT_NEAR(p.params_bytes / kGiB, 5.221, 0.002);
  EXPECT_NEAR(p.gradients_bytes / kGiB, 10.443, 0.002);
  EXPECT_NEAR(p.optimizer_bytes / kGiB, 31.328, 0.002);
  EXPECT_NEAR(m.activation_layer_bytes, 106954752.0, 1);
  EXPECT_DOUBLE_EQ(p.in_flight_microbatches, 8);
  EXPECT_NEAR(p.activations_bytes / kGiB, 9.586, 0.002);
  EXPECT_NEAR(p.nccl_bytes / kGiB, 0.574, 0.001);
  EXPECT_NEAR(p.total_bytes(), 61366781488.0, 1e4);
  EXPECT_TRUE(m.fits);
  // The last stage keeps one microbatch (plus the output layer's 4sbh(1 + v/h)/t = 65,011,712 B).
  EXPECT_DOUBLE_EQ(m.stages.back().in_flight_microbatches, 1);
  EXPECT_NEAR(m.stages.back().activations_bytes, 12 * 106954752.0 + 65011712.0, 1);
}

TEST(Memory, Gpt3WithoutRecomputationAt4SequencesDoesNotFit) {
  // No recomputation adds attention's 5as/h = 5 x 96 x 2048 / 12288 = 80: a layer keeps
  // s b h (34 + 80) / t = 2048 x 4 x 12288 x 114 / 8 = 1,434,451,968 B; x 96 on stage 0 =
  // 128.25 GiB of activations alone: 175.9 GiB in all.
  WorkloadSpec w = gpt3_175b();
  w.recompute = Recompute::kNone;
  w.micro_batch = 4;
  w.global_batch = 256;
  const StepMemory m = memory_of(w, 64);
  EXPECT_NEAR(m.activation_layer_bytes, 1434451968.0, 1);
  EXPECT_NEAR(m.peak().total_bytes() / kGiB, 175.9, 0.1);
  EXPECT_FALSE(m.fits);
}

TEST(Memory, GroupedQueryAttentionAndSwigluCountTheirOwnTensors) {
  // Llama-3-70B-like: h 8192, 64 heads, 8 key/value heads (d 128), SwiGLU f 28672, no dropout,
  // FlashAttention, tp 8 with sequence parallelism, s 8192, b 1, selective recomputation.
  // Per token: split 2h + 4 kv d + 2h + 6f = 16384 + 4096 + 16384 + 172032 = 208896; the rest
  // 8h = 65536; both / 8 = 34304 B; x 8192 tokens = 281,018,368 B a layer (GPT's 34 sbh / t
  // would be 285,212,672).
  WorkloadSpec w;
  w.model = {70e9, 80, 8192, 64, 8192, 128256, 0, 0};
  w.model.kv_heads = 8;
  w.model.ffn_hidden = 28672;
  w.model.mlp = MlpKind::kSwiglu;
  w.parallelism = {8, 1, 1, 1, 1, 0};
  w.micro_batch = 1;
  w.recompute = Recompute::kSelective;
  w.sequence_parallel = true;
  EXPECT_NEAR(memory_of(w, 1).activation_layer_bytes, 281018368.0, 1);
  // FlashAttention keeps no scores even without recomputation; the unfused kernels keep the
  // softmax output, 2 as bytes a token (no dropout): 2 x 64 x 8192 / 8 x 8192 more.
  w.recompute = Recompute::kNone;
  EXPECT_NEAR(memory_of(w, 1).activation_layer_bytes, 281018368.0, 1);
  w.model.attention = AttentionKernel::kUnfused;
  EXPECT_NEAR(memory_of(w, 1).activation_layer_bytes,
              281018368.0 + 2.0 * 64 * 8192 / 8 * 8192, 1);
}

TEST(Memory, ShardingAndRecomputationShrinkTheFootprint) {
  WorkloadSpec w = gpt3_175b();
  w.parallelism.dp = 16;
  const double plain = memory_of(w, 8).peak().optimizer_bytes;
  w.parallelism.zero = 1;  // Megatron's distributed optimizer: 6 + 12/d bytes a parameter
  const StepMemory z1 = memory_of(w, 8);
  EXPECT_NEAR(z1.peak().optimizer_bytes, plain / 16, 1);
  EXPECT_NEAR((z1.peak().params_bytes + z1.peak().gradients_bytes + z1.peak().optimizer_bytes) /
                  (z1.peak().params_bytes / 2),
              6 + 12.0 / 16, 1e-9);
  w.recompute = Recompute::kFull;  // 2 s b h / t a layer instead of 34
  EXPECT_NEAR(memory_of(w, 8).activation_layer_bytes, 2.0 * 2048 * 12288 / 8, 1);
  // Interleaving 2 chunks: the first stage keeps L (1 + (p - 1)/(p v)) = 96 x 1.4375 layers.
  w.recompute = Recompute::kSelective;
  w.virtual_pipeline = 2;
  EXPECT_DOUBLE_EQ(memory_of(w, 64).stages[0].in_flight_microbatches, 8 * 1.4375);
}

// ZeRO-3 shards the weights, but a module computes with whole ones: the gathered bucket in use
// and the one prefetched are whole (weights, bf16), and in the backward one bucket's gradients
// (fp32). A bucket is kZero3BucketParams, or the largest weight matrix where that is larger:
// GPT-3 at tp 8, pp 1, its embedding table (51200 x 12288 / 8 = 78.6M parameters a tp rank; an
// MLP matrix 12288 x 49152 / 8 = 75.5M).
TEST(Memory, Zero3HoldsTwoGatheredBucketsAndOneBucketsGradients) {
  WorkloadSpec w = gpt3_175b();
  w.parallelism.pp = 1;
  w.parallelism.dp = 64;
  w.parallelism.zero = 2;
  const StepMemory z2 = memory_of(w, 8);
  EXPECT_EQ(z2.peak().gathered_bytes, 0);
  w.parallelism.zero = 3;
  const StepMemory z3 = memory_of(w, 8);
  EXPECT_NEAR(z3.peak().gathered_bytes, 51200.0 * 12288 / 8 * (2 * 2 + 4), 1);
  EXPECT_NEAR(z3.peak().params_bytes, z2.peak().params_bytes / 64, 1);
  EXPECT_NEAR(z3.peak().total_bytes() - z3.peak().gathered_bytes,
              z2.peak().total_bytes() - z2.peak().params_bytes + z3.peak().params_bytes, 1);
  // A smaller vocabulary: the MLP's matrix is the largest.
  w.model.vocab = 32000;
  EXPECT_NEAR(memory_of(w, 8).peak().gathered_bytes, 12288.0 * 49152 / 8 * (2 * 2 + 4), 1);
  // A small model's matrices are below a bucket: two buckets' weights and one's gradients.
  w.model = {0.35e9, 24, 1024, 16, 2048, 32000, 0, 0};  // embedding 32.8M, MLP 4.2M
  w.parallelism.tp = 1;
  EXPECT_NEAR(memory_of(w, 8).peak().gathered_bytes, kZero3BucketParams * (2 * 2 + 4), 1);
}

}  // namespace gf

namespace gf {

namespace {
Plan planned(const std::string& yaml, Spec& spec) {
  auto s = parse_spec(yaml, "t.yaml");
  EXPECT_TRUE(s.ok()) << format_diagnostics(s.errors());
  auto cat = *builtin_catalog();
  EXPECT_TRUE(validate_spec(*s, cat).empty());
  spec = *s;
  auto p = make_plan(*s, cat);
  EXPECT_TRUE(p.ok()) << format_diagnostics(p.errors());
  return *p;
}
const char* kWork =
    "workload: {model: {params: 70B}, precision: bf16, parallelism: {tp: 8, pp: 1}}\n";
}  // namespace

TEST(Checkpoint, WritesParamsTimesWeightsAndOptimizerAtTheSlowerSide) {
  EXPECT_EQ(checkpoint_bytes_per_param(Precision::kBf16), 2 + 12);
  EXPECT_EQ(checkpoint_bytes_per_param(Precision::kFp32), 4 + 8);
  Spec s;
  // 64 DGX x 2 x 200G = 3.2 TB/s of node ports; 4 storage servers x 8 x 200G = 800 GB/s.
  const Plan p = planned(std::string("cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\n") +
                             kWork + "networks: {storage: {storage_nodes: 4}}\n",
                         s);
  const auto c = checkpoint_estimate(*&p, *s.workload, nominal_dp_traffic(p, *s.workload));
  EXPECT_DOUBLE_EQ(c.bytes, 70e9 * 14);
  EXPECT_NEAR(c.write_Bps, 4 * 8 * 200e9 / 8, 1);
  EXPECT_NEAR(c.write_s, 70e9 * 14 / 800e9, 1e-9);
  EXPECT_EQ(c.bottleneck, "storage servers' ports");
  EXPECT_FALSE(c.converged);
  // Enough storage servers: the nodes' own ports bound the write.
  const Plan q = planned(std::string("cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\n") +
                             kWork + "networks: {storage: {storage_nodes: 64}}\n",
                         s);
  const auto d = checkpoint_estimate(q, *s.workload, nominal_dp_traffic(q, *s.workload));
  EXPECT_NEAR(d.write_Bps, 64 * 2 * 200e9 / 8, 1);
  EXPECT_EQ(d.bottleneck, "GPU servers' storage ports");
}

// On converged ports the ring and the checkpoint share each NIC's uplink max-min fairly: while
// the write runs, each NIC lane gives the checkpoint its share of the storage servers (c_s per
// lane, below half the lane) and the ring the rest, so the ring loses c_s x write time.
TEST(Checkpoint, ConvergedPortsSlowTheAllReduceByTheWritesShare) {
  Spec s;
  const Plan p = planned(std::string("cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\n") +
                             "fabric: {technology: infiniband, spine_headroom: 0.5}\n" + kWork +
                             "networks: {isolation: vlan, storage: {storage_nodes: 4}}\n",
                         s);
  const DpTraffic dp = nominal_dp_traffic(p, *s.workload);
  const auto c = checkpoint_estimate(p, *s.workload, dp);
  ASSERT_TRUE(c.converged);
  const double lane = 400e9 / 8, lanes = 64 * 8;
  const double per_lane_storage = c.write_Bps / lanes;  // 800 GB/s over 512 lanes
  ASSERT_LT(per_lane_storage, lane / 2);
  // The write is bound by the storage servers whether or not it shares: it finishes as alone.
  EXPECT_NEAR(c.write_shared_s, c.write_s, 1e-6 * c.write_s);
  const double ring_bytes = dp.nic_bytes;
  const double alone = ring_bytes / lane;
  const double shared = alone + c.write_s * per_lane_storage / lane;
  EXPECT_NEAR(c.allreduce_shared_s / c.allreduce_alone_s, shared / alone, 1e-6);
  EXPECT_NEAR(c.allreduce_share, alone / shared, 1e-6);
  EXPECT_GT(c.step_cost_s, 0);
  // Overlapped all-reduce: the hidden part stays hidden, the slower rest costs the step.
  EXPECT_NEAR(c.step_cost_s, c.allreduce_shared_s - c.allreduce_alone_s, 1e-9);
}

// ZeRO-3 sends its gradients once (a reduce-scatter, (n-1)/n) and gathers the weights before
// each microbatch's forward and backward: the traffic the checkpoint meets is both, and is named
// so, not "the DP all-reduce".
TEST(Checkpoint, Zero3TrafficIsItsReduceScatterAndItsGathers) {
  Spec s;
  const std::string base = std::string("cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\n") +
                           "fabric: {technology: infiniband, spine_headroom: 0.5}\n" +
                           "networks: {isolation: vlan, storage: {storage_nodes: 4}}\n";
  auto work = [](int zero) {
    return fmt::format(
        "workload: {{model: {{params: 70B}}, precision: bf16, global_batch: 256, micro_batch: 1, "
        "parallelism: {{tp: 8, pp: 1, dp: 64, zero: {}}}}}\n",
        zero);
  };
  const Plan p0 = planned(base + work(0), s);
  const DpTraffic plain = nominal_dp_traffic(p0, *s.workload);
  EXPECT_EQ(plain.what, "the DP all-reduce");
  const Plan p3 = planned(base + work(3), s);
  const DpTraffic z3 = nominal_dp_traffic(p3, *s.workload);
  EXPECT_EQ(z3.what, "ZeRO-3's DP reduce-scatters and parameter gathers");
  // Per GPU: fp32 gradients reduce-scattered after each of the 4 microbatches, (n-1)/n, and 4
  // microbatches x 2 gathers of bf16 weights.
  const double held = 70e9 / 8, ring = 63.0 / 64;
  EXPECT_NEAR(plain.nic_bytes, held * 4 * 2 * ring, 1e3);
  EXPECT_NEAR(z3.nic_bytes, held * (4 * 4 + 4 * 2 * 2) * ring, 1e3);
  // ZeRO-2: the reduce-scatters alike, and the updated bf16 weights gathered once.
  const Plan p2 = planned(base + work(2), s);
  const DpTraffic z2 = nominal_dp_traffic(p2, *s.workload);
  EXPECT_EQ(z2.what, "ZeRO-2's DP reduce-scatters and weight gather");
  EXPECT_NEAR(z2.nic_bytes, held * (4 * 4 + 2) * ring, 1e3);
  const Plan p3b = planned(base + work(3), s);
  const auto c = checkpoint_estimate(p3b, *s.workload, z3);
  ASSERT_TRUE(c.converged);
  EXPECT_EQ(c.dp_traffic, z3.what);
  // ZeRO-2 under a pipeline schedule reduces once a step, as the step model runs it (dp_zero):
  // ZeRO-1's reduce-scatter and all-gather, 3 bytes a parameter each way, not 8 microbatches'.
  const Plan pp2 =
      planned(base +
                  "workload: {model: {params: 70B}, precision: bf16, global_batch: 256, "
                  "micro_batch: 1, parallelism: {tp: 8, pp: 2, dp: 32, zero: 2}}\n",
              s);
  const DpTraffic z2pp = nominal_dp_traffic(pp2, *s.workload);
  EXPECT_EQ(z2pp.what, "the DP reduce-scatter and all-gather");
  EXPECT_NEAR(z2pp.nic_bytes, 70e9 / 16 * 3 * 2 * (31.0 / 32), 1e3);
}

}  // namespace gf
