#include "catalog/catalog.h"

#include <gtest/gtest.h>

#include <tuple>

namespace gf {
namespace {
// A user's GPU entry without its node: figures (each test adds its own).
const std::string kMyGpu = R"(gpus:
  - id: mygpu
    memory_gb: 80
    bf16_tflops: 900
    scaleup: {tech: nvlink4, gbs_per_gpu: 450, domain_gpus: 8}
    pcie_gen: 5
    gpus_per_node: 8
)";
}  // namespace

TEST(Catalog, ShipsTheRequiredEntries) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok()) << format_diagnostics(c.errors());
  for (const char* id : {"a100-sxm-40g", "a100-sxm-80g", "h100-sxm", "h200-sxm", "h800-sxm", "h20",
                         "b200", "gb200", "mi300x"})
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

// Where a GPU reaches its NIC: HGX boards through the PCIe switch the two share, Grace Blackwell
// through the CPU across NVLink-C2C; a closed set, and a C2C NIC needs its source.
TEST(Catalog, WhereTheGpuReachesItsNic) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->gpus.at("gb200").nic_attach, NicAttach::kCpuC2c);
  EXPECT_FALSE(c->gpus.at("gb200").nic_attach_source.empty());
  EXPECT_EQ(c->gpus.at("b200").nic_attach, NicAttach::kGpuSwitch);
  EXPECT_EQ(c->gpus.at("h100-sxm").nic_attach, NicAttach::kGpuSwitch);
  // GB300's ConnectX-8 NICs sit on the tray's board with the GPUs, not on Grace; its rack is
  // one NVLink domain of 72, as GB200's.
  const GpuModel& gb300 = c->gpus.at("gb300");
  EXPECT_EQ(gb300.nic_attach, NicAttach::kGpuSwitch);
  EXPECT_EQ(gb300.scaleup_domain_gpus, 72);
  EXPECT_EQ(gb300.gpus_per_node, 4);
  EXPECT_EQ(gb300.pcie_gen, 6);
  // Both Grace Blackwell trays run on Grace (NCCL's cpuArch ARM); HGX boards on x86.
  EXPECT_EQ(gb300.host_cpu, HostCpu::kGrace);
  EXPECT_EQ(c->gpus.at("gb200").host_cpu, HostCpu::kGrace);
  EXPECT_FALSE(c->gpus.at("gb200").host_cpu_source.empty());
  EXPECT_EQ(c->gpus.at("b200").host_cpu, HostCpu::kX86);
  const std::string gpu = kMyGpu + "    node: {price_usd: 1, power_w: 1, estimate: true}\n";
  for (const auto& [line, want] : std::initializer_list<std::pair<std::string, std::string>>{
           {"    nic_attach: cpu\n",
            "mine.yaml:9:17: error: gpus.mygpu.nic_attach: 'cpu' is not one of gpu-switch | cpu-c2c "
            "(did you mean 'cpu-c2c'?)"},
           {"    nic_attach: cpu-c2c\n",
            "gpus.mygpu.nic_attach: a NIC reached other than over the GPU's PCIe switch needs a "
            "'nic_attach_source:'"},
           {"    host_cpu: arm\n",
            "mine.yaml:9:15: error: gpus.mygpu.host_cpu: 'arm' is not one of x86 | grace"},
           {"    host_cpu: grace\n",
            "gpus.mygpu.host_cpu: a host CPU other than x86 needs a 'host_cpu_source:'"}}) {
    Catalog mine;
    const std::string all = format_diagnostics(merge_catalog(mine, gpu + line, "mine.yaml"));
    EXPECT_NE(all.find(want), std::string::npos) << all;
    EXPECT_FALSE(mine.gpus.count("mygpu")) << line;
  }
  Catalog ok;
  const auto errs = merge_catalog(
      ok, gpu + "    nic_attach: cpu-c2c\n    nic_attach_source: our board's manual\n", "ok.yaml");
  ASSERT_TRUE(errs.empty()) << format_diagnostics(errs);
  EXPECT_EQ(ok.gpus.at("mygpu").nic_attach, NicAttach::kCpuC2c);
}

