// The checks of a lab that is up (`lab check`): BGP sessions, ECMP next hops, jumbo frames end
// to end, traffic across the spines and its spread over the uplinks, and a link failure and its
// repair. Bringing the lab up and down is in lab.cc.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "config/frr.h"
#include "config/hosts.h"
#include "lab/lab.h"
#include "lab/lab_internal.h"
#include "lab/process.h"
#include "verify/frr_json.h"
#include "verify/parsers.h"

namespace gf {
using namespace lab_internal;  // NOLINT(google-build-using-namespace): the lab's own helpers

namespace {

/// Once a wait for convergence ran out, later waits take this long; seconds.
constexpr double kAfterTimeoutWaitS = 2;
/// The longest a single lab command (ping, iperf3 client, vtysh) may run; seconds.
constexpr double kCommandTimeoutS = 30;
/// A ping answers within this (the lab is one machine).
constexpr const char* kPingWaitS = "2";
/// Parallel TCP streams of the ECMP spread check: with 16, all on one of two uplinks happens
/// with probability 2^-15.
constexpr int kSpreadStreams = 16;
/// The least share of the bytes every uplink must carry in the ECMP spread check.
constexpr double kMinUplinkShare = 0.05;
/// Runs of the spread check before it fails: a second run (new source ports) when the first left an
/// uplink idle, said in the result.
constexpr int kSpreadAttempts = 2;
/// How long an iperf3 server may take to listen; seconds.
constexpr double kIperfListenWaitS = 5;
/// Connection attempts of the iperf3 client (a refused one is tried again).
constexpr int kIperfAttempts = 3;
/// iperf3 runs this long per measurement; seconds.
constexpr const char* kIperfSeconds = "2";
/// The IPv4 and ICMP headers a ping payload rides in: 20 + 8 bytes.
constexpr int kPingHeaderBytes = 28;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Checker {
  const LabLayout& lab;
  const LabOptions& o;
  std::vector<LabCheck> checks;

  void add(const std::string& name, bool ok, const std::string& detail, Clock::time_point t0) {
    checks.push_back({name, ok, detail, seconds_since(t0)});
    if (o.on_check) o.on_check(checks.back());
  }

  // Sessions not Established, over all switches ("spine01 10.1.0.0 Active").
  std::vector<std::string> sessions_down(int& total) const {
    std::vector<std::string> down;
    total = 0;
    for (const auto& d : lab.devices) {
      if (d.role == "host") continue;
      const auto peers = bgp_peers(d.netns);
      const size_t expected = lab.addresses.ports_of(d.name).size();
      total += static_cast<int>(expected);
      for (const auto& [peer, state] : peers)
        if (state != "Established") down.push_back(d.name + " " + peer + " " + state);
      if (peers.size() < expected)
        down.push_back(
            fmt::format("{}: {} of {} neighbours configured", d.name, peers.size(), expected));
    }
    return down;
  }

  // Next hops the kernel of `leaf` holds for `prefix` (0: no route, or one the parser refuses).
  static int next_hops(const LabDevice& leaf, const std::string& prefix) {
    const CommandResult r =
        run_command({"ip", "-j", "-n", leaf.netns, "route", "show", "exact", prefix});
    if (!r.ok()) return 0;
    const auto hops =
        parse_ip_route_json(r.out, fmt::format("ip -n {} route show exact {}", leaf.netns, prefix));
    return hops ? static_cast<int>(hops->size()) : 0;
  }

  // The links from `leaf` up to the spines, in cabling order.
  std::vector<const LabLink*> uplinks_of(const std::string& leaf) const {
    std::vector<const LabLink*> out;
    for (const auto& l : lab.links)
      if (l.fabric && l.a == leaf) out.push_back(&l);
    return out;
  }
  int uplinks(const std::string& leaf) const { return static_cast<int>(uplinks_of(leaf).size()); }
  // The switches `leaf`'s uplinks reach: "spine01, spine02".
  std::string spine_names(const std::string& leaf) const {
    std::set<std::string> peers;
    for (const auto* l : uplinks_of(leaf)) peers.insert(l->b);
    std::string s;
    for (const auto& p : peers) s += (s.empty() ? "" : ", ") + p;
    return s;
  }

  // Next hops `leaf` should hold towards the subnet of leaf `owner` while `down` (if any) is
  // down: one per uplink, less the failed uplink itself and the uplinks to a spine that no
  // longer reaches `owner` directly (a spine of another pod reaches it through the cores).
  int expected_next_hops(const std::string& leaf, const std::string& owner,
                         const LabLink* down) const {
    int n = 0;
    for (const auto& p : lab.addresses.ports_of(leaf)) {
      if (!p.up) continue;
      if (down && leaf == down->a && p.port == down->a_port) continue;
      if (down && owner == down->a && p.peer == down->b) {
        int live = 0;  // the spine's other links to the owner
        for (const auto& l : lab.links)
          live += l.fabric && l.a == owner && l.b == p.peer && &l != down ? 1 : 0;
        if (live == 0) continue;
      }
      ++n;
    }
    return n;
  }

  // Leaf routes to remote host subnets whose next-hop count is not what `down` leaves:
  // "su01-r0-leaf 10.128.0.8/29: 1 next hops, expected 2".
  std::vector<std::string> ecmp_mismatches(const LabLink* down, int& routes) const {
    std::vector<std::string> bad;
    routes = 0;
    for (const auto& d : lab.devices) {
      if (d.role != "leaf") continue;
      for (const auto& s : lab.addresses.subnets) {
        if (s.leaf == d.name || plane_of(s.leaf) != plane_of(d.name)) continue;
        ++routes;
        const int got = next_hops(d, s.prefix.str());
        const int want = expected_next_hops(d.name, s.leaf, down);
        if (got != want)
          bad.push_back(
              fmt::format("{} {}: {} next hops, expected {}", d.name, s.prefix.str(), got, want));
      }
    }
    return bad;
  }

  const HostAddress& first_host() const { return lab.addresses.hosts.front(); }
  // A host on a leaf other than the first host's, in its plane (planes are separate fabrics),
  // in the last unit: the farthest one.
  const HostAddress& far_host() const {
    const HostAddress& f = first_host();
    for (auto it = lab.addresses.hosts.rbegin(); it != lab.addresses.hosts.rend(); ++it)
      if (it->leaf != f.leaf && it->plane == f.plane && it->rail == f.rail) return *it;
    for (auto it = lab.addresses.hosts.rbegin(); it != lab.addresses.hosts.rend(); ++it)
      if (it->leaf != f.leaf && it->plane == f.plane) return *it;
    return lab.addresses.hosts.back();
  }
  // The first node's first port in the plane of `to` (planes are separate fabrics; within one,
  // rail 0 reaches every rail through the spines).
  const HostAddress& source_for(const HostAddress& to) const {
    for (const auto& h : lab.addresses.hosts)
      if (h.node == first_host().node && h.plane == to.plane) return h;
    return first_host();
  }
  // The plane of a leaf (from the hosts cabled to it).
  int plane_of(const std::string& leaf) const {
    for (const auto& h : lab.addresses.hosts)
      if (h.leaf == leaf) return h.plane;
    return 0;
  }
  const LabDevice& dev(const std::string& name) const { return *lab.device(name); }

  Argv ping_argv(const HostAddress& from, const HostAddress& to, int payload) const {
    return in_netns(dev(from.node).netns,
                    {"ping", "-n", "-M", "do", "-s", std::to_string(payload), "-c", "1", "-W",
                     kPingWaitS, "-I", ipv4_str(from.ip), ipv4_str(to.ip)});
  }
  CommandResult ping(const HostAddress& from, const HostAddress& to, int payload) const {
    return run_command(ping_argv(from, to, payload));
  }

  // How long a wait for convergence may take: the whole timeout until one wait has run out,
  // then only a moment (a fabric that did not converge once will not, and check should end).
  double wait_s() const { return converged_ ? o.timeout_s : kAfterTimeoutWaitS; }
  bool waited(bool ok) {
    converged_ = converged_ && ok;
    return ok;
  }
  bool converged_ = true;

  // iperf3 from `from` to `to`; Gbit/s received, or an error text.
  Result<double> iperf(const HostAddress& from, const HostAddress& to, int streams = 1) const {
    BackgroundCommand server(
        in_netns(dev(to.node).netns, {"iperf3", "-s", "-1", "-B", ipv4_str(to.ip)}));
    if (!server.started()) return Diagnostic::error("iperf3 server did not start");
    const Argv client =
        in_netns(dev(from.node).netns, {"iperf3", "-c", ipv4_str(to.ip), "-B", ipv4_str(from.ip),
                                        "-t", kIperfSeconds, "-P", std::to_string(streams), "-J"});
    // The client may only start once the server listens.
    const Argv listening = in_netns(dev(to.node).netns, {"ss", "-Hltn", "src", ipv4_str(to.ip)});
    wait_until(kIperfListenWaitS, [&] { return !run_command(listening).out.empty(); });
    CommandResult r;
    for (int attempt = 0; attempt < kIperfAttempts; ++attempt) {
      r = run_command(client, kCommandTimeoutS);
      if (r.out.find("Connection refused") == std::string::npos) break;
      std::this_thread::sleep_for(kConvergePoll);
    }
    // iperf3 -J exits 0 even when it could not connect; its JSON then holds "error".
    const bool ran = r.ok() && r.out.find("\"error\"") == std::string::npos;
    const CommandResult served = server.finish(ran ? kCommandTimeoutS : 0);
    if (!r.ok()) {
      std::string said = served.out;
      while (!said.empty() && said.back() == '\n') said.pop_back();
      return Diagnostic::error(r.describe(client) +
                               (said.empty() ? "" : " (server: " + said + ")"));
    }
    auto run = parse_iperf3(r.out, "iperf3 -J");
    if (!run) return run.errors();
    return run->received_bps / 1e9;
  }

  std::string where(const HostAddress& h) const {
    return fmt::format("{} {} ({})", h.node, h.netdev, ipv4_str(h.ip));
  }

  void check_sessions(const std::string& name) {
    const auto t0 = Clock::now();
    int total = 0;
    std::vector<std::string> down;
    const bool ok = waited(wait_until(wait_s(), [&] {
      down = sessions_down(total);
      return down.empty();
    }));
    add(name, ok,
        ok ? fmt::format("{} of {} eBGP sessions Established on {} switches", total, total,
                         lab.addresses.switches.size())
           : fmt::format("{} not Established after {:.0f} s: {}", down.size(), o.timeout_s,
                         down.front()),
        t0);
  }

  void check_ecmp(const std::string& name, const LabLink* down, const std::string& what) {
    const auto t0 = Clock::now();
    int routes = 0;
    std::vector<std::string> bad;
    const bool ok = waited(wait_until(wait_s(), [&] {
      bad = ecmp_mismatches(down, routes);
      return bad.empty();
    }));
    add(name, ok,
        ok ? fmt::format("{} leaf routes to remote host subnets, {}", routes, what)
           : fmt::format("{} of {} routes wrong: {}", bad.size(), routes, bad.front()),
        t0);
  }

  void check_jumbo() {
    const auto t0 = Clock::now();
    const HostAddress& src = first_host();
    const int payload = kHostMtu - kPingHeaderBytes;
    int answered = 0, asked = 0;
    std::string failed;
    // Resolve the gateways first: the echoes to other leaves would all queue behind their ARP
    // resolution, and the kernel holds only ~200 KiB (unres_qlen_bytes) of them, a dozen
    // jumbo frames.
    std::set<int> seen_planes;
    for (const auto& h : lab.addresses.hosts) {
      if (h.node != src.node || !seen_planes.insert(h.plane).second) continue;
      run_command(in_netns(dev(h.node).netns, {"ping", "-n", "-c", "1", "-W", kPingWaitS, "-I",
                                               ipv4_str(h.ip), ipv4_str(h.gateway)}));
    }
    const size_t planes = seen_planes.size();
    // All at once: a broken fabric costs one ping timeout, not one per host. Each address is
    // pinged from the first node's first port in its plane.
    std::vector<std::pair<const HostAddress*, std::unique_ptr<BackgroundCommand>>> pings;
    for (const auto& h : lab.addresses.hosts)
      if (h.node != src.node)
        pings.emplace_back(
            &h, std::make_unique<BackgroundCommand>(ping_argv(source_for(h), h, payload)));
    int retried = 0;
    for (auto& [h, p] : pings) {
      ++asked;
      bool ok = p->finish(kCommandTimeoutS).ok();
      if (!ok) {  // one more try: a busy machine can lose a single echo; a broken path stays so
        ++retried;
        ok = ping(source_for(*h), *h, payload).ok();
      }
      if (ok)
        ++answered;
      else if (failed.empty())
        failed = where(*h);
    }
    add("jumbo-frames", answered == asked,
        fmt::format("{} of {} host addresses answer {}-byte pings with DF set from {}{}{}",
                    answered, asked, kHostMtu,
                    planes > 1
                        ? fmt::format("{}'s first port in each of the {} planes", src.node, planes)
                        : where(src),
                    retried ? fmt::format(" ({} asked twice)", retried) : "",
                    failed.empty() ? "" : "; first silent: " + failed),
        t0);
  }

  void check_oversize() {
    const auto t0 = Clock::now();
    const CommandResult r = ping(first_host(), far_host(), kHostMtu - kPingHeaderBytes + 1);
    std::string why = r.err.empty() ? r.out : r.err;
    if (const auto p = why.find("message too long"); p != std::string::npos)
      why = why.substr(p, why.find('\n', p) - p);
    else
      why = r.ok() ? "it was answered" : "no answer";
    const bool refused =
        !r.ok() && why.find("mtu=" + std::to_string(kHostMtu)) != std::string::npos;
    add("oversized-frames-refused", refused,
        fmt::format("a {}-byte packet with DF set from {}: {}", kHostMtu + 1, first_host().node,
                    why),
        t0);
  }

  void check_traffic(const std::string& name, const std::string& context) {
    const auto t0 = Clock::now();
    const HostAddress& a = first_host();
    const HostAddress& b = far_host();
    auto gbps = iperf(a, b);
    const bool ok = gbps && *gbps > 0;
    add(name, ok,
        ok ? fmt::format("iperf3 {} -> {}{}: {:.1f} Gbit/s", where(a), where(b), context, *gbps)
           : (gbps ? std::string("no traffic received") : gbps.errors().front().message),
        t0);
  }

  // Bytes sent so far by `port` of the switch in `netns` (-1 when unreadable).
  static long long tx_bytes(const std::string& netns, const std::string& port) {
    const CommandResult r =
        run_command({"ip", "-j", "-s", "-n", netns, "link", "show", "dev", port});
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    if (j.is_discarded() || !j.is_array() || j.empty() || !j[0].is_object()) return -1;
    const auto& st = j[0].contains("stats64") ? j[0]["stats64"] : j[0]["stats"];
    if (!st.is_object() || !st.contains("tx") || !st["tx"].is_object()) return -1;
    const auto& b = st["tx"]["bytes"];
    return b.is_number() ? b.get<long long>() : -1;
  }

  // Many TCP streams between two hosts of different leaves leave the source leaf over every
  // uplink: the switches hash the 5-tuple (as the configurations ask), so the streams' source
  // ports spread them.
  void check_ecmp_spread() {
    const auto t0 = Clock::now();
    const HostAddress& a = first_host();
    const HostAddress& b = far_host();
    const LabDevice& leaf = dev(a.leaf);
    const std::vector<const LabLink*> ups = uplinks_of(a.leaf);
    if (ups.size() < 2) {
      add("ecmp-spread", true, fmt::format("skipped: {} has one uplink", a.leaf), t0);
      return;
    }
    // One run of the streams: the share of bytes each uplink carried. A second run (new source
    // ports) is made when the first leaves an uplink idle, and the check says so: a lab under
    // load has been seen to put every stream of one run on one uplink (once in the test runs of
    // this repository, unnumbered), where 16
    // streams hashed at random do that once in 30,000 runs.
    std::string split, failed_first;
    bool every = false;
    double rate = 0;
    for (int attempt = 0; attempt < kSpreadAttempts && !every; ++attempt) {
      std::vector<long long> before;
      for (const auto* u : ups) before.push_back(tx_bytes(leaf.netns, u->a_if));
      auto gbps = iperf(a, b, kSpreadStreams);
      if (!gbps) {
        add("ecmp-spread", false, gbps.errors().front().message, t0);
        return;
      }
      rate = *gbps;
      long long total = 0;
      std::vector<long long> sent;
      for (size_t i = 0; i < ups.size(); ++i) {
        sent.push_back(tx_bytes(leaf.netns, ups[i]->a_if) - before[i]);
        total += sent.back();
      }
      if (!split.empty()) failed_first = "; the first run left " + split;
      split.clear();
      every = total > 0;
      for (size_t i = 0; i < ups.size(); ++i) {
        const double share = total > 0 ? static_cast<double>(sent[i]) / total : 0;
        every = every && share >= kMinUplinkShare;
        split += fmt::format("{}{} {:.0f}%", i ? ", " : "", ups[i]->a_if, 100 * share);
      }
    }
    add("ecmp-spread", every,
        fmt::format("{} TCP streams {} -> {} ({:.1f} Gbit/s) leave {} over {}{}", kSpreadStreams,
                    a.node, b.node, rate, a.leaf, split, failed_first),
        t0);
  }

  // Takes the first leaf's first uplink down, checks the fabric routes around it, and brings it
  // back.
  void check_link_failure() {
    // The first host's leaf, if it has another uplink to fail over to.
    const std::vector<const LabLink*> ups = uplinks_of(first_host().leaf);
    const auto t0 = Clock::now();
    if (ups.size() < 2) {
      add("link-down", true,
          fmt::format("skipped: {} has {} uplink, nothing to fail over to (plan two or more "
                      "uplinks per leaf, e.g. a lower oversubscription)",
                      first_host().leaf, ups.size()),
          t0);
      return;
    }
    const LabLink* link = ups.front();
    const LabDevice& leaf = dev(link->a);
    const std::string name = fmt::format("{} {} - {} {}", link->a, link->a_if, link->b, link->b_if);
    const CommandResult down =
        run_command({"ip", "-n", leaf.netns, "link", "set", "dev", link->a_if, "down"});
    if (!down.ok()) {
      add("link-down", false, down.describe({"ip", "link", "set", link->a_if, "down"}), t0);
      return;
    }
    // Ctrl-C while the link is down: the checks of the failure that are left are skipped, the
    // link comes back and lab_check stops.
    const std::vector<std::function<void()>> while_down{
        [&] {  // the session over the failed link goes down (and check then sees it come back)
          std::string peer = link->a_if;  // unnumbered sessions are named by their interface
          for (const auto& p : lab.addresses.ports_of(leaf.name))
            if (p.port == link->a_port && !lab.addresses.unnumbered) peer = ipv4_str(p.peer_ip);
          std::string state;
          const bool ok = waited(wait_until(wait_s(), [&] {
            const auto peers = bgp_peers(leaf.netns);
            const auto it = peers.find(peer);
            state = it == peers.end() ? "gone" : it->second;
            return state != "Established";
          }));
          add("link-down-session", ok,
              fmt::format("{} BGP session to {} over {}: {}", leaf.name, link->b, peer,
                          ok ? state : "still Established"),
              t0);
        },
        [&] {
          const int full = uplinks(leaf.name);
          check_ecmp("link-down-reroutes", link,
                     fmt::format("{} down: {} routes through {} of {} uplinks, and the other "
                                 "leaves reach it only through the spines still linked to it",
                                 name, leaf.name, full - 1, full));
        },
        [&] {
          const auto t1 = Clock::now();
          const CommandResult r = ping(first_host(), far_host(), kHostMtu - kPingHeaderBytes);
          add("link-down-pings", r.ok(),
              fmt::format("{} -> {} with {} down: {}", first_host().node, far_host().node,
                          link->a_if, r.ok() ? "answered" : "no answer"),
              t1);
        },
        [&] { check_traffic("link-down-traffic", " with " + link->a_if + " down"); }};
    for (const auto& step : while_down)
      if (!g_interrupted) step();
    run_command({"ip", "-n", leaf.netns, "link", "set", "dev", link->a_if, "up"});
    if (g_interrupted) return;
    check_sessions("link-up-sessions");
    check_ecmp("link-up-restores", nullptr,
               fmt::format("{} back up: every leaf uses all its uplinks again", name));
  }
};

}  // namespace

Result<std::vector<LabCheck>> lab_check(const LabLayout& lab, const LabOptions& o) {
  // The lab must be up: every namespace and every daemon.
  for (const auto& d : lab.devices) {
    if (!netns_exists(d.netns))
      return Diagnostic::error(fmt::format("lab {} is not up: no namespace {}", lab.name, d.netns),
                               "run gpufabric lab up with the same spec first");
    if (d.role == "host") continue;
    for (const auto& daemon : kFrrDaemons)
      if (lab_daemon_pid(d.netns, daemon) <= 0)
        return Diagnostic::error(
            fmt::format("lab {}: {} is not running on {}", lab.name, daemon, d.name),
            fmt::format("see {}/logs/{}-{}.log; run gpufabric lab up again", lab_dir(lab, o),
                        d.name, daemon));
  }
  Checker c{lab, o, {}};
  const LabDevice* leaf = nullptr;
  for (const auto& d : lab.devices)
    if (d.role == "leaf") {
      leaf = &d;
      break;
    }
  const std::vector<std::function<void()>> steps{
      [&] { c.check_sessions("bgp-sessions"); },
      [&] {
        c.check_ecmp("ecmp-routes", nullptr,
                     fmt::format("each with one next hop per uplink ({} on {}: {})",
                                 c.uplinks(leaf->name), leaf->name, c.spine_names(leaf->name)));
      },
      [&] { c.check_jumbo(); },
      [&] { c.check_oversize(); },
      [&] { c.check_traffic("traffic-across-spines", ""); },
      [&] { c.check_ecmp_spread(); },
      [&] { c.check_link_failure(); }};
  // Ctrl-C: finish the step (the failed link is always brought back), then stop; an interrupt
  // during the last step is reported too.
  const InterruptGuard guard;
  for (const auto& step : steps) {
    step();
    if (g_interrupted) {
      c.add("interrupted", false, "check was interrupted; the remaining checks did not run",
            Clock::now());
      break;
    }
  }
  return c.checks;
}

}  // namespace gf
