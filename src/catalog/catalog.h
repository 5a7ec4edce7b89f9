// The hardware catalog: GPUs (with their servers), NICs, switches, cables and optics.
// Shipped entries live in catalog/*.yaml and are compiled into the binary; users add or
// override entries with their own files.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/diag.h"
#include "common/enum_names.h"

namespace gf {

/// A price and power figure and where it comes from (every figure has a source or is an estimate).
struct CostFigure {
  double price_usd = 0;
  double power_w = 0;
  std::string source;     ///< citation; empty when `estimate`
  bool estimate = false;  ///< true: our own estimate, not a published figure
  std::string provenance() const { return estimate ? "estimate" : source; }
};

/// The GPUs' scale-up interconnect. `pcie`: cards with no NVLink between them (or only a
/// bridge to one neighbour, not modelled), whose GPUs reach each other over the server's PCIe
/// (NCCL's P2P transport through a PCIe switch or the CPU, or shared memory).
enum class ScaleUpTech { kNvlink3, kNvlink4, kNvlink5, kInfinityFabric, kPcie };
inline constexpr EnumName<ScaleUpTech> kScaleUpTechNames[] = {
    {ScaleUpTech::kNvlink3, "nvlink3"},
    {ScaleUpTech::kNvlink4, "nvlink4"},
    {ScaleUpTech::kNvlink5, "nvlink5"},
    {ScaleUpTech::kInfinityFabric, "infinity-fabric"},
    {ScaleUpTech::kPcie, "pcie"}};

/// The GPU's architecture, which picks NCCL's per-architecture rows (tuning.cc's compute
/// capability). Catalog key `arch`; without it the NVLink generation tells it (3: Ampere, 4:
/// Hopper, 5: Blackwell; Infinity Fabric takes Hopper's rows, an approximation); a `pcie` GPU
/// must name it.
enum class GpuArch { kAmpere, kHopper, kBlackwell };
inline constexpr EnumName<GpuArch> kGpuArchNames[] = {
    {GpuArch::kAmpere, "ampere"}, {GpuArch::kHopper, "hopper"}, {GpuArch::kBlackwell, "blackwell"}};

/// Where a GPU reaches its scale-out NIC, as NCCL's topology rates the path: through the PCIe
/// switch the two share (HGX and DGX boards: PATH_PIX / PATH_PXB), or through the CPU the GPU is
/// joined to by NVLink-C2C (Grace Blackwell: PATH_PHB up to NCCL 2.26, PATH_P2C from 2.27,
/// graph/paths.cc@v2.27.7-1:181). NCCL's protocol switch and NVLS tuning differ by it.
enum class NicAttach { kGpuSwitch, kCpuC2c };
inline constexpr EnumName<NicAttach> kNicAttachNames[] = {{NicAttach::kGpuSwitch, "gpu-switch"},
                                                          {NicAttach::kCpuC2c, "cpu-c2c"}};

/// The CPU of a GPU's host, as NCCL's topology tells it (cpuArch): an x86 server, or Grace (ARM)
/// on Grace Blackwell trays. From 2.29 NCCL doubles the network point-to-point chunk on ARM
/// hosts of Blackwell GPUs ("GBx platforms only have 4 GPUs per host",
/// init.cc@v2.29.7-1:773-776).
enum class HostCpu { kX86, kGrace };
inline constexpr EnumName<HostCpu> kHostCpuNames[] = {{HostCpu::kX86, "x86"},
                                                      {HostCpu::kGrace, "grace"}};

/// Number formats of training math: what a GPU's peak figure and a gradient's bytes depend on.
enum class Precision { kFp32, kBf16, kFp16, kFp8 };
inline constexpr EnumName<Precision> kPrecisionNames[] = {{Precision::kFp32, "fp32"},
                                                          {Precision::kBf16, "bf16"},
                                                          {Precision::kFp16, "fp16"},
                                                          {Precision::kFp8, "fp8"}};
/// Bytes of one value: 4, 2, 2, 1.
inline double precision_bytes(Precision p) {
  return p == Precision::kFp32 ? 4 : p == Precision::kFp8 ? 1 : 2;
}

/// What a switch forwards.
enum class SwitchTechnology { kInfiniband, kEthernet };
inline constexpr EnumName<SwitchTechnology> kSwitchTechnologyNames[] = {
    {SwitchTechnology::kInfiniband, "infiniband"}, {SwitchTechnology::kEthernet, "ethernet"}};

/// A GPU model together with the server (node) that hosts it.
struct GpuModel {
  std::string id, name, vendor;
  double memory_gb = 0;       ///< HBM, in the vendor's (binary) GB: an "80GB" A100 has 80 GiB
  std::string memory_source;  ///< where memory_gb comes from
  double fp32_tflops = 0, fp16_tflops = 0, bf16_tflops = 0, fp8_tflops = 0;  ///< dense peak
  ScaleUpTech scaleup_tech = ScaleUpTech::kNvlink4;
  GpuArch arch = GpuArch::kHopper;  ///< catalog `arch`, else from scaleup_tech
  double scaleup_gbs_per_gpu = 0;  ///< per direction, GB/s
  int scaleup_domain_gpus = 8;     ///< GPUs sharing one scale-up domain (NVL72: 72)
  bool nvls = false;               ///< NVLink SHARP (multicast/reduction in NVSwitch)
  /// GPUs of the vendor's board that links its GPUs to each other directly, without NVSwitch
  /// (HGX H100 4-GPU): a node of that many GPUs has no NVLink SHARP. 0: no such board.
  int scaleup_direct_board_gpus = 0;
  int pcie_gen = 4;
  int gpus_per_node = 8;
  int max_nics_per_node = 8;        ///< PCIe slots for scale-out NICs
  NicAttach nic_attach = NicAttach::kGpuSwitch;  ///< where the GPU reaches its NIC
  std::string nic_attach_source;                 ///< where nic_attach comes from
  HostCpu host_cpu = HostCpu::kX86;              ///< the host's CPU (NCCL's cpuArch)
  std::string host_cpu_source;                   ///< where host_cpu comes from
  double compute_efficiency = 0.4;  ///< achievable fraction of peak in training kernels
  std::string compute_efficiency_source;
  /// The kernel-level figures of the step's roofline (sim/compute.h); 0 when the catalog does
  /// not give them (the step then computes from FLOPs at compute_efficiency).
  double hbm_gbps = 0;              ///< HBM bandwidth, GB/s
  double matmul_efficiency = 0;     ///< best-shaped GEMM's fraction of the tensor-core peak (MAMF)
  double attention_efficiency = 0;  ///< the same for a fused (flash) attention kernel
  std::string hbm_source, kernel_efficiency_source;
  int sm_count = 0;  ///< streaming multiprocessors (NCCL runs a thread block per channel on one)
  std::string sm_source;
  double gpu_hour_usd = 0;  ///< rental price per GPU-hour
  CostFigure node;          ///< one server: price and power
  /// NICs the server's figure includes (a DGX's datasheet power, its price), catalog id and
  /// count: the BOM lists NICs under the network at their own figures and takes these out of
  /// the server's, so they are not counted twice. Empty where the figure does not say.
  std::vector<std::pair<std::string, int>> node_nics;
  CostFigure gpu_hour;      ///< provenance of gpu_hour_usd
  /// The server's ports for the other networks (spec networks: defaults).
  struct Networks {
    std::string storage_nic;      ///< catalog id of the NIC carrying storage and in-band ports
    int storage_nics = 2;         ///< such NICs per server
    int storage_ports = 2;        ///< ports per server cabled to the storage network
    int inband_ports = 2;         ///< ports per server cabled to the in-band network
    double storage_gbps = 200;    ///< speed a storage port runs at
    double inband_gbps = 100;     ///< speed an in-band port runs at
    double storage_read_gbs = 0;  ///< GB/s per server the storage fabric is built for; 0: none
    std::string source;           ///< where these come from; empty: estimate
  } networks;
  double tflops(Precision precision) const;  ///< dense peak; fp8 falls back to bf16
};

/// A scale-out network adapter.
struct Nic {
  std::string id, name;
  double rate_gbps = 0;  ///< per adapter, all ports together
  int ports = 1;
  bool infiniband = false, roce = false, gpudirect = true;
  int pcie_gen = 5;
  /// The electrical lanes one port runs its full rate over, one entry per signalling mode the
  /// card offers at that rate (ConnectX-8's 800G: 4 x 200G or 8 x 100G); empty: not stated,
  /// which leaves the port's match with a switch's unchecked.
  std::vector<int> lanes;
  CostFigure cost;
  /// One port's rate, Gb/s.
  double port_gbps() const { return rate_gbps / std::max(1, ports); }
  /// Whether a port split into `split` links (fabric.planes) meets switch ports whose SerDes run
  /// lanes of up to `switch_lane_gbps`: some mode's lanes divide evenly into `split` links, and
  /// its lane rate is one the switch runs (its own or slower: the two ends of a link run the same
  /// lanes at the same rate, and a switch's lanes also run at the lower rates of earlier
  /// generations, an NDR switch's HDR ports). True where lanes are not stated.
  bool lanes_meet(int split, double switch_lane_gbps) const;
};

/// What a switch is used for: the compute (GPU) fabric, or one of the cluster's other networks.
/// An entry without `roles:` is a compute-fabric switch; the compute planner considers only
/// those with kFabric, so that adding a management switch never changes a compute plan.
enum class SwitchRole { kFabric, kStorage, kInband, kOob, kMgmtSpine };
inline constexpr EnumName<SwitchRole> kSwitchRoleNames[] = {{SwitchRole::kFabric, "fabric"},
                                                            {SwitchRole::kStorage, "storage"},
                                                            {SwitchRole::kInband, "inband"},
                                                            {SwitchRole::kOob, "oob"},
                                                            {SwitchRole::kMgmtSpine, "mgmt-spine"}};

/// A way to run a switch's ports at a lower speed (e.g. 64x800G as 128x400G).
struct Breakout {
  int ports = 0;
  double gbps = 0;
};

/// The vendor of a switch's ASIC, as SONiC names the platform family (sonic-buildimage
/// device/*/*/platform_asic: "broadcom", "mellanox", ...). SONiC's dynamic buffer model runs only
/// where sonic-swss ships the vendor's headroom script (config/sonic.cc).
enum class AsicVendor { kBroadcom, kMellanox, kBarefoot, kMarvell };
inline constexpr EnumName<AsicVendor> kAsicVendorNames[] = {{AsicVendor::kBroadcom, "broadcom"},
                                                            {AsicVendor::kMellanox, "mellanox"},
                                                            {AsicVendor::kBarefoot, "barefoot"},
                                                            {AsicVendor::kMarvell, "marvell"}};
inline const char* asic_vendor_name(AsicVendor v) { return name_of(kAsicVendorNames, v); }

/// SONiC's buffer models (sonic-device_metadata.yang, DEVICE_METADATA buffer_model):
/// "dynamic" (buffermgrd computes each lossless PG's headroom with the vendor's Lua script) and
/// "traditional" (static BUFFER_PROFILEs from CONFIG_DB).
enum class BufferModel { kTraditional, kDynamic };
inline constexpr EnumName<BufferModel> kBufferModelNames[] = {
    {BufferModel::kTraditional, "traditional"}, {BufferModel::kDynamic, "dynamic"}};
inline const char* buffer_model_name(BufferModel m) { return name_of(kBufferModelNames, m); }
/// The dynamic model needs cfgmgr/buffer_headroom_<vendor>.lua in sonic-swss (buffermgrdyn.cpp
/// loads it by the ASIC_VENDOR name and does not start without it); 202311 ships mellanox and
/// barefoot (and vs). Every other vendor runs the traditional model.
inline BufferModel sonic_buffer_model(AsicVendor v) {
  return v == AsicVendor::kMellanox || v == AsicVendor::kBarefoot ? BufferModel::kDynamic
                                                                  : BufferModel::kTraditional;
}

/// One SONiC buffer object as a platform's buffers_defaults_*.j2 sets it (BUFFER_POOL or
/// BUFFER_PROFILE); sizes in bytes, 0 = absent (a pool the dynamic model sizes itself).
struct SonicBufferObject {
  std::string pool;  ///< profiles: the pool; pools: "ingress" or "egress" (the type)
  double size = 0, xoff = 0, static_th = 0;
  std::optional<int> dynamic_th;
};

/// The lossless priority group's fixed figures of a platform's pg_profile_lookup.ini (the
/// traditional buffer model): the reserved size, xon, xon_offset and threshold. The headroom
/// (xoff) is computed per port from speed and cable length (config/sonic.cc).
struct SonicLosslessPg {
  double size = 0, xon = 0, xon_offset = 0;
  int dynamic_th = 0;
  int cell_bytes = 0;  ///< the ASIC's buffer cell, for the worst-case occupancy of small packets
};

/// What SONiC needs to know about a switch that its own device folder holds
/// (sonic-buildimage device/<vendor>/<platform>/): names, FEC, buffer pools and profiles.
struct SonicPlatform {
  std::string platform;                 ///< DEVICE_METADATA platform (the device folder)
  std::map<double, std::string> hwsku;  ///< the HWSKU folder per port speed (Gb/s)
  std::string fec;                      ///< PORT fec; empty: left to the platform
  std::map<std::string, SonicBufferObject> pools, profiles;
  std::string queue_lossy_profile = "egress_lossy_profile";  ///< on the lossy queues
  std::optional<SonicLosslessPg> lossless_pg;                ///< traditional model only
  std::vector<double> cable_lengths_m;  ///< the lengths pg_profile_lookup.ini lists
  std::string source;
};

/// Where a switch port sits: its front-panel cage and the lanes of the cage it uses. A cage
/// (OSFP, QSFP-DD: 8 lanes) runs as one port or is broken out into 2, 4 or 8.
struct PortSlot {
  int cage = 0;        ///< from 1, as the front panel numbers them
  int subport = 0;     ///< from 0, within the cage
  int subports = 1;    ///< interfaces the cage is split into at this speed
  int first_lane = 0;  ///< from 0: the cage lane the port starts on (subport x lanes)
  int lanes = 0;       ///< electrical lanes of the port
};

/// A fabric switch (fixed or modular).
struct Switch {
  std::string id, name;
  SwitchTechnology technology = SwitchTechnology::kEthernet;
  int ports = 0;           ///< native ports
  double port_gbps = 0;    ///< native port speed
  int ports_per_cage = 1;  ///< 2 for twin-port OSFP cages (one transceiver serves two ports)
  std::vector<Breakout> breakouts;
  double buffer_mb = 0;
  std::string in_network_reduction;  ///< "" or e.g. "sharp-v3"
  bool adaptive_routing = false;
  double latency_ns = 0;  ///< port-to-port
  bool modular = false;
  int rack_units = 1;
  CostFigure cost;
  int lanes_per_cage = 8;         ///< electrical lanes of one cage (OSFP, QSFP-DD: 8; QSFP56: 4)
  std::vector<int> serdes_lanes;  ///< the ASIC lane of each cage's first lane; empty: unknown
  std::optional<AsicVendor> asic_vendor;
  std::optional<SonicPlatform> sonic;  ///< absent: no SONiC platform known for the switch
  std::vector<SwitchRole> roles{SwitchRole::kFabric};
  /// Separate uplink ports (a management switch's 4 x 100G beside its 48 x 1G): 0 = none, the
  /// uplinks are taken from `ports`.
  int uplink_ports = 0;
  double uplink_gbps = 0;
  bool has_role(SwitchRole r) const;
  /// Ports available at `gbps` (native or by breakout); 0 when the speed is not offered.
  int ports_at(double gbps) const;
  /// Front-panel cages: ports / ports_per_cage.
  int cages() const;
  /// The ports of `gbps` one cage carries: ports_at(gbps) / cages() (2 on a twin-port cage, and
  /// on an 800G cage broken out to 2 x 400G); ports_per_cage at a speed the switch does not run.
  int ports_per_cage_at(double gbps) const;
  /// The electrical lanes one port of `gbps` runs over (lanes_per_cage / ports_per_cage_at); 0 at
  /// a speed the switch does not run.
  int lanes_at(double gbps) const;
  /// The rate of one lane at the native speed, Gb/s: the fastest its SerDes run.
  double lane_gbps() const;
  /// Where port `port` (from 1) of the `ports_at(gbps)` ports sits: ports fill the cages in
  /// order, `ports_at(gbps) / cages()` to a cage. nullopt for a port the switch does not have.
  std::optional<PortSlot> slot(int port, double gbps) const;
  /// The ASIC lanes of a slot, as SONiC's PORT table lists them; empty without serdes_lanes.
  std::vector<int> asic_lanes(const PortSlot& s) const;
};

/// What a cable part is: a direct-attach copper cable, an active optical cable, a transceiver
/// (two per optical link), or the fibre between two transceivers.
/// kRj45: a twisted-pair patch cord (BASE-T management ports).
enum class CableKind { kDac, kAoc, kTransceiver, kFibre, kRj45 };
inline constexpr EnumName<CableKind> kCableKindNames[] = {{CableKind::kDac, "dac"},
                                                          {CableKind::kAoc, "aoc"},
                                                          {CableKind::kTransceiver, "transceiver"},
                                                          {CableKind::kFibre, "fibre"},
                                                          {CableKind::kRj45, "rj45"}};

/// A cable or optical part. Links are DAC (short), AOC, or two transceivers plus fibre.
/// The fibre a transceiver's optics run over and a fibre part is: multimode (SR optics) or
/// single-mode (DR, FR). kAny where the catalog entry does not say (it pairs with either).
enum class FibreMedia { kAny, kMultimode, kSingleMode };
inline constexpr EnumName<FibreMedia> kFibreMediaNames[] = {{FibreMedia::kMultimode, "mmf"},
                                                            {FibreMedia::kSingleMode, "smf"}};

struct CablePart {
  std::string id, name;
  CableKind kind = CableKind::kDac;
  FibreMedia media = FibreMedia::kAny;  ///< transceivers and fibres: catalog `media`
  double gbps = 0;   ///< lane speed of one link it carries
  int links = 1;     ///< links one part serves (twin-port transceiver: 2)
  double max_length_m = 0;
  CostFigure cost;
};

/// The whole catalog, keyed by id.
struct Catalog {
  std::map<std::string, GpuModel> gpus;
  std::map<std::string, Nic> nics;
  std::map<std::string, Switch> switches;
  std::map<std::string, CablePart> cables;
  /// Where each entry came from ("catalog/switches.yaml:12"), for messages.
  std::map<std::string, std::string> origin;