// A GPU's architecture picks NCCL's per-architecture rows: the NVLink generation tells it, or
// the catalog's `arch`; PCIe cards have no NVLink to tell it by and must name it, and have no
// NVLink SHARP.
// A GPU entry with no scale-up yet: the tests add theirs.
constexpr const char* kMinimalGpu = R"(gpus:
  - id: mygpu
    memory_gb: 80
    bf16_tflops: 900
    pcie_gen: 5
    gpus_per_node: 8
    node: {price_usd: 1, power_w: 1, estimate: true}
)";

TEST(Catalog, TheGpuArchitecture) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->gpus.at("a100-sxm-80g").arch, GpuArch::kAmpere);
  EXPECT_EQ(c->gpus.at("h100-sxm").arch, GpuArch::kHopper);
  EXPECT_EQ(c->gpus.at("b200").arch, GpuArch::kBlackwell);
  const GpuModel& card = c->gpus.at("a100-pcie-40g");
  EXPECT_EQ(card.scaleup_tech, ScaleUpTech::kPcie);
  EXPECT_EQ(card.arch, GpuArch::kAmpere);
  EXPECT_FALSE(card.nvls);
  const std::string gpu = kMinimalGpu;
  for (const auto& [lines, want] : std::initializer_list<std::pair<std::string, std::string>>{
           {"    scaleup: {tech: pcie, gbs_per_gpu: 48, domain_gpus: 8}\n",
            "gpus.mygpu.arch: a GPU on 'pcie' scale-up needs 'arch: ampere', 'hopper' or "
            "'blackwell'"},
           {"    scaleup: {tech: pcie, gbs_per_gpu: 48, domain_gpus: 8, nvls: true}\n"
            "    arch: hopper\n",
            "gpus.mygpu.scaleup.nvls: NVLink SHARP needs NVLink: a 'pcie' GPU has none"},
           {"    scaleup: {tech: nvlink4, gbs_per_gpu: 450, domain_gpus: 8}\n    arch: volta\n",
            "gpus.mygpu.arch: 'volta' is not one of ampere | hopper | blackwell"}}) {
    Catalog mine;
    const std::string all = format_diagnostics(merge_catalog(mine, gpu + lines, "mine.yaml"));
    EXPECT_NE(all.find(want), std::string::npos) << all;
    EXPECT_FALSE(mine.gpus.count("mygpu")) << lines;
  }
  Catalog ok;
  const auto errs = merge_catalog(
      ok, gpu + "    scaleup: {tech: pcie, gbs_per_gpu: 48, domain_gpus: 8}\n    arch: hopper\n",
      "ok.yaml");
  ASSERT_TRUE(errs.empty()) << format_diagnostics(errs);
  EXPECT_EQ(ok.gpus.at("mygpu").arch, GpuArch::kHopper);
  EXPECT_EQ(ok.gpus.at("mygpu").scaleup_tech, ScaleUpTech::kPcie);
}

// A transceiver's or fibre's medium is a closed set (mmf, smf), and only those parts have one.
TEST(Catalog, TheFibreMediumOfOptics) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->cables.at("xcvr-800g-dr8").media, FibreMedia::kSingleMode);
  EXPECT_EQ(c->cables.at("xcvr-2x400g-sr8").media, FibreMedia::kMultimode);
  EXPECT_EQ(c->cables.at("fibre-smf-mpo").media, FibreMedia::kSingleMode);
  EXPECT_EQ(c->fibre_for(20, FibreMedia::kSingleMode)->id, "fibre-smf-mpo");
  EXPECT_EQ(c->fibre_for(20)->id, "fibre-mmf-mpo");
  for (const auto& [line, want] : std::initializer_list<std::pair<std::string, std::string>>{
           {"  - {id: x, kind: transceiver, media: om4, speed: 400G, max_length_m: 50, "
            "price_usd: 1, power_w: 1, estimate: true}\n",
            "'om4' is not one of mmf | smf"},
           {"  - {id: x, kind: dac, media: smf, speed: 400G, max_length_m: 3, price_usd: 1, "
            "power_w: 1, estimate: true}\n",
            "cables.x.media: only transceivers and fibres run over a fibre medium"}}) {
    Catalog mine;
    const std::string all =
        format_diagnostics(merge_catalog(mine, "cables:\n" + line, "mine.yaml"));
    EXPECT_NE(all.find(want), std::string::npos) << all;
  }
}

