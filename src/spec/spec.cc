#include "spec/spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/file.h"
#include "common/text.h"
#include "spec/model_params.h"
#include "spec/pipeline.h"
#include "units/units.h"
#include "yaml/yaml_reader.h"

namespace gf {
namespace {

// Records the position of every key, so that catalog checks can point at the line.
void index_positions(const YAML::Node& n, const std::string& path,
                     std::map<std::string, SourceLoc>& where, int depth = 0) {
  if (depth > 8) return;
  // A list's items as "key[i]" (jobs[2].workload, jobs[0].placement[3]).
  if (n.IsSequence() && !path.empty()) {
    int i = 0;
    for (const auto& item : n) {
      const std::string key = path + "[" + std::to_string(i++) + "]";
      where[key] = {item.Mark().line + 1, item.Mark().column + 1};
      index_positions(item, key, where, depth + 1);
    }
    return;
  }
  if (!n.IsMap()) return;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = YamlReader::join(path, kv.first.Scalar());
    const YAML::Mark m =
        kv.second.IsDefined() && !kv.second.IsNull() ? kv.second.Mark() : kv.first.Mark();
    where[key] = {m.line + 1, m.column + 1};
    index_positions(kv.second, key, where, depth + 1);
  }
}

bool is_auto(const YAML::Node& map, const std::string& key) {
  const YAML::Node n = map.IsMap() ? child(map, key) : YAML::Node();
  return !n.IsDefined() || n.IsNull() || (n.IsScalar() && n.Scalar() == "auto");
}

}  // namespace

std::string placement_hint(const std::string& word) {
  const std::string h = did_you_mean(word, names_of(kPlacementNames));
  return h.empty() ? "use " + names_joined(kPlacementNames, ", ") : h;
}

std::optional<NcclRelease> nccl_release_of_version(const std::string& version) {
  if (auto named = parse_name(kNcclReleaseNames, version)) return named;
  static const std::regex re(R"(^2\.(\d{1,3})(\.\d{1,3})?([-+][A-Za-z0-9.+-]*)?$)");
  std::smatch m;
  if (version.size() > 64 || !std::regex_match(version, m, re)) return std::nullopt;
  const int minor = std::stoi(m[1].str());
  // 2.28 without a patch level is its newest, 2.28.9.
  const int patch = m[2].matched ? std::stoi(m[2].str().substr(1)) : 9;
  if (minor <= 18) return NcclRelease::kV2_18;
  if (minor <= 20) return NcclRelease::kV2_20;
  if (minor <= 22) return NcclRelease::kV2_21;
  if (minor <= 24) return NcclRelease::kV2_24;
  if (minor <= 26) return NcclRelease::kV2_26;
  if (minor == 27) return NcclRelease::kV2_27;
  if (minor == 28) return patch < 9 ? NcclRelease::kV2_28_7 : NcclRelease::kV2_28;
  if (minor == 29) return NcclRelease::kV2_29;
  return kNewestNccl;
}

