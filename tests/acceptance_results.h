// A results folder as the acceptance runbook's scripts would fill it, in the tools' own output
// formats (the layouts of tests/data/outputs/ib_write_bw-400g.txt, ib_write_lat.txt,
// nccl-tests-2node-allreduce.txt and ethtool-S-pfc-storm.txt), with one slow cable planted on
// request. For the tests only: the product never makes up results.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "verify/acceptance.h"

namespace gf::testing {

/// What the generated folder holds.
struct ResultsRecipe {
  int slow_cable = -1;        ///< index into AcceptancePlan::cables: tests crossing it are slow
  double slow_gbps = 181.4;   ///< what a test over the slow cable reaches
  double good_gbps = 391.2;   ///< the others (the guide's ~380 of 400, and a little more)
  bool with_counters = true;  ///< burn-in counters before and after
};

inline std::string perftest_bw_output(const LinkTest& t, bool roce, double gbps) {
  std::string s =
      "---------------------------------------------------------------------------------------\n"
      "                    RDMA_Write BW Test\n";
  s += fmt::format(" Dual-port       : OFF\t\tDevice         : {}\n", t.src_device);
  s += " Number of qps   : 4\t\tTransport type : IB\n"
       " Connection type : RC\t\tUsing SRQ      : OFF\n"
       " PCIe relax order: ON\n ibv_wr* API     : ON\n TX depth        : 128\n"
       " CQ Moderation   : 1\n Mtu             : 4096[B]\n";
  s += roce ? " Link type       : Ethernet\n GID index       : 3\n" : " Link type       : IB\n";
  s += " Max inline data : 0[B]\n rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n"
       "---------------------------------------------------------------------------------------\n"
       " local address: LID 0000 QPN 0x0108 PSN 0x2e5e0f RKey 0x181ebc VAddr 0x007f2b0a3e2000\n"
       " remote address: LID 0000 QPN 0x0109 PSN 0x6d058e RKey 0x1fffb9 VAddr 0x007f58a406e000\n"
       "---------------------------------------------------------------------------------------\n"
       " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n";
  s += fmt::format(" 65536      {:<10}       0.00               {:.2f}  \t\t   {:.6f}\n",
                   static_cast<long long>(gbps * 1e9 / 8 / 65536 * 10), gbps,
                   gbps * 1e9 / 8 / 65536 / 1e6);
  s += "---------------------------------------------------------------------------------------\n";
  return s;
}

inline std::string perftest_lat_output(const LinkTest& t, double typical_us) {
  std::string s =
      "---------------------------------------------------------------------------------------\n"
      "                    RDMA_Write Latency Test\n";
  s += fmt::format(" Dual-port       : OFF\t\tDevice         : {}\n", t.src_device);
  s += " Number of qps   : 1\t\tTransport type : IB\n"
       " Connection type : RC\t\tUsing SRQ      : OFF\n"
       " TX depth        : 1\n Mtu             : 4096[B]\n"
       "---------------------------------------------------------------------------------------\n"
       " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
       "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";
  s += fmt::format(
      " 2       10000          {:.2f}           {:.2f}         {:.2f}     \t       "
      "{:.2f}        \t0.06   \t\t{:.2f}    \t\t{:.2f}   \n",
      typical_us - 0.04, typical_us + 2.8, typical_us, typical_us + 0.01, typical_us + 0.16,
      typical_us + 2.8);
  s += "---------------------------------------------------------------------------------------\n";
  return s;
}

/// nccl-tests' table for a stage, every size at `share` of the simulator's busbw.
inline std::string nccl_tests_output(const NcclStage& st, int gpus_per_node, double share) {
  const int ranks = st.nodes * gpus_per_node;
  std::string s = fmt::format("# Collective test starting: {}\n", st.binary);
  s += fmt::format(
      "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 8589934592 step: 2(factor) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n");
  for (int r = 0; r < ranks; ++r)
    s += fmt::format(
        "#  Rank {:2d} Group  0 Pid  {:5d} on node{:03d} device  {} [0x18] NVIDIA "
        "H100 80GB HBM3\n",
        r, 41000 + r, r / gpus_per_node + 1, r % gpus_per_node);
  s += "#\n#                                                              out-of-place           "
       "            in-place          \n#       size         count      type   redop    root    "
       " time   algbw   busbw #wrong     time   algbw   busbw #wrong\n#        (B)    "
       "(elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
       "(GB/s)       \n";
  const double n = ranks;
  const double factor = st.op == Op::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
  double sum = 0;
  for (const auto& [bytes, busbw] : st.expected) {
    const double bw = busbw * share, alg = bw / factor, us = bytes / (alg * 1e9) * 1e6;
    sum += bw;
    s += fmt::format(
        "{:>12.0f}  {:>12.0f}     float     sum      -1  {:>7.1f}  {:>6.2f}  {:>6.2f}  "
        "    0  {:>7.1f}  {:>6.2f}  {:>6.2f}      0\n",
        bytes, bytes / 4, us, alg, bw, us, alg, bw);
  }
  s += fmt::format("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {:.3f} \n#\n",
                   sum / static_cast<double>(st.expected.size()));
  return s;
}

inline std::string ethtool_output(double rx_bytes, double symbol_errors) {
  return fmt::format(
      "NIC statistics:\n     rx_packets: {0:.0f}\n     rx_bytes: {1:.0f}\n     tx_packets: "
      "{0:.0f}\n"
      "     tx_bytes: {1:.0f}\n     rx_packets_phy: {0:.0f}\n     rx_bytes_phy: {1:.0f}\n"
      "     rx_prio3_pause: 12\n     tx_prio3_pause: 3\n     rx_crc_errors_phy: 0\n"
      "     rx_symbol_err_phy: {2:.0f}\n     link_down_events_phy: 1\n",
      rx_bytes / 4096, rx_bytes, symbol_errors);
}

/// perfquery, then perfquery -x, of one port (the burn-in script reads both).
inline std::string perfquery_output(double rx_bytes, double symbol_errors) {
  std::string s = fmt::format(
      "# Port counters: Lid 1907 port 1 (CapMask: 0x5300)\nPortSelect:......................1\n"
      "CounterSelect:...................0x0000\nSymbolErrorCounter:..............{:.0f}\n"
      "LinkErrorRecoveryCounter:........0\nLinkDownedCounter:...............1\n"
      "PortRcvErrors:...................0\nPortXmitDiscards:................0\n"
      "PortXmitData:....................4294967295\nPortRcvData:.....................4294967295\n"
      "PortXmitWait:....................120\n",
      symbol_errors);
  s += fmt::format(
      "# Port extended counters: Lid 1907 port 1 (CapMask: 0x5300 CapMask2: 0x0000002)\n"
      "PortSelect:......................1\nCounterSelect:...................0x0000\n"
      "PortXmitData:....................{0:.0f}\nPortRcvData:.....................{0:.0f}\n"
      "PortXmitPkts:....................{1:.0f}\nPortRcvPkts:.....................{1:.0f}\n",
      rx_bytes / 4, rx_bytes / 4096);
  return s;
}

/// Every file of the runbook's results folder for `a`.
inline std::vector<ResultFile> acceptance_results(const PlannedSpec& planned,
                                                  const AcceptancePlan& a,
                                                  const ResultsRecipe& r = {}) {
  std::vector<ResultFile> out;
  for (const auto& t : a.tests) {
    bool slow = false;
    for (int x : t.crossings) slow = slow || x / 2 == r.slow_cable;
    out.push_back({link_test_result_path(t, false),
                   perftest_bw_output(t, a.roce, slow ? r.slow_gbps : r.good_gbps)});
    out.push_back(
        {link_test_result_path(t, true), perftest_lat_output(t, t.latency_floor_us + 1.1)});
  }
  for (const auto& st : a.nccl)
    out.push_back({nccl_result_path(st), nccl_tests_output(st, planned.plan.gpus_per_node, 1.01)});
  if (r.with_counters)
    for (const auto& c : a.cables) {
      if (c.kind != LinkKind::kNodeLeaf) continue;
      const size_t rail = static_cast<size_t>(std::stoi(c.a_port.substr(3)));
      const std::string dev = rail < planned.spec.addressing.host_rdma_devices.size()
                                  ? planned.spec.addressing.host_rdma_devices[rail]
                                  : fmt::format("mlx5_{}", rail);
      out.push_back({fmt::format("counters/before/{}/{}.txt", c.a_device, dev),
                     a.roce ? ethtool_output(1e12, 2) : perfquery_output(1e12, 2)});
      out.push_back({fmt::format("counters/after/{}/{}.txt", c.a_device, dev),
                     a.roce ? ethtool_output(1e12 + 3e13, 5) : perfquery_output(1e12 + 3e13, 5)});
    }
  return out;
}

/// Writes `files` under `dir` (created).
inline void write_results(const std::string& dir, const std::vector<ResultFile>& files) {
  for (const auto& f : files) {
    const std::filesystem::path p = std::filesystem::path(dir) / f.path;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << f.text;
  }
}

}  // namespace gf::testing
