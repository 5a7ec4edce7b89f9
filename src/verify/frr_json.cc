#include "verify/frr_json.h"

#include <fmt/format.h>

#include <exception>
#include <nlohmann/json.hpp>

namespace gf {
namespace {

// Larger inputs are not one command's output; refuse rather than spend memory (as parsers.cc).
constexpr size_t kMaxInputBytes = 64u << 20;

Diagnostic bad(const std::string& file, const std::string& message) {
  return Diagnostic::in_file(file, "", message);
}

// `text` as JSON, or why not (nlohmann's message says where it stopped). `what` names the
// output in the messages: "BGP summary".
Result<nlohmann::json> parse_json(const std::string& text, const std::string& file,
                                  const std::string& what) {
  if (text.size() > kMaxInputBytes) return bad(file, "file too large for " + what + " JSON");
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    return bad(file, fmt::format("not valid {} JSON: {}", what, e.what()));
  }
}

// One next hop from a route, or from an entry of its "nexthops": `where` names it in errors.
Result<RouteNextHop> next_hop(const nlohmann::json& o, const std::string& file,
                              const std::string& where) {
  RouteNextHop h;
  if (const auto g = o.find("gateway"); g != o.end()) {
    if (!g->is_string()) return bad(file, "ip route JSON: " + where + ".gateway is not a string");
    h.gateway = g->get<std::string>();
  } else if (const auto v = o.find("via"); v != o.end()) {
    // iproute2 prints a next hop of another family (RTA_VIA) as {"family": ..., "host": ...}.
    const auto host = v->is_object() ? v->find("host") : v->end();
    if (!v->is_object() || host == v->end() || !host->is_string())
      return bad(file, "ip route JSON: " + where + ".via has no host address");
    h.gateway = host->get<std::string>();
  }
  if (const auto d = o.find("dev"); d != o.end()) {
    if (!d->is_string()) return bad(file, "ip route JSON: " + where + ".dev is not a string");
    h.dev = d->get<std::string>();
  }
  return h;
}

}  // namespace

Result<std::map<std::string, std::string>> parse_bgp_summary_json(const std::string& text,
                                                                  const std::string& file) {
  auto j = parse_json(text, file, "BGP summary");
  if (!j) return j.errors();
  if (!j->is_object()) return bad(file, "BGP summary JSON is not an object");
  const nlohmann::json* peers = nullptr;
  std::string where = "peers";
  if (const auto p = j->find("peers"); p != j->end()) {
    peers = &*p;
  } else if (const auto af = j->find("ipv4Unicast"); af != j->end()) {
    if (!af->is_object()) return bad(file, "BGP summary JSON: ipv4Unicast is not an object");
    if (const auto p = af->find("peers"); p != af->end()) {
      peers = &*p;
      where = "ipv4Unicast.peers";
    }
  }
  std::map<std::string, std::string> out;
  if (!peers) return out;  // bgpd has no neighbours (yet)
  if (!peers->is_object()) return bad(file, "BGP summary JSON: " + where + " is not an object");
  for (const auto& [peer, v] : peers->items()) {
    if (!v.is_object())
      return bad(file, fmt::format("BGP summary JSON: {}.{} is not an object", where, peer));
    const auto state = v.find("state");
    if (state == v.end()) {
      out[peer] = "?";  // FRR prints one for every neighbour; without it, it is not Established
    } else if (!state->is_string()) {
      return bad(file, fmt::format("BGP summary JSON: {}.{}.state is not a string", where, peer));
    } else {
      out[peer] = state->get<std::string>();
    }
  }
  return out;
}

Result<std::vector<RouteNextHop>> parse_ip_route_json(const std::string& text,
                                                      const std::string& file) {
  auto j = parse_json(text, file, "ip route");
  if (!j) return j.errors();
  if (!j->is_array()) return bad(file, "ip route JSON is not an array of routes");
  std::vector<RouteNextHop> out;
  if (j->empty()) return out;  // no such route
  const nlohmann::json& route = j->front();
  if (!route.is_object()) return bad(file, "ip route JSON: the first route is not an object");
  if (const auto hops = route.find("nexthops"); hops != route.end()) {
    if (!hops->is_array()) return bad(file, "ip route JSON: nexthops is not an array");
    for (size_t i = 0; i < hops->size(); ++i) {
      const nlohmann::json& e = (*hops)[i];
      const std::string where = fmt::format("nexthops[{}]", i);
      if (!e.is_object()) return bad(file, "ip route JSON: " + where + " is not an object");
      auto h = next_hop(e, file, where);
      if (!h) return h.errors();
      out.push_back(std::move(*h));
    }
    return out;
  }
  if (route.contains("gateway") || route.contains("via")) {
    auto h = next_hop(route, file, "route");
    if (!h) return h.errors();
    out.push_back(std::move(*h));
  }
  return out;
}

}  // namespace gf