namespace {

void read_cluster(YamlReader& r, const YAML::Node& n, ClusterSpec& c) {
  if (!r.expect_map(n, "cluster")) return;
  r.check_keys(n, "cluster",
               {"gpu", "nodes", "gpus", "gpus_per_node", "nic", "nics_per_node", "nccl",
                "scaleup_board", "host_cpu"});
  if (auto v = r.choice_of(n, "scaleup_board", "cluster", kScaleupBoardNames)) c.scaleup_board = *v;
  if (auto v = r.choice_of(n, "host_cpu", "cluster", kHostCpuVendorNames)) c.host_cpu = *v;
  if (auto v = r.text(n, "nccl", "cluster")) {
    if (auto rel = nccl_release_of_version(*v)) {
      c.nccl = *rel;
      c.nccl_given = true;
    } else
      r.error(child(n, "nccl"), "cluster.nccl", fmt::format("'{}' is not an NCCL release", *v),
              "a release's table (" + names_joined(kNcclReleaseNames, ", ") +
                  ") or the version NCCL prints (2.24.3): " + kNcclVersionTables);
  }
  if (auto v = r.text(n, "gpu", "cluster", true)) c.gpu = *v;
  if (auto v = r.text(n, "nic", "cluster", true)) c.nic = *v;
  // A key written without a value (`nodes:`) is none given.
  const auto given = [&](const char* key) {
    const YAML::Node v = child(n, key);
    return v.IsDefined() && !v.IsNull();
  };
  const bool has_nodes = given("nodes"), has_gpus = given("gpus");
  if (has_nodes && has_gpus) {
    r.error(child(n, "gpus"), "cluster.gpus", "give either nodes or gpus, not both");
  } else if (!has_nodes && !has_gpus) {
    const char* empty = child(n, "nodes").IsDefined()  ? "nodes"
                        : child(n, "gpus").IsDefined() ? "gpus"
                                                       : nullptr;
    if (empty) {
      // At the key: a null value's own mark is the next token's.
      YAML::Mark at = n.Mark();
      for (auto it = n.begin(); it != n.end(); ++it)
        if (it->first.IsScalar() && it->first.Scalar() == empty) at = it->first.Mark();
      r.error_at(at, std::string("cluster.") + empty, "has no value", "give nodes: N or gpus: N");
    } else
      r.error(n, "cluster.nodes", "missing required key", "give nodes: N or gpus: N");
  }
  // Counts are checked against their limits before they are narrowed to int.
  const auto bounded = [&](const std::string& key, long long max) -> std::optional<long long> {
    auto v = r.positive_int(n, key, "cluster");
    if (v && *v > max) {
      r.error(child(n, key), "cluster." + key,
              fmt::format("{} is more than the {} this tool plans", *v, max));
      return std::nullopt;
    }
    return v;
  };
  if (auto v = bounded("nodes", kMaxSpecNodes)) c.nodes = static_cast<int>(*v);
  if (auto v = bounded("gpus", kMaxSpecGpus)) c.gpus_requested = *v;
  if (auto v = bounded("gpus_per_node", kMaxSpecPerNode)) c.gpus_per_node = static_cast<int>(*v);
  if (auto v = bounded("nics_per_node", kMaxSpecPerNode)) c.nics_per_node = static_cast<int>(*v);
}

void read_fabric(YamlReader& r, const YAML::Node& n, FabricSpec& f) {
  if (!n.IsDefined() || n.IsNull()) return;
  if (!r.expect_map(n, "fabric")) return;
  const std::string p = "fabric";
  r.check_keys(n, p,
               {"technology", "topology", "rail_optimized", "switch", "oversubscription", "planes",
                "scalable_unit", "spine_headroom", "load_balancing", "in_network_reduction",
                "appliance_ports", "ecmp_hash"});
  f.technology = r.choice_or_auto(n, "technology", p, kTechnologyNames, f.technology);
  f.topology = r.choice_or_auto(n, "topology", p, kTopologyKindNames, f.topology);
  if (auto v = r.boolean(n, "rail_optimized", p)) f.rail_optimized = *v;
  if (auto v = r.text(n, "switch", p)) f.switch_id = *v;
  if (auto v = r.quantity(n, "oversubscription", p, units::parse_ratio)) {
    if (*v < 1 || *v > 64)
      r.error(child(n, "oversubscription"), "fabric.oversubscription",
              "expected a down:up ratio between 1 (non-blocking) and 64");
    else
      f.oversubscription = *v;
  }
  if (auto v = r.positive_int(n, "planes", p)) {
    // A NIC port splits into planes by groups of its lanes (an OSFP's 8: 2 x 4, 4 x 2, 8 x 1).
    if (*v > 8 || (*v & (*v - 1)) != 0)
      r.error(child(n, "planes"), "fabric.planes",
              fmt::format("expected 1, 2, 4 or 8 planes, not {}: a NIC port splits into planes by "
                          "equal groups of its lanes",
                          *v));
    else
      f.planes = static_cast<int>(*v);
  }
  if (!is_auto(n, "scalable_unit"))
    if (auto v = r.small_positive_int(n, "scalable_unit", p)) f.scalable_unit = *v;
  if (auto v = r.number(n, "spine_headroom", p)) {
    if (*v < 0 || *v >= 0.95)
      r.error(child(n, "spine_headroom"), "fabric.spine_headroom",
              "expected a fraction of spine ports from 0 to 0.9 (the guide suggests 0.5)");
    else
      f.spine_headroom = *v;
  }
  f.load_balancing =
      r.choice_or_auto(n, "load_balancing", p, kLoadBalancingNames, f.load_balancing);
  if (auto v = r.choice(n, "in_network_reduction", p, {"auto", "on", "off"}))
    f.in_network_reduction = *v == "auto" ? std::nullopt : std::optional<bool>(*v == "on");
  if (const YAML::Node h = child(n, "ecmp_hash");
      h.IsDefined() && r.expect_map(h, p + ".ecmp_hash")) {
    r.check_keys(h, p + ".ecmp_hash", {"seed"});
    if (auto v = r.choice_of(h, "seed", p + ".ecmp_hash", kEcmpSeedPolicyNames)) f.ecmp_seed = *v;
  }
  if (child(n, "appliance_ports").IsDefined()) {
    if (auto v = r.number(n, "appliance_ports", p)) {
      if (*v < 0 || *v > 1024 || std::floor(*v) != *v)
        r.error(child(n, "appliance_ports"), "fabric.appliance_ports", "expected 0 to 1024 ports");
      else
        f.appliance_ports = static_cast<int>(*v);
    }
  }
}

int small_int(YamlReader& r, const YAML::Node& n, const std::string& key, const std::string& path,
              int fallback, bool required = false) {
  if (auto v = r.positive_int(n, key, path, required)) {
    if (*v > 100'000'000) {
      r.error(child(n, key), YamlReader::join(path, key), "value too large");
      return fallback;
    }
    return static_cast<int>(*v);
  }
  return fallback;
}

// `p`: the section's key path, "workload" or a job's "jobs[2].workload".
void read_workload(YamlReader& r, const YAML::Node& n, WorkloadSpec& w,
                   const std::string& p = "workload") {
  if (!r.expect_map(n, p)) return;
  r.check_keys(n, p,
               {"model", "precision", "parallelism", "global_batch", "micro_batch", "recompute",
                "sequence_parallel", "virtual_pipeline", "first_stage_layers", "last_stage_layers",
                "compute_efficiency", "compute_time", "steps", "tokens", "overlap", "dp_collective",
                "checkpoint_interval", "tp_overlap", "grad_reduce"});
  if (auto v = r.boolean(n, "overlap", p)) w.overlap = *v;
  if (auto v = r.boolean(n, "tp_overlap", p)) w.tp_overlap = *v;
  if (auto v = r.choice_of(n, "dp_collective", p, kDpCollectiveNames)) w.dp_collective = *v;
  const YAML::Node m = child(n, "model");
  const std::string mp = p + ".model";
  if (r.expect_map(m, mp)) {
    r.check_keys(m, mp,
                 {"params", "layers", "hidden", "heads", "seq_len", "vocab", "experts", "top_k",
                  "ffn_hidden", "kv_heads", "mlp", "attention", "dropout", "expert_imbalance",
                  "capacity_factor"});
    if (auto v = r.quantity(m, "params", mp, units::parse_count, true)) {
      if (*v <= 0 || *v > 1e15)
        r.error(child(m, "params"), mp + ".params", "expected 1 to 1e15");
      else
        w.model.params = *v;
    }
    w.model.layers = small_int(r, m, "layers", mp, 0);
    w.model.hidden = small_int(r, m, "hidden", mp, 0);
    w.model.heads = small_int(r, m, "heads", mp, 0);
    w.model.seq_len = small_int(r, m, "seq_len", mp, 0);
    w.model.vocab = small_int(r, m, "vocab", mp, 0);
    if (child(m, "experts").IsDefined() &&
        !(child(m, "experts").IsScalar() && child(m, "experts").Scalar() == "0"))
      w.model.experts = small_int(r, m, "experts", mp, 0);
    if (child(m, "top_k").IsDefined() &&
        !(child(m, "top_k").IsScalar() && child(m, "top_k").Scalar() == "0"))
      w.model.top_k = small_int(r, m, "top_k", mp, 0);
    // auto (as the README's reference writes them): the width and heads the model's kind implies.
    if (!is_auto(m, "ffn_hidden")) w.model.ffn_hidden = small_int(r, m, "ffn_hidden", mp, 0);
    if (!is_auto(m, "kv_heads")) w.model.kv_heads = small_int(r, m, "kv_heads", mp, 0);
    if (w.model.kv_heads > 0 && w.model.heads > 0 &&
        (w.model.kv_heads > w.model.heads || w.model.heads % w.model.kv_heads != 0))
      r.error(child(m, "kv_heads"), mp + ".kv_heads",
              "kv_heads must divide heads (each key/value head serves a group of query heads)");
    if (auto v = r.choice_of(m, "mlp", mp, kMlpKindNames)) w.model.mlp = *v;
    if (auto v = r.choice_of(m, "attention", mp, kAttentionKernelNames)) w.model.attention = *v;
    if (auto v = r.number(m, "dropout", mp)) {
      if (*v < 0 || *v >= 1)
        r.error(child(m, "dropout"), mp + ".dropout", "expected a probability in [0, 1), e.g. 0.1");
      else
        w.model.dropout = *v;
    }
    if (auto v = r.number(m, "expert_imbalance", mp)) {
      if (*v < 1 || *v > 1000)
        r.error(child(m, "expert_imbalance"), mp + ".expert_imbalance",
                "expected the busiest expert rank's tokens over the mean, 1 or more (e.g. 1.3)");
      else
        w.model.expert_imbalance = *v;
    }
    if (auto v =
            is_auto(m, "capacity_factor") ? std::nullopt : r.number(m, "capacity_factor", mp)) {
      if (*v < 1 || *v > 1000)
        r.error(child(m, "capacity_factor"), mp + ".capacity_factor",
                "expected 1 or more (Megatron-LM's --moe-expert-capacity-factor, e.g. 1.25)");
      else
        w.model.capacity_factor = *v;
    }
    // A dense model may write the keys at their neutral values (imbalance 1, no capacity).
    if (w.model.experts == 0 && w.model.expert_imbalance != 1)
      r.error(child(m, "expert_imbalance"), mp + ".expert_imbalance",
              "a mixture-of-experts key: it needs experts > 0");
    if (w.model.experts == 0 && child(m, "capacity_factor").IsDefined() &&
        !is_auto(m, "capacity_factor"))
      r.error(child(m, "capacity_factor"), mp + ".capacity_factor",
              "a mixture-of-experts key: it needs experts > 0");
    if (w.model.top_k > 0 && w.model.experts == 0)
      r.error(child(m, "top_k"), mp + ".top_k", "top_k needs experts > 0");
    // A count the shape does not bear out: the step model reads both (FLOPs and memory from
    // params, kernels from the shape), so one of them is wrong.
    if (const std::string why = params_shape_mismatch(w.model); !why.empty())
      r.error(child(m, "params"), mp + ".params", why,
              "give the model's total parameter count (every expert's included), or correct its "
              "shape (layers, hidden, heads, kv_heads, ffn_hidden, mlp, experts, vocab)");
    if (w.model.experts > 0 && w.model.top_k > w.model.experts)
      r.error(child(m, "top_k"), mp + ".top_k", "top_k cannot exceed the number of experts");
    // top_k 0 (or none) reads as a dense model's; with experts, every token goes to 1 or more.
    const YAML::Node top_k = child(m, "top_k");
    if (w.model.experts > 0 && (!top_k.IsDefined() || (top_k.IsScalar() && top_k.Scalar() == "0")))
      r.error(top_k.IsDefined() ? top_k : child(m, "experts"), mp + ".top_k",
              fmt::format("{}: a mixture-of-experts model (experts: {}) routes each token to 1 "
                          "to {} of them",
                          top_k.IsDefined() ? "top_k 0 routes a token to no expert"
                                            : "missing required key",
                          w.model.experts, w.model.experts),
              "give the experts each token is routed to, e.g. top_k: 2 (Mixtral 8x22B)");
  }
  const auto precision = r.choice_of(n, "precision", p, kPrecisionNames);
  if (precision) w.precision = *precision;
  // Gradients are reduced in fp32 or in the weights' 16-bit type (Megatron-LM's main-grad
  // buffer is one or the other: param_and_grad_buffer.py@d98e8a64dd:924); auto: the
  // framework's default (grad_reduce_precision). A precision that did not parse leaves the
  // pair unjudged: its own error says what is wrong.
  static constexpr EnumName<Precision> kGradReduceNames[] = {
      {Precision::kFp32, "fp32"}, {Precision::kBf16, "bf16"}, {Precision::kFp16, "fp16"}};
  const bool precision_bad = child(n, "precision").IsDefined() && !precision;
  const auto grad_reduce = is_auto(n, "grad_reduce") || precision_bad
                               ? std::nullopt
                               : r.choice_of(n, "grad_reduce", p, kGradReduceNames);
  if (const auto v = grad_reduce) {
    const bool fp32 = w.precision == Precision::kFp32;
    const Precision own = w.precision == Precision::kFp16 ? Precision::kFp16 : Precision::kBf16;
    if (*v != Precision::kFp32 && (fp32 || *v != own))
      r.error(child(n, "grad_reduce"), p + ".grad_reduce",
              fp32 ? fmt::format("fp32 training reduces its gradients in fp32, not {}",
                                 name_of(kPrecisionNames, *v))
                   : fmt::format("{} training reduces its gradients in fp32 or {}, not {}",
                                 name_of(kPrecisionNames, w.precision),
                                 name_of(kPrecisionNames, own), name_of(kPrecisionNames, *v)),
              fp32 ? "give grad_reduce: fp32 or auto (or a 16-bit precision)"
                   : "fp32 (Megatron-LM's default for bf16 and fp8, "
                     "--accumulate-allreduce-grads-in-fp32 for fp16) or the weights' 16-bit "
                     "type (bf16 with --grad-reduce-in-bf16; fp16, fp16's default), or auto");
    else
      w.grad_reduce = *v;
  }
  const YAML::Node par = child(n, "parallelism");
  const std::string pp = p + ".parallelism";
  if (par.IsDefined() && r.expect_map(par, pp)) {
    r.check_keys(par, pp, {"tp", "pp", "dp", "ep", "cp", "zero"});
    w.parallelism.tp = small_int(r, par, "tp", pp, 1);
    w.parallelism.pp = small_int(r, par, "pp", pp, 1);
    if (!is_auto(par, "dp")) w.parallelism.dp = small_int(r, par, "dp", pp, 0);
    w.parallelism.ep = small_int(r, par, "ep", pp, 1);
    w.parallelism.cp = small_int(r, par, "cp", pp, 1);
    if (child(par, "zero").IsDefined()) {
      if (auto v = r.choice(par, "zero", pp, {"0", "1", "2", "3"}))
        w.parallelism.zero = std::stoi(*v);
    }
  }
  if (!is_auto(n, "global_batch")) w.global_batch = small_int(r, n, "global_batch", p, 0);
  w.micro_batch = small_int(r, n, "micro_batch", p, 1);
  if (auto v = r.choice_of(n, "recompute", p, kRecomputeNames)) w.recompute = *v;
  if (auto v = r.boolean(n, "sequence_parallel", p)) w.sequence_parallel = *v;
  w.virtual_pipeline = small_int(r, n, "virtual_pipeline", p, 1);
  if (!is_auto(n, "first_stage_layers"))
    w.first_stage_layers = small_int(r, n, "first_stage_layers", p, 0);
  if (!is_auto(n, "last_stage_layers"))
    w.last_stage_layers = small_int(r, n, "last_stage_layers", p, 0);
  if (!is_auto(n, "compute_efficiency"))
    if (auto v = r.number(n, "compute_efficiency", p)) {
      if (*v <= 0 || *v > 1)
        r.error(child(n, "compute_efficiency"), p + ".compute_efficiency",
                "expected a fraction of peak FLOP/s in (0, 1], e.g. 0.4");
      else
        w.compute_efficiency = *v;
    }
  if (!is_auto(n, "compute_time"))
    if (auto v = r.quantity(n, "compute_time", p, units::parse_seconds)) {
      if (*v <= 0)
        r.error(child(n, "compute_time"), p + ".compute_time", "expected a positive time");
      else
        w.compute_time_s = *v;
    }
  if (!is_auto(n, "checkpoint_interval"))
    if (auto v = r.quantity(n, "checkpoint_interval", p, units::parse_seconds)) {
      if (*v <= 0)
        r.error(child(n, "checkpoint_interval"), p + ".checkpoint_interval",
                "expected a positive time, e.g. 30min");
      else
        w.checkpoint_interval_s = *v;
    }
  if (child(n, "steps").IsDefined() && child(n, "tokens").IsDefined())
    r.error(child(n, "tokens"), p + ".tokens", "give either steps or tokens, not both");
  if (auto v = r.quantity(n, "steps", p, units::parse_count)) {
    if (*v < 1)
      r.error(child(n, "steps"), p + ".steps", "expected at least 1 step");
    else if (*v > kMaxSpecSteps)
      r.error(child(n, "steps"), p + ".steps",
              fmt::format("expected at most {:g} steps, found {:g}", kMaxSpecSteps, *v),
              "the run's optimizer steps, e.g. 100000 (Llama 3 405B ran ~1.2M)");
    else
      w.steps = *v;
  }
  if (auto v = r.quantity(n, "tokens", p, units::parse_count)) {
    if (*v < 1)
      r.error(child(n, "tokens"), p + ".tokens", "expected a positive token count");
    else if (*v > kMaxSpecTokens)
      r.error(child(n, "tokens"), p + ".tokens",
              fmt::format("expected at most {:g} tokens, found {:g}", kMaxSpecTokens, *v),
              "the run's training tokens, e.g. 15T (Llama 3)");
    else
      w.tokens = *v;
  }
}

// A job's `trace:` (one path or a list of them) and its `step:`.
void read_job_trace(YamlReader& r, const YAML::Node& j, JobSpec& job) {
  const std::string& p = job.key;
  const YAML::Node t = child(j, "trace");
  const char* example = "trace: traces/rank0.json, or a list of each traced rank's file";
  if (t.IsDefined()) {
    std::vector<YAML::Node> items;
    if (t.IsSequence()) {
      if (t.size() == 0) r.error(t, p + ".trace", "the list of traces is empty", example);
      if (t.size() > static_cast<size_t>(kMaxJobTraceFiles))
        r.error(t, p + ".trace",
                fmt::format("{} trace files is more than the {} one job is replayed from", t.size(),
                            kMaxJobTraceFiles),
                "give the ranks that were traced, not every rank");
      else
        for (size_t k = 0; k < t.size(); ++k) items.push_back(t[k]);
    } else {
      items.push_back(t);
    }
    for (size_t k = 0; k < items.size(); ++k) {
      const std::string key = t.IsSequence() ? fmt::format("{}.trace[{}]", p, k) : p + ".trace";
      if (!items[k].IsScalar() || items[k].Scalar().empty()) {
        r.error(items[k], key, "expected the path of a trace file (relative to the spec's folder)",
                example);
        continue;
      }
      job.trace_files.push_back(items[k].Scalar());
    }
    job.trace_paths = job.trace_files;
  }
  if (auto v = r.text(j, "step", p)) {
    if (!t.IsDefined())
      r.error(child(j, "step"), p + ".step", "step is the key of a trace job",
              "name the recorded step to replay with trace:");
    else if (v->empty())
      r.error(child(j, "step"), p + ".step", "expected a step name as the trace marks it",
              "step: ProfilerStep#12");
    else
      job.trace_step = *v;
  }
}

// `jobs:`: a list of jobs, each a name, a workload or a trace, a size and a placement.
void read_jobs(YamlReader& r, const YAML::Node& n, std::vector<JobSpec>& jobs) {
  if (n.IsNull()) return;
  if (!n.IsSequence()) {
    r.error(n, "jobs", "expected a list of jobs",
            "jobs:\n  - {name: a, gpus: 2048, placement: packed, workload: {...}}");
    return;
  }
  if (n.size() > static_cast<size_t>(kMaxJobs)) {
    r.error(
        n, "jobs",
        fmt::format("{} jobs is more than the {} one fabric is modelled with", n.size(), kMaxJobs));
    return;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node j = n[i];
    JobSpec job;
    job.key = fmt::format("jobs[{}]", i);
    const std::string& p = job.key;
    if (!r.expect_map(j, p)) continue;
    r.check_keys(j, p, {"name", "workload", "gpus", "nodes", "placement", "seed", "trace", "step"});
    read_job_trace(r, j, job);
    if (auto v = r.text(j, "name", p, true)) {
      if (const std::string why = display_name_problem(*v, kMaxSpecNameChars); !why.empty())
        r.error(child(j, "name"), p + ".name", "the name " + why, "use a short one-line name");
      else if (!names.insert(*v).second)
        r.error(child(j, "name"), p + ".name", fmt::format("another job is named '{}'", *v),
                "give every job its own name");
      else
        job.name = *v;
    }
    if (child(j, "workload").IsDefined() && child(j, "trace").IsDefined())
      r.error(child(j, "trace"), p + ".trace", "give either workload or trace, not both",
              "a trace job's step is the recorded one; a workload job's is modelled");
    else if (child(j, "workload").IsDefined())
      read_workload(r, child(j, "workload"), job.workload, p + ".workload");
    else if (!child(j, "trace").IsDefined())
      r.error(j, p + ".workload", "missing required key",
              "give the job a workload: {model: ..., parallelism: ...} as the spec's workload, "
              "or a trace: to replay");
    const bool has_nodes = child(j, "nodes").IsDefined(), has_gpus = child(j, "gpus").IsDefined();
    if (has_nodes && has_gpus)
      r.error(child(j, "gpus"), p + ".gpus", "give either nodes or gpus, not both");
    if (auto v = r.positive_int(j, "nodes", p)) {
      if (*v > kMaxSpecNodes)
        r.error(child(j, "nodes"), p + ".nodes",
                fmt::format("{} is more than the {} this tool plans", *v, kMaxSpecNodes));
      else
        job.nodes = static_cast<int>(*v);
    }
    if (auto v = r.positive_int(j, "gpus", p)) {
      if (*v > kMaxSpecGpus)
        r.error(child(j, "gpus"), p + ".gpus",
                fmt::format("{} is more than the {} this tool plans", *v, kMaxSpecGpus));
      else
        job.gpus_requested = *v;
    }
    const YAML::Node pl = child(j, "placement");
    if (pl.IsSequence()) {
      job.placement = std::nullopt;
      std::set<std::string> seen;
      for (size_t k = 0; k < pl.size(); ++k) {
        const std::string key = fmt::format("{}.placement[{}]", p, k);
        if (!pl[k].IsScalar() || pl[k].Scalar().empty()) {
          r.error(pl[k], key, "expected a node name as cabling.csv gives it, e.g. node0001");
          continue;
        }
        if (!seen.insert(pl[k].Scalar()).second) {
          r.error(pl[k], key, fmt::format("node '{}' is listed twice", pl[k].Scalar()));
          continue;
        }
        job.nodes_listed.push_back(pl[k].Scalar());
      }
      if (pl.size() == 0) r.error(pl, p + ".placement", "the node list is empty");
      if (job.nodes == 0 && job.gpus_requested == 0 && !job.nodes_listed.empty())
        job.nodes = static_cast<int>(job.nodes_listed.size());
      else if (job.nodes > 0 && job.nodes != static_cast<int>(pl.size()))
        r.error(pl, p + ".placement",
                fmt::format("lists {} nodes, but the job has nodes: {}", pl.size(), job.nodes));
    } else if (pl.IsDefined()) {
      if (auto v = r.choice_of(j, "placement", p, kPlacementNames)) job.placement = *v;
    }
    if (!has_nodes && !has_gpus && !pl.IsSequence())
      r.error(j, p + ".gpus", "missing required key", "give the job gpus: N or nodes: N");
    if (auto v = r.positive_int(j, "seed", p)) job.seed = static_cast<uint64_t>(*v);
    if (child(j, "seed").IsDefined() && job.placement != Placement::kRandom)
      r.error(child(j, "seed"), p + ".seed", "seed is the key of placement: random");
    jobs.push_back(std::move(job));
  }
}

void read_constraints(YamlReader& r, const YAML::Node& n, ConstraintsSpec& c) {
  if (!n.IsDefined() || n.IsNull()) return;
  const std::string p = "constraints";
  if (!r.expect_map(n, p)) return;
  r.check_keys(n, p, {"goal", "budget", "max_comm_fraction", "min_gpu_utilization"});
  if (auto v = r.choice_of(n, "goal", p, kGoalNames)) c.goal = *v;
  if (!is_auto(n, "budget"))
    if (auto v = r.quantity(n, "budget", p, units::parse_usd)) {
      // 0 had read as no budget at all, silently.
      if (!(*v > 0))
        r.error(child(n, "budget"), YamlReader::join(p, "budget"), "a budget must be more than $0",
                "the cluster's capex limit, e.g. 40M; leave it out (or auto) for none");
      else
        c.budget_usd = *v;
    }
  for (const char* key : {"max_comm_fraction", "min_gpu_utilization"}) {
    if (auto v = r.number(n, key, p)) {
      if (*v < 0 || *v > 1) {
        r.error(child(n, key), YamlReader::join(p, key),
                "expected a fraction from 0 to 1, e.g. 0.3");
      } else if (std::string(key) == "max_comm_fraction") {
        c.max_comm_fraction = *v;
        c.max_comm_fraction_given = true;
      } else {
        c.min_gpu_utilization = *v;
        c.min_gpu_utilization_given = true;
      }
    }
  }
}

// Linux interface names are shorter than IFNAMSIZ (16) and hold no '/', ':' or whitespace
// (dev_valid_name in net/core/dev.c); RDMA device names are shorter than IB_DEVICE_NAME_MAX (64).
constexpr size_t kMaxNetdevName = 15;
constexpr size_t kMaxRdmaDeviceName = 63;

// "a.b.c.d/len" read, its host bits as written: nullopt unless four octets 0-255 and a length
// 0-32 with nothing after.
struct Ipv4Prefix {
  uint32_t addr = 0;
  unsigned len = 0;
  uint32_t network() const { return len == 0 ? 0 : addr & (~uint32_t{0} << (32 - len)); }
};
std::optional<Ipv4Prefix> read_ipv4_prefix(const std::string& s) {
  unsigned a = 0, b = 0, c = 0, d = 0, len = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%3u.%3u.%3u.%3u/%2u%c", &a, &b, &c, &d, &len, &tail) != 5)
    return std::nullopt;
  if (a > 255 || b > 255 || c > 255 || d > 255 || len > 32) return std::nullopt;
  return Ipv4Prefix{(a << 24) | (b << 16) | (c << 8) | d, len};
}

// The first and last address of an IPv4 prefix (is_ipv4_prefix has checked it).
std::pair<uint64_t, uint64_t> prefix_range(const std::string& prefix) {
  const Ipv4Prefix p = read_ipv4_prefix(prefix).value_or(Ipv4Prefix{});
  const uint64_t lo = p.addr;
  return {lo, lo + (uint64_t{1} << (32 - p.len)) - 1};
}

bool prefixes_overlap(const std::string& x, const std::string& y) {
  const auto [xlo, xhi] = prefix_range(x);
  const auto [ylo, yhi] = prefix_range(y);
  return xlo <= yhi && ylo <= xhi;
}

bool is_device_name(const std::string& s, size_t max_len) {
  if (s.empty() || s.size() > max_len || s == "." || s == "..") return false;
  for (char c : s)
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c))) return false;
  return true;
}

