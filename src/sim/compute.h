// Compute of one training microbatch, kernel by kernel: a roofline per kernel of a transformer
// layer (Calculon's method: Isaev et al., "Calculon: a methodology and tool for high-level
// co-design of systems and large language models", SC'23, and github calculon-ai/calculon
// calculon/llm/llm.py, which lists a Megatron layer's kernels). Each kernel takes the longer of
// its FLOPs at the engine's achievable rate and its HBM traffic at the memory's achievable
// bandwidth. The GEMMs' shapes follow tensor and sequence parallelism; attention is FlashAttention
// or Megatron's unfused kernels; the element-wise kernels (layer norms, dropout, residual adds,
// activation, softmax) run at HBM bandwidth. Pure: no I/O.
#pragma once

#include "catalog/catalog.h"
#include "spec/spec.h"

namespace gf {

/// What one GPU computes for one layer and one microbatch.
struct LayerShape {
  double tokens = 0;  ///< tokens of the microbatch on this rank's sequence slice (b x s / cp)
  double context = 0; ///< tokens each query attends over (the sequence length s)
  double hidden = 0, heads = 0, kv_heads = 0, ffn = 0;
  int tp = 1;
  bool sequence_parallel = false;
  MlpKind mlp = MlpKind::kGelu;
  AttentionKernel attention = AttentionKernel::kFlash;
  bool dropout = false;
  bool causal = true;        ///< a decoder's mask: FlashAttention skips the blocks above it
  double bytes = 2;          ///< per activation element
  int experts = 0, top_k = 0;  ///< MoE: the MLP runs top_k experts per token
  double expert_load = 1;      ///< MoE: the busiest rank's routed tokens over the mean
};
/// The shape of one layer of `w`'s model for one microbatch (defaults filled in: ffn 4h for
/// GeLU, 8h/3 rounded up to a multiple of 256 for SwiGLU, as Megatron-LM and Llama do).
LayerShape layer_shape(const WorkloadSpec& w);

/// The rates a GPU achieves, from the catalog.
struct KernelRates {
  double matrix_flops = 0;      ///< dense tensor-core peak, FLOP/s, at the workload's precision
  /// The peak attention's core and the output layer (the LM head) run at: with FP8 training,
  /// BF16's. Megatron-LM runs only the transformer layers' linear GEMMs in FP8 (Transformer
  /// Engine): FP8 dot-product attention is off by default (fp8_dot_product_attention False) and
  /// the LM head is FP8 only under MXFP8 with an option (transformer_config.py@d98e8a64dd:
  /// 630-641). Other precisions: matrix_flops.
  double bf16_matrix_flops = 0;
  double gemm_efficiency = 0;       ///< fraction of it training's GEMMs sustain
  double attention_efficiency = 0;  ///< fraction of it a fused attention kernel sustains
  double vector_flops = 0;      ///< non-tensor FLOP/s (FP32 peak)
  double hbm_Bps = 0;           ///< HBM bandwidth, bytes/s
  bool usable() const { return matrix_flops > 0 && gemm_efficiency > 0 && hbm_Bps > 0; }
};
/// From the catalog's GPU; `usable()` is false when the catalog lacks the figures.
KernelRates kernel_rates(const GpuModel& gpu, Precision precision);

/// Time of one layer and one microbatch on one GPU, by kind of kernel.
struct LayerTime {
  double gemm_s = 0;       ///< the linear layers (QKV, projection, MLP)
  double attention_s = 0;  ///< attention's core (scores, softmax, values)
  double memory_s = 0;     ///< element-wise kernels bound by HBM
  double forward_s = 0, backward_s = 0;  ///< backward includes what recomputation repeats
  double recompute_s = 0;  ///< of backward_s: the forward work recomputation repeats
  /// Attention's core and the linear layers, forward and backward (recomputation excluded):
  /// what communication overlapped with them hides behind.
  double attention_forward_s = 0, attention_backward_s = 0;
  double gemm_forward_s = 0, gemm_backward_s = 0;
  double total() const { return forward_s + backward_s; }
};
LayerTime layer_time(const LayerShape& s, const KernelRates& k, Recompute recompute);

/// The output layer (logits and the cross entropy over the vocabulary) of one microbatch on one
/// tensor-parallel rank, forward and backward, seconds. Never recomputed.
double output_layer_time(const LayerShape& s, double vocab, const KernelRates& k);

/// The optimizer step (Adam) on `params` parameters held by this GPU: element-wise over the
/// FP32 master weights and both moments, bound by HBM, seconds.
double optimizer_time(double params, const KernelRates& k);

}  // namespace gf
