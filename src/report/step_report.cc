#include "report/step_report.h"

#include <fmt/format.h>

#include "units/units.h"

namespace gf {
namespace {

nlohmann::json stage_memory_json(const StageMemory& m) {
  return {{"stage", m.stage},
          {"layers", m.layers},
          {"params_bytes", m.params_bytes},
          {"gradients_bytes", m.gradients_bytes},
          {"optimizer_bytes", m.optimizer_bytes},
          {"activations_bytes", m.activations_bytes},
          {"nccl_bytes", m.nccl_bytes},
          {"gathered_bytes", m.gathered_bytes},
          {"in_flight_microbatches", m.in_flight_microbatches},
          {"total_bytes", m.total_bytes()}};
}

nlohmann::json memory_json(const StepMemory& m) {
  nlohmann::json j = m.stages.empty() ? nlohmann::json::object() : stage_memory_json(m.peak());
  j["hbm_bytes"] = m.hbm_bytes;
  j["fits"] = m.fits;
  j["peak_stage"] = m.peak_stage;
  j["bytes_per_param"] = m.bytes_per_param;
  j["activation_layer_bytes"] = m.activation_layer_bytes;
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : m.stages) stages.push_back(stage_memory_json(s));
  j["stages"] = stages;
  return j;
}

nlohmann::json pipeline_json(const StepResult& r) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : r.stages)
    stages.push_back({{"layers", s.layers},
                      {"load_layers", s.load},
                      {"forward_s", s.forward_s},
                      {"backward_s", s.backward_s}});
  return {{"rule", r.pipeline.rule},
          {"embedding_counted", r.pipeline.embedding_counted},
          {"loss_counted", r.pipeline.loss_counted},
          {"critical_stage", r.critical_stage},
          {"stages", stages}};
}

nlohmann::json goodput_json(const Goodput& g) {
  nlohmann::json causes = nlohmann::json::array();
  for (const auto& c : g.causes) causes.push_back({{"cause", c.name}, {"per_hour", c.per_hour}});
  nlohmann::json j = {{"interruptions_per_hour", g.interruptions_per_hour},
                      {"mtbf_s", g.mtbf_s},
                      {"checkpoint_bytes", g.checkpoint_bytes},
                      {"checkpoint_write_s", g.checkpoint_write_s},
                      {"restart_s", g.restart_s},
                      {"checkpoint_interval_s", g.interval_s},
                      {"checkpoint_interval_source", g.interval_given ? "spec" : "daly optimum"},
                      {"young_interval_s", g.young_s},
                      {"daly_interval_s", g.daly_s},
                      {"goodput", g.goodput},
                      {"goodput_at_optimum", g.goodput_at_optimum},
                      {"progresses", g.progresses},
                      {"causes", causes},
                      {"source",
                       "Dubey et al. 2024, The Llama 3 Herd of Models, Table 5 (466 "
                       "interruptions in 54 days on 16,384 H100 GPUs), scaled"}};
  if (g.useful_s > 0 && g.progresses) {
    j["wall_time_to_train_s"] = g.wall_s;
    j["lost_s"] = g.lost_s;
    j["expected_interruptions"] = g.expected_interruptions;
  }
  return j;
}