// The hint for a value that is_ipv4_prefix refused: a prefix with host bits set is given its
// network ("10.128.0.5/9" -> "10.128.0.0/9"); anything else the form, with `example`.
std::string prefix_hint(const std::string& v, const std::string& example) {
  if (const auto p = read_ipv4_prefix(v)) {
    const uint32_t net = p->network();
    return fmt::format("its network is {}.{}.{}.{}/{}: write that, or another prefix such as {}",
                       net >> 24, (net >> 16) & 255, (net >> 8) & 255, net & 255, p->len, example);
  }
  return "write an IPv4 prefix, address/length with octets 0-255 and length 0-32, such as " +
         example;
}

void read_addressing(YamlReader& r, const YAML::Node& n, AddressingSpec& a) {
  if (!n.IsDefined() || n.IsNull()) return;
  const std::string p = "addressing";
  if (!r.expect_map(n, p)) return;
  r.check_keys(n, p,
               {"loopbacks", "links", "hosts", "asn_spine", "asn_leaf", "unnumbered",
                "host_netdevs", "host_rdma_devices", "mgmt_netdev", "cumulus_version"});
  for (const char* key : {"loopbacks", "links", "hosts"}) {
    auto v = r.text(n, key, p);
    if (!v) continue;
    if (!is_ipv4_prefix(*v)) {
      r.error(child(n, key), YamlReader::join(p, key),
              fmt::format("'{}' is not an IPv4 prefix with its host bits zero", *v),
              prefix_hint(*v, "10.0.0.0/16"));
      continue;
    }
    (std::string(key) == "loopbacks" ? a.loopbacks
     : std::string(key) == "links"   ? a.links
                                     : a.hosts) = *v;
  }
  for (const char* key : {"asn_spine", "asn_leaf"}) {
    auto v = r.positive_int(n, key, p);
    if (!v) continue;
    if (*v > 4294967294LL)
      r.error(child(n, key), YamlReader::join(p, key), "an ASN is at most 4294967294");
    else
      (std::string(key) == "asn_spine" ? a.asn_spine : a.asn_leaf) = *v;
  }
  if (auto v = r.boolean(n, "unnumbered", p)) a.unnumbered = *v;
  for (const char* key : {"host_netdevs", "host_rdma_devices"}) {
    const YAML::Node list = child(n, key);
    if (!list.IsDefined() || list.IsNull()) continue;
    const std::string path = YamlReader::join(p, key);
    if (!list.IsSequence()) {
      r.error(list, path, "expected a list of device names, one per rail port",
              "write it as [ens1f0np0, ens2f0np0]");
      continue;
    }
    std::vector<std::string> names;
    std::set<std::string> seen;
    const bool netdev = std::string(key) == "host_netdevs";
    for (const auto& e : list) {
      const std::string name = e.IsScalar() ? e.Scalar() : "";
      if (!is_device_name(name, netdev ? kMaxNetdevName : kMaxRdmaDeviceName)) {
        r.error(e, path,
                fmt::format("'{}' is not a {} name", name,
                            netdev ? "network interface" : "RDMA device"),
                fmt::format("at most {} characters, no '/', ':' or spaces",
                            netdev ? kMaxNetdevName : kMaxRdmaDeviceName));
        continue;
      }
      if (!seen.insert(name).second) r.error(e, path, fmt::format("'{}' is listed twice", name));
      names.push_back(name);
    }
    (netdev ? a.host_netdevs : a.host_rdma_devices) = names;
  }
  if (auto v = r.text(n, "mgmt_netdev", p)) {
    const std::string path = YamlReader::join(p, "mgmt_netdev");
    if (!is_device_name(*v, kMaxNetdevName))
      r.error(child(n, "mgmt_netdev"), path,
              fmt::format("'{}' is not a network interface name", *v),
              fmt::format("at most {} characters, no '/', ':' or spaces", kMaxNetdevName));
    else if (std::find(a.host_netdevs.begin(), a.host_netdevs.end(), *v) != a.host_netdevs.end())
      r.error(child(n, "mgmt_netdev"), path,
              fmt::format("'{}' is a rail (addressing.host_netdevs), not the management "
                          "interface",
                          *v),
              "name the interface of the management network (ip -br addr shows it)");
    else
      a.mgmt_netdev = *v;
  }
  if (auto v = r.text(n, "cumulus_version", p)) {
    unsigned major = 0, minor = 0;
    char tail = 0;
    const int got = std::sscanf(v->c_str(), "%2u.%2u%c", &major, &minor, &tail);
    if (got != 2 || major != 5 || minor < kOldestCumulusMinor)
      r.error(child(n, "cumulus_version"), YamlReader::join(p, "cumulus_version"),
              fmt::format("'{}' is not a Cumulus Linux release gpufabric writes NVUE for", *v),
              fmt::format("5.{} or later, as major.minor: 5.14", kOldestCumulusMinor));
    else
      a.cumulus_version = *v;
  }
}

