#include "report/sim_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/output.h"
#include "common/text.h"
#include "units/units.h"

namespace gf {

namespace {

// The ECMP collision factor as printed: "-" and null where no switch-to-switch link carries the
// collective's traffic (collision_factor's 0).
std::string collision_text(double f) { return f > 0 ? fmt::format("{:.2f}", f) : "-"; }
// A collision factor worth a note (hash rounding aside), and a row its switch links paced.
constexpr double kCollisionNoted = 1.05;
bool switch_bound(const SizeResult& row) {
  return row.bottleneck == link_class_name(LinkClass::kLeafSpine) ||
         row.bottleneck == link_class_name(LinkClass::kSpineCore) ||
         row.bottleneck == link_class_name(LinkClass::kGlobal);
}
// A row that a link class paced: its utilisation means something (not on a latency-bound or
// host-bound row, nor an empty call's).
bool link_bound(const SizeResult& row) {
  return row.bytes > 0 && row.bottleneck != "latency" && row.bottleneck != "host launch" &&
         !row.bottleneck.empty();
}
nlohmann::json collision_json(double f) {
  return f > 0 ? nlohmann::json(f) : nlohmann::json(nullptr);
}

// nccl-tests' number format: fixed width, fewer decimals as values grow (src/util.cu).
std::string nccl_float(double v, int width) {
  int power = 0;
  for (double x = 1; v >= x && power < 30; x *= 10) ++power;
  char buf[64];
  if (power < width - 2)
    std::snprintf(buf, sizeof buf, "%*.2f", width, v);
  else if (power < width - 1)
    std::snprintf(buf, sizeof buf, "%*.1f", width, v);
  else if (power < width + 1)
    std::snprintf(buf, sizeof buf, "%*.0f", width, v);
  else
    std::snprintf(buf, sizeof buf, "%*.1e", width, v);
  return buf;
}

const char* redop_of(Op op) {
  switch (op) {
    case Op::kAllReduce:
    case Op::kReduceScatter:
    case Op::kReduce:
      return "sum";
    default:
      return "none";
  }
}

int root_of(Op op) { return op == Op::kBroadcast || op == Op::kReduce ? 0 : -1; }

}  // namespace

void nccl_tests_size(Op op, long long ranks, double requested, double& bytes, long long& count) {
  constexpr int kWord = 4;  // float
  const bool per_rank = op == Op::kAllGather || op == Op::kReduceScatter || op == Op::kAlltoall;
  const long long div = per_rank ? ranks : 1;
  count = static_cast<long long>(std::floor(requested / kWord / div));
  bytes = static_cast<double>(count) * kWord * div;
}

double nccl_tests_memory_max_bytes(double gpu_memory_gib) {
  // nccl-tests src/common.cu@a0b82b2 (v2.19.6):1537-1546, since v2.16.7 (6edafa0): maxMem is the
  // smallest GPU's totalGlobalMem (util.cu:690, 718); "sendbuff, recvbuff, expected (when
  // datacheck enabled), plus 1G for the rest" after the reserve; the quotient rounds down.
  constexpr double kGiB = units::kBytesPerGiB;
  constexpr double kReservePer16GiB = 1 * kGiB, kReserveMax = 4 * kGiB, kRest = 1 * kGiB;
  constexpr double kBuffersWithoutValidation = 2;  // send and receive (-c 0)
  const double gpu_memory_bytes = gpu_memory_gib * kGiB;
  const double reserve =
      std::min(std::ceil(gpu_memory_bytes / (16 * kGiB)) * kReservePer16GiB, kReserveMax);
  return std::max(
      0.0, std::floor((gpu_memory_bytes - reserve - kRest) / kBuffersWithoutValidation));
}

SimReport simulate_sweep(const Plan& plan, const CollectiveModel& model,
                         const std::vector<double>& sizes, double min_bytes, double max_bytes,
                         double factor) {
  SimReport r{&plan, &model, min_bytes, max_bytes, factor, {}};
  for (double s : sizes) {
    double bytes = 0;
    long long count = 0;
    nccl_tests_size(model.op(), model.ranks(), s, bytes, count);
    // A size that rounds to no element per rank is an empty call, which NCCL discards before it
    // launches anything ("Empty collectives can be discarded", enqueue.cc@v2.29.7-1:2893-2894;
    // nccl-tests prints such rows at a fraction of a microsecond).
    SizeResult row = bytes > 0 ? model.at(bytes) : SizeResult{};
    row.bytes = bytes;
    model.add_faster_choice(row);
    model.add_call_shape(row);
    if (bytes <= 0) row.bottleneck = "empty call";
    r.rows.push_back(row);
  }
  return r;
}

std::string nccl_tests_table(const SimReport& r, bool explain) {
  const Plan& p = *r.plan;
  const CollectiveModel& m = *r.model;
  const std::string prog = fmt::format("{}_perf", op_name(m.op()));
  std::string s;
  s += fmt::format("# gpufabric simulate: {} on {} ({} x {} {} GPUs, {}, {}, load balancing {})\n",
                   op_name(m.op()), p.name, m.nodes(), p.gpus_per_node, p.gpu.id,
                   p.technology == Technology::kInfiniband ? "InfiniBand" : "RoCE",
                   topology_kind_name(p.topo.kind), load_balancing_name(m.load_balancing()));
  if (!m.calibration().identity()) {  // the spec's calibration: profile (calibrate --fit)
    const CalibrationProfile& c = m.calibration();
    s += fmt::format("# calibrated by {}", c.file.empty() ? std::string("a profile") : c.file);
    // A profile of other hardware is applied as asked, and said so.
    if ((!c.fitted_gpu.empty() && c.fitted_gpu != p.gpu.id) ||
        (!c.fitted_nic.empty() && c.fitted_nic != p.nic.id))
      s += fmt::format(", fitted on {} with {}: not this spec's {} with {}", c.fitted_gpu,
                       c.fitted_nic, p.gpu.id, p.nic.id);
    s += "\n";
  }
  s += fmt::format("# Collective test starting: {}\n", prog);
  s += fmt::format(
      "# nThread 1 nGpus {} minBytes {:.0f} maxBytes {:.0f} step: {:g}(factor) warmup iters: 0 "
      "iters: {} agg iters: 1 validation: 0 graph: 0\n#\n# Using devices\n",
      m.gpus_per_thread(), r.min_bytes, r.max_bytes, r.factor, m.iters());
  const long long ranks = m.ranks();
  for (long long k = 0; k < ranks; ++k) {
    if (k == 8 && ranks > 9) {
      s += fmt::format("#  ... ranks 8 to {} on nodes {} to {}\n", ranks - 2,
                       8 / p.gpus_per_node + 1, (ranks - 2) / p.gpus_per_node + 1);
      k = ranks - 1;
    }
    s += fmt::format("#  Rank {:2d} Group  0 Pid {:6d} on {:>10} device {:2d} [0000:00:00] {}\n", k,
                     0, node_name(p, k / p.gpus_per_node), k % p.gpus_per_node, p.gpu.name);
  }
  s += "#\n";
  if (r.reduced_max_bytes > 0)  // as nccl-tests prints it (common.cu@a0b82b2:1545)
    s += fmt::format("# Reducing maxBytes to {:.0f} due to memory limitation\n#\n",
                     r.reduced_max_bytes);
  s += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                 "
      "      in-place          \n",
      "", "", "", "", "");
  s += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  "
      "{:>6}  {:>6}  {:>6}\n",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
      "busbw", "#wrong");
  s += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  "
      "{:>6}  {:>6}  {:>6}\n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
      "");
  double bw_sum = 0;
  for (const auto& row : r.rows) {
    double bytes = 0;
    long long count = 0;
    nccl_tests_size(m.op(), ranks, row.bytes, bytes, count);
    const std::string body =
        fmt::format("  {}  {}  {}    N/A", nccl_float(row.time_us, 7), nccl_float(row.algbw_gbs, 6),
                    nccl_float(row.busbw_gbs, 6));
    s += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}{}{}\n", static_cast<long long>(row.bytes),
                     count, "float", redop_of(m.op()), root_of(m.op()), body, body);
    bw_sum += row.busbw_gbs;
  }
  s += fmt::format("# {:<20} : 0 OK\n", "Out of bounds values");
  s += fmt::format("# {:<20} : {:g} \n", "Avg bus bandwidth",
                   r.rows.empty() ? 0.0 : bw_sum / r.rows.size());
  s += "#\n";
  s += fmt::format("# Collective test concluded: {}\n", prog);
  if (explain) {
    s += "#\n# gpufabric explain (per size: algorithm and protocol as NCCL would choose, the fixed "
         "latency, the link class that paced the slowest flow with its utilisation in the flow "
         "model, the algorithm's flows alone at the links' usable rate (1.00: they fill it; - "
         "where latency paces the call; --links gives each link's bytes over its line rate and "
         "the call's whole time, which the protocol, the pipeline and the latency lengthen), and "
         "the "
         "ECMP collision factor = the hottest switch-to-switch link's bytes over what it would "
         "carry were every switch to spread its own perfectly evenly over its ports: leaf-spine "
         "or spine-core, up or down; 1 = even, - = no switch-to-switch traffic)\n";
    s += fmt::format("# {:>10}  {:<13}  {:<6}  {:>10}  {:<26}  {:>5}  {:>9}\n", "size", "algorithm",
                     "proto", "latency_us", "bottleneck", "util", "collision");
    for (const auto& row : r.rows)
      s += fmt::format(
          "# {:>10}  {:<13}  {:<6}  {:>10.1f}  {:<26}  {:>5}  {:>9}\n",
          static_cast<long long>(row.bytes), row.bytes > 0 ? algorithm_name(row.algorithm) : "-",
          row.bytes > 0 ? protocol_name(row.protocol) : "-", row.latency_us, row.bottleneck,
          link_bound(row) ? fmt::format("{:.2f}", row.bottleneck_utilization) : "-",
          collision_text(row.ecmp_collision));
    // Collisions on switch links that do not pace the call cost nothing there: say so.
    std::vector<long long> off_path;
    std::vector<std::string> pacers;
    for (const auto& row : r.rows)
      if (row.ecmp_collision > kCollisionNoted && !switch_bound(row)) {
        off_path.push_back(static_cast<long long>(row.bytes));
        if (std::find(pacers.begin(), pacers.end(), row.bottleneck) == pacers.end())
          pacers.push_back(row.bottleneck);
      }
    if (!off_path.empty()) {
      std::string who;
      for (const auto& p : pacers) who += (who.empty() ? "" : " or ") + p;
      s += fmt::format(
          "#\n# collision above {:.2f} at {} size{} ({} to {} B) where {} paces the call, not a "
          "switch-to-switch link: those collisions cost nothing there (they would where the "
          "switch links paced it)\n",
          kCollisionNoted, off_path.size(), off_path.size() == 1 ? "" : "s", off_path.front(),
          off_path.back(), who);
    }
    // Where back-to-back calls pipeline down the chain, what one call alone takes.
    std::string piped;
    for (const auto& row : r.rows)
      if (row.alone_us > row.time_us * (1 + 1e-9))  // not where the host's issue floors both
        piped += fmt::format("# {:>10}  {:>10.1f}  {:>10.1f}\n", static_cast<long long>(row.bytes),
                             row.time_us, row.alone_us);
    if (!piped.empty())
      s += fmt::format(
               "#\n# back to back: the {} calls timed (-n) pipeline down the chain, each GPU's "
               "kernel ending once it has forwarded its part (one channel, or every channel on "
               "the same ring); one call alone (-n 1):\n# {:>10}  {:>10}  {:>10}\n",
               m.iters(), "size", "time_us", "alone_us") +
           piped;
    // Where the time model finds another choice faster than the tuner's pick.
    std::string faster;
    for (const auto& row : r.rows)
      if (row.faster_time_us > 0)
        faster += fmt::format(
            "# {:>10}  {:<20}  {:>10.1f}  {:<20}  {:>10.1f}  NCCL_ALGO={} NCCL_PROTO={}\n",
            static_cast<long long>(row.bytes),
            fmt::format("{}/{}", algorithm_name(row.algorithm), protocol_name(row.protocol)),
            row.time_us,
            fmt::format("{}/{}", algorithm_name(row.faster_algorithm),
                        protocol_name(row.faster_protocol)),
            row.faster_time_us, name_of(kNcclAlgoNames, row.faster_algorithm),
            protocol_name(row.faster_protocol));
    if (!faster.empty())
      s +=
          fmt::format(
              "#\n# faster than NCCL's pick by more than {:.0f} %, by the time model (NCCL's tuner "
              "chooses by its own estimate; the variables force the other):\n"
              "# {:>10}  {:<20}  {:>10}  {:<20}  {:>10}\n",
              kFasterChoiceShare * 100, "size", "picked", "time_us", "faster", "time_us") +
          faster;
    // Each algorithm: the rate the fabric carries its flows at (Simple on every channel, before
    // NCCL's protocol, pipeline fill and caps), and what the model then gives at the largest size.
    double largest = 0;
    for (const auto& row : r.rows) largest = std::max(largest, row.bytes);
    s += "#\n# algorithms evaluated (flows: the fabric's rate for the algorithm's flows, Simple on "
         "every channel, before NCCL's protocols, pipeline and caps; then the time model at the "
         "largest size, with the protocol NCCL's tuner picks):\n";
    for (const auto& a : m.algorithms()) {
      if (a.available) {
        const double t = largest > 0 ? m.time_us(a.algorithm, largest) : 0;
        s += fmt::format(
            "#   {:<13} flows {:>8.1f} GB/s algbw; at {:.0f} B {:>8.2f} GB/s; {} flows{}\n",
            algorithm_name(a.algorithm), 1e-9 / a.seconds_per_byte, largest,
            t > 0 && std::isfinite(t) ? largest / t / 1e3 : 0.0, a.flows,
            a.unroutable ? fmt::format(", {} unroutable", a.unroutable) : "");
      } else
        s += fmt::format("#   {:<13} not used: {}\n", algorithm_name(a.algorithm),
                         a.unavailable_reason);
    }
    // The graphs NCCL's tuner rates ring and NVLS Tree by, where gpufabric knows them: what
    // NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=GRAPH prints as each graph's "Pattern ..., nChannels N,
    // bw intra/inter" line.
    std::string graphs;
    for (const auto& a : m.algorithms()) {
      if (!a.available) continue;
      const SearchGraph g = m.search_graph(a.algorithm);
      if (!g.known()) continue;
      graphs += fmt::format("#   {:<13} {} {} x {:g}/{:g} GB/s (in a node/between nodes)\n",
                            algorithm_name(a.algorithm), g.channels,
                            a.algorithm == Algorithm::kRing ? "channels" : "heads", g.intra_GBps,
                            g.inter_GBps);
    }
    if (!graphs.empty())
      s +=
          "#\n# NCCL's search graphs, which its tuner rates these by (the choice reads them; "
          "compare NCCL_DEBUG_SUBSYS=GRAPH's nChannels and bw; NCCL may list a ring's as twice the "
          "channels at half the speed):\n" +
          graphs;
  }
  return s;
}

