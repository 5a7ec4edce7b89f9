// Parsers of the JSON a routed fabric's tools print, as `gpufabric lab check` reads them: the BGP
// neighbours of FRR's bgpd and their states (`vtysh -N NETNS -c 'show bgp ipv4 unicast summary
// json'`) and the next hops of a route zebra installed in the kernel (`ip -j -n NETNS route show
// exact PREFIX`). The formats are those of FRR 8.4.4 (Debian 12's frr 8.4.4-1.1~deb12u2; `zebra
// --version`) and iproute2 6.1.0 (`ip -V`), recorded verbatim in tests/data/outputs/frr-*.json.
// They only parse: running the tools is the caller's. Truncated or garbage text, and fields of
// the wrong JSON type, are errors naming the file, never an exception.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/diag.h"

namespace gf {

/// BGP neighbour -> its state ("Established", "Active", "Idle", ...) from the JSON of `show bgp
/// ipv4 unicast summary json`, whose neighbours are under "peers" (`show bgp summary json` nests
/// them one level down, under "ipv4Unicast"; both are read). Numbered neighbours are keyed by
/// their address ("10.1.0.1"), unnumbered ones by their interface ("swp86"). A summary without
/// "peers" (bgpd holds no neighbours yet) is an empty map; a neighbour without a "state" is "?".
/// Errors: text that is not JSON, a top level, "peers" or a neighbour that is not a JSON object,
/// a "state" that is not a string.
Result<std::map<std::string, std::string>> parse_bgp_summary_json(const std::string& text,
                                                                  const std::string& file);

/// One next hop of a kernel route.
struct RouteNextHop {
  /// Its address: "gateway" ("10.1.0.1"; FRR's unnumbered BGP installs 169.254.0.1 "onlink"), or
  /// the "host" of "via" (a next hop of another family); "" when the route names none.
  std::string gateway;
  std::string dev;  ///< the interface it leaves by ("swp86"); "" when not given
};

/// The next hops of the first route in the JSON of `ip -j route show exact PREFIX`: one per
/// entry of "nexthops" (a multipath route), else one for a route with a "gateway" or a "via", else
/// none (a connected subnet); "[]" (no such route) has none. Errors: text that is not JSON, not an
/// array, a route or a next hop that is not an object, "nexthops" not an array, a "gateway" or
/// "dev" that is not a string, a "via" without a string "host".
Result<std::vector<RouteNextHop>> parse_ip_route_json(const std::string& text,
                                                      const std::string& file);

}  // namespace gf