// A network's vlan and subnet keys (networks.storage.vlan, ...).
void read_net_addressing(YamlReader& r, const YAML::Node& n, const std::string& p,
                         NetAddressing& a) {
  if (auto v = r.positive_int(n, "vlan", p)) {
    // 802.1Q: VLAN IDs 1-4094 (0 and 4095 are reserved); 1 is every switch's default VLAN, and
    // 4094 the MLAG peer link's (the leaf pairs' peerlink.4094 that configs writes).
    if (*v < 2 || *v > 4093)
      r.error(child(n, "vlan"), YamlReader::join(p, "vlan"),
              fmt::format("{} is not a usable VLAN ID", *v),
              "use 2 to 4093 (1 is the default VLAN, 4094 the MLAG peer link's)");
    else
      a.vlan = static_cast<int>(*v);
  }
  if (auto v = r.text(n, "subnet", p)) {
    if (!is_ipv4_prefix(*v))
      r.error(child(n, "subnet"), YamlReader::join(p, "subnet"),
              fmt::format("'{}' is not an IPv4 prefix with its host bits zero", *v),
              prefix_hint(*v, "10.64.0.0/16"));
    else
      a.subnet = *v;
  }
}

// `enabled:` of one network (true/false, on/off).
void read_enabled(YamlReader& r, const YAML::Node& n, const std::string& p, bool& enabled) {
  if (auto v = r.boolean(n, "enabled", p)) enabled = *v;
}