nlohmann::json sim_json(const SimReport& r) {
  const CollectiveModel& m = *r.model;
  nlohmann::json rows = nlohmann::json::array();
  double bw_sum = 0;
  for (const auto& row : r.rows) {
    rows.push_back(
        {{"bytes", static_cast<long long>(row.bytes)},
         {"time_us", row.time_us},
         {"algbw_gbs", row.algbw_gbs},
         {"busbw_gbs", row.busbw_gbs},
         {"algorithm",
          row.bytes > 0 ? nlohmann::json(algorithm_name(row.algorithm)) : nlohmann::json(nullptr)},
         {"protocol",
          row.bytes > 0 ? nlohmann::json(protocol_name(row.protocol)) : nlohmann::json(nullptr)},
         {"latency_us", row.latency_us},
         {"bottleneck", row.bottleneck},
         {"bottleneck_utilization",
          link_bound(row) ? nlohmann::json(row.bottleneck_utilization) : nlohmann::json(nullptr)},
         {"ecmp_collision_factor", collision_json(row.ecmp_collision)},
         {"alone_time_us",
          row.alone_us > 0 ? nlohmann::json(row.alone_us) : nlohmann::json(nullptr)},
         {"channels", row.channels > 0 ? nlohmann::json(row.channels) : nlohmann::json(nullptr)},
         {"threads_per_channel",
          row.threads > 0 ? nlohmann::json(row.threads) : nlohmann::json(nullptr)},
         {"faster_choice",
          row.faster_time_us > 0
              ? nlohmann::json{{"algorithm", algorithm_name(row.faster_algorithm)},
                               {"protocol", protocol_name(row.faster_protocol)},
                               {"time_us", row.faster_time_us},
                               {"nccl_algo", name_of(kNcclAlgoNames, row.faster_algorithm)}}
              : nlohmann::json(nullptr)}});
    bw_sum += row.busbw_gbs;
  }
  nlohmann::json algos = nlohmann::json::array();
  for (const auto& a : m.algorithms()) {
    nlohmann::json j = {{"algorithm", algorithm_name(a.algorithm)}, {"available", a.available}};
    if (a.available) {
      j["large_message_algbw_gbs"] = 1e-9 / a.seconds_per_byte;
      j["flows"] = a.flows;
      j["unroutable_flows"] = a.unroutable;
      j["bottleneck"] = a.bottleneck;
      j["ecmp_collision_factor"] = collision_json(a.ecmp_collision);
    } else {
      j["reason"] = a.unavailable_reason;
    }
    algos.push_back(j);
  }
  nlohmann::json out = {{"collective", op_name(m.op())},
                        {"gpus", m.ranks()},
                        {"nodes", m.nodes()},
                        {"load_balancing", load_balancing_name(m.load_balancing())},
                        {"nccl", nccl_release_name(m.nccl())},
                        {"gpus_per_thread", m.gpus_per_thread()},
                        {"iters", m.iters()},
                        {"seed", m.seed()},
                        {"avg_busbw_gbs", r.rows.empty() ? 0.0 : bw_sum / r.rows.size()},
                        {"reduced_max_bytes", r.reduced_max_bytes > 0
                                                  ? nlohmann::json(r.reduced_max_bytes)
                                                  : nlohmann::json(nullptr)},
                        {"results", rows},
                        {"algorithms", algos}};
  if (!m.calibration().identity())  // only with a profile: the outputs without one are as before
    out["calibration"] = utf8_or_replacement(m.calibration().file);
  return out;
}

}  // namespace gf

