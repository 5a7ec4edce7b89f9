#include "spec/model_params.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gf {
namespace {

ModelSpec model(double params, int layers, int hidden, int heads, int kv_heads, int ffn,
                MlpKind mlp, int vocab, int experts = 0, int top_k = 0) {
  ModelSpec m;
  m.params = params;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.mlp = mlp;
  m.vocab = vocab;
  m.experts = experts;
  m.top_k = top_k;
  return m;
}

// The published models' configs (config.json of each release) and their announced sizes.
const struct Published {
  const char* name;
  ModelSpec m;
  bool tied;
} kPublished[] = {
    {"Llama 3 8B", model(8.03e9, 32, 4096, 32, 8, 14336, MlpKind::kSwiglu, 128256), false},
    {"Llama 3 70B", model(70.6e9, 80, 8192, 64, 8, 28672, MlpKind::kSwiglu, 128256), false},
    {"Llama 3.1 405B", model(405e9, 126, 16384, 128, 8, 53248, MlpKind::kSwiglu, 128256), false},
    {"Llama 3.2 1B", model(1.24e9, 16, 2048, 32, 8, 8192, MlpKind::kSwiglu, 128256), true},
    {"Mixtral 8x7B", model(46.7e9, 32, 4096, 32, 8, 14336, MlpKind::kSwiglu, 32000, 8, 2), false},
    {"Mixtral 8x22B", model(141e9, 56, 6144, 48, 8, 16384, MlpKind::kSwiglu, 32768, 8, 2), false},
    {"GPT-3 175B", model(175e9, 96, 12288, 96, 0, 0, MlpKind::kGelu, 50257), true},
};

}  // namespace

// The shape's count is the published one within 2 %, with the output layer tied as released.
TEST(ModelParams, PublishedModelsCountAsAnnounced) {
  for (const auto& p : kPublished) {
    const auto s = shape_params(p.m);
    ASSERT_TRUE(s.has_value()) << p.name;
    const double implied = p.tied ? s->tied() : s->untied();
    EXPECT_NEAR(implied / p.m.params, 1, 0.02) << p.name << ": " << implied;
    EXPECT_EQ(params_shape_mismatch(p.m), "") << p.name;
  }
}

// The trial's spec: a 7B count on Llama 3 70B's shape (as examples/seed-70b-1024.yaml gives it)
// names both figures; so does an MoE's active count given for its total, and a count far above.
TEST(ModelParams, ACountTheShapeDoesNotBearOutNamesBoth) {
  ModelSpec m = model(7e9, 80, 8192, 64, 0, 0, MlpKind::kGelu, 128256);
  const std::string why = params_shape_mismatch(m);
  EXPECT_NE(why.find("7B parameters, but the model's shape (80 layers of hidden 8192, MLP 32768 "
                     "wide) implies 65.5B to 66.5B"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("more than 1.5x apart"), std::string::npos) << why;
  m.params = 700e9;
  EXPECT_NE(params_shape_mismatch(m), "");
  ModelSpec active = kPublished[5].m;  // Mixtral 8x22B, 39B active of 141B
  active.params = 39e9;
  EXPECT_NE(params_shape_mismatch(active).find("8 experts"), std::string::npos);
  // Without a vocabulary the embeddings may be anything up to the largest published one's.
  ModelSpec no_vocab = model(70e9, 80, 8192, 64, 0, 0, MlpKind::kGelu, 0);
  EXPECT_EQ(params_shape_mismatch(no_vocab), "");
  no_vocab.params = 7e9;
  EXPECT_NE(params_shape_mismatch(no_vocab).find("without the embeddings"), std::string::npos);
  // No shape, nothing to hold the count to.
  EXPECT_EQ(params_shape_mismatch(model(7e9, 0, 0, 0, 0, 0, MlpKind::kGelu, 0)), "");
}

// The spec refuses it at the key, with the file and line, for the workload and for a job's.
TEST(ModelParams, TheSpecRefusesItAtTheKey) {
  const std::string yaml =
      "cluster: {gpu: h100-sxm, nodes: 2, nic: cx7-400g}\n"
      "workload:\n"
      "  model: {params: 7B, layers: 80, hidden: 8192, heads: 64, seq_len: 4096, vocab: 128256}\n"
      "  parallelism: {tp: 8}\n";
  auto s = parse_spec(yaml, "t.yaml");
  ASSERT_FALSE(s.ok());
  const Diagnostic& d = s.errors()[0];
  EXPECT_EQ(d.file, "t.yaml");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.key, "workload.model.params");
  EXPECT_NE(d.message.find("65.5B to 66.5B"), std::string::npos) << d.message;
  EXPECT_NE(d.hint.find("total parameter count"), std::string::npos) << d.hint;
  auto job = parse_spec(
      "cluster: {gpu: h100-sxm, nodes: 2, nic: cx7-400g}\n"
      "jobs:\n  - name: a\n    nodes: 1\n    workload:\n"
      "      model: {params: 70B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}\n",
      "t.yaml");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.errors()[0].key, "jobs[0].workload.model.params");
  EXPECT_EQ(job.errors()[0].line, 6);
}

// Every example's model (and every job's) agrees with its shape: the tolerance leaves them room.
TEST(ModelParams, EveryExampleAgreesWithItsShape) {
  int specs = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(GPUFABRIC_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".yaml") continue;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    auto s = parse_spec(text.str(), e.path().string());
    EXPECT_TRUE(s.ok()) << format_diagnostics(s.errors());
    ++specs;
  }
  EXPECT_GE(specs, 10);
}

}  // namespace gf