// H100's 4-GPU board links its GPUs directly (no NVSwitch); the key names such a board, smaller
// than the domain, and only where the domain is a server's own.
TEST(Catalog, ADirectLinkBoardIsSmallerThanTheDomain) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->gpus.at("h100-sxm").scaleup_direct_board_gpus, 4);
  EXPECT_EQ(c->gpus.at("b200").scaleup_direct_board_gpus, 0);
  const std::string gpu = kMinimalGpu;
  Catalog mine;
  const std::string all = format_diagnostics(merge_catalog(
      mine,
      gpu +
          "    scaleup: {tech: nvlink4, gbs_per_gpu: 450, domain_gpus: 8, direct_board_gpus: 8}\n",
      "mine.yaml"));
  EXPECT_NE(all.find("gpus.mygpu.scaleup.direct_board_gpus: a board of 8 GPUs linked directly "
                     "needs 2 to 7 (below domain_gpus)"),
            std::string::npos)
      << all;
  // A rack-scale domain (72 GPUs, 4 a tray) has no board of its own: the key would do nothing.
  std::string tray = gpu;
  tray.replace(tray.find("gpus_per_node: 8"), 16, "gpus_per_node: 4");
  Catalog rack;
  const std::string r = format_diagnostics(merge_catalog(
      rack,
      tray +
          "    scaleup: {tech: nvlink5, gbs_per_gpu: 900, domain_gpus: 72, direct_board_gpus: 4}\n",
      "rack.yaml"));
  EXPECT_NE(r.find("gpus.mygpu.scaleup.direct_board_gpus: the NVLink domain spans servers (72 "
                   "GPUs, 4 a server)"),
            std::string::npos)
      << r;
}

// A NIC's lanes: the electrical lanes one port runs its rate over, one entry per signalling mode;
// a switch's lanes at a speed follow from its cages (lanes_per_cage / ports a cage).
TEST(Catalog, TheLanesOfNicPortsAndSwitchPorts) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->nics.at("cx7-400g").lanes, std::vector<int>{4});
  EXPECT_EQ(c->nics.at("cx8-800g").lanes, (std::vector<int>{4, 8}));
  EXPECT_EQ(c->switches.at("qm8700").lanes_at(200), 4);
  EXPECT_EQ(c->switches.at("qm9700").lanes_at(200), 2);
  EXPECT_EQ(c->switches.at("sn5600").lanes_at(400), 4);
  EXPECT_EQ(c->switches.at("qm9700").lanes_at(800), 0);
  EXPECT_EQ(c->switches.at("qm8700").lane_gbps(), 50);
  EXPECT_EQ(c->switches.at("q3400").lane_gbps(), 200);
  EXPECT_EQ(c->switches.at("arista-7800r3").lane_gbps(), 50);
  const Nic& cx8 = c->nics.at("cx8-800g");
  const Nic& cx7 = c->nics.at("cx7-400g");
  EXPECT_TRUE(cx8.lanes_meet(2, 100));  // 8 x 100G over 2 planes: 4 lanes a link
  EXPECT_TRUE(cx8.lanes_meet(2, 200));  // or 4 x 200G: 2 lanes a link
  EXPECT_FALSE(cx7.lanes_meet(2, 50));  // 2 x 100G a link against HDR's 50G lanes
  EXPECT_FALSE(cx7.lanes_meet(1, 50));  // 4 x 100G against a Jericho2's 8 x 50G
  EXPECT_TRUE(cx7.lanes_meet(1, 200));  // an XDR switch's lanes also run at 100G
  EXPECT_TRUE(c->nics.at("cx6-200g").lanes_meet(1, 100));  // HDR on an NDR switch
  EXPECT_FALSE(cx7.lanes_meet(8, 200));                    // 8 planes of a 4-lane port
  EXPECT_TRUE(Nic{}.lanes_meet(2, 50));                    // lanes not stated: not checked
  for (const auto& [line, want] : std::initializer_list<std::pair<std::string, std::string>>{
           {"lanes: 4", "nics.x.lanes: expected a list of lane counts"},
           {"lanes: [0]", "nics.x.lanes: '0' is not a lane count (1 to 16)"},
           {"lanes: [four]", "'four' is not a lane count"}}) {
    Catalog mine;
    const std::string all = format_diagnostics(
        merge_catalog(mine,
                      "nics:\n  - {id: x, rate: 400G, protocols: [roce], price_usd: 1, power_w: 1, "
                      "estimate: true, " +
                          line + "}\n",
                      "mine.yaml"));
    EXPECT_NE(all.find(want), std::string::npos) << all;
  }
}