namespace gf {

const char* const kLinksCsvHeader =
    "rank,from_device,from_port,to_device,to_port,tier,direction,capacity_gbps,bytes,"
    "utilization_mean,utilization_peak,flows";

void write_links_csv(std::ostream& out, const Fabric& fab, const LinkNames& names,
                     const CollectiveTraffic& t) {
  out << kLinksCsvHeader << "\n";
  const std::vector<int32_t> order = links_hottest_first(fab, t.load);
  long long rank = 0;
  std::string row;
  for (int32_t l : order) {
    const LinkUse u = link_use(fab, t.load, l, t.bytes, t.seconds);
    const LinkEnd a = names.from(l), b = names.to(l);
    row = fmt::format("{},{},{},{},{},{},{},{:g},{:.0f},{:.4f},{:.4f},{}\n", ++rank,
                      csv_field(a.device), csv_field(a.port), csv_field(b.device),
                      csv_field(b.port), link_tier_key(fab.links()[l].cls), link_direction(fab, l),
                      u.capacity_Bps * 8 / 1e9, u.bytes, u.mean_util, u.peak_util, u.flows);
    out << row;
  }
}

std::string links_text(const Fabric& fab, const LinkNames& names, const CollectiveTraffic& t,
                       int top) {
  const std::string what =
      !t.label.empty() ? t.label
                       : fmt::format("{} of {:.0f} bytes, {} / {}", op_name(t.op), t.bytes,
                                     algorithm_name(t.at.algorithm), protocol_name(t.at.protocol));
  std::string s = fmt::format(
      "#\n# Traffic per link: {}, {:.1f} us\n# {:<12} {:>10} {:>10} {:>12} {:>9} {:>9}\n", what,
      t.seconds * 1e6, "tier", "busy", "links", "bytes", "mean", "max");
  for (const auto& h : tier_heat(fab, t.load, t.bytes, t.seconds))
    s += fmt::format("# {:<12} {:>10} {:>10} {:>12.4g} {:>8.1f}% {:>8.1f}%\n", link_tier_key(h.cls),
                     h.busy, h.links, h.bytes, 100 * h.mean_util, 100 * h.max_util);
  const auto order = links_hottest_first(fab, t.load);
  if (!order.empty()) s += "# hottest links (utilisation mean / peak, flows):\n";
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < top; ++i) {
    const LinkUse u = link_use(fab, t.load, order[i], t.bytes, t.seconds);
    s += fmt::format("#   {} -> {} ({}): {:.1f}% / {:.1f}%, {} flows\n",
                     end_name(names.from(order[i])), end_name(names.to(order[i])),
                     link_tier_key(fab.links()[order[i]].cls), 100 * u.mean_util, 100 * u.peak_util,
                     u.flows);
  }
  return s;
}

