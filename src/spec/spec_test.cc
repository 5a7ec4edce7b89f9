#include "spec/spec.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "plan/plan.h"

namespace gf {
namespace {

const char* kGood = R"(name: t
cluster:
  gpu: h100-sxm
  nodes: 16
  nic: cx7-400g
fabric:
  oversubscription: "2:1"
workload:
  model: {params: 70B, layers: 80, hidden: 8192, heads: 64, seq_len: 4096}
  parallelism: {tp: 8, pp: 2, dp: auto}
  global_batch: 64
  compute_time: 10s
  tokens: 15T
constraints:
  budget: 50M
)";

Catalog catalog() { return *builtin_catalog(); }

// Parses and validates; returns all diagnostics as text ("" when valid).
std::string errors_of(const std::string& text) {
  auto s = parse_spec(text, "spec.yaml");
  if (!s) return format_diagnostics(s.errors());
  auto c = catalog();
  return format_diagnostics(validate_spec(*s, c));
}

}  // namespace

TEST(Spec, ParsesAndFillsDefaults) {
  auto s = parse_spec(kGood, "spec.yaml");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  auto c = catalog();
  auto errs = validate_spec(*s, c);
  ASSERT_TRUE(errs.empty()) << format_diagnostics(errs);
  EXPECT_EQ(s->cluster.gpus_per_node, 8);
  EXPECT_EQ(s->cluster.nics_per_node, 8);
  EXPECT_EQ(s->gpus(), 128);
  EXPECT_DOUBLE_EQ(s->fabric.oversubscription, 2.0);
  EXPECT_EQ(s->workload->parallelism.dp, 8);
  EXPECT_DOUBLE_EQ(s->workload->compute_time_s, 10);
  EXPECT_DOUBLE_EQ(s->workload->tokens, 15e12);
  EXPECT_DOUBLE_EQ(s->constraints.budget_usd, 50e6);
}

TEST(Spec, GpusInsteadOfNodes) {
  auto s = parse_spec("cluster: {gpu: h100-sxm, gpus: 1024, nic: cx7-400g}\n", "s.yaml");
  ASSERT_TRUE(s.ok());
  auto c = catalog();
  ASSERT_TRUE(validate_spec(*s, c).empty());
  EXPECT_EQ(s->cluster.nodes, 128);
}

// A spec refuses a catalog server whose node.nics names a NIC the catalog lacks, or NICs whose
// figures exceed the server's own.
TEST(SpecErrors, TheNicsAServersFigureIncludesAreCatalogNics) {
  const auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  const std::string gpu = R"(gpus:
  - id: mygpu
    name: My GPU
    vendor: nvidia
    memory_gb: 80
    bf16_tflops: 1000
    scaleup: {tech: nvlink4, gbs_per_gpu: 450, domain_gpus: 8, nvls: true, source: x}
    pcie_gen: 5
    gpus_per_node: 8
)";
  Catalog zero;
  const std::string count = format_diagnostics(merge_catalog(
      zero, gpu + "    node: {price_usd: 1, power_w: 1, estimate: true, nics: {cx7-400g: 0}}\n",
      "mine.yaml"));
  EXPECT_NE(count.find("gpus.mygpu.node.nics.cx7-400g"), std::string::npos) << count;
  for (const auto& [nics, want] : std::initializer_list<std::pair<std::string, std::string>>{
           {"{cx9-1600g: 8}", "names NIC 'cx9-1600g', which the catalog lacks"},
           {"{cx7-400g: 8}", "is less than the NICs node.nics says it includes"}}) {
    Catalog mine = *c;
    ASSERT_TRUE(merge_catalog(mine,
                              gpu +
                                  "    node: {price_usd: 1000, power_w: 1000, estimate: true, "
                                  "nics: " +
                                  nics + "}\n",
                              "mine.yaml")
                    .empty());
    auto s = parse_spec("cluster: {gpu: mygpu, nodes: 2, nic: cx7-400g}\n", "t.yaml");
    ASSERT_TRUE(s.ok());
    const std::string e = format_diagnostics(validate_spec(*s, mine));
    EXPECT_NE(e.find(want), std::string::npos) << e;
    EXPECT_NE(e.find("cluster.gpu"), std::string::npos) << e;
  }
}