// node.nics, the NICs a server's figure includes, is a map of catalog NIC id to a positive count
// (a count of 0 and what validate_spec checks:
// SpecErrors.TheNicsAServersFigureIncludesAreCatalogNics).
TEST(Catalog, TheNicsAServersFigureIncludes) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  const auto& h100 = c->gpus.at("h100-sxm").node_nics;
  ASSERT_EQ(h100.size(), 2u);
  EXPECT_EQ(h100.front(), (std::pair<std::string, int>{"cx7-400g", 8}));
  EXPECT_EQ(h100.back(), (std::pair<std::string, int>{"dual-cx7-400g", 2}));
  // The compute NICs leave the server's line; its own storage cards stay in it.
  const auto inc = c->included_nics(c->gpus.at("h100-sxm"));
  EXPECT_EQ(inc.list, "8 x cx7-400g");
  EXPECT_EQ(inc.storage_cards, 2);
  EXPECT_DOUBLE_EQ(inc.price_usd, 8 * c->nics.at("cx7-400g").cost.price_usd);
}

// A user's catalog file is checked as a spec is: a part's price and power within bounds (a figure
// of 1e300 W printed a 300-digit cluster power), a server's included compute NICs within its
// slots, and an empty file is an error, not a file that silently replaces nothing.
TEST(Catalog, FiguresOutOfBoundsAndEmptyFilesAreErrors) {
  const std::string& server = kMyGpu;
  for (const auto& [node, want] : std::initializer_list<std::pair<std::string, std::string>>{
           {"    node: {price_usd: 1, power_w: 1e300, estimate: true}\n",
            "mine.yaml:8:35: error: gpus.mygpu.node.power_w: expected a figure from 0 to 1e+07 W, "
            "found 1e+300"},
           {"    node: {price_usd: -350000, power_w: 1, estimate: true}\n",
            "mine.yaml:8:23: error: gpus.mygpu.node.price_usd: expected a figure from 0 to 1e+09 "
            "USD, found -350000"},
           {"    node: {price_usd: 1000000, power_w: 10000, nics: {cx7-400g: 9}, estimate: true}\n",
            "gpus.mygpu.node.nics: 9 compute NICs, more than the server's 8 "
            "(max_nics_per_node)"}}) {
    Catalog mine;
    const std::string all = format_diagnostics(merge_catalog(mine, server + node, "mine.yaml"));
    EXPECT_NE(all.find(want), std::string::npos) << all;
  }
  Catalog c;
  for (const std::string empty : {"", "# nothing yet\n", "---\n"}) {
    const std::string all = format_diagnostics(merge_catalog(c, empty, "empty.yaml"));
    EXPECT_NE(all.find("empty.yaml: error: the catalog file is empty"), std::string::npos) << all;
  }
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

// One model of a switch's cages: ports fill the cages in order, and SONiC's lanes come from the
// platform's lane map (sonic-buildimage device/*/platform.json).
TEST(Catalog, PortsSitInCagesOnTheirLanes) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok()) << format_diagnostics(c.errors());
  const Switch& x6 = c->switches.at("arista-7060x6");
  EXPECT_EQ(x6.cages(), 64);
  auto p65 = x6.slot(65, 400);  // 128 x 400G: two to a cage
  ASSERT_TRUE(p65.has_value());
  EXPECT_EQ(p65->cage, 33);
  EXPECT_EQ(p65->subport, 0);
  EXPECT_EQ(p65->subports, 2);
  EXPECT_EQ(p65->lanes, 4);
  EXPECT_EQ(x6.asic_lanes(*p65), (std::vector<int>{273, 274, 275, 276}));  // etp33a
  auto p66 = x6.slot(66, 400);
  ASSERT_TRUE(p66.has_value());
  EXPECT_EQ(p66->first_lane, 4);
  EXPECT_EQ(x6.asic_lanes(*p66), (std::vector<int>{277, 278, 279, 280}));      // etp33b
  EXPECT_EQ(x6.asic_lanes(*x6.slot(3, 400)), (std::vector<int>{1, 2, 3, 4}));  // etp2a
  EXPECT_EQ(x6.slot(1, 800)->lanes, 8);
  EXPECT_EQ(x6.slot(4, 200)->first_lane, 6);
  EXPECT_FALSE(x6.slot(129, 400).has_value());
  EXPECT_FALSE(x6.slot(1, 100).has_value());
  const Switch& sn = c->switches.at("sn5600");
  EXPECT_EQ(sn.asic_lanes(*sn.slot(2, 400)), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(sn.asic_lanes(*sn.slot(128, 400)), (std::vector<int>{508, 509, 510, 511}));
  EXPECT_EQ(c->switches.at("qm9700").slot(2, 400)->cage, 1);  // twin-port OSFP
  EXPECT_TRUE(c->switches.at("arista-7800r3").asic_lanes(PortSlot{1, 0, 1, 0, 8}).empty());
}

