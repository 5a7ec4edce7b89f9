#include "common/diag.h"

#include <gtest/gtest.h>

namespace gf {

TEST(Diag, FormatsLikeACompiler) {
  const Diagnostic d = Diagnostic::at("spec.yaml", 4, 3, "cluster.nic", "unknown NIC 'cx7'",
                                      "did you mean 'cx7-400g'?");
  EXPECT_EQ(format_diagnostic(d),
            "spec.yaml:4:3: error: cluster.nic: unknown NIC 'cx7' (did you mean 'cx7-400g'?)");
  EXPECT_EQ(format_diagnostic(Diagnostic::flag("--gpus", "must be positive")),
            "error: --gpus: must be positive");
}

TEST(Diag, SuggestsNearMisses) {
  EXPECT_EQ(closest_match("nodse", {"nodes", "gpus", "nic"}), "nodes");
  EXPECT_EQ(closest_match("h100", {"h100-sxm", "h200-sxm", "a100-sxm-80g"}), "h100-sxm");
  EXPECT_EQ(closest_match("qm9600", {"qm9700", "qm8700", "sn5600"}), "qm9700");
  EXPECT_EQ(closest_match("banana", {"nodes", "gpus"}), "");
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
}

// A name that is among the candidates was rejected for its place, not misspelt: the hint never
// offers it back ("unknown device 'node001' (did you mean 'node001'?)"), nor a neighbour one
// edit away ("spine02" for a known "spine01").
TEST(Diag, NeverSuggestsWhatWasTyped) {
  for (const auto& [word, candidates] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"node001", {"node001", "su01-r0-leaf"}},
           {"spine01", {"spine02", "spine01"}},
           {"spine01", {"spine01"}}}) {
    const std::string hint = did_you_mean(word, candidates);
    EXPECT_EQ(hint.find("did you mean"), std::string::npos) << hint;
    EXPECT_EQ(hint, "'" + word + "' is a known name, but not one this place takes");
  }
  EXPECT_EQ(did_you_mean("spine1", {"spine01", "spine02"}), "did you mean 'spine01'?");
  EXPECT_EQ(did_you_mean("Spine01", {"spine01"}), "did you mean 'spine01'?");
  EXPECT_EQ(did_you_mean("banana", {"spine01"}), "");
}

TEST(Diag, ResultHoldsValueOrErrors) {
  Result<int> ok = 3;
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  Result<int> bad = Diagnostic::at("f", 1, 2, "k", "m");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors().size(), 1u);
}

}  // namespace gf
