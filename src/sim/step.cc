#include "sim/step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/collective.h"
#include "sim/compute.h"
#include "sim/flow_builder.h"
#include "sim/step_overlap.h"
#include "spec/model_params.h"
#include "units/units.h"

namespace gf {
namespace {

// GEMM efficiency grows with the model's width: e(h) = e_catalog x (h / 8192)^0.1. Fitted to
// Narayanan et al. SC'21 table 1 on A100 (1.7B, h=2304: 44% of peak; 1T, h=25600: 52%, both
// with bubble and communication); the catalog's figure is the one at h = 8192.
constexpr double kEfficiencyReferenceHidden = 8192;
constexpr double kEfficiencyWidthExponent = 0.1;
// Backward costs twice the forward: it is 2/3 of a microbatch's compute.
constexpr double kBackwardShare = 2.0 / 3.0;
// Gradient buckets (PyTorch DDP's 25 MB; Megatron uses ~40M parameters).
constexpr double kBucketBytes = 25e6;
// Without per-kernel times (compute from FLOPs), the share of a CP key/value exchange left
// exposed: about half, overlapped with attention (estimate). With them it comes from the
// attention kernels' times.
constexpr double kCpExposedFractionFallback = 0.5;

struct Dims {
  int tp, cp, ep, pp, dpo;
};

// Rank of coordinates, Megatron order: TP innermost, then CP, EP, PP, and DP outermost.
int rank_of(const Dims& d, int t, int c, int e, int p, int o) {
  return t + d.tp * (c + d.cp * (e + d.ep * (p + d.pp * o)));
}

// Groups of ranks that vary along one dimension, the others fixed.
std::vector<std::vector<int>> groups_along(const Dims& d, char dim) {
  std::vector<std::vector<int>> out;
  for (int o = 0; o < (dim == 'o' || dim == 'D' ? 1 : d.dpo); ++o)
    for (int p = 0; p < (dim == 'p' ? 1 : d.pp); ++p)
      for (int e = 0; e < (dim == 'e' || dim == 'D' ? 1 : d.ep); ++e)
        for (int c = 0; c < (dim == 'c' ? 1 : d.cp); ++c)
          for (int t = 0; t < (dim == 't' ? 1 : d.tp); ++t) {
            std::vector<int> g;
            if (dim == 't')
              for (int x = 0; x < d.tp; ++x) g.push_back(rank_of(d, x, c, e, p, o));
            if (dim == 'c')
              for (int x = 0; x < d.cp; ++x) g.push_back(rank_of(d, t, x, e, p, o));
            if (dim == 'e')
              for (int x = 0; x < d.ep; ++x) g.push_back(rank_of(d, t, c, x, p, o));
            if (dim == 'o')
              for (int x = 0; x < d.dpo; ++x) g.push_back(rank_of(d, t, c, e, p, x));
            if (dim == 'D')  // dense data parallel: EP and outer DP together
              for (int y = 0; y < d.dpo; ++y)
                for (int x = 0; x < d.ep; ++x) g.push_back(rank_of(d, t, c, x, p, y));
            out.push_back(std::move(g));
          }
  return out;
}

// Pipeline neighbours: stage p sends to stage p + 1 in every pipeline.
std::vector<std::vector<int>> pp_pairs(const Dims& d) {
  std::vector<std::vector<int>> out;
  for (int o = 0; o < d.dpo; ++o)
    for (int e = 0; e < d.ep; ++e)
      for (int c = 0; c < d.cp; ++c)
        for (int t = 0; t < d.tp; ++t)
          for (int p = 0; p + 1 < d.pp; ++p)
            out.push_back({rank_of(d, t, c, e, p, o), rank_of(d, t, c, e, p + 1, o)});
  return out;
}

// A flat ring: consecutive ranks on different nodes, so every hop crosses the network.
std::vector<std::vector<int>> flatten(std::vector<std::vector<int>> groups, int gpus_per_node) {
  for (auto& g : groups) {
    std::stable_sort(g.begin(), g.end(),
                     [&](int a, int b) { return a % gpus_per_node < b % gpus_per_node; });
  }
  return groups;
}

// A note where some of a communication's groups, small enough to fit one scale-up domain,
// span more than one (the ranks laid out contiguously and a domain's GPUs not a multiple of the
// groups' stride): those groups cross the network and the collective, as slow as its slowest
// group, runs at their pace. Empty where every group sits in one domain, or none can.
std::string straddle_note(const std::string& kind, const std::vector<std::vector<int>>& groups,
                          int domain_gpus) {
  if (groups.empty() || domain_gpus < 2 || static_cast<int>(groups[0].size()) > domain_gpus)
    return {};
  size_t split = 0;
  for (const auto& g : groups) {
    const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
    if (*lo / domain_gpus != *hi / domain_gpus) ++split;
  }
  if (split == 0 || split == groups.size()) return {};
  return fmt::format(
      "{} of {} {} groups of {} span more than one scale-up domain of {} GPUs and cross the "
      "network, pacing the others: a layout whose groups tile the domain keeps them all inside one",
      split, groups.size(), kind, groups[0].size(), domain_gpus);
}

}  // namespace

Plan with_nic_rate(const Plan& plan, double factor) {
  Plan p = plan;
  p.nic.rate_gbps *= factor;
  p.topo.lane_gbps *= factor;
  return p;
}

Result<StepResult> simulate_step(const Spec& spec, const Plan& plan, const Fabric& fabric,
                                 const std::vector<double>& node_speed,
                                 const std::vector<int>& gpu_of_rank, const StepOptions& options) {
  auto gpu_of = [&](int rank) {
    return gpu_of_rank.empty() ? rank : gpu_of_rank[static_cast<size_t>(rank)];
  };
  if (!spec.workload)
    return spec.at("workload", "the step model needs a workload section",
                   "add workload: {model: {params: 70B, ...}, parallelism: {...}} as in "
                   "examples/seed-70b-1024.yaml");
  const WorkloadSpec& w = *spec.workload;
  const auto& par = w.parallelism;
  const auto& m = w.model;
  StepResult r;
  r.gpus = plan.gpus;
  const bool shape = m.layers > 0 && m.hidden > 0 && m.seq_len > 0;
  std::vector<Diagnostic> errs;
  if (w.compute_time_s <= 0 && !shape)
    errs.push_back(spec.at("workload.model",
                           "without compute_time the model needs layers, hidden and seq_len",
                           "give them, or compute_time: 10s"));
  if (w.global_batch <= 0 && w.compute_time_s <= 0)
    errs.push_back(spec.at("workload.global_batch", "the step model needs a global batch",
                           "e.g. global_batch: 1024 (sequences per step)"));
  if (par.ep > 1 && m.experts == 0)
    errs.push_back(spec.at("workload.parallelism.ep", "ep > 1 needs a mixture-of-experts model",
                           "set model.experts and model.top_k"));
  // Compute from FLOPs divides by the GPU's peak at the precision, which a catalog entry may lack
  // (fp32_tflops is optional).
  if (w.compute_time_s <= 0 && shape && plan.gpu.tflops(w.precision) <= 0) {
    const char* precision = name_of(kPrecisionNames, w.precision);
    errs.push_back(spec.at(
        "workload.precision",
        fmt::format("the catalog gives {} no {} peak, which computing the step from its FLOPs "
                    "needs",
                    plan.gpu.id, precision),
        fmt::format("give compute_time (e.g. 10s), another precision, or {}_tflops in a catalog "
                    "file",
                    precision)));
  }
  if (!errs.empty()) return errs;

  const Dims d{par.tp, par.cp, par.ep, par.pp, std::max(1, par.dp / par.ep)};
  const int dp = par.dp;
  const double act_bytes = w.precision == Precision::kFp32 ? 4 : 2;
  // Weights as the distributed optimizer's all-gather and ZeRO-3's gathers move them: 16-bit
  // (fp8 GEMMs keep bf16 weights) or fp32; gradients in the type they are reduced in, fp32 by
  // Megatron-LM's default for bf16 (grad_reduce_precision).
  const double weight_b = weight_bytes(w);
  const Precision grad_type = grad_reduce_precision(w);
  const double grad_bytes = precision_bytes(grad_type);
  const double seq = m.seq_len > 0 ? m.seq_len : 2048;
  const double hidden = m.hidden > 0 ? m.hidden : 0;
  const double b = w.micro_batch;
  r.microbatches = microbatches_per_step(w);
  const double mb = r.microbatches;
  auto layout = pipeline_layout(m.layers, par.pp, w.virtual_pipeline, w.first_stage_layers,
                                w.last_stage_layers);
  if (!layout) {
    for (const auto& e : layout.errors()) errs.push_back(spec.at(e.key, e.message, e.hint));
    return errs;
  }
  r.pipeline = *layout;
  r.virtual_pipeline = std::max(1, w.virtual_pipeline);
  r.tokens_per_step = w.global_batch > 0 ? w.global_batch * seq : 0;

  // Active parameters: a MoE layer has an MLP per expert (as wide as the model's MLP: GeLU's two
  // matrices or SwiGLU's three); only top_k of them run per token.
  double active = m.params;
  double expert_params = 0;
  if (m.experts > 0 && shape) {
    // The experts' share of the shape's parameters (its layers and both embedding tables, as
    // Mixtral's and DeepSeek's untied ones) taken of model.params: Mixtral 8x22B's 141B holds
    // 135.6B of experts. (A cap at 90 % had put 126.9B there and 14B in the dense part, 2.7x
    // its attention and embeddings, weights per GPU 35 % high.)
    const auto parts = shape_params(m);
    const double total = !parts ? 0 : m.vocab > 0 ? parts->untied() : parts->layers;
    expert_params = total > 0 ? m.params * std::min(1.0, expert_mlp_params(m) / total) : 0;
    active = m.params - expert_params * (1.0 - static_cast<double>(m.top_k) / m.experts);
  }
  const double dense_params = m.params - expert_params;

  // Compute.
  const double peak = plan.gpu.tflops(w.precision) * 1e12;
  double eff = w.compute_efficiency > 0 ? w.compute_efficiency : plan.gpu.compute_efficiency;
  if (w.compute_efficiency <= 0 && hidden > 0)
    eff *= std::pow(hidden / kEfficiencyReferenceHidden, kEfficiencyWidthExponent);
  eff = std::min(eff, 0.95);
  r.compute_efficiency = eff;
  if (shape && r.tokens_per_step > 0) {
    const double attn = 12.0 * m.layers * hidden * seq;  // per token, fwd + bwd
    r.model_flops = r.tokens_per_step * (6.0 * active + attn);
    // Recomputed FLOPs the GPUs run beyond the model's. FlashAttention's backward recomputes the
    // scores, Q K^T, half of the attention forward, whatever the recompute setting (5 products to
    // the forward's 2, kFlashBackwardFlops; it keeps no scores, so selective recomputation has
    // nothing of its own to run); the unfused core's selective recomputation runs the whole
    // attention forward again (Korthikanti et al. 2022 §5). Full recomputation runs the forward.
    const bool flash = m.attention == AttentionKernel::kFlash;
    double extra = flash ? r.tokens_per_step * attn / 6 : 0;
    if (w.recompute == Recompute::kFull) extra += r.tokens_per_step * (2.0 * active + attn / 3);
    if (w.recompute == Recompute::kSelective && !flash) extra += r.tokens_per_step * attn / 3;
    r.hardware_flops = r.model_flops + extra;
  }
  // Per kernel (sim/compute.h) when the catalog gives the GPU's kernel figures and the spec
  // neither gives the compute time nor overrides the efficiency; from FLOPs otherwise.
  const KernelRates rates = kernel_rates(plan.gpu, w.precision);
  const bool roofline =
      shape && r.tokens_per_step > 0 && w.compute_time_s <= 0 && w.compute_efficiency <= 0 &&
      rates.usable();
  // The collectives run with the plan's calibration profile (calibrate --fit), as simulate's.
  if (!plan.calibration.identity())
    r.notes.push_back(fmt::format("collectives calibrated by {}", plan.calibration.file.empty()
                                                                      ? std::string("a profile")
                                                                      : plan.calibration.file));
  if (w.compute_time_s > 0) {
    r.compute_s = w.compute_time_s;
    r.notes.push_back("compute time given by the spec, not computed from FLOPs");
  } else if (!roofline) {
    r.compute_s = r.hardware_flops / r.gpus / (peak * eff);
    if (shape && w.compute_efficiency <= 0)
      r.notes.push_back(fmt::format(
          "compute from FLOPs at {:.0f}% of peak: the catalog gives no hbm_gbps and "
          "matmul_efficiency for {}, which the per-kernel model needs",
          100 * eff, plan.gpu.id));
  }
  r.mean_compute_s = r.compute_s;
  // Stages: each one's load in layers, the last one's with the output layer (6 h vocab FLOPs a
  // token, forward and backward, never recomputed: the V/(16lh) term of Narayanan et al. SC'21
  // eq. 3). The slowest stage paces the pipeline: the others wait for it every microbatch.
  const double out_flops_token = 6.0 * hidden * m.vocab;
  const double layer_flops_token =
      shape && r.tokens_per_step > 0
          ? (r.hardware_flops / r.tokens_per_step - out_flops_token) / m.layers
          : 0;
  const double out_load =
      layer_flops_token > 0 && w.compute_time_s <= 0 ? out_flops_token / layer_flops_token : 0;
  double total_load = 0;
  for (size_t i = 0; i < r.pipeline.layers.size(); ++i) {
    StageTime st;
    st.layers = r.pipeline.layers[i];
    st.load = m.layers > 0 ? st.layers : 1.0;
    if (i + 1 == r.pipeline.layers.size()) st.load += out_load;
    total_load += st.load;
    r.stages.push_back(st);
  }
  if (roofline) {
    // Every stage's microbatch kernel by kernel: its layers, the output layer on the last.
    const LayerShape ls = layer_shape(w);
    const LayerTime lt = layer_time(ls, rates, w.recompute);
    const double out_s = output_layer_time(ls, m.vocab, rates);
    double sum = 0;
    for (size_t i = 0; i < r.stages.size(); ++i) {
      auto& st = r.stages[i];
      st.forward_s = st.layers * lt.forward_s;
      st.backward_s = st.layers * lt.backward_s;
      if (i + 1 == r.stages.size()) {
        st.forward_s += out_s / 3;
        st.backward_s += out_s * 2 / 3;
      }
      sum += st.forward_s + st.backward_s;
    }
    r.kernels = lt;
    // The optimizer step once a step, on the parameters a GPU holds (sharded with ZeRO >= 1).
    const double held = m.params / (par.tp * par.pp) / (par.zero >= 1 ? std::max(1, dp) : 1);
    r.optimizer_s = optimizer_time(held, rates);
    r.mean_compute_s = mb * sum / r.stages.size() + r.optimizer_s;
    r.compute_efficiency = r.hardware_flops / r.gpus / (peak * r.mean_compute_s);
  }
  if (!roofline)
    for (auto& st : r.stages) {
      // A stage's share of the mean per-GPU compute, scaled to its load.
      const double t = r.compute_s / mb * par.pp * st.load / total_load;
      st.forward_s = t * (1 - kBackwardShare);
      st.backward_s = t * kBackwardShare;
    }
  for (size_t i = 0; i < r.stages.size(); ++i)
    if (r.stages[i].forward_s + r.stages[i].backward_s >
        r.stages[r.critical_stage].forward_s + r.stages[r.critical_stage].backward_s)
      r.critical_stage = static_cast<int>(i);
  const StageTime& crit = r.stages[r.critical_stage];
  r.compute_s = mb * (crit.forward_s + crit.backward_s) + r.optimizer_s;
  // Slow nodes: per pipeline (each data-parallel replica of the model), every stage at the
  // speed of its slowest rank; the step waits for the slowest pipeline's pace.
  double pace = crit.forward_s + crit.backward_s;  // per microbatch
  const double nominal_pace = pace;
  double optimizer_extra = 0;  // the slowest node's optimizer step beyond the others'

  if (!node_speed.empty()) {
    const int G = plan.gpus_per_node;
    for (int o = 0; o < d.dpo; ++o)
      for (int p = 0; p < d.pp && p < static_cast<int>(r.stages.size()); ++p) {
        double speed = 1;
        int slow_node = -1;
        for (int e = 0; e < d.ep; ++e)
          for (int c = 0; c < d.cp; ++c)
            for (int t = 0; t < d.tp; ++t) {
              const int node = gpu_of(rank_of(d, t, c, e, p, o)) / G;
              if (node >= 0 && node < static_cast<int>(node_speed.size()) &&
                  node_speed[static_cast<size_t>(node)] < speed) {
                speed = node_speed[static_cast<size_t>(node)];
                slow_node = node;
              }
            }
        const double t_stage = (r.stages[p].forward_s + r.stages[p].backward_s) / speed;
        if (t_stage > pace * (1 + 1e-12)) {
          pace = t_stage;
          r.critical_stage = p;
          r.straggler_node = slow_node;
          r.straggler_stage = p;
          r.straggler_speed = speed;
        }
      }
    // The optimizer step runs on every GPU after the pipeline drains; the next step waits for
    // the slowest.
    const double slowest = std::max(1e-9, *std::min_element(node_speed.begin(), node_speed.end()));
    optimizer_extra = r.optimizer_s * (1 / slowest - 1);
    r.compute_s = mb * pace + r.optimizer_s + optimizer_extra;
  }
  const double layers_stage = m.layers > 0 ? crit.layers : 0;
  if (r.pipeline.rule != "even" && r.pipeline.rule != "one stage" && m.layers > 0)
    r.notes.push_back(fmt::format("pipeline stages: {}", r.pipeline.rule));
  // 1F1B bubble (p - 1) t, interleaved (p - 1) t / v, t the slowest stage's forward and backward
  // of one microbatch (Narayanan et al. SC'21 §2.2; Megatron-LM's schedules.py).
  const double per_mb = pace;
  if (par.pp > 1) r.bubble_s = per_mb * (par.pp - 1) / w.virtual_pipeline;
  if (r.straggler_node >= 0) {
    r.straggler_s =
        (pace - nominal_pace) * (mb + (par.pp > 1 ? (par.pp - 1.0) / w.virtual_pipeline : 0)) +
        optimizer_extra;
    r.notes.push_back(fmt::format(
        "the step waits for its slowest member: node {} at {:g}x speed paces pipeline stage {} "
        "(+{:.3g} s of compute and bubble)",
        r.straggler_node + 1, r.straggler_speed, r.straggler_stage + 1, r.straggler_s));
  }

  const LoadBalancing lb = plan.load_balancing;
  // Where each communication's calls fall in the step's overlap windows (sim/step_overlap.h):
  // its stream, its calls in one pipeline slot (a microbatch's forward and backward) and in the
  // gradient-reduce window (the last microbatch's backward), of them the sends going backward.
  struct Where {
    CommStream stream;
    double slot = 0, slot_backward = 0, last_backward = 0;
    /// The share of its calls outside the gradient window that run in the pipeline slot's
    /// window beside the other streams; the rest meet none (ZeRO-3's forward gathers).
    double slot_share = 1;
  };
  std::vector<ScheduledComm> sched;
  // Each communication's exposure: from one call's and all calls' time, the part compute does
  // not hide (evaluated again with the times the other streams' traffic slowed).
  std::vector<std::function<double(double, double)>> exposure;
  auto add = [&](const std::string& kind, Op op, std::vector<std::vector<int>> groups, double bytes,
                 double count, auto exposed_of, const Where& where) -> bool {
    if (groups.empty() || groups[0].size() < 2 || bytes <= 0 || count <= 0) return true;
    if (!gpu_of_rank.empty())
      for (auto& g : groups)
        for (int& x : g) x = gpu_of(x);
    if (const std::string n = straddle_note(kind, groups, fabric.domain_gpus()); !n.empty())
      r.notes.push_back(n);
    // A pipeline's sends run on its stages' communicator (p2p_communication.py: the pipeline
    // model-parallel group), pp ranks, whose size sets each send's channels.
    auto g = GroupCollective::build(fabric, plan, op, groups, lb, nullptr,
                                    op == Op::kSendRecv ? par.pp : 0);
    if (!g) {
      errs.insert(errs.end(), g.errors().begin(), g.errors().end());
      return false;
    }
    StepComm c;
    c.kind = kind;
    c.bytes = bytes;
    c.count = count;
    c.group_size = g->group_size();
    c.busbw_gbs = g->busbw_gbs(bytes);
    c.bottleneck = g->bottleneck();
    c.channels = g->channels(bytes);
    const double one = g->seconds(bytes);
    c.total_s = one * count;
    c.exposed_s = std::min(c.total_s, exposed_of(one, c.total_s));
    exposure.emplace_back(exposed_of);
    c.op = op;
    c.stream = where.stream;
    ScheduledComm sc;
    if (options.concurrency) sc.groups = groups;
    sc.kind = kind;
    sc.stream = where.stream;
    sc.op = op;
    sc.bytes = bytes;
    const size_t slot = static_cast<size_t>(OverlapWindowKind::kPipelineSlot);
    const size_t grad = static_cast<size_t>(OverlapWindowKind::kGradientReduce);
    sc.calls[slot] = where.slot;
    sc.backward_calls[slot] = where.slot_backward;
    sc.calls[grad] = where.last_backward;
    sc.backward_calls[grad] = op == Op::kSendRecv ? where.last_backward : 0;
    sc.step_calls[grad] = std::min(count, where.last_backward);
    sc.step_calls[slot] = (count - sc.step_calls[grad]) * where.slot_share;
    sc.count = count;
    sched.push_back(std::move(sc));
    c.groups = std::move(groups);
    r.comms.push_back(std::move(c));
    return true;
  };
  auto all = [](double, double total) { return total; };
  const double tokens_mb = b * seq / par.cp;  // tokens of one microbatch on one CP rank
  // TP: 2 all-reduces forward and 2 backward per layer (reduce-scatter + all-gather pairs with
  // sequence parallelism move the same bytes); full recomputation repeats the forward ones.
  // With workload.tp_overlap (Megatron-LM's --tp-comm-overlap: Transformer Engine splits each
  // GEMM into chunks and moves the all-gather / reduce-scatter of one chunk while the next
  // computes), each call hides behind the GEMM it feeds: half a layer's forward (or backward)
  // GEMMs, 2 calls each way; without it every call is exposed (Megatron's default).
  const double layer_fwd = crit.layers > 0 ? crit.forward_s / crit.layers : 0;
  const double gemm_f = r.kernels.total() > 0 ? r.kernels.gemm_forward_s : layer_fwd;
  const double gemm_b = r.kernels.total() > 0 ? r.kernels.gemm_backward_s : 2 * layer_fwd;
  // The DP gradient buckets reduce during the last microbatch's backward only with overlap on
  // (Megatron-LM core_v0.15.0 distributed/param_and_grad_buffer.py:472 register_grad_ready:
  // grads count as ready only in the last microbatch; :322 start_grad_sync then issues each
  // bucket asynchronously); without it they reduce after the backward, alone.
  const bool grad_window = dp > 1 && w.overlap;
  // TP larger than the scale-up domain: every layer's TP collectives, on the critical path,
  // cross the network. Narayanan et al. SC'21 §3.3, takeaway #1: tensor model parallelism up to
  // degree g on g-GPU servers, pipeline parallelism across them; said, since a larger tp still
  // fits Megatron-LM's rules.
  if (par.tp > fabric.domain_gpus() && fabric.domain_gpus() >= 1 && shape)
    r.notes.push_back(fmt::format(
        "tp = {} is larger than the scale-up domain of {} GPUs: every layer's TP collectives "
        "cross the network, on the critical path (keep tp within the domain, tp <= {}, and use "
        "pp or cp across nodes)",
        par.tp, fabric.domain_gpus(), fabric.domain_gpus()));
  if (par.tp > 1 && shape) {
    const double fwd_calls = 2 + (w.recompute == Recompute::kFull ? 2 : 0);
    add(w.sequence_parallel ? "tp_reduce_scatter_all_gather" : "tp_allreduce", Op::kAllReduce,
        groups_along(d, 't'), tokens_mb * hidden * act_bytes, (fwd_calls + 2) * layers_stage * mb,
        [&, fwd_calls](double one, double total) {
          if (!w.tp_overlap) return total;
          const double per_layer = fwd_calls * std::max(0.0, one - gemm_f / 2) +
                                   2 * std::max(0.0, one - gemm_b / 2);
          return per_layer * layers_stage * mb;
        },
        Where{CommStream::kCompute, (fwd_calls + 2) * layers_stage, 0,
              grad_window ? 2 * layers_stage : 0});
  }
  // CP: keys and values of the whole sequence gathered forward, their gradients scattered back
  // (Llama 3, arXiv 2407.21783 §3.3.2: all-gather based). Each tensor-parallel rank gathers the
  // key/value heads it holds: kv_heads x head_dim / tp wide (with grouped-query attention far
  // narrower than the hidden size).
  if (par.cp > 1 && shape) {
    const double heads = m.heads > 0 ? m.heads : std::max(1.0, hidden / 128);
    const double kv_width = (m.kv_heads > 0 ? m.kv_heads : heads) * (hidden / heads) / par.tp;
    // Each layer's exchange overlaps that layer's attention (Megatron-LM's ring attention sends
    // the next block while this one computes): what it does not cover is exposed, forward and
    // backward.
    add("cp_kv_exchange", Op::kAllGather, groups_along(d, 'c'),
        2.0 * b * seq * kv_width * act_bytes, 2 * layers_stage * mb,
        [&](double one, double total) {
          if (r.kernels.total() <= 0) return total * kCpExposedFractionFallback;
          return (std::max(0.0, one - r.kernels.attention_forward_s) +
                  std::max(0.0, one - r.kernels.attention_backward_s)) *
                 layers_stage * mb;
        },
        Where{CommStream::kCompute, 2 * layers_stage, 0, grad_window ? layers_stage : 0});
  }
  // EP: dispatch and combine all-to-all, forward and backward, per MoE layer. Each EP rank routes
  // its own tokens, each to top_k experts: its send buffer (nccl-tests' alltoall size, 1/ep of it
  // to each rank, its own included) is tokens x top_k x hidden x bytes (Megatron-LM core_v0.15.0
  // moe/token_dispatcher.py:484, MoEAlltoAllTokenDispatcher: num_out_tokens = tokens x topk).
  if (par.ep > 1 && m.experts > 0 && shape) {
    const double tokens = tokens_mb / (w.sequence_parallel ? par.tp : 1);
    // Uneven routing: the busiest rank receives expert_load x the mean, and every rank waits
    // for it (the dispatch and the combine are synchronous).
    add("ep_alltoall", Op::kAlltoall, groups_along(d, 'e'),
        tokens * hidden * act_bytes * std::max(1, m.top_k) * m.expert_load(),
        4 * layers_stage * mb, all,
        Where{CommStream::kCompute, 4 * layers_stage, 0, grad_window ? 2 * layers_stage : 0});
  }
  // PP: activations forward and gradients backward across each stage boundary; the steady
  // state hides them behind compute, filling and draining the pipeline does not.
  if (par.pp > 1 && shape) {
    const double bytes = tokens_mb * hidden * act_bytes / (w.sequence_parallel ? par.tp : 1);
    // In a slot a stage sends one microbatch's activations on and another's gradients back, at
    // once (schedules.py:2206 send_forward_recv_backward, p2p_communication.py:16
    // _batched_p2p_ops: one batch_isend_irecv on the pipeline's communicator). Only the
    // interleaved schedule overlaps them with compute (Megatron-LM core_v0.15.0
    // training/arguments.py:613: "Overlap P2P communication is disabled if not using the
    // interleaved schedule"); 1F1B waits for each before the next forward or backward, so there
    // they are in sequence with the compute stream's collectives, as one stream.
    // With interleaving every microbatch passes each rank once per model chunk: the schedule
    // runs num_microbatches x num_model_chunks virtual microbatches, each received and sent on
    // forward and backward (core/pipeline_parallel/schedules.py@d98e8a64dd:1041-1048,
    // forward_backward_pipelining_with_interleaving), so v x the sends; the fill and drain still
    // cross the pp - 1 boundaries once each way.
    const double chunks = std::max(1, w.virtual_pipeline);
    add(
        "pp_sendrecv", Op::kSendRecv, pp_pairs(d), bytes, 2 * mb * chunks,
        [&](double one, double) { return 2.0 * (par.pp - 1) * one; },
        Where{w.virtual_pipeline > 1 ? CommStream::kPipeline : CommStream::kCompute, 2, 1,
              grad_window ? 1.0 : 0.0});
  }
  // DP: gradients reduced in buckets during the last microbatch's backward (or after it, with
  // overlap off); ZeRO-1/2 (Megatron-LM's distributed optimizer) reduce-scatter the gradients
  // and all-gather the updated weights, each half of a ring all-reduce, so the all-reduce that
  // stands for both moves the mean of their bytes; ZeRO-3 also gathers parameters before each
  // forward and backward.
  if (dp > 1) {
    const int zero_dp = dp_zero(w);  // ZeRO-2 under a pipeline schedule runs as ZeRO-1
    const double held = dense_params / (par.tp * par.pp);
    // Where the gradients travel wider than the weights (fp32 beside 16-bit training), say so.
    if (grad_type == Precision::kFp32 && w.precision != Precision::kFp32)
      r.notes.push_back(fmt::format(
          "gradients accumulated and reduced across data-parallel ranks in fp32{} ({}; "
          "workload.grad_reduce: {} halves the gradients' bytes)",
          w.grad_reduce ? ""
                        : fmt::format(", Megatron-LM's default for {} training",
                                      name_of(kPrecisionNames, w.precision)),
          zero_dp == 3 ? std::string("reduce-scattered after every microbatch, 4 B a parameter")
          : zero_dp == 2
              ? fmt::format("reduce-scattered after every microbatch, 4 B a parameter, the "
                            "weights all-gathered in {} B after the step",
                            weight_b)
          : zero_dp == 1
              ? fmt::format("4 B a parameter reduce-scattered, the weights all-gathered in {} B: "
                            "the all-reduce shown moves their mean",
                            weight_b)
              : std::string("4 B a parameter"),
          w.precision == Precision::kFp16 ? "fp16" : "bf16"));
    auto groups = groups_along(d, 'D');
    if (w.dp_collective == DpCollective::kFlat) groups = flatten(groups, plan.gpus_per_node);
    // The last microbatch's backward on the critical stage: the window the gradient buckets
    // hide in. ZeRO-1/2 (the distributed optimizer) gather the updated weights in the next
    // step's first forward instead: Megatron-LM's --overlap-param-gather has each module's
    // forward pre-hook wait for its bucket's all-gather and start the next bucket's
    // (distributed_data_parallel.py@d98e8a64dd:517-551), so the gather's share of the time
    // (its bytes') hides behind a microbatch's forward. ZeRO-3 keeps one window: its weights
    // are gathered again on demand (zero3_param_allgather).
    const double window = crit.backward_s, forward_window = crit.forward_s;
    const double gather_share = zero_dp == 1 ? weight_b / (grad_bytes + weight_b) : 0;
    // What compute leaves exposed of an all-reduce standing for `bytes` of buckets.
    auto dp_exposed = [&, window, forward_window, gather_share](double bytes) {
      return [&, bytes, window, forward_window, gather_share](double, double total) {
        if (!w.overlap) return total;
        const double buckets = std::max(1.0, std::ceil(bytes / kBucketBytes));
        auto exposed_behind = [&](double t, double hidden_by) {
          return t > 0 ? std::max(t / buckets, t - hidden_by) : 0.0;
        };
        return exposed_behind(total * (1 - gather_share), window) +
               exposed_behind(total * gather_share, forward_window);
      };
    };
    // ZeRO-2 and ZeRO-3 keep only their shard of the gradients, so they reduce-scatter after
    // every microbatch's backward, each behind that backward ("gradient reduction is required
    // after every backward because of gradient partitioning", DeepSpeed issue 2252, a
    // maintainer); ZeRO-1 and Megatron-LM's distributed optimizer accumulate the whole gradient
    // and reduce once, in the last microbatch's backward. ZeRO-2 then gathers the updated
    // weights in its optimizer step (stage_1_and_2.py's all_gather_dp_groups), in series with
    // it; ZeRO-3 gathers them again before each use instead (zero3_param_allgather below). Its
    // volume: 3 x the parameters, two gathers and the reduce-scatter (Rajbhandari et al.,
    // "ZeRO", SC'20 §7.2.2).
    auto per_microbatch = [&, window](double bytes) {
      return [&, bytes, window](double one, double total) {
        if (!w.overlap) return total;
        const double buckets = std::max(1.0, std::ceil(bytes / kBucketBytes));
        return one > 0 ? std::max(one / buckets, one - window) * mb : 0.0;
      };
    };
    auto sync = [&](const std::string& prefix, const std::vector<std::vector<int>>& over,
                    double params) {
      if (zero_dp >= 2) {
        add(prefix + "_reduce_scatter", Op::kReduceScatter, over, params * grad_bytes, mb,
            per_microbatch(params * grad_bytes), Where{CommStream::kGradients, 1, 1, 1});
        if (zero_dp == 2)
          add(prefix + "_param_allgather", Op::kAllGather, over, params * weight_b, 1, all,
              Where{CommStream::kGradients, 0, 0, 1});
      } else {
        const double bytes = params * dp_bytes_per_param(w);
        // The experts' keeps its name under the distributed optimizer too (its all-reduce stands
        // for the reduce-scatter and the gather as the dense part's does).
        add(prefix + (zero_dp == 1 && prefix == "dp" ? "_reduce_scatter_all_gather" : "_allreduce"),
            Op::kAllReduce, over, bytes, 1, dp_exposed(bytes),
            Where{CommStream::kGradients, 0, 0, 1});
      }
    };
    // Neither framework shards the gradients across a pipeline's microbatches: DeepSpeed's
    // PipelineEngine refuses ZeRO-2 and -3 (runtime/pipe/engine.py), and FSDP under
    // torch.distributed.pipelining keeps the gradients whole until the last microbatch's
    // backward (schedules.py: gradient sync on the last backward only). ZeRO-2 is run so
    // (dp_zero: zero 1's memory and traffic); ZeRO-3, whose weights are gathered per use, keeps
    // its per-microbatch reduction, and the note says no framework runs it.
    if (par.zero != zero_dp)
      r.notes.push_back(fmt::format(
          "zero: 2 under a pipeline schedule runs as FSDP runs it there: the gradients stay "
          "whole until the last of the {} microbatches' backward and are reduce-scattered once "
          "(zero: 1's memory and traffic; DeepSpeed's pipeline refuses zero 2)",
          static_cast<int>(mb)));
    else if (par.zero == 3 && par.pp > 1 && mb > 1)
      r.notes.push_back(fmt::format(
          "zero: 3 reduce-scatters the gradients after each of the {} microbatches (DeepSpeed's "
          "stage 3), which no framework runs with pipeline parallelism: DeepSpeed's pipeline "
          "refuses it, and FSDP with a pipeline schedule reduces once, in the last backward",
          static_cast<int>(mb)));
    sync("dp", groups, held);
    // The experts' gradients, over the ranks that hold the same experts, alike.
    const double expert_held = expert_params / (par.tp * par.pp * par.ep);
    if (expert_params > 0 && d.dpo > 1) sync("expert_dp", groups_along(d, 'o'), expert_held);
    if (par.zero == 3) {
      // ZeRO-3 gathers the parameters bucket by bucket before each module's forward, its
      // recomputed forward (full recomputation re-runs the hooks) and its backward: one
      // all-gather of stage3_prefetch_bucket_size parameters each. With overlap the next bucket
      // is prefetched while this one computes: what a gather takes beyond its bucket's compute is
      // exposed. At scale each gather is a ring over every rank, so its latency, not its bytes,
      // sets the time (Narayanan et al. SC'21 table 2: ZeRO-3 falls from 144 to 44 TFLOP/s per
      // GPU from 384 to 1,536 GPUs).
      const double passes = zero3_gather_passes(w);
      const double buckets = std::max(1.0, std::ceil(held / kZero3BucketParams));
      add(
          "zero3_param_allgather", Op::kAllGather, groups, held * weight_b / buckets,
          passes * buckets * mb,
          [&, passes, buckets](double one, double total) {
            if (!w.overlap) return total;
            const double compute = per_mb / (passes * buckets);
            return std::max(0.0, one - compute) * passes * buckets * mb;
          },
          // Prefetched on their own stream with overlap (param_and_grad_buffer.py:213
          // start_param_sync, async with overlap_param_gather); without it each gather is
          // waited for before its layer, in sequence with the compute stream.
          // In a microbatch's slot the gradients' reduce-scatter runs in its backward only,
          // beside that backward's gathers (and, with full recomputation, the recomputed
          // forward's): passes - 1 of each bucket's passes, all their buckets; the forward's
          // gathers meet no other stream.
          Where{w.overlap ? CommStream::kParamGather : CommStream::kCompute, (passes - 1) * buckets,
                0, grad_window ? 1.0 : 0.0, (passes - 1) / passes});
    }
  }
  if (!errs.empty()) return errs;

  // The parallel dimensions' traffic together: per overlap window, the streams' flows on the
  // fabric at once; each communication slowed by how much the other streams' flows on its
  // links delayed it (sim/step_overlap.h, docs/step-overlap.md).
  for (auto& c : r.comms) {
    c.alone_total_s = c.total_s;
    c.alone_exposed_s = c.exposed_s;
  }
  r.concurrency = options.concurrency;
  if (options.concurrency && r.comms.size() > 1) {
    const StepConcurrency sc = step_concurrency(fabric, lb, simple_capacities(fabric, plan), sched);
    r.overlap_windows = sc.windows;
    for (size_t i = 0; i < r.comms.size(); ++i) {
      StepComm& c = r.comms[i];
      c.concurrency_factor = sc.comms[i].factor;
      c.shares_links_with = sc.comms[i].shares_with;
      if (c.concurrency_factor == 1) continue;
      // Every call as much longer: the compute that hides it is the same, so the exposure
      // rule decides again what of the longer call it still hides (a CP exchange shorter than
      // its attention even when slowed stays hidden; DP's window is the same backward).
      c.total_s *= c.concurrency_factor;
      c.exposed_s = std::min(c.total_s, exposure[i](c.total_s / c.count, c.total_s));
    }
  }

  for (const auto& c : r.comms) r.exposed_comm_s += c.exposed_s;
  // Communication overlapped with compute takes SMs from it: NCCL runs one thread block per
  // channel, each on an SM of its own (enqueue.cc@v2.29.7-1:1682), so kernels running beside
  // a collective on c channels get (sms - c) / sms of the GPU for the overlapped time.
  double alone_slowdown_s = 0;
  if (plan.gpu.sm_count > 0)
    for (const auto& c : r.comms) {
      const double sms = std::min(1.0, static_cast<double>(c.channels) / plan.gpu.sm_count);
      r.overlap_slowdown_s += (c.total_s - c.exposed_s) * sms;
      alone_slowdown_s += (c.alone_total_s - c.alone_exposed_s) * sms;
    }
  if (r.concurrency) {
    // What the sharing added to the step: exposed communication, and SMs the longer calls that
    // compute still hides hold for longer.
    r.concurrency_s = r.overlap_slowdown_s - alone_slowdown_s;
    for (const auto& c : r.comms) r.concurrency_s += c.exposed_s - c.alone_exposed_s;
    if (r.concurrency_s > 0) {
      std::string who;
      for (const auto& c : r.comms)
        if (c.concurrency_factor > 1)
          who += fmt::format("{}{} {:+.3g}%", who.empty() ? "" : ", ", c.kind,
                             100 * (c.concurrency_factor - 1));
      r.notes.push_back(fmt::format(
          "parallel dimensions sharing links at the same time add {:.3g} s to the step ({})",
          r.concurrency_s, who));
    }
  }
  r.step_time_s = r.compute_s + r.bubble_s + r.exposed_comm_s + r.overlap_slowdown_s;
  r.comm_fraction = r.exposed_comm_s / r.step_time_s;
  r.gpu_utilization = r.mean_compute_s / r.step_time_s;
  if (r.model_flops > 0) {
    if (peak > 0) {
      r.mfu = r.model_flops / (r.step_time_s * r.gpus * peak);
      r.hfu = r.hardware_flops / (r.step_time_s * r.gpus * peak);
    }
    r.tflops_per_gpu = r.hardware_flops / r.step_time_s / r.gpus / 1e12;
  }
  if (w.precision == Precision::kFp8 && r.mfu)
    r.notes.push_back(fmt::format(
        "fp8: MFU and HFU are of the FP8 peak ({:.0f} TFLOP/s; of BF16's {:.0f}, MFU would read "
        "{:.1f}%); the linear layers' GEMMs run at the FP8 rate, attention's core and the output "
        "layer at BF16's (Megatron-LM's defaults); FP8's casts and scaling are not modelled, so "
        "the speed-up over bf16 is an upper bound",
        peak / 1e12, plan.gpu.tflops(Precision::kBf16),
        100 * *r.mfu * peak / 1e12 / plan.gpu.tflops(Precision::kBf16)));
  if (r.tokens_per_step > 0) r.tokens_per_s = r.tokens_per_step / r.step_time_s;
  r.steps = w.steps > 0                               ? w.steps
            : (w.tokens > 0 && r.tokens_per_step > 0) ? std::ceil(w.tokens / r.tokens_per_step)
                                                      : 0;
  r.time_to_train_s = r.steps * r.step_time_s;
  r.gpu_hour_usd = plan.gpu.gpu_hour_usd;
  r.cost_to_train_usd = r.time_to_train_s / 3600 * r.gpus * r.gpu_hour_usd;
  {
    GoodputOptions go;
    go.gpus = static_cast<double>(r.gpus);
    go.nodes = plan.nodes;
    go.params = m.params;
    go.useful_s = r.time_to_train_s;
    go.interval_s = w.checkpoint_interval_s;
    r.goodput = expected_goodput(go);
  }
  // HBM: the catalog's memory_gb are binary gigabytes as GPU vendors count them (an "80GB"
  // A100 reports 81,920 MiB).
  r.memory =
      step_memory(w, r.pipeline, mb, expert_params, plan.gpu.memory_gb * units::kBytesPerGiB);
  // What the model counts is not all a process holds: the CUDA context, cuBLAS and cuDNN
  // workspaces and the caching allocator's fragmentation take some of the rest, and a GPU
  // exposes a little less than its nominal memory (an H100 "80GB" shows 81,559 MiB in
  // nvidia-smi, not 81,920). A layout this close to the limit may not fit in practice.
  if (r.memory.fits && !r.memory.stages.empty() && r.memory.hbm_bytes > 0 &&
      r.memory.peak().total_bytes() > kMemoryTightShare * r.memory.hbm_bytes)
    r.notes.push_back(fmt::format(
        "memory is tight: {:.1f} GiB of {:.1f} GiB leaves {:.1f} GiB for the CUDA context, "
        "library workspaces and the allocator's fragmentation, which the model does not count; "
        "keep {:.0f}% or more free (more tp, pp, ZeRO sharding, or recomputation)",
        r.memory.peak().total_bytes() / units::kBytesPerGiB,
        r.memory.hbm_bytes / units::kBytesPerGiB,
        (r.memory.hbm_bytes - r.memory.peak().total_bytes()) / units::kBytesPerGiB,
        100 * (1 - kMemoryTightShare)));
  const auto& cons = spec.constraints;
  r.constraints.push_back({"max_comm_fraction", cons.max_comm_fraction, r.comm_fraction,
                           r.comm_fraction <= cons.max_comm_fraction,
                           cons.max_comm_fraction_given});
  r.constraints.push_back({"min_gpu_utilization", cons.min_gpu_utilization, r.gpu_utilization,
                           r.gpu_utilization >= cons.min_gpu_utilization,
                           cons.min_gpu_utilization_given});
  return r;
}

std::string constraint_text(const ConstraintCheck& c) {
  return fmt::format("{}: {:.3f} (limit {:g}{})", c.name, c.value, c.limit,
                     c.given ? "" : ", the default: set constraints." + c.name);
}

Result<std::vector<StepScenario>> step_sensitivity(const Spec& spec, const Catalog& cat,
                                                   const Plan& plan, const StepOptions& options) {
  std::vector<StepScenario> out;
  auto run = [&](const std::string& label, const Plan& p) -> bool {
    const Fabric f = Fabric::build(p, cat);
    auto r = simulate_step(spec, p, f, {}, {}, options);
    if (!r) return false;
    out.push_back({label, *r});
    return true;
  };
  run(fmt::format("as planned ({:g}G NICs)", plan.nic.rate_gbps), plan);
  run(fmt::format("NIC x0.5 ({:g}G)", plan.nic.rate_gbps / 2), with_nic_rate(plan, 0.5));
  run(fmt::format("NIC x2 ({:g}G)", plan.nic.rate_gbps * 2), with_nic_rate(plan, 2));
  // Half the leaf uplinks the spec asks for: twice its oversubscription (2:1 from 1:1; a spec
  // already at 2:1 goes to 4:1, rather than repeating itself).
  Spec over = spec;
  over.fabric.oversubscription = 2 * std::max(1.0, spec.fabric.oversubscription);
  over.fabric.topology = std::nullopt;  // auto
  over.fabric.switch_id = plan.sw.id;
  over.fabric.technology = plan.technology;
  if (auto p2 = make_plan(over, cat))
    run(fmt::format("uplinks halved ({:g}:1)", over.fabric.oversubscription), *p2);
  return out;
}

}  // namespace gf