// SONiC's buffer model follows the ASIC vendor: dynamic only where sonic-swss has its headroom
// script (mellanox, barefoot); the platforms' names and figures come with the catalog.
TEST(Catalog, SonicPlatformsAndTheirBufferModel) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  const Switch& x6 = c->switches.at("arista-7060x6");
  ASSERT_TRUE(x6.asic_vendor && x6.sonic);
  EXPECT_EQ(sonic_buffer_model(*x6.asic_vendor), BufferModel::kTraditional);
  EXPECT_EQ(x6.sonic->hwsku.at(400), "Arista-7060X6-64PE-O128S2");
  EXPECT_EQ(x6.sonic->pools.at("egress_lossless_pool").size, 166115492);
  EXPECT_EQ(x6.sonic->lossless_pg->cell_bytes, 254);
  EXPECT_EQ(x6.sonic->cable_lengths_m, (std::vector<double>{5, 40, 150}));
  const Switch& sn = c->switches.at("sn5600");
  ASSERT_TRUE(sn.asic_vendor && sn.sonic);
  EXPECT_EQ(sonic_buffer_model(*sn.asic_vendor), BufferModel::kDynamic);
  EXPECT_EQ(sn.sonic->platform, "x86_64-nvidia_sn5600-r0");
  EXPECT_EQ(sn.sonic->pools.at("ingress_lossless_pool").size, 0);  // the dynamic model sizes it
  EXPECT_EQ(sn.sonic->queue_lossy_profile, "q_lossy_profile");
  EXPECT_EQ(sonic_buffer_model(AsicVendor::kBarefoot), BufferModel::kDynamic);
  EXPECT_EQ(sonic_buffer_model(AsicVendor::kMarvell), BufferModel::kTraditional);
}

