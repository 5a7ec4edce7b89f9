#include "spec/pipeline.h"

#include <fmt/format.h>

#include <algorithm>

namespace gf {

// The rules follow get_num_layers_to_build() in Megatron-LM core_v0.15.0,
// megatron/core/transformer/transformer_block.py, and the fields it reads in
// megatron/core/transformer/transformer_config.py (num_layers_in_first_pipeline_stage,
// num_layers_in_last_pipeline_stage, account_for_embedding_in_pipeline_split,
// account_for_loss_in_pipeline_split).
Result<PipelineLayout> pipeline_layout(int layers, int pp, int vp, int first, int last) {
  PipelineLayout out;
  if (pp <= 1 || layers <= 0) {
    out.layers.assign(std::max(1, pp), layers > 0 ? layers : 0);
    out.rule = layers > 0 ? "one stage" : "layers not given: stages taken as equal";
    return out;
  }
  const int chunks = pp * vp;
  const std::string hint =
      "set workload.first_stage_layers and last_stage_layers (Megatron-LM's "
      "--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers), or change pp "
      "or virtual_pipeline";
  if (first > 0 || last > 0) {
    // Uneven first/last stages: the rest is split evenly over the other stages, which must
    // divide it; with interleaving every stage's layers must divide into its chunks.
    const int given = (first > 0) + (last > 0);
    const int rest = layers - first - last;
    const int left = pp - given;
    const std::string key =
        first > 0 ? "workload.first_stage_layers" : "workload.last_stage_layers";
    if (rest < 0 || (left == 0 && rest != 0) || (left > 0 && (rest < left || rest % left != 0)))
      return Diagnostic::at_key(
          key,
          fmt::format("first_stage_layers {} + last_stage_layers {} leave {} of the {} layers for "
                      "the other {} stages, which must split them evenly",
                      first, last, rest, layers, left),
          "Megatron-LM asserts the same (transformer_block.py, get_num_layers_to_build)");
    const int middle = left > 0 ? rest / left : 0;
    out.layers.assign(pp, middle);
    if (first > 0) out.layers.front() = first;
    if (last > 0) out.layers.back() = last;
    for (int n : out.layers)
      if (vp > 1 && n % vp != 0)
        return Diagnostic::at_key(key,
                                  fmt::format("a stage of {} layers does not split into "
                                              "virtual_pipeline = {} chunks",
                                              n, vp),
                                  hint);
    out.rule = fmt::format("uneven: {} on the first stage, {} on the last (spec)",
                           out.layers.front(), out.layers.back());
    return out;
  }
  if (layers % chunks == 0) {
    out.layers.assign(pp, layers / pp);
    out.rule = "even";
    return out;
  }
  // Megatron-LM's account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split:
  // the embedding (first stage) and the output layer with the loss (last stage) each count as a
  // layer, so the first and last stages build one transformer layer fewer. Llama 3 405B ran
  // this way: 126 layers on 16 stages of 8, less one on the first and the last ("The Llama 3
  // Herd of Models", 2024, §3.3.2).
  if ((layers + 2) % chunks == 0 && (layers + 2) / chunks >= 2) {
    out.layers.assign(pp, (layers + 2) / pp);
    out.layers.front() -= 1;
    out.layers.back() -= 1;
    out.embedding_counted = out.loss_counted = true;
    out.rule = "embedding and loss counted as layers: one layer fewer on the first and last stage";
    return out;
  }
  // Only one of them fits: the loss, as the output layer (a hidden x vocab GEMM) is the heavier.
  if ((layers + 1) % chunks == 0 && (layers + 1) / chunks >= 2) {
    out.layers.assign(pp, (layers + 1) / pp);
    out.layers.back() -= 1;
    out.loss_counted = true;
    out.rule = "loss counted as a layer: one layer fewer on the last stage";
    return out;
  }
  // Otherwise uneven first and last stages as Megatron-LM allows them, chosen so that the
  // largest stage is as small as it can be; the last stage (output layer) gets the smaller half.
  if (vp == 1) {
    int best_middle = 0, best_max = layers + 1;
    for (int middle = 1; pp > 2 && middle * (pp - 2) <= layers - 2; ++middle) {
      const int rest = layers - middle * (pp - 2);
      const int biggest = std::max(middle, (rest + 1) / 2);
      if (biggest < best_max) best_max = biggest, best_middle = middle;
    }
    const int rest = layers - best_middle * (pp - 2);
    if (rest >= 2 && layers >= pp) {
      out.layers.assign(pp, best_middle);
      out.layers.front() = (rest + 1) / 2;
      out.layers.back() = rest / 2;
      out.rule = fmt::format("uneven: {} on the first stage, {} on the last, {} on the others",
                             out.layers.front(), out.layers.back(), best_middle);
      return out;
    }
  }
  return Diagnostic::at_key(
      "workload.parallelism.pp",
      fmt::format("pp*virtual_pipeline = {} divides neither the {} layers nor {} or {} (the "
                  "embedding and the loss counted as layers)",
                  chunks, layers, layers + 1, layers + 2),
      hint);
}

}  // namespace gf