std::string goodput_text(const StepResult& r) {
  const Goodput& g = r.goodput;
  if (g.interruptions_per_hour <= 0) return "";
  std::string top;
  for (size_t i = 0; i < g.causes.size() && i < 3; ++i)
    top += fmt::format("{}{} {:.0f}%", i ? ", " : "", g.causes[i].name,
                       100 * g.causes[i].per_hour / g.interruptions_per_hour);
  std::string s = fmt::format(
      "  interruptions: {:.3g} per hour, one every {} (Llama 3's by cause, scaled to {} GPUs): "
      "{}\n",
      g.interruptions_per_hour, units::format_seconds(g.mtbf_s), r.gpus, top);
  s += fmt::format("  checkpoint {}: written in {}, restart {}; every {} of compute ",
                   units::format_bytes(g.checkpoint_bytes),
                   units::format_seconds(g.checkpoint_write_s), units::format_seconds(g.restart_s),
                   units::format_seconds(g.interval_s));
  s += g.interval_given
           ? fmt::format("(workload.checkpoint_interval; Young's optimum {}, Daly's {})\n",
                         units::format_seconds(g.young_s), units::format_seconds(g.daly_s))
           : fmt::format("(Daly's optimum; Young's {})\n", units::format_seconds(g.young_s));
  if (!g.progresses) {
    s += "  goodput 0%: interruptions come faster than the job can checkpoint and restart\n";
    return s;
  }
  s += fmt::format("  goodput {:.1f}% (at Daly's optimum {:.1f}%)", 100 * g.goodput,
                   100 * g.goodput_at_optimum);
  if (g.useful_s > 0)
    s += fmt::format(": {} to train with ~{:.0f} interruptions, {} of it lost",
                     units::format_seconds(g.wall_s), g.expected_interruptions,
                     units::format_seconds(g.lost_s));
  return s + "\n";
}

nlohmann::json result_json(const StepResult& r) {
  nlohmann::json breakdown = nlohmann::json::array();
  breakdown.push_back({{"kind", "compute"}, {"total_s", r.compute_s}, {"exposed_s", r.compute_s}});
  if (r.bubble_s > 0)
    breakdown.push_back(
        {{"kind", "pipeline_bubble"}, {"total_s", r.bubble_s}, {"exposed_s", r.bubble_s}});
  for (const auto& c : r.comms)
    breakdown.push_back({{"kind", c.kind},
                         {"total_s", c.total_s},
                         {"exposed_s", c.exposed_s},
                         {"bytes", c.bytes},
                         {"count", c.count},
                         {"group_size", c.group_size},
                         {"busbw_gbs", c.busbw_gbs},
                         {"bottleneck", c.bottleneck},
                         {"stream", comm_stream_name(c.stream)},
                         {"concurrency_factor", c.concurrency_factor},
                         {"alone_total_s", c.alone_total_s},
                         {"alone_exposed_s", c.alone_exposed_s},
                         {"shares_links_with", c.shares_links_with}});
  if (r.overlap_slowdown_s > 0)
    breakdown.push_back({{"kind", "overlap_slowdown"},
                         {"total_s", r.overlap_slowdown_s},
                         {"exposed_s", r.overlap_slowdown_s}});
  nlohmann::json windows = nlohmann::json::array();
  for (const auto& w : r.overlap_windows) {
    nlohmann::json streams = nlohmann::json::array();
    for (const auto& s : w.streams)
      streams.push_back({{"stream", comm_stream_name(s.stream)},
                         {"kinds", s.kinds},
                         {"bytes", s.bytes},
                         {"network", s.network},
                         {"alone_s", s.alone_s},
                         {"together_s", s.together_s},
                         {"factor", s.factor}});
    windows.push_back(
        {{"window", overlap_window_name(w.kind)}, {"shared", w.shared}, {"streams", streams}});
  }
  nlohmann::json cons = nlohmann::json::array();
  for (const auto& c : r.constraints)
    cons.push_back({{"name", c.name},
                    {"limit", c.limit},
                    {"value", c.value},
                    {"pass", c.pass},
                    {"limit_given", c.given}});
  return {{"step_time_s", r.step_time_s},
          {"compute_s", r.compute_s},
          {"bubble_s", r.bubble_s},
          {"exposed_comm_s", r.exposed_comm_s},
          {"overlap_slowdown_s", r.overlap_slowdown_s},
          {"comm_fraction", r.comm_fraction},
          {"tflops_per_gpu", r.tflops_per_gpu},
          {"mfu", share_json(r.mfu)},
          {"hfu", share_json(r.hfu)},
          {"gpu_utilization", r.gpu_utilization},
          {"compute_efficiency", r.compute_efficiency},
          {"microbatches", r.microbatches},
          {"tokens_per_step", r.tokens_per_step},
          {"tokens_per_s", r.tokens_per_s},
          {"steps", r.steps},
          {"time_to_train_s", r.time_to_train_s},
          {"gpu_hour_usd", r.gpu_hour_usd},
          {"cost_to_train_usd", r.cost_to_train_usd},
          {"breakdown", breakdown},
          {"constraints", cons},
          {"mean_compute_s", r.mean_compute_s},
          {"optimizer_s", r.optimizer_s},
          {"layer_kernels",
           {{"gemm_s", r.kernels.gemm_s},
            {"attention_s", r.kernels.attention_s},
            {"memory_s", r.kernels.memory_s},
            {"forward_s", r.kernels.forward_s},
            {"backward_s", r.kernels.backward_s},
            {"recompute_s", r.kernels.recompute_s}}},
          {"pipeline", pipeline_json(r)},
          {"memory", memory_json(r.memory)},
          {"goodput", goodput_json(r.goodput)},
          {"concurrency",
           {{"enabled", r.concurrency}, {"added_s", r.concurrency_s}, {"windows", windows}}},
          {"notes", r.notes}};
}

}  // namespace

