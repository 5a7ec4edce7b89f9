// The bill of materials' line and totals, shared by the compute fabric and the other networks.
#pragma once

#include <string>
#include <vector>

namespace gf {

/// A line of the bill of materials.
struct BomItem {
  std::string category;  ///< compute | nic | switch | cable | transceiver | fibre
  std::string id, name, role;
  long long qty = 0;
  double unit_usd = 0, unit_w = 0;
  std::string source;  ///< citation or "estimate"
};

/// The bill of materials with totals.
struct Bom {
  std::vector<BomItem> items;
  double capex_usd = 0, power_w = 0;
  double network_capex_usd = 0, network_power_w = 0;  ///< everything but the servers
  double compute_capex_usd = 0;
  double network_usd_per_gpu = 0;
  double network_share = 0;  ///< network capex / cluster capex
};

}  // namespace gf