  std::vector<std::string> gpu_ids() const;
  std::vector<std::string> nic_ids() const;
  std::vector<std::string> switch_ids() const;
  /// The cheapest part of `kind` for links of `gbps` that reaches `length_m` and serves
  /// `links_per_part` links (a twin-port transceiver or a splitter: 2; a single-port part does
  /// not fit a cage of two ports); nullptr when none fits.
  const CablePart* cable_for(CableKind kind, double gbps, double length_m, int links_per_part = 1,
                             FibreMedia media = FibreMedia::kAny) const;
  /// The cheapest fibre of `media` (kAny: any) that reaches `length_m`; nullptr when none does.
  const CablePart* fibre_for(double length_m, FibreMedia media = FibreMedia::kAny) const;
  /// What the NICs a server's figure includes (GpuModel::node_nics) come to at this catalog's
  /// own NIC figures: the BOM takes the compute NICs out of the server's line; the server's own
  /// storage/in-band cards (networks.storage_nic) stay in it, and a networks: plan lists them
  /// at no further cost. validate_spec checks them all.
  struct IncludedNics {
    double price_usd = 0, power_w = 0;  ///< the compute NICs the catalog has, count x unit figure
    std::string list;                   ///< those NICs: "8 x cx7-400g, ..."
    int storage_cards = 0;              ///< the server's storage/in-band cards it includes
    double storage_price_usd = 0, storage_power_w = 0;  ///< and their figures
    std::vector<std::string> missing;                   ///< ids the catalog lacks (not counted)
  };
  IncludedNics included_nics(const GpuModel& g) const;
};

/// Usable PCIe x16 bandwidth per direction in GB/s by generation (PCI-SIG: 8/16/32/64 GT/s per
/// lane, 128b/130b encoding; Gen6 FLIT mode ~121 GB/s).
double pcie_x16_gbs(int gen);
/// The PCIe generations pcie_x16_gbs knows and a catalog entry's pcie_gen may name: Gen3
/// (V100-era servers) to Gen6 (Blackwell Ultra).
constexpr int kMinPcieGen = 3;
constexpr int kMaxPcieGen = 6;
/// The fastest rate a catalog part's port or adapter may name, Gb/s: 100 Tb/s, a hundred times
/// today's fastest ports (1.6 Tb/s); the CLI's link-rate flags take the same bound.
constexpr double kMaxPortGbps = 1e5;

/// The catalog shipped with gpufabric (compiled in from catalog/*.yaml).
Result<Catalog> builtin_catalog();
/// Adds or overrides entries from one YAML document (`file` names it in messages).
std::vector<Diagnostic> merge_catalog(Catalog& catalog, const std::string& text,
                                      const std::string& file);

}  // namespace gf