std::optional<double> port_speed(YamlReader& r, const YAML::Node& n, const std::string& p) {
  if (is_auto(n, "port_speed")) return std::nullopt;
  auto v = r.quantity(n, "port_speed", p, units::parse_bitrate);
  if (!v) return std::nullopt;
  if (*v < 1e9 || *v > 1.6e12) {
    r.error(child(n, "port_speed"), YamlReader::join(p, "port_speed"),
            "expected a port speed from 1G to 1600G");
    return std::nullopt;
  }
  return *v / 1e9;
}

void read_networks(YamlReader& r, const YAML::Node& n, NetworksSpec& s) {
  const std::string p = "networks";
  if (!r.expect_map(n, p)) return;
  r.check_keys(n, p, {"isolation", "storage", "inband", "oob"});
  if (auto v = r.choice_of(n, "isolation", p, kIsolationNames)) s.isolation = *v;
  if (const YAML::Node st = child(n, "storage"); st.IsDefined() && !st.IsNull()) {
    const std::string sp = p + ".storage";
    auto& t = s.storage;
    if (r.expect_map(st, sp)) {
      r.check_keys(
          st, sp,
          {"enabled", "nic", "ports_per_node", "port_speed", "storage_nodes", "target_bandwidth",
           "storage_node_ports", "switch", "oversubscription", "vlan", "subnet"});
      read_enabled(r, st, sp, t.enabled);
      if (!is_auto(st, "nic"))
        if (auto v = r.text(st, "nic", sp)) t.nic = *v;
      if (!is_auto(st, "ports_per_node"))
        if (auto v = r.small_positive_int(st, "ports_per_node", sp)) t.ports_per_node = *v;
      if (auto v = port_speed(r, st, sp)) t.port_gbps = *v;
      if (child(st, "storage_nodes").IsDefined() && child(st, "target_bandwidth").IsDefined())
        r.error(child(st, "target_bandwidth"), sp + ".target_bandwidth",
                "give either storage_nodes or target_bandwidth, not both");
      if (!is_auto(st, "storage_nodes"))
        if (auto v = r.small_positive_int(st, "storage_nodes", sp)) {
          if (*v > kMaxStorageNodes)
            r.error(child(st, "storage_nodes"), sp + ".storage_nodes",
                    fmt::format("{} is more than the {} storage servers this tool plans", *v,
                                kMaxStorageNodes));
          else
            t.storage_nodes = *v;
        }
      if (!is_auto(st, "target_bandwidth"))
        if (auto v = r.quantity(st, "target_bandwidth", sp, units::parse_bitrate)) {
          if (*v <= 0 || *v > 1.6e13)
            r.error(child(st, "target_bandwidth"), sp + ".target_bandwidth",
                    "expected a bandwidth per GPU node, e.g. 40GB/s");
          else
            t.target_gbs_per_node = *v / 8e9;
        }
      if (auto v = r.small_positive_int(st, "storage_node_ports", sp)) {
        if (*v > 64)
          r.error(child(st, "storage_node_ports"), sp + ".storage_node_ports",
                  "expected 1 to 64 ports per storage server");
        else
          t.storage_node_ports = *v;
      }
      if (auto v = r.text(st, "switch", sp)) t.switch_id = *v;
      if (auto v = r.quantity(st, "oversubscription", sp, units::parse_ratio)) {
        if (*v < 1 || *v > 16)
          r.error(child(st, "oversubscription"), sp + ".oversubscription",
                  "expected a down:up ratio between 1 (non-blocking) and 16");
        else
          t.oversubscription = *v;
      }
      read_net_addressing(r, st, sp, t.addressing);
    }
  }
  if (const YAML::Node ib = child(n, "inband"); ib.IsDefined() && !ib.IsNull()) {
    const std::string ip = p + ".inband";
    auto& t = s.inband;
    if (r.expect_map(ib, ip)) {
      r.check_keys(ib, ip, {"enabled", "ports_per_node", "port_speed", "switch", "vlan", "subnet"});
      read_enabled(r, ib, ip, t.enabled);
      if (!is_auto(ib, "ports_per_node"))
        if (auto v = r.small_positive_int(ib, "ports_per_node", ip)) t.ports_per_node = *v;
      if (auto v = port_speed(r, ib, ip)) t.port_gbps = *v;
      if (auto v = r.text(ib, "switch", ip)) t.switch_id = *v;
      read_net_addressing(r, ib, ip, t.addressing);
    }
  }
  if (const YAML::Node ob = child(n, "oob"); ob.IsDefined() && !ob.IsNull()) {
    const std::string op = p + ".oob";
    auto& t = s.oob;
    if (r.expect_map(ob, op)) {
      r.check_keys(ob, op,
                   {"enabled", "switch", "nodes_per_rack", "pdus_per_rack", "vlan", "subnet"});
      read_enabled(r, ob, op, t.enabled);
      if (auto v = r.text(ob, "switch", op)) t.switch_id = *v;
      if (auto v = r.small_positive_int(ob, "nodes_per_rack", op)) {
        if (*v > 72)
          r.error(child(ob, "nodes_per_rack"), op + ".nodes_per_rack",
                  "expected 1 to 72 servers per rack");
        else
          t.nodes_per_rack = *v;
      }
      if (child(ob, "pdus_per_rack").IsDefined()) {
        if (auto v = r.number(ob, "pdus_per_rack", op)) {
          if (*v < 0 || *v > 16 || std::floor(*v) != *v)
            r.error(child(ob, "pdus_per_rack"), op + ".pdus_per_rack",
                    "expected 0 to 16 PDUs per rack");
          else
            t.pdus_per_rack = static_cast<int>(*v);
        }
      }
      read_net_addressing(r, ob, op, t.addressing);
    }
  }
}

}  // namespace

bool is_ipv4_prefix(const std::string& s) {
  const auto p = read_ipv4_prefix(s);
  return p && p->addr == p->network();
}

Diagnostic Spec::at(const std::string& key, const std::string& message,
                    const std::string& hint) const {
  Diagnostic d = Diagnostic::in_file(path, key, message, hint);
  // Point at the key, or at the nearest enclosing key that was written.
  for (std::string k = key; !k.empty();) {
    if (auto it = where.find(k); it != where.end()) {
      d.line = it->second.line;
      d.column = it->second.column;
      break;
    }
    const auto dot = k.rfind('.');
    k = dot == std::string::npos ? "" : k.substr(0, dot);
  }
  return d;
}

namespace {

// Reads what it can into `s`; returns every problem found. `structural` is set when the
// document is too broken (syntax, not a map) for further checks to mean anything.
std::vector<Diagnostic> parse_into(const std::string& text, const std::string& file, Spec& s,
                                   bool& structural) {
  YamlReader r(file);
  structural = true;
  const YAML::Node root = r.parse(text);
  if (!r.ok()) return r.errors();
  s.path = file;
  if (root.IsNull() || !root.IsDefined()) {
    return {Diagnostic::at(file, 1, 1, "", "the spec is empty",
                           "start from examples/seed-70b-1024.yaml")};
  }
  if (!r.expect_map(root, "")) return r.errors();
  structural = !child(root, "cluster").IsMap();
  index_positions(root, "", s.where);
  r.check_keys(root, "",
               {"name", "cluster", "fabric", "workload", "constraints", "addressing", "networks",
                "catalog", "jobs", "calibration"});
  if (auto v = r.text(root, "name", "")) {
    // Shown as given (report title, plan.json); whoever makes a file or namespace name from it
    // derives a safe one (the lab does).
    if (const std::string why = display_name_problem(*v, kMaxSpecNameChars); !why.empty())
      r.error(child(root, "name"), "name", "the name " + why, "use a short one-line name");
    else
      s.name = *v;
  }
  if (s.name.empty()) s.name = std::filesystem::path(file).stem().string();
  if (child(root, "cluster").IsDefined())
    read_cluster(r, child(root, "cluster"), s.cluster);
  else
    r.error(root, "cluster", "missing required section",
            "add cluster: {gpu: ..., nodes: ..., nic: ...}");
  read_fabric(r, child(root, "fabric"), s.fabric);
  if (child(root, "workload").IsDefined() && !child(root, "workload").IsNull()) {
    WorkloadSpec w;
    read_workload(r, child(root, "workload"), w);
    s.workload = w;
  }
  read_constraints(r, child(root, "constraints"), s.constraints);
  if (const YAML::Node jb = child(root, "jobs"); jb.IsDefined()) read_jobs(r, jb, s.jobs);
  read_addressing(r, child(root, "addressing"), s.addressing);
  if (const YAML::Node nw = child(root, "networks"); nw.IsDefined()) {
    // `networks:` with nothing under it asks for every network with its defaults.
    NetworksSpec ns;
    if (!nw.IsNull()) read_networks(r, nw, ns);
    s.networks = ns;
  }
  if (auto v = r.text(root, "calibration", "")) {
    if (v->empty())
      r.error(child(root, "calibration"), "calibration", "expected the path of a profile",
              "write calibration: profile.yaml (made by gpufabric calibrate --fit)");
    else
      s.calibration_file = *v;
  }
  const YAML::Node cat = child(root, "catalog");
  if (cat.IsDefined() && !cat.IsNull()) {
    if (!cat.IsSequence()) {
      r.error(cat, "catalog", "expected a list of catalog file paths");
    } else {
      for (const auto& e : cat) {
        if (e.IsScalar())
          s.catalog_files.push_back(e.Scalar());
        else
          r.error(e, "catalog", "expected a file path");
      }
    }
  }
  return r.errors();
}

}  // namespace