TEST(Catalog, PortModelErrorsNameTheKey) {
  Catalog c;
  const std::string base = R"(
switches:
  - id: x
    technology: ethernet
    ports: 64
    port_speed: 800G
    latency_ns: 600
    price_usd: 1
    power_w: 1
    estimate: true
)";
  auto errs = [&](const std::string& extra) {
    Catalog cat;
    return format_diagnostics(merge_catalog(cat, base + extra, "mine.yaml"));
  };
  EXPECT_EQ(errs(""), "");
  EXPECT_NE(errs("    breakout: [{ports: 96, port_speed: 400G}]\n").find("do not split 64 cages"),
            std::string::npos);
  EXPECT_NE(
      errs("    serdes_lanes: [0, 8]\n").find("switches.x.serdes_lanes: expected a list of 64"),
      std::string::npos);
  const std::string sonic =
      "    serdes_lanes: [" +
      [] {
        std::string l;
        for (int i = 0; i < 64; ++i) l += (i ? ", " : "") + std::to_string(8 * i);
        return l;
      }() +
      "]\n    sonic:\n      platform: p\n      source: s\n      pools: {ingress_lossless_pool: "
      "{type: ingress}}\n      profiles: {ingress_lossy_profile: {pool: "
      "ingress_lossless_pool, dynamic_th: 3}, egress_lossless_profile: {pool: "
      "ingress_lossless_pool, dynamic_th: 7}, egress_lossy_profile: {pool: "
      "ingress_lossless_pool, dynamic_th: 7}}\n";
  EXPECT_NE(errs(sonic).find("needs the switch's asic_vendor"), std::string::npos) << errs(sonic);
  EXPECT_EQ(errs("    asic_vendor: mellanox\n" + sonic), "");
  EXPECT_NE(errs("    asic_vendor: broadcom\n" + sonic).find("traditional buffer model"),
            std::string::npos);
  EXPECT_NE(errs("    asic_vendor: tofino\n").find("'tofino' is not one of"), std::string::npos);
  std::string huge = sonic;
  huge.replace(huge.find("dynamic_th: 3"), 13, "dynamic_th: 1e300");
  EXPECT_NE(errs("    asic_vendor: mellanox\n" + huge).find("from -8 to 8"), std::string::npos);
  // A buffer's bytes are not negative.
  std::string negative = sonic;
  negative.replace(negative.find("{type: ingress}"), 15, "{type: ingress, size: -1}");
  EXPECT_NE(errs("    asic_vendor: mellanox\n" + negative)
                .find("switches.x.sonic.pools.ingress_lossless_pool.size: expected a figure from 0 "
                      "to 1e+12 bytes, found -1"),
            std::string::npos)
      << errs("    asic_vendor: mellanox\n" + negative);
}

}  // namespace gf

