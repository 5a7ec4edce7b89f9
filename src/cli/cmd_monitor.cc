// gpufabric exporter and dashboard: the fabric in Prometheus and Grafana (seed §7, §8).
#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>

#include "cli/commands.h"
#include "cli/resources.h"
#include "common/output.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "topo/fabric.h"
#include "verify/exporter.h"

namespace gf::cli {
namespace {

struct ExporterFlags {
  std::string listen = "127.0.0.1:9850", plan, sysfs = "/sys", ethtool_dir, node, baseline;
  bool once = false;
};

struct DashboardFlags {
  std::string spec, out;
};

// The HTTP server against clients that connect and send nothing (health checkers, port scanners,
// stalled proxies). cpp-httplib gives each connection a worker thread until the connection sends
// a request or its keep-alive wait ends; with the defaults (8 workers, 5 s) 10 idle connections
// added ~4.5 s to every scrape and 20 made Prometheus time out.
//
// Workers: more than the 100 idle connections the exporter must stand without delaying a scrape,
// with room for Prometheus pairs and ad-hoc curls. An idle worker costs only its stack's address
// space.
constexpr size_t kWorkerThreads = 128;
// A connection that has not sent a request within this is closed and its worker freed. A scraper
// sends its request as soon as it connects; Prometheus reconnects for scrapes further apart.
constexpr time_t kKeepAliveSeconds = 1;
// A request is a few hundred bytes, read at once; a client slower than this is dropped.
constexpr time_t kReadTimeoutSeconds = 2;
// Writing a scrape (tens of KiB) to a client that stopped reading ends well before Prometheus'
// default 10 s scrape timeout.
constexpr time_t kWriteTimeoutSeconds = 5;
// The exporter takes no request bodies: anything larger is refused without being read.
constexpr size_t kMaxRequestBodyBytes = 4 * 1024;
// Connections the kernel holds until the server accepts them. cpp-httplib 0.11 listens with 5:
// a burst of connections (idle clients, then Prometheus) overflows it, the kernel drops the
// scraper's SYN and it retries only after 1 s. Linux caps this at net.core.somaxconn.
constexpr int kListenBacklog = 1024;

// cpp-httplib's server with the listen backlog raised once bound.
class ExporterServer : public httplib::Server {
 public:
  bool set_listen_backlog(int backlog) { return ::listen(svr_sock_, backlog) == 0; }
};

httplib::Server* g_server = nullptr;
void stop(int) {
  if (g_server) g_server->stop();
}

// A diagnostic when `host` (of --listen `listen`) does not resolve to an address to bind, so that
// a failed bind is about the port; "" binds every address.
std::optional<Diagnostic> check_host(const std::string& host, const std::string& listen) {
  if (host.empty()) return std::nullopt;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found) ::freeaddrinfo(found);
  if (rc == 0) return std::nullopt;
  const std::string what =
      fmt::format("cannot listen on {}: cannot resolve '{}': {}", listen, host, ::gai_strerror(rc));
  return Diagnostic::flag("--listen", what, "use ADDR:PORT, e.g. 127.0.0.1:9850");
}

// The diagnostic for a failed bind to --listen `listen`, from the bind's errno `err`.
Diagnostic bind_error(const std::string& listen, int err) {
  const char* hint = err == EADDRINUSE      ? "another program serves this port: stop it or choose "
                                              "another port, e.g. --listen 127.0.0.1:9851"
                     : err == EACCES        ? "ports below 1024 need root: choose a port above 1024"
                     : err == EADDRNOTAVAIL ? "give an address of this host, or 0.0.0.0 for all"
                                            : "check the address";
  const std::string what =
      fmt::format("cannot listen on {}: {}", listen, err ? std::strerror(err) : "bind failed");
  return Diagnostic::flag("--listen", what, hint);
}

// --listen split into the host to bind and the port: ADDR:PORT, an IPv6 address in brackets as
// URLs write it ([::1]:9850, RFC 3986 3.2.2), or one without them whose last colon starts the
// port (::1:9850). nullopt when it cannot be read, or names no host (":9850" would bind the
// loopback only, which a user leaving the host out does not mean).
struct ListenAt {
  std::string host;
  int port = 0;
};
std::optional<ListenAt> parse_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  ListenAt at;
  const char* port_end = listen.data() + listen.size();
  if (std::from_chars(listen.data() + colon + 1, port_end, at.port).ptr != port_end ||
      at.port <= 0 || at.port > 65535)
    return std::nullopt;
  at.host = listen.substr(0, colon);
  const bool open = !at.host.empty() && at.host.front() == '[';
  const bool close = !at.host.empty() && at.host.back() == ']';
  if (open != close || (open && at.host.size() < 3)) return std::nullopt;
  if (open) at.host = at.host.substr(1, at.host.size() - 2);
  if (at.host.empty() || at.host.find_first_of("[]") != std::string::npos) return std::nullopt;
  return at;
}