Result<Spec> parse_spec(const std::string& text, const std::string& file) {
  Spec s;
  bool structural = false;
  auto errs = parse_into(text, file, s, structural);
  if (!errs.empty()) return errs;
  return s;
}

namespace {

// A workload's parallelism against the GPUs it runs on (`gpus`, the `whose`: cluster or job);
// fills dp when auto. `key` is the section's path, "workload" or "jobs[2].workload".
void validate_workload(const Spec& s, WorkloadSpec& w, long long gpus, const std::string& key,
                       const char* whose, const GpuModel* gpu, std::vector<Diagnostic>& errs) {
  auto& p = w.parallelism;
  const long long model_ranks = 1LL * p.tp * p.pp * p.cp;
  if (gpus % model_ranks != 0) {
    errs.push_back(
        s.at(key + ".parallelism",
             fmt::format("tp*pp*cp = {} does not divide the {} GPUs", model_ranks, gpus)));
  } else if (p.dp == 0) {
    p.dp = static_cast<int>(gpus / model_ranks);
  } else if (model_ranks * p.dp != gpus) {
    errs.push_back(s.at(
        key + ".parallelism.dp",
        fmt::format("tp*pp*cp*dp = {} but the {} has {} GPUs", model_ranks * p.dp, whose, gpus),
        fmt::format("use dp: {} or dp: auto", gpus / model_ranks)));
  }
  if (p.ep > 1 && p.dp > 0 && p.dp % p.ep != 0)
    errs.push_back(
        s.at(key + ".parallelism.ep", fmt::format("ep = {} must divide dp = {}", p.ep, p.dp)));
  const auto& m = w.model;
  if (p.ep > 1 && m.experts > 0 && m.experts % p.ep != 0)
    errs.push_back(s.at(key + ".parallelism.ep",
                        fmt::format("ep = {} must divide the {} experts", p.ep, m.experts)));
  if (m.heads > 0 && m.heads % p.tp != 0)
    errs.push_back(s.at(key + ".parallelism.tp",
                        fmt::format("tp = {} must divide the {} attention heads", p.tp, m.heads)));
  // Megatron-LM splits the key/value heads over tp when there are at least tp of them
  // (divide(num_query_groups, tp), transformer/attention.py@d98e8a64dd:364); fewer are
  // replicated, one a rank (:353-360).
  else if (m.kv_heads >= p.tp && m.kv_heads % p.tp != 0)
    errs.push_back(s.at(key + ".parallelism.tp",
                        fmt::format("tp = {} must divide the {} key/value heads (kv_heads): "
                                    "Megatron-LM splits them over tp when there are at least tp",
                                    p.tp, m.kv_heads),
                        "choose a tp that divides kv_heads, or one above it (each rank then "
                        "holds one key/value head, replicated)"));
  // Context parallelism cuts each sequence into 2 x cp chunks, two a rank for load balance
  // ("seq-length should be a multiple of 2 * context-parallel-size", arguments.py@d98e8a64dd:
  // 1335-1338).
  if (p.cp > 1 && m.seq_len > 0 && m.seq_len % (2 * p.cp) != 0)
    errs.push_back(s.at(key + ".parallelism.cp",
                        fmt::format("seq_len {} is not a multiple of 2 x cp = {}: context "
                                    "parallelism cuts each sequence into 2 x cp chunks",
                                    m.seq_len, 2 * p.cp),
                        fmt::format("use a seq_len that is a multiple of {}", 2 * p.cp)));
  // An interleaved schedule interleaves pipeline stages: Megatron-LM refuses one without them
  // ("pipeline-model-parallel size should be greater than 1", arguments.py@d98e8a64dd:1003).
  if (w.virtual_pipeline > 1 && p.pp < 2)
    errs.push_back(s.at(key + ".virtual_pipeline",
                        fmt::format("virtual_pipeline {} needs pp >= 2: the interleaved schedule "
                                    "interleaves pipeline stages, and pp is {}",
                                    w.virtual_pipeline, p.pp),
                        "set parallelism.pp to 2 or more, or virtual_pipeline: 1"));
  else if ((w.first_stage_layers > 0 || w.last_stage_layers > 0) && (p.pp < 2 || m.layers <= 0))
    errs.push_back(
        s.at(w.first_stage_layers > 0 ? key + ".first_stage_layers" : key + ".last_stage_layers",
             "first_stage_layers and last_stage_layers need pp >= 2 and model.layers"));
  else if (auto layout = pipeline_layout(m.layers, p.pp, w.virtual_pipeline, w.first_stage_layers,
                                         w.last_stage_layers);
           !layout)
    for (const auto& e : layout.errors()) {
      // The layout names the spec's workload; a job's is under its own key.
      const std::string k = e.key.rfind("workload", 0) == 0 ? key + e.key.substr(8) : e.key;
      errs.push_back(s.at(k, e.message, e.hint));
    }
  const int gb = w.global_batch, mb = w.micro_batch;
  if (gb > 0 && p.dp > 0 && gb % (static_cast<long long>(mb) * p.dp) != 0)
    errs.push_back(s.at(key + ".global_batch",
                        fmt::format("global_batch {} is not a multiple of micro_batch*dp = {}", gb,
                                    static_cast<long long>(mb) * p.dp)));
  // Megatron-LM's interleaved schedule runs the microbatches in groups of pp a model chunk and
  // refuses fewer than pp of them, or a last group smaller than pp (schedules.py@d98e8a64dd:
  // 1160-1180; the group is pp by default, model_parallel_config.py:567-568). Fewer than pp
  // cannot fill the interleaved pipeline at all.
  if (w.virtual_pipeline > 1 && p.pp >= 2 && gb > 0 && p.dp > 0 && mb > 0 &&
      gb % (static_cast<long long>(mb) * p.dp) == 0) {
    const long long micro = gb / (static_cast<long long>(mb) * p.dp);
    if (micro < p.pp || micro % p.pp != 0)
      errs.push_back(
          s.at(key + ".virtual_pipeline",
               fmt::format("virtual_pipeline {} runs {} microbatches a step (global_batch {} / "
                           "(micro_batch {} x dp {})), {} pp = {}: Megatron-LM's interleaved "
                           "schedule needs a multiple of pp, at least pp",
                           w.virtual_pipeline, micro, gb, mb, p.dp,
                           micro < p.pp ? "fewer than" : "not a multiple of", p.pp),
               fmt::format("set global_batch to a multiple of {} (pp x micro_batch x dp), or "
                           "virtual_pipeline: 1",
                           static_cast<long long>(p.pp) * mb * p.dp)));
  }
  // Sequence parallelism scatters each sequence over the tp ranks ("First dimension of the
  // tensor should be divisible by tensor parallel size", tensor_parallel/mappings.py@d98e8a64dd:
  // 74).
  if (w.sequence_parallel && p.tp > 1 && m.seq_len > 0 && m.seq_len % (p.tp * p.cp) != 0)
    errs.push_back(s.at(
        key + ".sequence_parallel",
        fmt::format("seq_len {} is not a multiple of tp = {}{}: sequence "
                    "parallelism scatters each sequence over the tp ranks",
                    m.seq_len, p.tp * p.cp,
                    p.cp > 1 ? fmt::format(" x cp (tp {} x cp {})", p.tp, p.cp) : std::string()),
        fmt::format("use a seq_len that is a multiple of {}, or "
                    "sequence_parallel: false",
                    p.tp * p.cp)));
  if (w.precision == Precision::kFp8 && gpu && gpu->fp8_tflops <= 0)
    errs.push_back(
        s.at(key + ".precision", fmt::format("{} has no FP8 tensor cores", gpu->id), "use bf16"));
}

// The jobs against the cluster: whole servers, no more nodes than it has, each workload's
// parallelism against the job's GPUs, no node in two explicit lists. Node names are checked
// against the plan's (sim/jobs.h), which names them.
void validate_jobs(Spec& s, const GpuModel* gpu, std::vector<Diagnostic>& errs) {
  const auto& c = s.cluster;
  if (c.gpus_per_node <= 0 || c.nodes <= 0) return;
  long long total = 0;
  std::map<std::string, std::string> holder;  // listed node -> the job listing it
  for (auto& job : s.jobs) {
    if (job.gpus_requested > 0) {
      if (job.gpus_requested % c.gpus_per_node != 0) {
        errs.push_back(s.at(job.key + ".gpus",
                            fmt::format("{} GPUs do not fill whole servers of {}",
                                        job.gpus_requested, c.gpus_per_node),
                            fmt::format("use a multiple of {}", c.gpus_per_node)));
        continue;
      }
      job.nodes = static_cast<int>(job.gpus_requested / c.gpus_per_node);
      if (!job.placement && job.nodes != static_cast<int>(job.nodes_listed.size()))
        errs.push_back(s.at(job.key + ".placement",
                            fmt::format("lists {} nodes, but {} GPUs take {} servers",
                                        job.nodes_listed.size(), job.gpus_requested, job.nodes)));
    }
    if (job.nodes <= 0) continue;
    total += job.nodes;
    if (job.nodes > c.nodes)
      errs.push_back(s.at(job.key + (job.gpus_requested > 0 ? ".gpus" : ".nodes"),
                          fmt::format("the job needs {} GPUs ({} nodes); the cluster has {} ({} "
                                      "nodes)",
                                      1LL * job.nodes * c.gpus_per_node, job.nodes,
                                      1LL * c.nodes * c.gpus_per_node, c.nodes)));
    for (size_t k = 0; k < job.nodes_listed.size(); ++k) {
      const auto [it, fresh] = holder.emplace(job.nodes_listed[k], job.name);
      if (!fresh)
        errs.push_back(
            s.at(fmt::format("{}.placement[{}]", job.key, k),
                 fmt::format("node '{}' is already job '{}''s", job.nodes_listed[k], it->second),
                 "explicit node lists must not overlap"));
    }
    // A trace job's groups are checked against its GPUs when the trace is read (sim/jobs.h).
    if (job.trace_files.empty())
      validate_workload(s, job.workload, 1LL * job.nodes * c.gpus_per_node, job.key + ".workload",
                        "job", gpu, errs);
  }
  if (total > c.nodes)
    errs.push_back(
        s.at("jobs",
             fmt::format("the jobs need {} GPUs ({} nodes); the cluster has {} ({} "
                         "nodes)",
                         total * c.gpus_per_node, total, 1LL * c.nodes * c.gpus_per_node, c.nodes),
             "make the jobs smaller or the cluster larger"));
}

}  // namespace

