#include "lab/netplan.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "yaml/yaml_reader.h"

namespace gf {
namespace {

/// The MTUs Linux accepts on an Ethernet interface (IPv4 minimum 68; 16-bit length field).
constexpr int kMinMtu = 68;
constexpr int kMaxMtu = 65535;

Diagnostic at(const std::string& file, const YAML::Node& n, const std::string& key,
              const std::string& message) {
  const YAML::Mark m = n.Mark();
  return Diagnostic::at(file, m.line + 1, m.column + 1, key, message);
}

// Unknown keys of a map, as errors (the lab applies only what it understands).
void check_keys(const std::string& file, const YAML::Node& map, const std::string& path,
                const std::set<std::string>& known, std::vector<Diagnostic>& errs) {
  for (const auto& kv : map) {
    const std::string k = kv.first.as<std::string>();
    if (!known.count(k))
      errs.push_back(at(file, kv.first, path + "." + k, "not supported by the lab"));
  }
}

}  // namespace

Result<std::vector<NetplanInterface>> parse_netplan(const std::string& text,
                                                    const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Diagnostic::at(file, e.mark.line + 1, e.mark.column + 1, "", e.msg);
  }
  std::vector<Diagnostic> errs;
  const YAML::Node eths = child(child(root, "network"), "ethernets");
  if (!eths.IsDefined() || !eths.IsMap())
    return Diagnostic::at(file, 1, 1, "network.ethernets", "missing: no interfaces to configure");
  std::vector<NetplanInterface> out;
  try {
    for (const auto& kv : eths) {
      NetplanInterface i;
      i.name = kv.first.as<std::string>();
      const std::string path = "network.ethernets." + i.name;
      const YAML::Node& n = kv.second;
      if (!n.IsMap()) {
        errs.push_back(at(file, n, path, "expected a map"));
        continue;
      }
      check_keys(file, n, path, {"mtu", "addresses", "routes", "routing-policy"}, errs);
      if (n["mtu"]) {
        i.mtu = n["mtu"].as<int>();
        if (i.mtu < kMinMtu || i.mtu > kMaxMtu)
          errs.push_back(at(file, n["mtu"], path + ".mtu",
                            fmt::format("{} is not an MTU ({}..{})", i.mtu, kMinMtu, kMaxMtu)));
      }
      for (const auto& a : child(n, "addresses")) i.addresses.push_back(a.as<std::string>());
      for (const auto& r : child(n, "routes")) {
        check_keys(file, r, path + ".routes[]", {"to", "via", "scope", "table"}, errs);
        NetplanRoute route;
        if (!r["to"])
          errs.push_back(at(file, r, path + ".routes[].to", "missing"));
        else
          route.to = r["to"].as<std::string>();
        if (r["via"]) route.via = r["via"].as<std::string>();
        if (r["scope"]) route.scope = r["scope"].as<std::string>();
        if (r["table"]) route.table = r["table"].as<int>();
        i.routes.push_back(route);
      }
      for (const auto& r : child(n, "routing-policy")) {
        check_keys(file, r, path + ".routing-policy[]", {"from", "table"}, errs);
        if (!r["from"] || !r["table"]) {
          errs.push_back(at(file, r, path + ".routing-policy[]", "needs from and table"));
          continue;
        }
        i.rules.push_back({r["from"].as<std::string>(), r["table"].as<int>()});
      }
      out.push_back(std::move(i));
    }
  } catch (const YAML::Exception& e) {
    errs.push_back(
        Diagnostic::at(file, e.mark.line + 1, e.mark.column + 1, "network.ethernets", e.msg));
  }
  if (!errs.empty()) return errs;
  return out;
}

std::vector<std::vector<std::string>> netplan_ip_commands(const std::string& netns,
                                                          const NetplanInterface& i) {
  std::vector<std::vector<std::string>> cmds;
  const std::vector<std::string> ip{"ip", "-n", netns};
  auto cmd = [&](std::initializer_list<std::string> args) {
    std::vector<std::string> c = ip;
    c.insert(c.end(), args);
    return c;
  };
  if (i.mtu > 0) cmds.push_back(cmd({"link", "set", "dev", i.name, "mtu", std::to_string(i.mtu)}));
  for (const auto& a : i.addresses) cmds.push_back(cmd({"address", "add", a, "dev", i.name}));
  cmds.push_back(cmd({"link", "set", "dev", i.name, "up"}));
  for (const auto& r : i.routes) {
    std::vector<std::string> c = cmd({"route", "add", r.to});
    if (!r.via.empty()) c.insert(c.end(), {"via", r.via});
    c.insert(c.end(), {"dev", i.name});
    if (!r.scope.empty()) c.insert(c.end(), {"scope", r.scope});
    if (r.table > 0) c.insert(c.end(), {"table", std::to_string(r.table)});
    cmds.push_back(std::move(c));
  }
  for (const auto& r : i.rules)
    cmds.push_back(cmd({"rule", "add", "from", r.from, "table", std::to_string(r.table)}));
  return cmds;
}

}  // namespace gf
