#include "sim/compute.h"

#include <algorithm>
#include <cmath>

#include "spec/model_params.h"

namespace gf {

// The share of a kernel's benchmark rate (the catalog's matmul_efficiency, the maximum
// achievable matmul FLOPS of its best shape, and attention_efficiency) that training's kernels
// sustain: shapes that are not the best, clocks under a full node's power, the memory traffic
// of neighbouring kernels. Fitted on the fit rows of data/calibration/training-public.csv
// as they were then (A100: Narayanan et al. SC'21 table 1's 1.7B and 1008B, Korthikanti et al.
// 2022 table 5's 22B; the rows of tables 1 and 2 added later were not used to refit it), the value
// with the least median |error| over them, scanned 0.70-0.90 by 0.02 (`gpufabric calibrate
// data/calibration/training-public.csv`); never on the test rows.
constexpr double kTrainingKernelShare = 0.78;

namespace {

// A kernel's fixed cost beside its work: the launch and the last, partly filled wave of thread
// blocks, seconds. Calculon's A100 efficiency curve (systems/a100_80g.json: 0.95 of peak at
// >= 128 GFLOP, 0.9 at >= 16, 0.6 at >= 1) puts 2-3 us between a GEMM at full rate and the same
// GEMM at its tier's rate; 3 us is that gap.
constexpr double kKernelFixedS = 3e-6;
// HBM's achievable fraction of its peak by transfer size (Calculon systems/a100_80g.json mem1
// MB_efficiency: 0.9 at >= 100 MB, 0.75 at >= 10 MB, 0.6 at >= 1 MB, 0.3 below).
double hbm_efficiency(double bytes) {
  if (bytes >= 100e6) return 0.9;
  if (bytes >= 10e6) return 0.75;
  if (bytes >= 1e6) return 0.6;
  return 0.3;
}
// A backward element-wise kernel reads the saved input and the output's gradient and writes the
// input's gradient: three tensors to the forward's two.
constexpr double kBackwardElementwiseBytes = 1.5;
// FlashAttention's backward runs five matrix products to the forward's two (Dao, "FlashAttention-
// 2", 2023, §3.1: it recomputes the scores from Q and K instead of reading them): 2.5 x the FLOPs.
constexpr double kFlashBackwardFlops = 2.5;
// Adam per parameter (Megatron-LM's distributed optimizer, FP32 master weights and moments):
// reads the FP32 gradient, master weight and both moments (16 B), writes the weight, the moments
// and the BF16 copy the model runs on (14 B).
constexpr double kAdamBytesPerParam = 30;
// Cross entropy over the vocabulary in FP32 (Megatron-LM tensor_parallel/cross_entropy.py:
// logits upcast, max, exp and sum, then the gradient): two passes over the logits forward, two
// backward, 4 bytes an element.
constexpr double kCrossEntropyPasses = 2;
constexpr double kFp32Bytes = 4;

struct Kernels {
  const KernelRates& k;
  double gemm = 0, attention = 0, memory = 0;
  // A GEMM of m x k by k x n: 2mnk FLOPs, its operands and result through HBM.
  // `peak`: the tensor-core rate it runs at (0: the workload's precision's).
  double gemm_s(double m, double kk, double n, double bytes, double peak = 0) const {
    const double flops = 2 * m * kk * n;
    const double traffic = (m * kk + kk * n + m * n) * bytes;
    return kKernelFixedS +
           std::max(flops / ((peak > 0 ? peak : k.matrix_flops) * k.gemm_efficiency),
                    traffic / (k.hbm_Bps * hbm_efficiency(traffic)));
  }
  // An element-wise kernel moving `traffic` bytes.
  double memory_s(double traffic) const {
    return traffic <= 0 ? 0 : kKernelFixedS + traffic / (k.hbm_Bps * hbm_efficiency(traffic));
  }
};

struct Pass {
  double gemm = 0, attention = 0, memory = 0;
  double sum() const { return gemm + attention + memory; }
};

// Forward of attention's core alone, and its backward.
void attention_core(const LayerShape& s, const Kernels& x, Pass& fwd, Pass& bwd) {
  const double t = s.tp;
  const double heads = s.heads / t;
  if (s.attention == AttentionKernel::kFlash) {
    // Q K^T and P V, 2 x 2 T s h / t FLOPs; a causal mask skips the blocks above the diagonal.
    const double flops = 4 * s.tokens * s.context * s.hidden / t * (s.causal ? 0.5 : 1);
    const double rate = x.k.bf16_matrix_flops * x.k.attention_efficiency;
    fwd.attention += kKernelFixedS + flops / rate;
    bwd.attention += kKernelFixedS + kFlashBackwardFlops * flops / rate;
    return;
  }
  // Megatron-LM's unfused core: batched Q K^T (heads x [T, d] x [d, s]), the fused
  // scale-mask-softmax, dropout on the probabilities, batched P V; the T x s scores and
  // probabilities go through HBM. No block is skipped for the mask.
  const double d = s.hidden / s.heads;
  const double scores = heads * s.tokens * s.context;  // elements
  const double qk = x.gemm_s(s.tokens * heads, d, s.context, s.bytes, x.k.bf16_matrix_flops);
  const double pv = x.gemm_s(s.tokens * heads, s.context, d, s.bytes, x.k.bf16_matrix_flops);
  const double softmax = x.memory_s(2 * scores * s.bytes);
  const double drop = s.dropout ? x.memory_s(scores * (2 * s.bytes + 1)) : 0;
  fwd.attention += qk + pv;
  fwd.memory += softmax + drop;
  bwd.attention += 2 * (qk + pv);
  bwd.memory += kBackwardElementwiseBytes * softmax + drop;
}

}  // namespace

LayerShape layer_shape(const WorkloadSpec& w) {
  const auto& m = w.model;
  LayerShape s;
  const double cp = std::max(1, w.parallelism.cp);
  s.context = m.seq_len;
  s.tokens = w.micro_batch * m.seq_len / cp;
  s.hidden = m.hidden;
  s.heads = m.heads > 0 ? m.heads : std::max(1.0, m.hidden / 128.0);
  s.kv_heads = m.kv_heads > 0 ? m.kv_heads : s.heads;
  s.mlp = m.mlp;
  s.ffn = ffn_width(m);
  s.tp = std::max(1, w.parallelism.tp);
  s.sequence_parallel = w.sequence_parallel && s.tp > 1;
  s.attention = m.attention;
  s.dropout = m.dropout > 0;
  s.bytes = w.precision == Precision::kFp32 ? 4 : 2;
  s.experts = m.experts;
  s.top_k = m.top_k;
  s.expert_load = m.expert_load();
  return s;
}

KernelRates kernel_rates(const GpuModel& gpu, Precision precision) {
  KernelRates k;
  k.matrix_flops = gpu.tflops(precision) * 1e12;
  k.bf16_matrix_flops =
      precision == Precision::kFp8 ? gpu.tflops(Precision::kBf16) * 1e12 : k.matrix_flops;
  k.gemm_efficiency = gpu.matmul_efficiency * kTrainingKernelShare;
  k.attention_efficiency =
      (gpu.attention_efficiency > 0 ? gpu.attention_efficiency : gpu.matmul_efficiency) *
      kTrainingKernelShare;
  k.vector_flops = gpu.fp32_tflops * 1e12;
  k.hbm_Bps = gpu.hbm_gbps * 1e9;
  return k;
}

LayerTime layer_time(const LayerShape& s, const KernelRates& k, Recompute recompute) {
  const Kernels x{k};
  const double t = s.tp;
  const double B = s.bytes;
  // Tokens of the layer norms, dropouts and residual adds: a 1/tp slice of the sequence with
  // sequence parallelism, every token on every rank without (Korthikanti et al. 2022 §4.2.2).
  const double region = s.sequence_parallel ? s.tokens / t : s.tokens;
  const double d = s.hidden / s.heads;
  Pass fwd, bwd, core_fwd, core_bwd;
  // Layer norm: reads and writes the hidden states (twice a layer).
  const double norm = x.memory_s(2 * region * s.hidden * B);
  // Bias, dropout and residual add, one fused kernel (Megatron's bias_dropout_add_fused): reads
  // the branch and the residual, writes the sum, and the dropout mask (1 byte an element).
  const double residual = x.memory_s(region * s.hidden * (3 * B + (s.dropout ? 1 : 0)));
  fwd.memory += 2 * norm + 2 * residual;
  bwd.memory += kBackwardElementwiseBytes * 2 * (norm + residual);
  // QKV: [T, h] x [h, (heads + 2 kv) d / tp]; the projection [T, h / tp] x [h / tp, h].
  const double qkv = x.gemm_s(s.tokens, s.hidden, (s.heads + 2 * s.kv_heads) * d / t, B);
  const double proj = x.gemm_s(s.tokens, s.hidden / t, s.hidden, B);
  // MLP: up (two matrices side by side for SwiGLU's gate and value), activation, down. A MoE
  // layer runs top_k experts per token: its grouped GEMMs see top_k x the tokens.
  // The busiest expert rank sets the time of a synchronous layer: its routed tokens are
  // expert_load x the mean.
  const double mlp_tokens =
      s.tokens * (s.experts > 0 ? std::max(1, s.top_k) * std::max(1.0, s.expert_load) : 1);
  const double gated = s.mlp == MlpKind::kSwiglu ? 2 : 1;
  const double up = x.gemm_s(mlp_tokens, s.hidden, gated * s.ffn / t, B);
  const double down = x.gemm_s(mlp_tokens, s.ffn / t, s.hidden, B);
  // The activation (bias + GeLU fused, or SiLU(gate) x value): reads its input, writes f / tp.
  const double act = x.memory_s(mlp_tokens * s.ffn / t * (gated + 1) * B);
  const double gemms = qkv + proj + up + down;
  fwd.gemm += gemms;
  fwd.memory += act;
  // Backward: each GEMM twice (the input's gradient and the weight's), the activation's gradient.
  bwd.gemm += 2 * gemms;
  bwd.memory += kBackwardElementwiseBytes * act;
  attention_core(s, x, core_fwd, core_bwd);
  fwd.attention += core_fwd.attention;
  fwd.memory += core_fwd.memory;
  bwd.attention += core_bwd.attention;
  bwd.memory += core_bwd.memory;

  LayerTime r;
  r.forward_s = fwd.sum();
  // Full recomputation runs the whole forward again before the backward; selective recomputes
  // attention's core (Korthikanti et al. 2022 §5), which FlashAttention's backward already does.
  const bool full = recompute == Recompute::kFull;
  const bool core_again =
      full || (recompute == Recompute::kSelective && s.attention == AttentionKernel::kUnfused);
  if (full)
    r.recompute_s = fwd.sum();
  else if (core_again)
    r.recompute_s = core_fwd.sum();
  r.backward_s = bwd.sum() + r.recompute_s;
  r.gemm_s = fwd.gemm * (full ? 2 : 1) + bwd.gemm;
  r.attention_s = core_fwd.attention * (core_again ? 2 : 1) + core_bwd.attention;
  r.memory_s = r.total() - r.gemm_s - r.attention_s;
  r.attention_forward_s = core_fwd.attention;
  r.attention_backward_s = core_bwd.attention;
  r.gemm_forward_s = fwd.gemm;
  r.gemm_backward_s = bwd.gemm;
  return r;
}

double output_layer_time(const LayerShape& s, double vocab, const KernelRates& k) {
  if (vocab <= 0) return 0;
  const Kernels x{k};
  const double logits = x.gemm_s(s.tokens, s.hidden, vocab / s.tp, s.bytes, k.bf16_matrix_flops);
  const double loss =
      x.memory_s(kCrossEntropyPasses * 2 * s.tokens * vocab / s.tp * kFp32Bytes);
  return 3 * logits + 2 * loss;
}

double optimizer_time(double params, const KernelRates& k) {
  if (params <= 0 || k.hbm_Bps <= 0) return 0;
  const double bytes = params * kAdamBytesPerParam;
  return bytes / (k.hbm_Bps * hbm_efficiency(bytes));
}

}  // namespace gf