namespace gf {

TEST(Catalog, NetworkRolesUplinksAndServerPorts) {
  auto c = builtin_catalog();
  ASSERT_TRUE(c.ok());
  const Switch& oob = c->switches.at("sn2201");
  EXPECT_TRUE(oob.has_role(SwitchRole::kOob));
  EXPECT_FALSE(oob.has_role(SwitchRole::kFabric));
  EXPECT_EQ(oob.ports_at(1), 48);
  EXPECT_EQ(oob.uplink_ports, 4);
  EXPECT_DOUBLE_EQ(oob.uplink_gbps, 100);
  // A switch without roles: is a compute-fabric switch.
  EXPECT_TRUE(c->switches.at("arista-7060x6").has_role(SwitchRole::kFabric));
  EXPECT_TRUE(c->switches.at("qm9700").has_role(SwitchRole::kStorage));
  const auto& dgx = c->gpus.at("h100-sxm").networks;
  EXPECT_EQ(dgx.storage_ports, 2);
  EXPECT_EQ(dgx.inband_ports, 2);
  EXPECT_DOUBLE_EQ(dgx.storage_read_gbs, 40);
  EXPECT_TRUE(c->nics.count(dgx.storage_nic));
  EXPECT_NE(c->cable_for(CableKind::kRj45, 1, 2.5), nullptr);

  Catalog mine = *c;
  auto errs = merge_catalog(mine,
                            "switches:\n  - {id: x, technology: ethernet, ports: 48, port_speed: "
                            "1G, lanes_per_cage: 1, latency_ns: 1, price_usd: 1, power_w: 1, "
                            "estimate: true, roles: [ob]}\n",
                            "mine.yaml");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].key, "switches.x.roles");
  EXPECT_NE(errs[0].message.find("'ob' is not a switch role"), std::string::npos);
  EXPECT_NE(errs[0].hint.find("oob"), std::string::npos) << errs[0].hint;
}

}  // namespace gf