// One test per error class: each names file:line:column and the key.
// A number is no typo of another: zero: 4 lists the stages and suggests none (it had said
// "did you mean '0'?").
TEST(SpecErrors, ANumberOutOfAClosedSetSuggestsNoNeighbour) {
  auto s = parse_spec(
      "cluster: {gpu: h100-sxm, gpus: 64, nic: cx7-400g}\nworkload:\n  model: {params: 8B}\n"
      "  parallelism: {tp: 8, zero: 4}\n",
      "s.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.errors()[0].message, "'4' is not one of 0 | 1 | 2 | 3");
  EXPECT_EQ(s.errors()[0].hint, "");
}

// A budget of $0 had read as no budget, silently; it is an error at its key.
TEST(SpecErrors, ABudgetOfNothingIsRefused) {
  auto s = parse_spec(
      "cluster: {gpu: h100-sxm, gpus: 64, nic: cx7-400g}\nconstraints: {budget: 0}\n", "s.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.errors()[0].key, "constraints.budget");
  EXPECT_EQ(s.errors()[0].line, 2);
  EXPECT_NE(s.errors()[0].message.find("more than $0"), std::string::npos);
}

TEST(SpecErrors, YamlSyntax) {
  EXPECT_NE(errors_of("cluster:\n  gpu: [h100\n").find("spec.yaml:"), std::string::npos);
  EXPECT_NE(errors_of("cluster:\n  gpu: [h100\n").find("YAML syntax error"), std::string::npos);
}

// An alias inside its own anchor makes the document a cycle, and aliases of aliases make
// exponentially many paths (found by fuzz_spec: it recursed until the stack overflowed at
// 3.9 GB; a hardening probe's 9 levels of 9 aliases, 600 bytes, took 8 GB walking every path
// to index the keys' lines): such a document is refused as it is parsed, counted in time linear
// in its text. An alias used as it is (a job's workload) stays fine.
TEST(SpecErrors, AliasesThatExpandWithoutBoundAreRefused) {
  const std::string why = "its aliases (*name) expand the document to more than";
  const auto cyc = errors_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n"
      "workload: &w\n  global_batch: 8\n  again: *w\n");
  EXPECT_NE(cyc.find(why), std::string::npos) << cyc;
  std::string laughs = "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\na0: &a0 [x, x]\n";
  for (int i = 1; i < 40; ++i)
    laughs += fmt::format("a{}: &a{} [*a{}, *a{}]\n", i, i, i - 1, i - 1);
  EXPECT_NE(errors_of(laughs).find(why), std::string::npos);
  std::string wide = "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nx:\n  a0: &a0 [";
  for (int k = 0; k < 9; ++k) wide += k ? ", lol" : "lol";
  wide += "]\n";
  for (int i = 1; i < 9; ++i) {
    wide += fmt::format("  a{}: &a{} [", i, i);
    for (int k = 0; k < 9; ++k) wide += fmt::format("{}*a{}", k ? ", " : "", i - 1);
    wide += "]\n";
  }
  EXPECT_NE(errors_of(wide).find(why), std::string::npos);
  EXPECT_EQ(errors_of("cluster: &c {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n"), "");
}

// A limit the spec does not give is gpufabric's default, and the step says so.
TEST(Spec, ConstraintsSayWhichLimitsTheSpecGave) {
  auto s = parse_spec(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nconstraints: {max_comm_fraction: 0.2}\n",
      "spec.yaml");
  ASSERT_TRUE(s.ok()) << format_diagnostics(s.errors());
  EXPECT_TRUE(s->constraints.max_comm_fraction_given);
  EXPECT_DOUBLE_EQ(s->constraints.max_comm_fraction, 0.2);
  EXPECT_FALSE(s->constraints.min_gpu_utilization_given);
  EXPECT_DOUBLE_EQ(s->constraints.min_gpu_utilization, 0.8);
}

TEST(SpecErrors, UnknownKeyWithSuggestion) {
  const auto e = errors_of("cluster:\n  gpu: h100-sxm\n  nodse: 4\n  nic: cx7-400g\n");
  EXPECT_NE(e.find("spec.yaml:3:3: error: cluster.nodse: unknown key (did you mean 'nodes'?)"),
            std::string::npos)
      << e;
}

// 010 is 8 to YAML 1.1 readers and 10 to YAML 1.2's: refused, not read as either.
TEST(SpecErrors, CountsWithALeadingZeroAreRefused) {
  const auto e = errors_of("cluster:\n  gpu: h100-sxm\n  nodes: 010\n  nic: cx7-400g\n");
  EXPECT_NE(e.find("spec.yaml:3:10: error: cluster.nodes: a number with a leading zero"),
            std::string::npos)
      << e;
  EXPECT_EQ(errors_of("cluster:\n  gpu: h100-sxm\n  nodes: 10\n  nic: cx7-400g\n"), "");
}

// A key less indented than the document's first starts a second document without any '---':
// the error says which it is.
TEST(SpecErrors, ASecondDocumentSaysWhatStartedIt) {
  EXPECT_NE(errors_of("  a: 1\nb: 2\n").find("less indented than the first one"),
            std::string::npos);
  EXPECT_NE(errors_of("a: 1\n---\nb: 2\n").find("('---' separators)"), std::string::npos);
}

TEST(SpecErrors, WrongType) {
  const auto e = errors_of("cluster:\n  gpu: h100-sxm\n  nodes: [1, 2]\n  nic: cx7-400g\n");
  EXPECT_NE(e.find("spec.yaml:3:10: error: cluster.nodes: expected a single value, found a list"),
            std::string::npos)
      << e;
}

TEST(SpecErrors, MissingUnit) {
  const auto e = errors_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: 7B}\n  "
      "compute_time: 10\n");
  EXPECT_NE(e.find("spec.yaml:4:17: error: workload.compute_time: '10' has no unit"),
            std::string::npos)
      << e;
}

TEST(SpecErrors, ZeroOrNegativeCount) {
  EXPECT_NE(errors_of("cluster: {gpu: h100-sxm, nodes: 0, nic: cx7-400g}\n")
                .find("cluster.nodes: expected a positive whole number, found '0'"),
            std::string::npos);
  EXPECT_NE(errors_of("cluster: {gpu: h100-sxm, nodes: -3, nic: cx7-400g}\n")
                .find("cluster.nodes: expected a positive whole number"),
            std::string::npos);
}

// Planes split a NIC port by equal groups of its lanes: 3 is an error at fabric.planes, not a
// search for a 133.3 Gbps switch reported at fabric.switch.
TEST(SpecErrors, PlanesAreAPowerOfTwo) {
  const std::string e =
      errors_of("cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nfabric: {planes: 3}\n");
  EXPECT_NE(e.find("spec.yaml:2:18: error: fabric.planes: expected 1, 2, 4 or 8 planes, not 3"),
            std::string::npos)
      << e;
}

