// The parameters a transformer's shape implies, to hold a spec's model.params to its shape.
#pragma once

#include <optional>
#include <string>

#include "spec/spec.h"

namespace gf {

/// The MLP's inner width of `m`: model.ffn_hidden, else 4h (GeLU), or 8h/3 rounded up to a
/// multiple of 256 for SwiGLU (Llama's multiple_of; Megatron-LM's --swiglu default,
/// int(4h x 2/3 / 64) x 64, is within 1 %).
double ffn_width(const ModelSpec& m);

/// The parameters of a model's shape: its transformer layers' (attention with its key/value
/// heads, the MLP of every expert, the router), and one vocab x hidden embedding table, which
/// the output layer shares (tied: GPT-2, Gemma) or repeats (untied: Llama 3, Mixtral). Biases and
/// norms (under 0.1 % of any model here) are left out.
struct ShapeParams {
  double layers = 0;     ///< every transformer layer's weights
  double embedding = 0;  ///< one vocab x hidden table; 0 without model.vocab
  double tied() const { return layers + embedding; }
  double untied() const { return layers + 2 * embedding; }
};
/// nullopt unless the spec gives model.layers and model.hidden.
std::optional<ShapeParams> shape_params(const ModelSpec& m);

/// The parameters of every expert's MLP over the model's layers (experts x the MLP's matrices,
/// two for GeLU, three for SwiGLU, h x ffn_width each, x layers): what expert parallelism shards
/// and only top_k of which run per token; 0 for a dense model or without a shape.
double expert_mlp_params(const ModelSpec& m);

/// How far model.params may be from what its shape implies, as a factor either way, before the
/// spec is refused. Published configs land within 2 % of the tied-untied range (Llama 3 8B,
/// 70B, 405B: 8.03B, 70.6B, 405.9B; Mixtral 8x7B, 8x22B: 46.7B, 140.6B; GPT-3 175B: 174.6B);
/// the spec's defaults move a shape further: a Llama shape given without mlp and ffn_hidden
/// (GeLU's 4h, as examples/seed-70b-1024.yaml and roce-16k.yaml) is within 6 %, one given
/// mlp: swiglu without ffn_hidden (8h/3 for Llama 3 70B's 3.5h) 1.23x low (57.5B for 70.6B).
/// 1.5 clears those, and still refuses a 7B count on a 70B shape (9.4x) or an MoE's active
/// count for its total (Mixtral 8x22B's 39B of 141B: 3.6x).
constexpr double kParamsShapeTolerance = 1.5;

/// The largest vocabulary a published model uses, tokens, for the embeddings of a shape without
/// model.vocab: Gemma 3's 262,144 (Gemma 3 technical report, 2025: "262k entries").
constexpr double kLargestPublishedVocab = 262144;

/// Why `m.params` disagrees with the parameters its shape implies (more than
/// kParamsShapeTolerance outside the tied-untied range), naming both figures; "" when it agrees
/// or the spec gives no shape to hold it to.
std::string params_shape_mismatch(const ModelSpec& m);

}  // namespace gf