std::vector<Diagnostic> validate_spec(Spec& s, const Catalog& cat) {
  std::vector<Diagnostic> errs;
  auto& c = s.cluster;
  const GpuModel* gpu = nullptr;
  if (auto it = cat.gpus.find(c.gpu); it != cat.gpus.end()) {
    gpu = &it->second;
  } else if (!c.gpu.empty() || s.where.count("cluster.gpu")) {
    errs.push_back(s.at("cluster.gpu", fmt::format("unknown GPU '{}'", c.gpu),
                        did_you_mean(c.gpu, cat.gpu_ids()).empty()
                            ? "see catalog/gpus.yaml for known ids"
                            : did_you_mean(c.gpu, cat.gpu_ids())));
  }
  const Nic* nic = nullptr;
  if (auto it = cat.nics.find(c.nic); it != cat.nics.end()) {
    nic = &it->second;
  } else if (!c.nic.empty() || s.where.count("cluster.nic")) {
    const std::string h = did_you_mean(c.nic, cat.nic_ids());
    errs.push_back(s.at("cluster.nic", fmt::format("unknown NIC '{}'", c.nic),
                        h.empty() ? "see catalog/nics.yaml for known ids" : h));
  }
  if (gpu) {
    // The NICs the catalog's server figure includes must be catalog NICs whose figures fit in it.
    const Catalog::IncludedNics nics = cat.included_nics(*gpu);
    for (const auto& id : nics.missing)
      errs.push_back(s.at("cluster.gpu",
                          fmt::format("the catalog's {} server (node.nics) names NIC '{}', "
                                      "which the catalog lacks",
                                      gpu->id, id),
                          "give node.nics catalog NIC ids (catalog/nics.yaml)"));
    const double nics_usd = nics.price_usd + nics.storage_price_usd,
                 nics_w = nics.power_w + nics.storage_power_w;
    if (nics_usd > gpu->node.price_usd || nics_w > gpu->node.power_w)
      errs.push_back(
          s.at("cluster.gpu",
               fmt::format("the catalog's {} server figure (${:.0f}, {:.0f} W) is less "
                           "than the NICs node.nics says it includes (${:.0f}, {:.0f} W)",
                           gpu->id, gpu->node.price_usd, gpu->node.power_w, nics_usd, nics_w),
               "check the server's node figures and node.nics in the catalog"));
    if (c.gpus_per_node == 0) c.gpus_per_node = gpu->gpus_per_node;
    if (c.gpus_per_node > gpu->gpus_per_node)
      errs.push_back(
          s.at("cluster.gpus_per_node", fmt::format("a {} server holds at most {} GPUs, not {}",
                                                    gpu->id, gpu->gpus_per_node, c.gpus_per_node)));
    if (c.nics_per_node == 0) c.nics_per_node = std::min(c.gpus_per_node, gpu->max_nics_per_node);
    // A board the catalog knows: direct links only where it names a board of that many GPUs,
    // NVSwitch only where the GPU has NVLink.
    if (c.scaleup_board == ScaleupBoard::kDirect &&
        gpu->scaleup_direct_board_gpus != c.gpus_per_node)
      errs.push_back(s.at(
          "cluster.scaleup_board",
          gpu->scaleup_direct_board_gpus > 0
              ? fmt::format("the catalog's {} links its GPUs directly on a board of {}, not {}",
                            gpu->id, gpu->scaleup_direct_board_gpus, c.gpus_per_node)
              : fmt::format("the catalog names no {} board that links its GPUs directly", gpu->id),
          "auto or nvswitch; or a catalog entry with scaleup.direct_board_gpus"));
    if (c.host_cpu != HostCpuVendor::kAuto && gpu->host_cpu == HostCpu::kGrace)
      errs.push_back(s.at("cluster.host_cpu",
                          fmt::format("the catalog's {} sits on a Grace host (NVLink-C2C), not "
                                      "an x86 one",
                                      gpu->id),
                          "leave host_cpu out (auto)"));
    if (c.scaleup_board == ScaleupBoard::kNvswitch && gpu->scaleup_tech == ScaleUpTech::kPcie)
      errs.push_back(s.at("cluster.scaleup_board",
                          fmt::format("{} cards have no NVLink, so no NVSwitch", gpu->id), "auto"));
    if (c.nics_per_node > gpu->max_nics_per_node)
      errs.push_back(s.at("cluster.nics_per_node",
                          fmt::format("a {} server has PCIe slots for at most {} scale-out NICs, "
                                      "not {}",
                                      gpu->id, gpu->max_nics_per_node, c.nics_per_node)));
    if (c.gpus_requested > 0) {
      if (c.gpus_requested % c.gpus_per_node != 0)
        errs.push_back(s.at("cluster.gpus",
                            fmt::format("{} GPUs do not fill whole servers of {}", c.gpus_requested,
                                        c.gpus_per_node),
                            fmt::format("use a multiple of {}", c.gpus_per_node)));
      else
        c.nodes = static_cast<int>(c.gpus_requested / c.gpus_per_node);
    }
    if (1LL * c.nodes * c.gpus_per_node > kMaxSpecGpus)
      errs.push_back(s.at("cluster.nodes",
                          fmt::format("{} nodes x {} GPUs is more than the {} GPUs this tool plans",
                                      c.nodes, c.gpus_per_node, kMaxSpecGpus)));
  }
  auto& f = s.fabric;
  if (nic) {
    if (f.technology == Technology::kInfiniband && !nic->infiniband)
      errs.push_back(s.at("fabric.technology",
                          fmt::format("NIC '{}' does not speak InfiniBand", nic->id),
                          "choose roce or an InfiniBand-capable NIC such as cx7-400g"));
    if (f.technology == Technology::kRoce && !nic->roce)
      errs.push_back(s.at("fabric.technology", fmt::format("NIC '{}' does not do RoCE", nic->id)));
    if (nic->rate_gbps / f.planes < 100)
      errs.push_back(
          s.at("fabric.planes",
               fmt::format("{} planes would split a {} Gbps NIC below 100 Gbps per plane", f.planes,
                           nic->rate_gbps)));
  }
  // One OS name per rail port of a node: NICs x planes.
  if (gpu && c.nics_per_node > 0)
    for (const auto& [key, names] :
         {std::pair{"addressing.host_netdevs", &s.addressing.host_netdevs},
          std::pair{"addressing.host_rdma_devices", &s.addressing.host_rdma_devices}}) {
      const size_t ports = static_cast<size_t>(c.nics_per_node) * std::max(1, f.planes);
      if (!names->empty() && names->size() != ports)
        errs.push_back(s.at(key,
                            fmt::format("lists {} name{}, but a node has {} rail ports "
                                        "(cluster.nics_per_node {} x fabric.planes {})",
                                        names->size(), names->size() == 1 ? "" : "s", ports,
                                        c.nics_per_node, f.planes),
                            "name every rail port NIC by NIC, each NIC's planes in turn (nic0.p1, "
                            "nic0.p2, nic1.p1, ...), or leave the key out"));
    }
  if (f.switch_id != "auto") {
    auto it = cat.switches.find(f.switch_id);
    if (it == cat.switches.end()) {
      const std::string h = did_you_mean(f.switch_id, cat.switch_ids());
      errs.push_back(s.at("fabric.switch", fmt::format("unknown switch '{}'", f.switch_id),
                          h.empty() ? "see catalog/switches.yaml, or use auto" : h));
    } else if (nic) {
      const Switch& sw = it->second;
      const double lane = nic->rate_gbps / f.planes;
      if (sw.port_gbps < lane)
        errs.push_back(s.at("fabric.switch",
                            fmt::format("switch '{}' ports run at {} Gbps, slower than the {} Gbps "
                                        "NIC port",
                                        sw.id, sw.port_gbps, lane),
                            "choose a faster switch or more planes"));
      else if (sw.ports_at(lane) == 0)
        errs.push_back(s.at("fabric.switch",
                            fmt::format("switch '{}' cannot run ports at {} Gbps (native {} Gbps, "
                                        "no such breakout)",
                                        sw.id, lane, sw.port_gbps)));
      if (f.technology == Technology::kInfiniband && sw.technology != SwitchTechnology::kInfiniband)
        errs.push_back(
            s.at("fabric.switch",
                 fmt::format("'{}' is an Ethernet switch; the fabric is InfiniBand", sw.id)));
      if (f.technology == Technology::kRoce && sw.technology != SwitchTechnology::kEthernet)
        errs.push_back(
            s.at("fabric.switch",
                 fmt::format("'{}' is an InfiniBand switch; the fabric is RoCE", sw.id)));
    }
  }
  // The fabric's own pools: a loopback, a link's /31 and a host's address drawn from two of them
  // would be one address twice (links are drawn only where they are numbered).
  {
    const std::pair<const char*, const std::string*> own[] = {
        {"addressing.loopbacks", &s.addressing.loopbacks},
        {"addressing.links", s.addressing.unnumbered ? nullptr : &s.addressing.links},
        {"addressing.hosts", &s.addressing.hosts}};
    for (size_t j = 1; j < std::size(own); ++j)
      for (size_t i = 0; i < j; ++i) {
        if (!own[i].second || !own[j].second) continue;
        if (!prefixes_overlap(*own[i].second, *own[j].second)) continue;
        errs.push_back(s.at(own[j].first,
                            fmt::format("{} overlaps {} ({}): the two would hand out the same "
                                        "addresses",
                                        *own[j].second, own[i].first, *own[i].second),
                            "give each pool its own prefix, e.g. loopbacks 10.0.0.0/16, links "
                            "10.1.0.0/16, hosts 10.128.0.0/9"));
        break;
      }
  }
  if (s.networks) {
    const auto& n = *s.networks;
    if (!n.storage.nic.empty() && !cat.nics.count(n.storage.nic)) {
      const std::string h = did_you_mean(n.storage.nic, cat.nic_ids());
      errs.push_back(s.at("networks.storage.nic", fmt::format("unknown NIC '{}'", n.storage.nic),
                          h.empty() ? "see catalog/nics.yaml for known ids" : h));
    }
    if (gpu && n.storage.nic.empty() && !gpu->networks.storage_nic.empty() &&
        !cat.nics.count(gpu->networks.storage_nic))
      errs.push_back(s.at("networks.storage.nic",
                          fmt::format("the catalog's {} server names NIC '{}', which the catalog "
                                      "lacks",
                                      gpu->id, gpu->networks.storage_nic)));
    const std::pair<const char*, const std::string*> switches[] = {
        {"networks.storage.switch", &n.storage.switch_id},
        {"networks.inband.switch", &n.inband.switch_id},
        {"networks.oob.switch", &n.oob.switch_id}};
    for (const auto& [key, id] : switches)
      if (*id != "auto" && !cat.switches.count(*id)) {
        const std::string h = did_you_mean(*id, cat.switch_ids());
        errs.push_back(s.at(key, fmt::format("unknown switch '{}'", *id),
                            h.empty() ? "see catalog/switches.yaml, or use auto" : h));
      }
    // One VLAN and one subnet per network, none overlapping another or the fabric's pools.
    struct Pool {
      std::string key, prefix;
    };
    std::vector<Pool> pools = {{"addressing.loopbacks", s.addressing.loopbacks},
                               {"addressing.links", s.addressing.links},
                               {"addressing.hosts", s.addressing.hosts}};
    std::map<int, std::string> vlans;
    const std::pair<const char*, const NetAddressing*> nets[] = {
        {"networks.storage", &n.storage.addressing},
        {"networks.inband", &n.inband.addressing},
        {"networks.oob", &n.oob.addressing}};
    for (const auto& [key, a] : nets) {
      if (auto [it, fresh] = vlans.emplace(a->vlan, key); !fresh)
        errs.push_back(s.at(std::string(key) + ".vlan",
                            fmt::format("VLAN {} is also {}'s", a->vlan, it->second),
                            "give each network its own VLAN"));
      for (const auto& other : pools) {
        if (prefixes_overlap(a->subnet, other.prefix)) {
          errs.push_back(
              s.at(std::string(key) + ".subnet",
                   fmt::format("{} overlaps {} ({})", a->subnet, other.key, other.prefix),
                   "give each network its own subnet"));
          break;
        }
      }
      pools.push_back({std::string(key) + ".subnet", a->subnet});
    }
  }
  if (s.workload && c.nodes > 0 && c.gpus_per_node > 0)
    validate_workload(s, *s.workload, 1LL * c.nodes * c.gpus_per_node, "workload", "cluster", gpu,
                      errs);
  if (!s.jobs.empty()) validate_jobs(s, gpu, errs);
  return errs;
}

