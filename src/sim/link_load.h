// Traffic per directed link: what one collective's flows put on every link of the fabric (bytes,
// the highest rate at any time, how many flows cross it), how busy that keeps each link,
// the hottest links, a per-tier histogram of utilisation, and the names cabling.csv gives the
// links' ends. Pure: flows and a fabric in, figures out.
//
// Memory: one LinkLoad holds three numbers per directed link of the fabric (20 bytes a link,
// less than the fabric's own Link records); LinkNames one string per node and per switch and two
// port numbers per cable. Rows are produced one at a time from an index sorted hottest first,
// so that a table of millions of links can be streamed without holding it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "plan/plan.h"
#include "sim/flow_model.h"
#include "sim/nccl_cost.h"
#include "topo/fabric.h"

namespace gf {

/// What one algorithm's flows put on each link, for `payload_bytes` of collective payload (the
/// flows are built for a fixed payload; bytes scale linearly with the size, rates do not).
struct LinkLoad {
  Algorithm algorithm = Algorithm::kRing;
  double payload_bytes = 0;
  std::vector<double> bytes;     ///< per link: bytes moved for payload_bytes
  std::vector<double> peak_Bps;  ///< per link: its most traffic at any time of a run
  std::vector<int32_t> flows;    ///< per link: flows that cross it (a flow once per link)

  /// Adds the traffic of `fs` as `r` ran it (several runs add up: PAT's steps run one after
  /// another; the peak is the highest rate of any of them at any time).
  void add(const FlowSet& fs, const FluidResult& r, size_t links);
  /// Sum over the links of bytes: the bytes the flows move times the hops they cross.
  double total_bytes() const;
};

/// One link's figures for a collective of `size` bytes taking `seconds`.
struct LinkUse {
  int32_t link = -1;
  double capacity_Bps = 0;  ///< raw line rate (0 for a failed link)
  double bytes = 0;         ///< moved by the collective
  double mean_util = 0;     ///< bytes / (capacity x seconds): time-averaged over the collective
  double peak_util = 0;     ///< the highest rate at any time / capacity (>= mean_util)
  int32_t flows = 0;
};

LinkUse link_use(const Fabric& fab, const LinkLoad& load, int32_t link, double size,
                 double seconds);

/// Links that carry any traffic, hottest first: by mean utilisation, then bytes, then link id.
/// Utilisation ranks independently of the size and time (both scale every link alike).
std::vector<int32_t> links_hottest_first(const Fabric& fab, const LinkLoad& load);

/// A short, stable key for a link class: scale_up, pcie, nic_leaf, leaf_spine, spine_core,
/// global (the CSV's tier column and the heat map's rows).
const char* link_tier_key(LinkClass c);
/// Direction of a link between tiers: "up" (towards the higher tier), "down", or "across"
/// (dragonfly global links).
const char* link_direction(const Fabric& fab, int32_t link);

/// Utilisation bins of the heat map: [0,10%), [10%,20%), ... [90%,100%].
constexpr int kUtilBins = 10;

/// One tier's links in the heat map.
struct TierHeat {
  LinkClass cls = LinkClass::kScaleUp;
  long long links = 0;  ///< links of this class in the fabric (failed ones included)
  long long busy = 0;   ///< those carrying traffic
  double bytes = 0;
  double mean_util = 0, max_util = 0;       ///< over the busy links, time-averaged
  std::array<long long, kUtilBins> bins{};  ///< busy links per bin of mean utilisation
};

/// Per link class present in the fabric, in LinkClass order.
std::vector<TierHeat> tier_heat(const Fabric& fab, const LinkLoad& load, double size,
                                double seconds);

/// A link end as cabling.csv and the configurations name it.
struct LinkEnd {
  std::string device, port;
};

/// "device:port", or the device alone where the end has no port (a switch as a vertex).
std::string end_name(const LinkEnd& e);

/// The names of link ends: nodes and switches as cabling.csv (plan/cabling.cc), switch ports by
/// their front-panel name (plan/ports.h); host-side ends are the node and "gpu3", "nic3",
/// "nvswitch" (a scale-up domain spanning nodes: its first node and "nvswitch").
class LinkNames {
 public:
  LinkNames(const Plan& plan, const Catalog& catalog, const Fabric& fabric);
  LinkEnd from(int32_t link) const { return end(link, true); }
  LinkEnd to(int32_t link) const { return end(link, false); }
  /// A vertex of the fabric graph: a switch (no port), or a node's GPU, NIC or NVLink point.
  LinkEnd vertex(int v) const;
  /// The link from switch vertex `a`'s port to switch vertex `b`'s, ports as cabling.csv names
  /// them (its port number, a_port, or its front-panel name, a_port_name): the one cable of
  /// parallel ones; -1 where no cable joins those ports.
  int32_t cable_between(int a, const std::string& a_port, int b, const std::string& b_port) const;
  /// The link from node `node`'s port (cabling.csv's a_port: "nic3", "nic3.p2" on planes) to
  /// switch vertex `leaf`'s port (its number or front-panel name); -1 where no cable joins them.
  /// One of a node's several cables to one switch (a single switch, top of rack).
  int32_t node_cable(int node, const std::string& nic_port, int leaf,
                     const std::string& leaf_port) const;

 private:
  LinkEnd end(int32_t link, bool from) const;
  const Plan& plan_;
  const Fabric& fab_;
  int gpus_ = 0, domains_ = 0, nics_ = 0, first_cable_link_ = 0;
  std::vector<std::string> node_;    ///< per node
  std::vector<std::string> switch_;  ///< per switch vertex (v - first switch vertex)
  int first_switch_ = 0;
  std::vector<int32_t> port_a_, port_b_;  ///< per cable (link pair): its a and b switch ports
  std::vector<std::string> panel_;        ///< front-panel names by port number
};

}  // namespace gf