nlohmann::json share_json(const std::optional<double>& share) {
  return share ? nlohmann::json(*share) : nlohmann::json();
}

std::string share_text(const std::optional<double>& share, const std::string& unknown) {
  return share ? fmt::format("{:.1f}%", 100 * *share) : unknown;
}

std::string memory_text(const StepMemory& m) {
  if (m.stages.empty()) return "";
  const StageMemory& p = m.peak();
  auto gb = [](double bytes) { return fmt::format("{:.1f} GiB", bytes / units::kBytesPerGiB); };
  // Stages count from 1 in text, as the step's and what-if's notes name them (JSON: from 0).
  std::string s = fmt::format("  memory per GPU (stage {} of {}, {} layers):\n", p.stage + 1,
                              m.stages.size(), p.layers);
  s += fmt::format("    {:<30} {:>10}\n", "weights", gb(p.params_bytes));
  s += fmt::format("    {:<30} {:>10}\n", "gradients", gb(p.gradients_bytes));
  s += fmt::format("    {:<30} {:>10}\n", "optimizer states", gb(p.optimizer_bytes));
  if (p.gathered_bytes > 0)
    s += fmt::format("    {:<30} {:>10}\n", "ZeRO-3 gathered buckets", gb(p.gathered_bytes));
  s += fmt::format("    {:<30} {:>10}\n",
                   fmt::format("activations ({:g} microbatch{})", p.in_flight_microbatches,
                               p.in_flight_microbatches == 1 ? "" : "es"),
                   gb(p.activations_bytes));
  s += fmt::format("    {:<30} {:>10}\n", "NCCL buffers", gb(p.nccl_bytes));
  s += fmt::format("    {:<30} {:>10} of {} HBM\n", "total", gb(p.total_bytes()), gb(m.hbm_bytes));
  s += fmt::format("  {} memory: {} needed per GPU, {} of HBM{}\n", m.fits ? "PASS" : "FAIL",
                   gb(p.total_bytes()), gb(m.hbm_bytes),
                   m.fits ? "" : fmt::format(" (does not fit: {})", kMemoryRemedy));
  return s;
}

nlohmann::json step_json(const StepResult& r, const std::vector<StepScenario>& sens) {
  nlohmann::json j = result_json(r);
  nlohmann::json s = nlohmann::json::array();
  for (const auto& x : sens)
    s.push_back({{"scenario", x.label},
                 {"step_time_s", x.result.step_time_s},
                 {"comm_fraction", x.result.comm_fraction},
                 {"mfu", share_json(x.result.mfu)},
                 {"time_to_train_s", x.result.time_to_train_s}});
  j["sensitivity"] = s;
  return j;
}

