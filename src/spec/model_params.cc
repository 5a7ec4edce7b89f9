#include "spec/model_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "units/units.h"

namespace gf {

double ffn_width(const ModelSpec& m) {
  if (m.ffn_hidden > 0) return m.ffn_hidden;
  if (m.mlp == MlpKind::kSwiglu) return std::ceil(8.0 * m.hidden / 3 / 256) * 256;
  return 4.0 * m.hidden;
}

namespace {
// One MLP's weights: two matrices around GeLU, three for SwiGLU's gate.
double mlp_params(const ModelSpec& m) {
  return (m.mlp == MlpKind::kSwiglu ? 3 : 2) * static_cast<double>(m.hidden) * ffn_width(m);
}
}  // namespace

double expert_mlp_params(const ModelSpec& m) {
  if (m.experts <= 0 || m.layers <= 0 || m.hidden <= 0) return 0;
  return m.experts * mlp_params(m) * m.layers;
}

std::optional<ShapeParams> shape_params(const ModelSpec& m) {
  if (m.layers <= 0 || m.hidden <= 0) return std::nullopt;
  const double h = m.hidden;
  // Attention: Q and the output projection are h x h; K and V are h x (kv_heads x head_dim),
  // fewer under grouped-query attention. Heads default as the step model's (128 wide).
  const double heads = m.heads > 0 ? m.heads : std::max(1.0, h / 128);
  const double kv_heads = m.kv_heads > 0 ? m.kv_heads : heads;
  const double attention = 2 * h * h + 2 * h * (kv_heads * h / heads);
  // The MLP; an MoE layer has one per expert and a router of h x experts.
  const double mlp = mlp_params(m);
  const double moe = m.experts > 0 ? m.experts * mlp + h * m.experts : mlp;
  ShapeParams p;
  p.layers = m.layers * (attention + moe);
  p.embedding = static_cast<double>(m.vocab) * h;
  return p;
}

std::string params_shape_mismatch(const ModelSpec& m) {
  const auto shape = shape_params(m);
  if (!shape || m.params <= 0) return "";
  // Without model.vocab the embeddings are unknown: from none to the largest published.
  const double low = shape->tied();
  const double high =
      m.vocab > 0 ? shape->untied() : shape->layers + 2 * kLargestPublishedVocab * m.hidden;
  if (m.params * kParamsShapeTolerance >= low && m.params <= high * kParamsShapeTolerance)
    return "";
  std::string what = fmt::format("{} layers of hidden {}", m.layers, m.hidden);
  if (m.experts > 0) what += fmt::format(", {} experts", m.experts);
  const std::string implied =
      m.vocab > 0
          ? (shape->embedding > 0 && units::format_count(low) != units::format_count(high)
                 ? fmt::format("{} to {} (output layer tied to the embedding or not)",
                               units::format_count(low), units::format_count(high))
                 : units::format_count(low))
          : fmt::format("{} without the embeddings (no model.vocab)", units::format_count(low));
  return fmt::format(
      "{} parameters, but the model's shape ({}, MLP {} wide) implies {}: more than {:g}x "
      "apart",
      units::format_count(m.params), what, ffn_width(m), implied, kParamsShapeTolerance);
}

}  // namespace gf
