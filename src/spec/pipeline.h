// How a model's transformer layers are split over the pipeline stages, as Megatron-LM places
// them: evenly, with uneven first and last stages, or with the embedding and the loss counted
// as layers.
#pragma once

#include <string>
#include <vector>

#include "common/diag.h"

namespace gf {

/// The layers of each pipeline rank and the rule that placed them.
struct PipelineLayout {
  std::vector<int> layers;         ///< transformer layers on each pipeline rank, first to last
  bool embedding_counted = false;  ///< the embedding took one layer's place on the first stage
  bool loss_counted = false;       ///< the output layer and loss took one on the last stage
  std::string rule;                ///< how the split was chosen, in words
};

/// Splits `layers` over `pp` ranks of `virtual_pipeline` chunks each. `first` and `last` (0:
/// not set) are Megatron-LM's --decoder-first/last-pipeline-num-layers. Errors name the spec
/// key to change (workload.first_stage_layers, workload.parallelism.pp).
Result<PipelineLayout> pipeline_layout(int layers, int pp, int virtual_pipeline, int first = 0,
                                       int last = 0);

}  // namespace gf