TEST(SpecErrors, UnknownCatalogIdWithSuggestion) {
  const auto e = errors_of("cluster:\n  gpu: h100\n  nodes: 4\n  nic: cx7-400\n");
  EXPECT_NE(e.find("spec.yaml:2:8: error: cluster.gpu: unknown GPU 'h100' (did you mean "
                   "'h100-sxm'?)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("spec.yaml:4:8: error: cluster.nic: unknown NIC 'cx7-400' (did you mean "
                   "'cx7-400g'?)"),
            std::string::npos)
      << e;
}

TEST(SpecErrors, BadChoiceWithSuggestion) {
  const auto e =
      errors_of("cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nfabric:\n  topology: clos4\n");
  EXPECT_NE(e.find("spec.yaml:3:13: error: fabric.topology: 'clos4' is not one of"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("did you mean 'clos"), std::string::npos) << e;
}

// workload.grad_reduce is fp32 or the weights' 16-bit type (Megatron-LM's gradient buffer is
// one or the other); without it, Megatron-LM's default for the precision.
TEST(SpecErrors, GradientReduceType) {
  auto spec = [](const std::string& precision, const std::string& grad_reduce) {
    return "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: "
           "8B}\n  precision: " +
           precision + "\n" + (grad_reduce.empty() ? "" : "  grad_reduce: " + grad_reduce + "\n");
  };
  for (const auto& [precision, grad_reduce, resolved] :
       {std::tuple{"bf16", "", Precision::kFp32}, std::tuple{"fp8", "", Precision::kFp32},
        std::tuple{"fp16", "", Precision::kFp16}, std::tuple{"fp32", "", Precision::kFp32},
        std::tuple{"bf16", "bf16", Precision::kBf16}, std::tuple{"fp8", "bf16", Precision::kBf16},
        std::tuple{"fp16", "fp32", Precision::kFp32}}) {
    auto s = parse_spec(spec(precision, grad_reduce), "spec.yaml");
    ASSERT_TRUE(s.ok()) << precision << " " << grad_reduce << format_diagnostics(s.errors());
    EXPECT_EQ(grad_reduce_precision(*s->workload), resolved) << precision << " " << grad_reduce;
  }
  const auto e = errors_of(spec("bf16", "fp16"));
  EXPECT_NE(e.find("spec.yaml:5:16: error: workload.grad_reduce: bf16 training reduces its "
                   "gradients in fp32 or bf16, not fp16"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("--grad-reduce-in-bf16"), std::string::npos) << e;
  EXPECT_NE(errors_of(spec("fp32", "bf16")).find("fp32 training reduces its gradients in fp32"),
            std::string::npos);
  // The choices offered are the three a gradient buffer can be; auto is the default's.
  const auto fp8 = errors_of(spec("bf16", "fp8"));
  EXPECT_NE(fp8.find("'fp8' is not one of fp32 | bf16 | fp16"), std::string::npos) << fp8;
  EXPECT_NE(errors_of(spec("bf16", "int4")).find("'int4' is not one of"), std::string::npos);
  auto a = parse_spec(spec("fp16", "auto"), "spec.yaml");
  ASSERT_TRUE(a.ok()) << format_diagnostics(a.errors());
  EXPECT_EQ(grad_reduce_precision(*a->workload), Precision::kFp16);
  // A precision that is itself wrong is the one error: the pair is not judged on a guess.
  const auto bad = errors_of(spec("fp64", "fp16"));
  EXPECT_NE(bad.find("workload.precision: 'fp64'"), std::string::npos) << bad;
  EXPECT_EQ(bad.find("grad_reduce"), std::string::npos) << bad;
}

// An interleaved schedule without pipeline stages is refused at its key, as Megatron-LM
// refuses it (it ran silently with no effect).
TEST(SpecErrors, InterleavingNeedsPipelineStages) {
  const auto e = errors_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: 8B, "
      "layers: 32, hidden: 4096, heads: 32}\n  parallelism: {tp: 8, pp: 1}\n"
      "  virtual_pipeline: 2\n");
  EXPECT_NE(e.find("error: workload.virtual_pipeline: virtual_pipeline 2 needs pp >= 2"),
            std::string::npos)
      << e;
  EXPECT_EQ(errors_of("cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: "
                      "{params: 8B, layers: 32, hidden: 4096, heads: 32}\n  parallelism: {tp: "
                      "8, pp: 2}\n  virtual_pipeline: 2\n"),
            "");
}

// The interleaved schedule runs a multiple of pp microbatches, at least pp (Megatron-LM refuses
// others); one microbatch through 16 stages of 4 chunks had been timed at a third of the
// one-chunk schedule's step.
TEST(SpecErrors, InterleavingNeedsAMultipleOfPpMicrobatches) {
  auto spec = [](int global_batch) {
    return fmt::format(
        "cluster: {{gpu: h100-sxm, nodes: 8, nic: cx7-400g}}\nworkload:\n  model: {{params: 8B, "
        "layers: 32, hidden: 4096, heads: 32}}\n  parallelism: {{tp: 8, pp: 4, dp: 2}}\n"
        "  virtual_pipeline: 2\n  global_batch: {}\n",
        global_batch);
  };
  const auto few = errors_of(spec(2));
  EXPECT_NE(few.find("error: workload.virtual_pipeline: virtual_pipeline 2 runs 1 microbatches a "
                     "step (global_batch 2 / (micro_batch 1 x dp 2)), fewer than pp = 4"),
            std::string::npos)
      << few;
  const auto odd = errors_of(spec(12));
  EXPECT_NE(odd.find("6 microbatches a step (global_batch 12 / (micro_batch 1 x dp 2)), not a "
                     "multiple of pp = 4"),
            std::string::npos)
      << odd;
  EXPECT_NE(odd.find("set global_batch to a multiple of 8"), std::string::npos) << odd;
  EXPECT_EQ(errors_of(spec(8)), "");
  EXPECT_EQ(errors_of(spec(16)), "");
}

// Sequence parallelism scatters a sequence over the tp ranks: seq_len a multiple of tp.
TEST(SpecErrors, SequenceParallelismNeedsSeqLenAMultipleOfTp) {
  auto spec = [](int seq, const char* sp) {
    return fmt::format(
        "cluster: {{gpu: h100-sxm, nodes: 4, nic: cx7-400g}}\nworkload:\n  model: {{params: 8B, "
        "layers: 32, hidden: 4096, heads: 32, seq_len: {}}}\n  parallelism: {{tp: 8, pp: 1}}\n"
        "  sequence_parallel: {}\n",
        seq, sp);
  };
  const auto e = errors_of(spec(8191, "true"));
  EXPECT_NE(e.find("error: workload.sequence_parallel: seq_len 8191 is not a multiple of tp = 8"),
            std::string::npos)
      << e;
  EXPECT_EQ(errors_of(spec(8192, "true")), "");
  EXPECT_EQ(errors_of(spec(8191, "false")), "");
}

// Megatron-LM's splits: the key/value heads over tp when there are at least tp of them, and
// each sequence into 2 x cp chunks.
TEST(SpecErrors, KeyValueHeadsAndSequenceSplitAsMegatronSplitsThem) {
  auto spec = [](const std::string& model, const std::string& par) {
    return "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: 70B, "
           "layers: 80, hidden: 8192, heads: 64" +
           model + "}\n  parallelism: {" + par + "}\n";
  };
  const auto kv = errors_of(spec(", kv_heads: 16", "tp: 32, pp: 1"));
  EXPECT_EQ(kv, "");  // 16 < 32: replicated, one a rank
  const auto twelve = errors_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: 12B, "
      "layers: 32, hidden: 6144, heads: 48, kv_heads: 12}\n  parallelism: {tp: 8, pp: 1}\n");
  EXPECT_NE(twelve.find("error: workload.parallelism.tp: tp = 8 must divide the 12 key/value "
                        "heads (kv_heads)"),
            std::string::npos)
      << twelve;
  EXPECT_EQ(errors_of(spec(", kv_heads: 8", "tp: 8, pp: 1")), "");
  EXPECT_EQ(errors_of(spec(", kv_heads: 8", "tp: 4, pp: 1")), "");
  const auto cp = errors_of(spec(", seq_len: 8191", "tp: 8, pp: 1, cp: 2"));
  EXPECT_NE(cp.find("error: workload.parallelism.cp: seq_len 8191 is not a multiple of 2 x cp = "
                    "4"),
            std::string::npos)
      << cp;
  EXPECT_EQ(errors_of(spec(", seq_len: 8192", "tp: 8, pp: 1, cp: 2")), "");
  EXPECT_EQ(errors_of(spec(", seq_len: 8200", "tp: 8, pp: 1")), "");  // no cp: no 2 x cp rule
}

TEST(SpecErrors, NcclRelease) {
  const std::string base = "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g, nccl: ";
  auto old = parse_spec(base + "\"2.18\"}\n", "spec.yaml");
  ASSERT_TRUE(old.ok()) << format_diagnostics(old.errors());
  EXPECT_EQ(old->cluster.nccl, NcclRelease::kV2_18);
  auto plain = parse_spec("cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n", "spec.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->cluster.nccl, kNewestNccl);
  // A version as NCCL prints it runs the table of its releases: 2.19 and 2.20 the 2.20 one,
  // 2.21 and 2.22 the 2.21 one, 2.23 and 2.24 the 2.24 one, 2.25 and 2.26 the 2.26 one, 2.27 its
  // own, 2.28.0-2.28.7 the 2.28.7 one, 2.28.9 (and 2.28 alone) the 2.28 one, 2.29 its own, later
  // the newest.
  for (auto [version, table] : {std::pair{"2.17.1", NcclRelease::kV2_18},
                                {"2.19", NcclRelease::kV2_20},
                                {"2.20.5", NcclRelease::kV2_20},
                                {"2.21.5", NcclRelease::kV2_21},
                                {"2.22.3-1", NcclRelease::kV2_21},
                                {"2.23.4", NcclRelease::kV2_24},
                                {"2.24.3", NcclRelease::kV2_24},
                                {"2.25.1", NcclRelease::kV2_26},
                                {"2.26.6-1", NcclRelease::kV2_26},
                                {"2.27.7-1", NcclRelease::kV2_27},
                                {"2.28.3", NcclRelease::kV2_28_7},
                                {"2.28.7-1", NcclRelease::kV2_28_7},
                                {"2.28.7", NcclRelease::kV2_28_7},
                                {"2.28", NcclRelease::kV2_28},
                                {"2.28.9", NcclRelease::kV2_28},
                                {"2.29.7+cuda12.9", NcclRelease::kV2_29},
                                {"2.29", NcclRelease::kV2_29},
                                {"2.30.4", NcclRelease::kV2_30},
                                {"2.30", NcclRelease::kV2_30},
                                {"2.31.2", NcclRelease::kV2_30}}) {
    auto v = parse_spec(base + "\"" + version + "\"}\n", "spec.yaml");
    ASSERT_TRUE(v.ok()) << version << format_diagnostics(v.errors());
    EXPECT_EQ(v->cluster.nccl, table) << version;
  }
  const auto e = errors_of(base + "\"two\"}\n");
  EXPECT_NE(e.find("spec.yaml:1:57: error: cluster.nccl: 'two' is not an NCCL release"),
            std::string::npos)
      << e;
  EXPECT_NE(errors_of(base + "\"3.1\"}\n").find("is not an NCCL release"), std::string::npos);
}

TEST(SpecErrors, EcmpHashSeed) {
  const std::string base =
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nfabric: {ecmp_hash: {seed: ";
  auto tier = parse_spec(base + "per_tier}}\n", "spec.yaml");
  ASSERT_TRUE(tier.ok()) << format_diagnostics(tier.errors());
  EXPECT_EQ(tier->fabric.ecmp_seed, EcmpSeedPolicy::kPerTier);
  const auto e = errors_of(base + "random}}\n");
  EXPECT_NE(e.find("fabric.ecmp_hash.seed: 'random' is not one of per_switch | per_tier | same"),
            std::string::npos)
      << e;
  EXPECT_NE(errors_of("cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nfabric: {ecmp_hash: "
                      "{sead: same}}\n")
                .find("fabric.ecmp_hash.sead"),
            std::string::npos);
}

TEST(SpecErrors, MissingRequired) {
  const auto e = errors_of("cluster:\n  gpu: h100-sxm\n  nodes: 4\n");
  EXPECT_NE(e.find("cluster.nic: missing required key"), std::string::npos) << e;
  EXPECT_NE(errors_of("name: x\n").find("cluster: missing required section"), std::string::npos);
}

TEST(SpecErrors, ImpossibleCombinations) {
  // More NICs than PCIe slots.
  EXPECT_NE(errors_of("cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g, nics_per_node: 12}\n")
                .find("PCIe slots for at most 8"),
            std::string::npos);
  // A switch slower than the NIC.
  const auto slow =
      errors_of("cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nfabric: {switch: qm8700}\n");
  EXPECT_NE(slow.find("fabric.switch: switch 'qm8700' ports run at 200 Gbps, slower than the 400 "
                      "Gbps NIC port"),
            std::string::npos)
      << slow;
  // tp not dividing the GPUs.
  const auto tp = errors_of(
      "cluster: {gpu: h100-sxm, nodes: 3, nic: cx7-400g}\nworkload:\n  model: {params: 7B}\n  "
      "parallelism: {tp: 16}\n");
  EXPECT_NE(tp.find("workload.parallelism: tp*pp*cp = 16 does not divide the 24 GPUs"),
            std::string::npos)
      << tp;
  // InfiniBand on an Ethernet-only NIC.
  EXPECT_NE(errors_of("cluster: {gpu: h100-sxm, nodes: 4, nic: thor2-400g}\nfabric: "
                      "{technology: infiniband}\n")
                .find("does not speak InfiniBand"),
            std::string::npos);
}

TEST(SpecErrors, PipelineStagesThatMegatronCannotPlace) {
  const std::string head =
      "cluster: {gpu: h100-sxm, nodes: 16, nic: cx7-400g}\nworkload:\n  model: {params: 405B, "
      "layers: 126}\n  parallelism: {tp: 8, pp: 16}\n";
  EXPECT_EQ(errors_of(head), "");  // 7 + 14 x 8 + 7, the embedding and loss counted as layers
  EXPECT_EQ(errors_of(head + "  first_stage_layers: 5\n  last_stage_layers: 9\n"), "");
  EXPECT_EQ(errors_of(head + "  first_stage_layers: auto\n"), "");
  const auto uneven = errors_of(head + "  first_stage_layers: 6\n  last_stage_layers: 6\n");
  EXPECT_NE(uneven.find("spec.yaml:5:"), std::string::npos) << uneven;
  EXPECT_NE(uneven.find("workload.first_stage_layers: first_stage_layers 6 + last_stage_layers 6 "
                        "leave 114 of the 126 layers for the other 14 stages"),
            std::string::npos)
      << uneven;
  const auto vp = errors_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: 1B, "
      "layers: 7}\n  parallelism: {tp: 8, pp: 4}\n  virtual_pipeline: 2\n");
  EXPECT_NE(vp.find("workload.parallelism.pp: pp*virtual_pipeline = 8 divides neither the 7 "
                    "layers"),
            std::string::npos)
      << vp;
  const auto no_pp = errors_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: 1B, "
      "layers: 8}\n  first_stage_layers: 2\n");
  EXPECT_NE(no_pp.find("need pp >= 2"), std::string::npos) << no_pp;
}

// Rail device names: Linux interface names, one per rail port (NICs x planes), no repeats.
TEST(SpecErrors, HostDeviceNames) {
  const char* base =
      "cluster: {{gpu: h100-sxm, nodes: 4, nic: cx7-400g, nics_per_node: 2}}\n"
      "fabric: {{technology: roce, planes: {}}}\naddressing:\n  {}\n";
  EXPECT_EQ(errors_of(fmt::format(fmt::runtime(base), 1, "host_netdevs: [ens1f0np0, ens2f0np0]")),
            "");
  EXPECT_EQ(errors_of(fmt::format(fmt::runtime(base), 2, "host_netdevs: [a.1, a.2, b.1, b.2]")),
            "");
  const auto count =
      errors_of(fmt::format(fmt::runtime(base), 2, "host_rdma_devices: [mlx5_0, mlx5_1]"));
  EXPECT_NE(count.find("spec.yaml:4:22: error: addressing.host_rdma_devices: lists 2 names, but a "
                       "node has 4 rail ports (cluster.nics_per_node 2 x fabric.planes 2) (name "
                       "every rail port NIC by NIC, each NIC's planes in turn (nic0.p1, nic0.p2, "
                       "nic1.p1, ...)"),
            std::string::npos)
      << count;
  const auto bad = errors_of(
      fmt::format(fmt::runtime(base), 1, "host_netdevs: [eth0, eth0, a/b, sixteen-chars-ab]"));
  EXPECT_NE(bad.find("spec.yaml:4:24: error: addressing.host_netdevs: 'eth0' is listed twice"),
            std::string::npos)
      << bad;
  EXPECT_NE(bad.find("'a/b' is not a network interface name"), std::string::npos) << bad;
  EXPECT_NE(bad.find("'sixteen-chars-ab' is not a network interface name"), std::string::npos);
  EXPECT_NE(errors_of(fmt::format(fmt::runtime(base), 1, "host_netdevs: eth0"))
                .find("expected a list of device names"),
            std::string::npos);
}

// The management interface (NCCL's bootstrap) is a Linux interface name and not a rail; the
// Cumulus release is 5.4 or later.
TEST(SpecErrors, ManagementInterfaceAndCumulusRelease) {
  const char* base =
      "cluster: {{gpu: h100-sxm, nodes: 4, nic: cx7-400g, nics_per_node: 2}}\n"
      "fabric: {{technology: roce}}\naddressing:\n  host_netdevs: [ens1np0, ens2np0]\n  {}\n";
  auto spec = parse_spec(fmt::format(fmt::runtime(base), "mgmt_netdev: eno1"), "spec.yaml");
  ASSERT_TRUE(spec.ok()) << format_diagnostics(spec.errors());
  EXPECT_EQ(spec->addressing.mgmt_netdev, "eno1");
  EXPECT_EQ(spec->addressing.cumulus_version, "5.14");  // the default
  auto plain = parse_spec("cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n", "spec.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->addressing.mgmt_netdev, kMgmtNetdevPlaceholder);
  const auto rail = errors_of(fmt::format(fmt::runtime(base), "mgmt_netdev: ens2np0"));
  EXPECT_NE(rail.find("spec.yaml:5:16: error: addressing.mgmt_netdev: 'ens2np0' is a rail"),
            std::string::npos)
      << rail;
  EXPECT_NE(errors_of(fmt::format(fmt::runtime(base), "mgmt_netdev: a:b"))
                .find("'a:b' is not a network interface name"),
            std::string::npos);
  EXPECT_EQ(errors_of(fmt::format(fmt::runtime(base), "cumulus_version: 5.15")), "");
  EXPECT_EQ(errors_of(fmt::format(fmt::runtime(base), "cumulus_version: \"5.10\"")), "");
  for (const char* bad : {"5.3", "4.4", "6.0", "5", "5.x", "5.14.1"}) {
    const auto e =
        errors_of(fmt::format(fmt::runtime(base), std::string("cumulus_version: ") + bad));
    EXPECT_NE(e.find("addressing.cumulus_version: '" + std::string(bad) +
                     "' is not a Cumulus Linux release"),
              std::string::npos)
        << bad << ": " << e;
  }
}

TEST(SpecErrors, ReportsEveryErrorNotJustTheFirst) {
  const auto e = errors_of(
      "cluster:\n  gpu: h100-sxm\n  nodes: 4\n  nic: cx7-400g\n  colour: red\nfabric:\n  planes: "
      "0\n  topology: ring\n  oversubscription: 0.5\n");
  int lines = 0;
  for (char c : e) lines += c == '\n';
  EXPECT_GE(lines, 4) << e;
}

TEST(SpecErrors, HostileInputIsRejectedNotCrashed) {
  std::string deep(5000, '[');
  EXPECT_NE(errors_of("cluster: " + deep + "\n").find("nesting"), std::string::npos);
  EXPECT_NE(errors_of("").find("empty"), std::string::npos);
  EXPECT_NE(errors_of("- a\n- b\n").find("expected a map"), std::string::npos);
  EXPECT_NE(errors_of("cluster: {gpu: h100-sxm, nodes: 1e300, nic: cx7-400g}\n").find("nodes"),
            std::string::npos);
}

// Node and NIC counts are held as int: 4294967297 nodes once wrapped around to a 1-node plan.
TEST(SpecErrors, CountsTooLargeForAnIntAreErrors) {
  EXPECT_NE(errors_of("cluster: {gpu: h100-sxm, nodes: 4294967297, nic: cx7-400g}\n")
                .find("cluster.nodes: 4294967297 is more than the 2097152 this tool plans"),
            std::string::npos);
  const std::string e = errors_of(
      "cluster: {gpu: h100-sxm, nodes: 2, gpus_per_node: 4294967304, nic: cx7-400g}\n"
      "fabric: {scalable_unit: 4294967297}\n");
  EXPECT_NE(e.find("cluster.gpus_per_node: 4294967304 is more than the 1024 this tool plans"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("fabric.scalable_unit: 4294967297 is too large"), std::string::npos) << e;
}

// Found by fuzz_spec: yaml-cpp 0.7 never finishes a stream holding a ',' outside [ ] or { }
// (it reads an empty document there again and again, allocating each time).
TEST(SpecErrors, StrayCommaIsASyntaxErrorNotAnEndlessLoop) {
  EXPECT_EQ(errors_of(","),
            "spec.yaml:1:1: error: YAML syntax error: no value can start here "
            "(a ',' outside [ ] or { }? check indentation, colons and quotes)\n");
  const std::string e = errors_of("cluster:\n  gpu: h100-sxm\n , nodes: 16\n");
  EXPECT_NE(e.find("syntax error"), std::string::npos) << e;
  EXPECT_NE(errors_of("name: a\n---\n,\n").find("syntax error"), std::string::npos);
  // Two real documents are still told apart from the loop, at the second one's '---'.
  EXPECT_NE(errors_of(std::string(kGood) + "---\n" + kGood)
                .find("spec.yaml:16:1: error: 2 YAML "
                      "documents"),
            std::string::npos)
      << errors_of(std::string(kGood) + "---\n" + kGood);
}

}  // namespace gf

namespace gf {
// Inputs the fuzzer found; each once crashed the planner.
TEST(SpecErrors, FuzzRegressions) {
  for (const auto& e : std::filesystem::directory_iterator(std::string(GPUFABRIC_SOURCE_DIR) +
                                                           "/tests/data/fuzz-regressions")) {
    if (e.path().filename().string().rfind("spec-", 0) != 0) continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    auto s = parse_spec(ss.str(), e.path().string());
    if (!s) continue;
    auto c = catalog();
    if (!validate_spec(*s, c).empty()) continue;
    (void)make_plan(*s, c);  // must not throw
  }
}
}  // namespace gf

namespace gf {
namespace {

// Each closed set of the spec parses every name it prints, and nothing else.
TEST(SpecEnums, NamesRoundTrip) {
  for (const auto& e : kTechnologyNames) EXPECT_EQ(parse_name(kTechnologyNames, e.name), e.value);
  for (const auto& e : kTopologyKindNames)
    EXPECT_EQ(parse_name(kTopologyKindNames, e.name), e.value);
  for (const auto& e : kLoadBalancingNames)
    EXPECT_EQ(parse_name(kLoadBalancingNames, e.name), e.value);
  EXPECT_FALSE(parse_name(kTopologyKindNames, "auto"));
  EXPECT_FALSE(parse_name(kLoadBalancingNames, "multi_qp"));
  EXPECT_EQ(names_joined(kLoadBalancingNames), "ecmp | ecmp-multi-qp | adaptive | spray");
  EXPECT_STREQ(topology_kind_name(TopologyKind::kClos3), "clos3");
}

}  // namespace
}  // namespace gf

namespace gf {
TEST(SpecErrors, CheckpointIntervalNeedsAPositiveTime) {
  const std::string head =
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: 7B}\n  ";
  auto e = errors_of(head + "checkpoint_interval: 30\n");
  EXPECT_NE(e.find("spec.yaml:4:24: error: workload.checkpoint_interval: '30' has no unit"),
            std::string::npos)
      << e;
  e = errors_of(head + "checkpoint_interval: 0s\n");
  EXPECT_NE(e.find("workload.checkpoint_interval: expected a positive time"), std::string::npos)
      << e;
  e = errors_of(head + "checkpoint_intervl: 30min\n");
  EXPECT_NE(e.find("did you mean 'checkpoint_interval'"), std::string::npos) << e;
}

TEST(SpecNetworks, AbsentMeansComputeOnlyAndEmptyMeansEveryDefault) {
  const std::string base = "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n";
  auto none = parse_spec(base, "spec.yaml");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->networks.has_value());
  auto all = parse_spec(base + "networks:\n", "spec.yaml");
  ASSERT_TRUE(all.ok()) << format_diagnostics(all.errors());
  ASSERT_TRUE(all->networks.has_value());
  EXPECT_EQ(all->networks->isolation, Isolation::kPhysical);
  EXPECT_TRUE(all->networks->storage.enabled && all->networks->inband.enabled &&
              all->networks->oob.enabled);
  auto set = parse_spec(base +
                            "networks:\n  isolation: vlan\n  storage: {port_speed: 100G, "
                            "target_bandwidth: 20GB/s, vlan: 40, subnet: 10.70.0.0/16}\n"
                            "  inband: {enabled: off}\n  oob: {pdus_per_rack: 0}\n",
                        "spec.yaml");
  ASSERT_TRUE(set.ok()) << format_diagnostics(set.errors());
  EXPECT_EQ(set->networks->isolation, Isolation::kVlan);
  EXPECT_DOUBLE_EQ(set->networks->storage.port_gbps, 100);
  EXPECT_DOUBLE_EQ(set->networks->storage.target_gbs_per_node, 20);
  EXPECT_EQ(set->networks->storage.addressing.vlan, 40);
  EXPECT_FALSE(set->networks->inband.enabled);
  EXPECT_EQ(set->networks->oob.pdus_per_rack, 0);
}

// The fabric's loopback, link and host pools hand out addresses of their own: two that overlap
// would give a loopback and a link's /31 (or a host) the same address, so the spec is refused at
// the later pool's key. Unnumbered links draw nothing from theirs.
// `nodes:` with no value is no count given: an error at its line, not a plan refused later.
TEST(Spec, ACountWithoutAValueIsAnErrorAtItsLine) {
  const std::string e = errors_of("cluster:\n  gpu: h100-sxm\n  nodes:\n  nic: cx7-400g\n");
  EXPECT_NE(e.find("spec.yaml:3:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("cluster.nodes: has no value (give nodes: N or gpus: N)"), std::string::npos)
      << e;
  EXPECT_NE(errors_of("cluster: {gpu: h100-sxm, gpus: ~, nic: cx7-400g}\n").find("cluster.gpus"),
            std::string::npos);
}

TEST(SpecAddressing, OverlappingPoolsAreRefused) {
  const std::string base = "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\naddressing:\n";
  EXPECT_EQ(errors_of(base + "  loopbacks: 10.0.0.0/16\n  links: 10.1.0.0/16\n"), "");
  std::string e = errors_of(base + "  loopbacks: 10.1.0.0/16\n  links: 10.1.0.0/16\n");
  EXPECT_NE(
      e.find("spec.yaml:4:10: error: addressing.links: 10.1.0.0/16 overlaps addressing.loopbacks "
             "(10.1.0.0/16)"),
      std::string::npos)
      << e;
  e = errors_of(base + "  hosts: 10.0.0.0/8\n");
  EXPECT_NE(e.find("addressing.hosts: 10.0.0.0/8 overlaps addressing.loopbacks"), std::string::npos)
      << e;
  EXPECT_EQ(errors_of(base + "  loopbacks: 10.1.0.0/24\n  links: 10.1.0.0/16\n  unnumbered: "
                             "true\n"),
            "");
}

// A prefix with host bits set is told its network; a value that is no prefix, the form.
TEST(SpecAddressing, APrefixWithHostBitsIsToldItsNetwork) {
  const std::string base = "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\naddressing:\n";
  std::string e = errors_of(base + "  hosts: 10.128.0.5/9\n");
  EXPECT_NE(e.find("spec.yaml:3:10: error: addressing.hosts: '10.128.0.5/9' is not an IPv4 prefix "
                   "with its host bits zero (its network is 10.128.0.0/9"),
            std::string::npos)
      << e;
  e = errors_of(base + "  links: 300.1.0.0/9\n");
  EXPECT_NE(e.find("(write an IPv4 prefix, address/length with octets 0-255"), std::string::npos)
      << e;
  EXPECT_EQ(e.find("its network"), std::string::npos) << e;
}

TEST(SpecNetworks, BadKeysAreRefusedWithLineAndKey) {
  const std::string base = "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nnetworks:\n";
  auto e = errors_of(base + "  storag: {}\n");
  EXPECT_NE(e.find("spec.yaml:3:3: error: networks.storag: unknown key (did you mean 'storage'?)"),
            std::string::npos)
      << e;
  e = errors_of(base + "  isolation: vlna\n");
  EXPECT_NE(e.find("spec.yaml:3:14: error: networks.isolation"), std::string::npos) << e;
  EXPECT_NE(e.find("vlan"), std::string::npos) << e;
  e = errors_of(base + "  storage:\n    port_sped: 200G\n");
  EXPECT_NE(e.find("spec.yaml:4:5: error: networks.storage.port_sped: unknown key (did you mean "
                   "'port_speed'?)"),
            std::string::npos)
      << e;
  e = errors_of(base + "  storage: {port_speed: 200}\n");
  EXPECT_NE(e.find("networks.storage.port_speed"), std::string::npos) << e;
  e = errors_of(base + "  storage: {storage_nodes: 4, target_bandwidth: 40GB/s}\n");
  EXPECT_NE(e.find("give either storage_nodes or target_bandwidth"), std::string::npos) << e;
  e = errors_of(base + "  oob: {vlan: 4095}\n");
  EXPECT_NE(e.find("networks.oob.vlan: 4095 is not a usable VLAN ID"), std::string::npos) << e;
  e = errors_of(base + "  inband: {vlan: 4094}\n");  // the MLAG peer link's
  EXPECT_NE(e.find("networks.inband.vlan: 4094 is not a usable VLAN ID"), std::string::npos) << e;
  EXPECT_NE(e.find("4094 the MLAG peer link's"), std::string::npos) << e;
  e = errors_of(base + "  inband: {subnet: 10.32.0.1/16}\n");
  EXPECT_NE(e.find("networks.inband.subnet"), std::string::npos) << e;
  e = errors_of(base + "  storage: {nic: dual-cx7-40g}\n");
  EXPECT_NE(
      e.find("networks.storage.nic: unknown NIC 'dual-cx7-40g' (did you mean 'dual-cx7-400g'"),
      std::string::npos)
      << e;
  e = errors_of(base + "  oob: {switch: sn2210}\n");
  EXPECT_NE(e.find("networks.oob.switch: unknown switch 'sn2210'"), std::string::npos) << e;
  e = errors_of(base + "  inband: {vlan: 30}\n");
  EXPECT_NE(e.find("networks.inband.vlan: VLAN 30 is also networks.storage's"), std::string::npos)
      << e;
  e = errors_of(base + "  oob: {subnet: 10.0.0.0/8}\n");
  EXPECT_NE(e.find("networks.oob.subnet: 10.0.0.0/8 overlaps addressing.loopbacks"),
            std::string::npos)
      << e;
  e = errors_of(base + "  inband: {enabled: maybe}\n");
  EXPECT_NE(e.find("networks.inband.enabled"), std::string::npos) << e;
}

}  // namespace gf

namespace gf {
TEST(SpecErrors, ModelShapeKeysAreChecked) {
  const std::string head =
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: 7B, ";
  auto e = errors_of(head + "heads: 32, kv_heads: 5}\n");
  EXPECT_NE(e.find("workload.model.kv_heads: kv_heads must divide heads"), std::string::npos) << e;
  e = errors_of(head + "mlp: swigelu}\n");
  EXPECT_NE(e.find("workload.model.mlp"), std::string::npos) << e;
  EXPECT_NE(e.find("swiglu"), std::string::npos) << e;
  e = errors_of(head + "attention: fused}\n");
  EXPECT_NE(e.find("workload.model.attention"), std::string::npos) << e;
  e = errors_of(head + "dropout: 1.5}\n");
  EXPECT_NE(e.find("workload.model.dropout: expected a probability in [0, 1)"), std::string::npos)
      << e;
  e = errors_of(head + "expert_imbalance: 1.3}\n");
  EXPECT_NE(e.find("workload.model.expert_imbalance: a mixture-of-experts key"),
            std::string::npos)
      << e;
  e = errors_of(head + "experts: 8, top_k: 2, capacity_factor: 0.5}\n");
  EXPECT_NE(e.find("workload.model.capacity_factor: expected 1 or more"), std::string::npos) << e;
  e = errors_of(head + "ffn_hiden: 4096}\n");
  EXPECT_NE(e.find("did you mean 'ffn_hidden'"), std::string::npos) << e;
}
}  // namespace gf

namespace gf {
// A mixture-of-experts model routes each token to 1 to `experts` of them: top_k 0 (or none) ran
// as top_k 1 in the step's GEMMs and as 0 in its active parameters. A run's length is bounded as
// estimate --steps is (kMaxSpecSteps): steps: 1e30 printed 1e26 days to train.
TEST(SpecErrors, TopKAndTheRunsLengthAreBounded) {
  const std::string head =
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: 7B, ";
  auto e = errors_of(head + "experts: 8, top_k: 0}\n");
  EXPECT_NE(e.find("spec.yaml:3:42: error: workload.model.top_k: top_k 0 routes a token to no "
                   "expert: a mixture-of-experts model (experts: 8) routes each token to 1 to 8 "
                   "of them (give the experts each token is routed to, e.g. top_k: 2"),
            std::string::npos)
      << e;
  e = errors_of(head + "experts: 8}\n");
  EXPECT_NE(e.find("workload.model.top_k: missing required key: a mixture-of-experts model "
                   "(experts: 8)"),
            std::string::npos)
      << e;
  EXPECT_EQ(errors_of(head + "experts: 8, top_k: 2}\n"), "");
  EXPECT_EQ(errors_of(head + "experts: 0, top_k: 0}\n"), "");  // a dense model, as README has it
  // The README's reference writes the rest at their defaults: auto, and the MoE keys neutral.
  EXPECT_EQ(errors_of(head + "experts: 0, top_k: 0, ffn_hidden: auto, kv_heads: auto, "
                             "expert_imbalance: 1, capacity_factor: auto}\n"),
            "");
  e = errors_of(head + "experts: 0, top_k: 0, expert_imbalance: 1.3}\n");
  EXPECT_NE(e.find("expert_imbalance: a mixture-of-experts key: it needs experts > 0"),
            std::string::npos)
      << e;
  e = errors_of(head + "experts: 0, top_k: 0, capacity_factor: 1.25}\n");
  EXPECT_NE(e.find("capacity_factor: a mixture-of-experts key: it needs experts > 0"),
            std::string::npos)
      << e;
  EXPECT_EQ(errors_of(head + "top_k: 0}\n"), "");

  const std::string run =
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nworkload:\n  model: {params: 7B}\n";
  e = errors_of(run + "  steps: 1e30\n");
  EXPECT_NE(e.find("spec.yaml:4:10: error: workload.steps: expected at most 1e+12 steps, found "
                   "1e+30"),
            std::string::npos)
      << e;
  EXPECT_EQ(errors_of(run + "  steps: 1e12\n"), "");
  e = errors_of(run + "  tokens: 1e30\n");
  EXPECT_NE(e.find("workload.tokens: expected at most 1e+18 tokens, found 1e+30"),
            std::string::npos)
      << e;
  EXPECT_EQ(errors_of(run + "  tokens: 15T\n"), "");
}
}  // namespace gf