namespace {

// The spec text with `overrides` applied to its YAML tree, and the name messages use.
Result<std::pair<std::string, std::string>> apply_overrides(
    const std::string& text, const std::string& path, const std::vector<KeyOverride>& overrides) {
  if (overrides.empty()) return std::pair{text, path};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return std::pair{text, path};  // the parser reports the syntax error with its position
  }
  // A document its aliases blow up is left to the parser, which refuses it with the reason.
  if (!root.IsMap() || expanded_nodes(root) > kMaxExpandedNodes) return std::pair{text, path};
  std::string label = path + " [";
  for (size_t i = 0; i < overrides.size(); ++i) {
    const auto& o = overrides[i];
    label += (i ? ", " : "") + o.key + "=" + o.value;
    std::vector<std::string> parts;
    for (size_t at = 0;;) {
      const size_t dot = o.key.find('.', at);
      parts.push_back(o.key.substr(at, dot == std::string::npos ? dot : dot - at));
      if (dot == std::string::npos) break;
      at = dot + 1;
    }
    // Walk with copies: yaml-cpp nodes are handles, so writes reach the tree.
    YAML::Node node = root;
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
      if (parts[k].empty() || (node[parts[k]] && !node[parts[k]].IsMap()))
        return Diagnostic::at_key(o.key, "not a key path into the spec",
                                  "use dotted keys such as cluster.nodes or fabric.technology");
      if (!node[parts[k]]) node[parts[k]] = YAML::Node(YAML::NodeType::Map);
      node.reset(node[parts[k]]);
    }
    if (parts.back().empty())
      return Diagnostic::at_key(o.key, "not a key path into the spec",
                                "use dotted keys such as cluster.nodes or fabric.technology");
    node[parts.back()] = o.value;
  }
  YAML::Emitter out;
  out << root;
  return std::pair{std::string(out.c_str()) + "\n", label + "]"};
}

}  // namespace

Result<LoadedSpec> load_spec(const std::string& path, const std::vector<KeyOverride>& overrides) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Diagnostic::in_file(path, "", "is a folder, not a spec file",
                               "name a YAML file, e.g. examples/seed-70b-1024.yaml");
  auto read = read_file_bounded(path, kMaxSpecBytes, "", "spec file");
  if (!read) return read.errors();
  auto applied = apply_overrides(*read, path, overrides);
  if (!applied) return applied.errors();
  const auto& [text, label] = *applied;
  Spec parsed;
  bool structural = false;
  auto errs = parse_into(text, label, parsed, structural);
  if (structural) return errs;
  auto cat = builtin_catalog();
  if (!cat) return cat.errors();
  LoadedSpec out{std::move(parsed), std::move(*cat)};
  const auto dir = std::filesystem::path(path).parent_path();
  for (const auto& f : out.spec.catalog_files) {
    const auto p = std::filesystem::path(f).is_absolute() ? std::filesystem::path(f) : dir / f;
    auto cf = read_file_bounded(p.string(), kMaxSpecBytes, "", "catalog file");
    if (!cf) {
      const auto& why = cf.errors().front();
      errs.push_back(out.spec.at(
          "catalog", fmt::format("catalog file '{}': {}", p.string(), why.message), why.hint));
      continue;
    }
    auto e = merge_catalog(out.catalog, *cf, p.string());
    errs.insert(errs.end(), e.begin(), e.end());
  }
  if (!out.spec.calibration_file.empty()) {
    // The profile's own errors name its file, line and key; a missing file names the spec's key.
    const std::filesystem::path cp(out.spec.calibration_file);
    const auto p = cp.is_absolute() ? cp : dir / cp;
    auto text = read_file_bounded(p.string(), kMaxSpecBytes, "", "calibration profile");
    if (!text) {
      const auto& why = text.errors().front();
      errs.push_back(out.spec.at(
          "calibration", fmt::format("calibration profile '{}': {}", p.string(), why.message),
          why.hint));
    } else if (auto prof = parse_calibration_profile(*text, p.string())) {
      out.spec.calibration = std::move(*prof);
    } else {
      errs.insert(errs.end(), prof.errors().begin(), prof.errors().end());
    }
  }
  // A trace job's files are found from the spec's folder, as the catalog and profile are; they
  // are read by the commands that replay them (verify/trace_readers), not here.
  for (auto& job : out.spec.jobs)
    for (auto& t : job.trace_paths) {
      const std::filesystem::path tp(t);
      if (!tp.is_absolute()) t = (dir / tp).string();
    }
  // Catalog checks run even after key errors, so that one run reports every problem.
  auto more = validate_spec(out.spec, out.catalog);
  errs.insert(errs.end(), more.begin(), more.end());
  if (!errs.empty()) return errs;
  return out;
}

Precision grad_reduce_precision(const WorkloadSpec& w) {
  if (w.grad_reduce) return *w.grad_reduce;
  return w.precision == Precision::kFp16 ? Precision::kFp16 : Precision::kFp32;
}

}  // namespace gf