std::string step_text(const std::string& name, const StepResult& r,
                      const std::vector<StepScenario>& sens) {
  std::string s = fmt::format("Training step of {} on {} GPUs ({} microbatches per step)\n", name,
                              r.gpus, r.microbatches);
  s += fmt::format("  {:<32} {:>12} {:>12} {:>10}\n", "", "total", "exposed", "busbw");
  s += fmt::format("  {:<32} {:>12} {:>12}\n", "compute", units::format_seconds(r.compute_s),
                   units::format_seconds(r.compute_s));
  if (r.kernels.total() > 0)
    s += fmt::format("    a layer, one microbatch: {} GEMMs, {} attention, {} element-wise "
                     "({:.0f}% of peak over the compute)\n",
                     units::format_seconds(r.kernels.gemm_s),
                     units::format_seconds(r.kernels.attention_s),
                     units::format_seconds(r.kernels.memory_s), 100 * r.compute_efficiency);
  if (r.bubble_s > 0)
    s += fmt::format("  {:<32} {:>12} {:>12}\n", "pipeline bubble",
                     units::format_seconds(r.bubble_s), units::format_seconds(r.bubble_s));
  for (const auto& c : r.comms) {
    s += fmt::format("  {:<32} {:>12} {:>12} {:>6.0f} GB/s  ({:g} x {} in groups of {})\n", c.kind,
                     units::format_seconds(c.total_s), units::format_seconds(c.exposed_s),
                     c.busbw_gbs, c.count, units::format_bytes(c.bytes), c.group_size);
    if (c.concurrency_factor > 1) {
      std::string with;
      for (const auto& k : c.shares_links_with) with += (with.empty() ? "" : ", ") + k;
      s += fmt::format("    {:.3g}% slower beside {} on the same links (alone: {} total, {} exposed)\n",
                       100 * (c.concurrency_factor - 1), with,
                       units::format_seconds(c.alone_total_s),
                       units::format_seconds(c.alone_exposed_s));
    }
  }
  if (r.overlap_slowdown_s > 0)
    s += fmt::format("  {:<32} {:>12} {:>12}  (overlapped collectives' SMs)\n",
                     "compute slowed by overlap", units::format_seconds(r.overlap_slowdown_s),
                     units::format_seconds(r.overlap_slowdown_s));
  s += fmt::format("  {:<32} {:>12}\n", "step", units::format_seconds(r.step_time_s));
  s += fmt::format("  communication share {:.1f}%, GPU utilisation {:.1f}%, MFU {}",
                   100 * r.comm_fraction, 100 * r.gpu_utilization, share_text(r.mfu, "unknown"));
  // TFLOP/s counts what the GPUs run, recomputation included: HFU, beside the model's MFU.
  if (r.hfu) s += fmt::format(", HFU {:.1f}%", 100 * *r.hfu);
  if (r.tflops_per_gpu > 0) s += fmt::format(", {:.0f} TFLOP/s per GPU", r.tflops_per_gpu);
  s += "\n";
  if (r.tokens_per_s > 0) s += fmt::format("  {} tokens/s\n", units::format_count(r.tokens_per_s));
  if (r.steps > 0)
    s += fmt::format("  {} steps: {} to train, {} at ${:g} per GPU-hour\n",
                     units::format_count(r.steps), units::format_seconds(r.time_to_train_s),
                     units::format_usd(r.cost_to_train_usd), r.gpu_hour_usd);
  s += goodput_text(r);
  for (const auto& c : r.constraints)
    s += fmt::format("  {} {}\n", c.pass ? "PASS" : "FAIL", constraint_text(c));
  s += memory_text(r.memory);
  for (const auto& n : r.notes) s += "  note: " + n + "\n";
  if (!sens.empty()) {
    s += "\nSensitivity (the guide's \"do we need 800G?\"):\n";
    s += fmt::format("  {:<28} {:>12} {:>12} {:>8}\n", "scenario", "step", "comm share", "MFU");
    for (const auto& x : sens)
      s += fmt::format("  {:<28} {:>12} {:>11.1f}% {:>8}\n", x.label,
                       units::format_seconds(x.result.step_time_s), 100 * x.result.comm_fraction,
                       share_text(x.result.mfu, "-"));
  }
  return s;
}

}  // namespace gf
