#include "catalog/catalog.h"

#include <gtest/gtest.h>

namespace gf {

TEST(Catalog, ShipsTheRequiredEntries) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok()) << format_diagnostics(c.errors());
  for (const char* id :
       {"a100-sxm-40g", "a100-sxm-80g", "h100-sxm", "h200-sxm", "b200", "gb200", "mi300x"})
    EXPECT_TRUE(c->gpus.count(id)) << id;
  for (const char* id : {"cx6-200g", "cx7-400g", "cx8-800g", "bf3-400g", "thor2-400g"})
    EXPECT_TRUE(c->nics.count(id)) << id;
  for (const char* id : {"qm8700", "qm9700", "q3400", "sn5600", "arista-7060x6", "arista-7800r3"})
    EXPECT_TRUE(c->switches.count(id)) << id;
  EXPECT_EQ(c->gpus.at("gb200").scaleup_domain_gpus, 72);
  EXPECT_EQ(c->switches.at("qm9700").ports_at(400), 64);
  EXPECT_EQ(c->switches.at("sn5600").ports_at(400), 128);
  EXPECT_EQ(c->switches.at("sn5600").ports_at(800), 64);
  EXPECT_EQ(c->switches.at("qm9700").ports_at(800), 0);
  EXPECT_FALSE(c->switches.at("qm9700").in_network_reduction.empty());
  EXPECT_FALSE(c->nics.at("thor2-400g").infiniband);
}

TEST(Catalog, EveryFigureHasProvenance) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  for (const auto& [id, g] : c->gpus) EXPECT_FALSE(g.node.provenance().empty()) << id;
  for (const auto& [id, n] : c->nics) EXPECT_FALSE(n.cost.provenance().empty()) << id;
  for (const auto& [id, s] : c->switches) EXPECT_FALSE(s.cost.provenance().empty()) << id;
  for (const auto& [id, p] : c->cables) EXPECT_FALSE(p.cost.provenance().empty()) << id;
}

TEST(Catalog, CablesByReach) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->cable_for(CableKind::kDac, 400, 2)->id, "dac-400g");
  EXPECT_EQ(c->cable_for(CableKind::kDac, 400, 5), nullptr);  // DAC reaches ~3 m
  EXPECT_EQ(c->cable_for(CableKind::kAoc, 400, 20)->id, "aoc-400g");
  EXPECT_EQ(c->cable_for(CableKind::kTransceiver, 400, 40, 2)->id, "xcvr-2x400g-sr8");
}

TEST(Catalog, UserFilesOverrideAndAdd) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  const std::string mine = R"(
switches:
  - id: qm9700
    technology: infiniband
    ports: 64
    port_speed: 400G
    latency_ns: 130
    price_usd: 20000
    power_w: 700
    source: our negotiated price
  - id: my-800g
    technology: ethernet
    ports: 64
    port_speed: 800G
    latency_ns: 600
    price_usd: 40000
    power_w: 1000
    estimate: true
)";
  auto errs = merge_catalog(*c, mine, "mine.yaml");
  ASSERT_TRUE(errs.empty()) << format_diagnostics(errs);
  EXPECT_EQ(c->switches.at("qm9700").cost.price_usd, 20000);
  EXPECT_TRUE(c->switches.count("my-800g"));
}

TEST(Catalog, RejectsFiguresWithoutSourceAndUnknownKeys) {
  Catalog c;
  const std::string bad = R"(nics:
  - id: mynic
    rate: 400G
    protocols: [roce, infinband]
    pirce_usd: 10
    price_usd: 100
    power_w: 20
)";
  auto errs = merge_catalog(c, bad, "bad.yaml");
  ASSERT_GE(errs.size(), 3u);
  std::string all = format_diagnostics(errs);
  EXPECT_NE(all.find("bad.yaml:5:5: error: nics.mynic.pirce_usd: unknown key (did you mean "
                     "'price_usd'?)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("'infinband' is not infiniband or roce"), std::string::npos) << all;
  EXPECT_NE(all.find("source"), std::string::npos) << all;
  EXPECT_FALSE(c.nics.count("mynic"));
}

// Integer fields are held as int: a count past 100 million is an error, where 4294967360 ports
// once wrapped around to 64.
TEST(Catalog, CountsTooLargeForAnIntAreErrors) {
  Catalog c;
  const std::string big = R"(switches:
  - id: huge
    technology: ethernet
    ports: 4294967360
    port_speed: 400G
    latency_ns: 600
    price_usd: 40000
    power_w: 1000
    estimate: true
)";
  auto errs = merge_catalog(c, big, "big.yaml");
  const std::string all = format_diagnostics(errs);
  EXPECT_NE(all.find("big.yaml:4:12: error: switches.huge.ports: 4294967360 is too large: at "
                     "most 100000000"),
            std::string::npos)
      << all;
  EXPECT_FALSE(c.switches.count("huge"));
}

}  // namespace gf