nlohmann::json links_json(const Fabric& fab, const LinkNames& names, const CollectiveTraffic& t,
                          int top) {
  nlohmann::json tiers = nlohmann::json::array();
  for (const auto& h : tier_heat(fab, t.load, t.bytes, t.seconds))
    tiers.push_back({{"tier", link_tier_key(h.cls)},
                     {"links", h.links},
                     {"busy_links", h.busy},
                     {"bytes", h.bytes},
                     {"utilization_mean", h.mean_util},
                     {"utilization_max", h.max_util},
                     {"histogram", h.bins}});
  nlohmann::json hottest = nlohmann::json::array();
  const auto order = links_hottest_first(fab, t.load);
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < top; ++i) {
    const LinkUse u = link_use(fab, t.load, order[i], t.bytes, t.seconds);
    const LinkEnd a = names.from(order[i]), b = names.to(order[i]);
    hottest.push_back({{"from_device", a.device},
                       {"from_port", a.port},
                       {"to_device", b.device},
                       {"to_port", b.port},
                       {"tier", link_tier_key(fab.links()[order[i]].cls)},
                       {"bytes", u.bytes},
                       {"utilization_mean", u.mean_util},
                       {"utilization_peak", u.peak_util},
                       {"flows", u.flows}});
  }
  nlohmann::json j = {{"time_us", t.seconds * 1e6},
                      {"links_with_traffic", order.size()},
                      {"tiers", tiers},
                      {"hottest", hottest}};
  if (!t.label.empty()) {
    j["traffic"] = t.label;
  } else {
    j["op"] = op_name(t.op);
    j["bytes"] = t.bytes;
    j["algorithm"] = algorithm_name(t.at.algorithm);
    j["protocol"] = protocol_name(t.at.protocol);
  }
  return j;
}

}  // namespace gf