namespace gf {

// A GPU's figures that no GPU has are errors at their key, with the file and line, as its price
// is: -141 GiB of HBM printed "PASS memory ... -141.0 GiB of HBM", 0 TFLOP/s "compute inf d",
// 0 GB/s of NVLink (a PCIe card's x16 link too) cut every GPU off its node, and PCIe Gen9 was
// taken as Gen6.
TEST(Catalog, ImpossibleGpuFiguresAreErrorsAtTheKey) {
  const std::string node = "    node: {price_usd: 1, power_w: 1, estimate: true}\n";
  Catalog ok;
  ASSERT_EQ(format_diagnostics(merge_catalog(ok, kMyGpu + node, "mine.yaml")), "");
  for (const auto& [from, to, want] :
       std::initializer_list<std::tuple<const char*, const char*, const char*>>{
           {"memory_gb: 80", "memory_gb: -141",
            "mine.yaml:3:16: error: gpus.mygpu.memory_gb: expected a figure above 0 and at most "
            "4096 GiB, found -141 (the GPU's HBM, e.g. 80 (H100), 141 (H200))"},
           {"bf16_tflops: 900", "bf16_tflops: 0",
            "mine.yaml:4:18: error: gpus.mygpu.bf16_tflops: expected a figure above 0 and at most "
            "1e+06 TFLOP/s, found 0"},
           {"bf16_tflops: 900", "bf16_tflops: 900\n    fp16_tflops: -1",
            "gpus.mygpu.fp16_tflops: expected a figure above 0"},
           {"bf16_tflops: 900", "bf16_tflops: 900\n    fp32_tflops: 0",
            "gpus.mygpu.fp32_tflops: expected a figure above 0"},
           {"bf16_tflops: 900", "bf16_tflops: 900\n    fp8_tflops: -1979",
            "gpus.mygpu.fp8_tflops: expected a figure from 0 to 1e+06 TFLOP/s, found -1979"},
           {"bf16_tflops: 900", "bf16_tflops: 900\n    hbm_gbps: -3350",
            "gpus.mygpu.hbm_gbps: expected a figure from 0 to 1e+06 GB/s, found -3350"},
           {"pcie_gen: 5", "pcie_gen: 9",
            "mine.yaml:6:15: error: gpus.mygpu.pcie_gen: PCIe Gen9 does not exist: expected a "
            "generation from 3 to 6"},
           {"pcie_gen: 5", "pcie_gen: 2", "gpus.mygpu.pcie_gen: PCIe Gen2 does not exist"},
           {"gbs_per_gpu: 450", "gbs_per_gpu: 0",
            "mine.yaml:5:43: error: gpus.mygpu.scaleup.gbs_per_gpu: expected a figure above 0 and "
            "at most 100000 GB/s, found 0"},
           {"tech: nvlink4, gbs_per_gpu: 450", "tech: pcie, gbs_per_gpu: 0",
            "gpus.mygpu.scaleup.gbs_per_gpu: expected a figure above 0"},
           {"tech: nvlink4, gbs_per_gpu: 450", "tech: pcie, gbs_per_gpu: 450",
            "gpus.mygpu.scaleup.gbs_per_gpu: a 'pcie' card's link is its PCIe Gen5 x16, 63 GB/s a "
            "direction at most: 450 is more"},
           {"gpus_per_node: 8", "gpus_per_node: 8\n    gpu_hour: {usd: -3, estimate: true}",
            "gpus.mygpu.gpu_hour.usd: expected a figure from 0 to 1000 USD, found -3"},
           {"gpus_per_node: 8",
            "gpus_per_node: 8\n    networks: {storage_nic: n, storage_speed: 1e30G, source: s}",
            "gpus.mygpu.networks.storage_speed: expected a rate up to 100000G, found 1e+30G"}}) {
    std::string text = kMyGpu;
    text.replace(text.find(from), std::string(from).size(), to);
    Catalog c;
    const std::string all = format_diagnostics(merge_catalog(c, text + node, "mine.yaml"));
    EXPECT_NE(all.find(want), std::string::npos) << to << "\n" << all;
    EXPECT_FALSE(c.gpus.count("mygpu")) << to;
  }
  // The shipped PCIe card is within its link: 24 GB/s on Gen4's 31.5.
  auto shipped = builtin_catalog();
  ASSERT_TRUE(shipped.ok()) << format_diagnostics(shipped.errors());
  EXPECT_EQ(shipped->gpus.at("a100-pcie-40g").scaleup_gbs_per_gpu, 24);
}

// The same for NICs, switches and cables: a NIC's PCIe generation, a switch's latency, buffer
// and cage lanes, a cable's reach and any rate beyond 100 Tb/s.
TEST(Catalog, ImpossiblePartFiguresAreErrorsAtTheKey) {
  const std::string cost = ", price_usd: 1, power_w: 1, estimate: true}\n";
  for (const auto& [entry, want] : std::initializer_list<std::pair<std::string, const char*>>{
           {"nics:\n  - {id: n, rate: 400G, protocols: [roce], pcie_gen: 9" + cost,
            "mine.yaml:2:54: error: nics.n.pcie_gen: PCIe Gen9 does not exist"},
           {"nics:\n  - {id: n, rate: 4e9G, protocols: [roce]" + cost,
            "nics.n.rate: expected a rate up to 100000G, found 4e+09G"},
           {"switches:\n  - {id: s, technology: ethernet, ports: 64, port_speed: 800G, "
            "latency_ns: 0" +
                cost,
            "switches.s.latency_ns: expected a figure above 0 and at most 1e+06 ns, found 0"},
           {"switches:\n  - {id: s, technology: ethernet, ports: 64, port_speed: 800G, "
            "latency_ns: 600, buffer_mb: -64" +
                cost,
            "switches.s.buffer_mb: expected a figure from 0 to 1e+06 MB, found -64"},
           {"switches:\n  - {id: s, technology: ethernet, ports: 64, port_speed: 800G, "
            "latency_ns: 600, lanes_per_cage: 64" +
                cost,
            "switches.s.lanes_per_cage: 64 lanes is more than a cage has (at most 16)"},
           {"cables:\n  - {id: c, kind: dac, speed: 400G, max_length_m: 0" + cost,
            "cables.c.max_length_m: expected a figure above 0 and at most 1e+06 m, found 0"},
           {"cables:\n  - {id: c, kind: dac, speed: 400G, max_length_m: -3" + cost,
            "cables.c.max_length_m: expected a figure above 0"}}) {
    Catalog c;
    const std::string all = format_diagnostics(merge_catalog(c, entry, "mine.yaml"));
    EXPECT_NE(all.find(want), std::string::npos) << entry << all;
    EXPECT_TRUE(c.nics.empty() && c.switches.empty() && c.cables.empty()) << entry;
  }
}

}  // namespace gf
