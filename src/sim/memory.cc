#include "sim/memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/compute.h"
#include "units/units.h"

namespace gf {
namespace {

// Bytes per parameter of mixed-precision Adam as Megatron-LM keeps them (core_v0.15.0,
// docs/source/api-guide/dist_optimizer.md): weights, main gradients, optimizer states (fp32
// master weights and Adam's two moments; with fp16 also an fp32 gradient copy).
struct ParamBytes {
  double weights, gradients, optimizer;
};
// The fp32 copy the optimizer makes of 16-bit gradients (fp32 ones it uses in place).
constexpr double kFp32GradientCopyBytes = 4;
constexpr ParamBytes kBf16Adam{2, 4, 12};  // 18; distributed optimizer 6 + 12/d (fp32 gradients)
constexpr ParamBytes kFp16Adam{2, 2, 12 + kFp32GradientCopyBytes};  // 20; 4 + 16/d
constexpr ParamBytes kFp32Adam{4, 4, 8};   // 16; 8 + 8/d

ParamBytes param_bytes(Precision p) {
  if (p == Precision::kFp32) return kFp32Adam;
  if (p == Precision::kFp16) return kFp16Adam;
  return kBf16Adam;  // bf16, and fp8 (FP8 GEMMs keep bf16 weights and fp32 main gradients)
}

// NCCL's buffers per connection and channel, one per protocol (NCCL src/init.cc, v2.18-2.29:
// DEFAULT_BUFFSIZE 4 MiB for Simple, DEFAULT_LL128_BUFFSIZE 4,915,200 B, DEFAULT_LL_BUFFSIZE
// 512 KiB).
constexpr double kNcclConnectionBytes = 4194304.0 + 4915200.0 + 524288.0;
// Channels per communicator and peers per channel (a ring's previous and next rank): estimate;
// NCCL opens 8-32 channels on 8-NIC H100 nodes.
constexpr double kNcclChannels = 16;
constexpr double kNcclPeersPerChannel = 2;
// ZeRO-3's gathered buckets held whole at once: the one the module computing with took and the
// next one, prefetched under its compute (DeepSpeed's stage3_prefetch_bucket_size, as the step
// model gathers them; FSDP likewise holds the unit computing and the next one: PyTorch
// docs/source/notes/fsdp.rst, "FSDP Prefetch Nuances", v2.5). A bucket holds at least one whole
// weight matrix, gathered as one parameter. In the backward the bucket's gradients are whole
// too until their reduce-scatter.
constexpr double kZero3WholeUnits = 2;

// Activations one transformer layer keeps for its backward, per microbatch, in bytes of 16-bit
// activations. Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
// Models" (MLSys 2023, arXiv 2205.05198) §4.1 and Table 2 count them for GPT (34 sbh + 5 as^2 b
// without parallelism); the same count, term by term, for the shape at hand:
//   attention: the layer norm's output (2h), Q (2h), K and V (2 x 2 kv d: narrower with
//   grouped-query attention), the projection's input (2h), the dropout mask (h, with dropout);
//   MLP: the layer norm's output (2h), the activation's input and output (GeLU 2f + 2f; SwiGLU
//   keeps its gate and value, 4f, and their product, 2f), the dropout mask (h); the two layer
//   norms' inputs (4h);
//   the scores: the softmax output (2 as), with dropout its mask and output (3 as more), per
//   token; FlashAttention keeps none (it recomputes them), selective recomputation neither.
// Tensor parallelism splits what lives between the column- and row-parallel GEMMs (Q, K, V,
// the projection's input, the activation's tensors, the scores); sequence parallelism the rest.
// With full recomputation a layer keeps its input alone. For GPT (kv = heads, f = 4h, dropout)
// this is Table 2's 34 sbh / t (10 sbh + 24 sbh / t without sequence parallelism) + 5 as^2 b / t.
double layer_activation_bytes(Recompute rc, const LayerShape& l) {
  const double t = l.tp, h = l.hidden, tokens = l.tokens;
  const double rest = l.sequence_parallel ? t : 1;
  if (rc == Recompute::kFull) return 2.0 * tokens * h / rest;  // the layer's input only
  const double d = h / l.heads;
  const double drop = l.dropout ? 1 : 0;
  const double mlp = l.mlp == MlpKind::kSwiglu ? 6 * l.ffn : 4 * l.ffn;
  const double split = 2 * h + 4 * l.kv_heads * d + 2 * h + mlp;  // per token, / t
  const double replicated = 2 * h + drop * h + 2 * h + drop * h + 4 * h;
  double scores = 0;
  if (rc == Recompute::kNone && l.attention == AttentionKernel::kUnfused)
    scores = (2 + 3 * drop) * l.heads * l.context;
  return tokens * (split / t + replicated / rest + scores / t);
}

}  // namespace

double weight_bytes(const WorkloadSpec& w) { return param_bytes(w.precision).weights; }

double gradient_reduce_bytes(const WorkloadSpec& w) {
  return precision_bytes(grad_reduce_precision(w));
}

int dp_zero(const WorkloadSpec& w) {
  const auto& p = w.parallelism;
  return p.zero == 2 && p.pp > 1 && microbatches_per_step(w) > 1 ? 1 : p.zero;
}

double dp_bytes_per_param(const WorkloadSpec& w) {
  const double grads = gradient_reduce_bytes(w);
  return dp_zero(w) == 1 ? (grads + weight_bytes(w)) / 2 : grads;
}

double zero3_gather_passes(const WorkloadSpec& w) {
  return 2 + (w.recompute == Recompute::kFull ? 1 : 0);
}

double microbatches_per_step(const WorkloadSpec& w) {
  const double b = w.micro_batch, dp = std::max(1, w.parallelism.dp);
  return w.global_batch > 0 ? std::max(1.0, w.global_batch / (b * dp)) : 1.0;
}

double checkpoint_bytes_per_param(Precision precision) {
  const ParamBytes pb = param_bytes(precision);
  return pb.weights + pb.optimizer;
}

std::string memory_shortfall(const StepMemory& m, const std::string& gpu) {
  if (m.stages.empty()) return "";
  return fmt::format("pipeline stage {} needs {:.1f} GiB per GPU, the {} has {:.1f} GiB",
                     m.peak().stage + 1, m.peak().total_bytes() / units::kBytesPerGiB, gpu,
                     m.hbm_bytes / units::kBytesPerGiB);
}

StepMemory step_memory(const WorkloadSpec& w, const PipelineLayout& layout, double microbatches,
                       double expert_params, double hbm_bytes) {
  StepMemory out;
  out.hbm_bytes = hbm_bytes;
  const auto& m = w.model;
  const auto& par = w.parallelism;
  const int pp = static_cast<int>(layout.layers.size());
  const int vp = std::max(1, w.virtual_pipeline);
  const double t = par.tp, cp = par.cp, ep = std::max(1, par.ep);
  const double h = m.hidden, vocab = m.vocab;
  const double s = (m.seq_len > 0 ? m.seq_len : 0) / cp;  // sequence on one CP rank
  const double b = w.micro_batch;
  const double precision_factor = w.precision == Precision::kFp32 ? 2 : 1;

  // Weights: the embedding table on the first stage, the output layer (or the tied copy Megatron
  // keeps) on the last; the rest spread over the layers. Experts are sharded over ep.
  const double embedding = vocab * h;
  const int layers = std::max(1, m.layers);
  const double dense = std::max(0.0, m.params - expert_params - (m.layers > 0 ? embedding : 0));
  const double dense_layer = dense / layers, expert_layer = expert_params / layers;
  ParamBytes pb = param_bytes(w.precision);
  // The main gradients are kept in the type they are reduced in (grad_reduce_precision: fp32
  // unless the spec says bf16, as --grad-reduce-in-bf16 makes Megatron-LM's buffer bf16); the
  // optimizer copies 16-bit gradients to fp32 (the 4 bytes in fp16's 16), and uses fp32 ones in
  // place.
  pb.gradients = precision_bytes(grad_reduce_precision(w));
  if (w.precision != Precision::kFp32)
    pb.optimizer = kBf16Adam.optimizer + (pb.gradients < 4 ? kFp32GradientCopyBytes : 0);
  out.bytes_per_param = pb.weights + pb.gradients + pb.optimizer;
  // ZeRO-1 (= Megatron's distributed optimizer) shards optimizer states over the data-parallel
  // (x context-parallel) group, ZeRO-2 gradients too, ZeRO-3 the weights as well (Rajbhandari
  // et al., "ZeRO", SC'20).
  const double dense_shard = std::max(1.0, static_cast<double>(par.dp) * cp);
  const double expert_shard = std::max(1.0, par.dp / ep * cp);
  const int zero = dp_zero(w);
  auto sharded = [&](double bytes, int from_stage, double shard) {
    return zero >= from_stage ? bytes / shard : bytes;
  };

  const LayerShape shape = layer_shape(w);
  out.activation_layer_bytes = layer_activation_bytes(w.recompute, shape) * precision_factor;
  const double working_layer = layer_activation_bytes(Recompute::kNone, shape) * precision_factor;

  for (int r = 0; r < pp; ++r) {
    StageMemory st;
    st.stage = r;
    st.layers = layout.layers[r];
    const bool first = r == 0, last = r == pp - 1;
    const double n = m.layers > 0 ? st.layers : static_cast<double>(layers) / pp;
    double dense_p = n * dense_layer;
    if (m.layers > 0)
      dense_p += (first ? embedding : 0) + (last && pp > 1 ? embedding : 0);
    else
      dense_p = dense / pp;
    const double dense_gpu = dense_p / t, expert_gpu = n * expert_layer / (t * ep);
    st.params_bytes = sharded(dense_gpu * pb.weights, 3, dense_shard) +
                      sharded(expert_gpu * pb.weights, 3, expert_shard);
    st.gradients_bytes = sharded(dense_gpu * pb.gradients, 2, dense_shard) +
                         sharded(expert_gpu * pb.gradients, 2, expert_shard);
    st.optimizer_bytes = sharded(dense_gpu * pb.optimizer, 1, dense_shard) +
                         sharded(expert_gpu * pb.optimizer, 1, expert_shard);
    if (zero >= 3) {
      // The stage's largest weight matrix as tensor parallelism leaves it on a GPU: an MLP's
      // (hidden x ffn; an expert's too), or the embedding table (output layer) on the first
      // (last) stage.
      double matrix = h * shape.ffn / t;
      if (m.layers > 0 && (first || (last && pp > 1))) matrix = std::max(matrix, embedding / t);
      const double unit = std::max(kZero3BucketParams, matrix);
      st.gathered_bytes = unit * (kZero3WholeUnits * pb.weights + pb.gradients);
    }

    // Microbatches in flight at the schedule's peak (Megatron-LM core_v0.15.0,
    // megatron/core/pipeline_parallel/schedules.py, num_warmup_microbatches): 1F1B keeps
    // pp - rank forwards waiting for their backward; the interleaved schedule keeps
    // 2 (pp - rank - 1) + (vp - 1) pp + 1 chunks of 1/vp of the stage, which on the first stage
    // is Korthikanti et al.'s L (1 + (p - 1) / (p v)) layers' worth.
    double in_flight = 1;
    if (pp > 1 && vp == 1) in_flight = std::min<double>(pp - r, microbatches);
    if (pp > 1 && vp > 1)
      in_flight =
          std::min<double>(2.0 * (pp - r - 1) + (vp - 1.0) * pp + 1, microbatches * vp) / vp;
    st.in_flight_microbatches = in_flight;
    if (s > 0 && h > 0) {
      st.activations_bytes = out.activation_layer_bytes * n * in_flight;
      if (w.recompute == Recompute::kFull) st.activations_bytes += working_layer;
      // Megatron-LM's theoretical_memory_usage.py (core_v0.15.0): the embedding's input ids
      // (8 B a token) and dropout mask for every microbatch in flight on the first stage; the
      // output layer and the loss, 4sbh (1 + v/h), for the one microbatch on the last.
      if (first) st.activations_bytes += in_flight * (8.0 * s * b + s * b * h) / t;
      if (last && vocab > 0) st.activations_bytes += 4.0 * s * b * h * (1 + vocab / h) / t;
    }
    int comms = 0;
    for (int size : {par.tp, par.cp, par.ep, par.dp, pp}) comms += size > 1;
    st.nccl_bytes = comms * kNcclChannels * kNcclPeersPerChannel * kNcclConnectionBytes;
    out.stages.push_back(st);
  }
  for (size_t r = 0; r < out.stages.size(); ++r)
    if (out.stages[r].total_bytes() > out.stages[out.peak_stage].total_bytes())
      out.peak_stage = static_cast<int>(r);
  out.fits = hbm_bytes <= 0 || out.peak().total_bytes() <= hbm_bytes;
  return out;
}

}  // namespace gf