int run_exporter(const ExporterFlags& f) {
  const std::optional<ListenAt> at = parse_listen(f.listen);
  if (!at)
    return fail({Diagnostic::flag("--listen", fmt::format("cannot read '{}'", f.listen),
                                  "use ADDR:PORT: 127.0.0.1:9850, 0.0.0.0:9850 for every IPv4 "
                                  "address, [::1]:9850 for IPv6")});
  std::optional<PlannedSpec> planned;
  if (!f.plan.empty()) {
    auto loaded = load_planned_spec(f.plan);
    if (!loaded) return fail(loaded.errors());
    planned = std::move(*loaded);
  }
  ExporterOptions o;
  o.sysfs = f.sysfs;
  o.ethtool_dir = f.ethtool_dir;
  o.plan = planned ? &planned->plan : nullptr;
  o.catalog = planned ? &planned->catalog : nullptr;
  o.node = f.node;
  o.baseline_file = f.baseline;
  if (auto errs = validate_exporter_options(o); !errs.empty()) return fail(errs);
  // One scrape at a time: the sources' health is kept between scrapes, so a failing source is
  // logged when it starts failing and when it recovers, not on every scrape.
  std::mutex scrape_mutex;
  SourceHealth health;
  auto scrape = [&]() {
    const std::lock_guard<std::mutex> lock(scrape_mutex);
    std::vector<std::string> log;
    std::string text = collect_metrics(o, health, log);
    for (const auto& l : log) std::cerr << "gpufabric exporter: " << l << "\n";
    return text;
  };
  if (f.once) {
    std::cout << scrape();
    return kExitOk;
  }
  ExporterServer server;
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  server.set_keep_alive_timeout(kKeepAliveSeconds);
  server.set_read_timeout(kReadTimeoutSeconds, 0);
  server.set_write_timeout(kWriteTimeoutSeconds, 0);
  server.set_payload_max_length(kMaxRequestBodyBytes);
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(scrape(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("gpufabric exporter: see /metrics\n", "text/plain");
  });
  // SO_REUSEADDR only, so that a restarted exporter binds while its old connections linger in
  // TIME_WAIT. cpp-httplib's default sets SO_REUSEPORT instead, with which a second exporter
  // binds the same port and the kernel splits the scrapes between the two.
  server.set_socket_options([](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // Bound first, then announced: "serving" is printed only once the port is ours.
  if (auto bad = check_host(at->host, f.listen)) return fail({*bad});
  errno = 0;
  if (!server.bind_to_port(at->host, at->port)) return fail({bind_error(f.listen, errno)});
  if (!server.set_listen_backlog(kListenBacklog))  // serving still works, with bursts delayed
    std::cerr << "gpufabric exporter: warning: cannot raise the listen backlog: "
              << std::strerror(errno) << "\n";
  g_server = &server;
  std::signal(SIGINT, stop);
  std::signal(SIGTERM, stop);
  // The URL brackets an IPv6 address (RFC 3986 3.2.2), so that it can be pasted as it is.
  const bool v6 = at->host.find(':') != std::string::npos;
  std::cerr << fmt::format("gpufabric exporter: serving http://{}:{}/metrics\n",
                           v6 ? "[" + at->host + "]" : at->host, at->port);
  if (!server.listen_after_bind()) {
    std::cerr << "error: --listen: stopped serving on " << f.listen << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

Command add_exporter(CLI::App& root) {
  auto f = std::make_shared<ExporterFlags>();
  CLI::App* a = root.add_subcommand(
      "exporter",
      "Serve the fabric's counters (RDMA ports, congestion, PFC pauses, interfaces, plan "
      "mismatches, the check baseline) on /metrics for Prometheus. Bad flags exit 2 before "
      "serving; a source that fails later is skipped and logged once, and once when it recovers.");
  a->add_option("--listen", f->listen,
                "ADDR:PORT to serve /metrics on: 0.0.0.0:9850 for every IPv4 address, an IPv6 "
                "address in brackets ([::1]:9850, [::]:9850) (a port in use exits 2)")
      ->capture_default_str();
  CLI::Option* plan =
      a->add_option("--plan", f->plan, "label ports with their role in this spec's plan");
  a->add_option("--node", f->node,
                "this host's node name in the plan (cabling.csv), e.g. node001; needs --plan")
      ->needs(plan);
  a->add_option("--sysfs", f->sysfs, "read this folder instead of /sys (recorded hosts, tests)")
      ->capture_default_str();
  a->add_option("--ethtool-dir", f->ethtool_dir,
                "read 'ethtool -S' outputs from DIR/IFACE.txt instead of running ethtool");
  a->add_option("--baseline", f->baseline,
                "export this 'gpufabric check --json' result (checked at start, read on each "
                "scrape)");
  a->add_flag("--once", f->once, "print one scrape on stdout and exit");
  return {a, [f] { return run_exporter(*f); }};
}

Command add_dashboard(CLI::App& root) {
  auto f = std::make_shared<DashboardFlags>();
  CLI::App* a = root.add_subcommand(
      "dashboard",
      "Write a Grafana dashboard and Prometheus alerting rules for the exporter's metrics; on "
      "a RoCE fabric the PFC pause, ECN mark and CNP thresholds come from the packet-level run "
      "of qos's default pattern at the planned load.");
  a->add_option("SPEC", f->spec, "the cluster spec")->required();
  a->add_option("-o,--out", f->out, "folder for grafana-dashboard.json and prometheus-rules.yml")
      ->required();
  return {a, [f]() -> int {
            auto loaded = load_planned_spec(f->spec);
            if (!loaded) return fail(loaded.errors());
            const Plan* plan = &loaded->plan;
            // RoCE alert thresholds from the packet-level run of the default pattern.
            const Fabric fab = Fabric::build(*plan, loaded->catalog);
            auto basis = qos_alert_basis(*plan, loaded->catalog, fab);
            std::optional<QosAlertBasis> qos;
            std::string absent;
            if (basis)
              qos = *basis;
            else
              absent = basis.errors().front().message;
            auto w = write_outputs(
                f->out, {{"grafana-dashboard.json", grafana_dashboard(*plan).dump(2) + "\n"},
                         {"prometheus-rules.yml", prometheus_rules(*plan, qos, absent)}});
            if (!w) return fail(w.errors());
            for (const auto& p : *w) std::cerr << "wrote " << p << "\n";
            return kExitOk;
          }};
}

}  // namespace gf::cli
