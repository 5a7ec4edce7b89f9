// Exporter speed (make bench). Target (issue: monitoring): one scrape of a 16-port host in
// <= 50 ms. The host is recorded into a temporary sysfs tree: 16 RDMA ports with counters and
// congestion counters, 16 interfaces with ethtool statistics.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>

#include "verify/exporter.h"

namespace {

namespace fs = std::filesystem;

fs::path make_host(int ports) {
  const fs::path root = fs::temp_directory_path() / "gf_bench_sysfs";
  fs::remove_all(root);
  for (int i = 0; i < ports; ++i) {
    const fs::path p = root / "class/infiniband" / ("mlx5_" + std::to_string(i)) / "ports/1";
    fs::create_directories(p / "counters");
    fs::create_directories(p / "hw_counters");
    for (const char* c :
         {"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets",
          "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors"})
      std::ofstream(p / "counters" / c) << 123456789 << "\n";
    for (const char* c : {"np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets",
                          "out_of_sequence", "packet_seq_err", "local_ack_timeout_err"})
      std::ofstream(p / "hw_counters" / c) << 42 << "\n";
    std::ofstream(p / "state") << "4: ACTIVE\n";
    std::ofstream(p / "rate") << "400 Gb/sec (4X NDR)\n";
    const std::string ifname = "ens" + std::to_string(i) + "np0";
    const fs::path n = root / "class/net" / ifname;
    fs::create_directories(n / "statistics");
    std::ofstream(n / "mtu") << 9000 << "\n";
    std::ofstream(n / "speed") << 400000 << "\n";
    std::ofstream(n / "operstate") << "up\n";
    std::ofstream(n / "statistics/rx_dropped") << 0 << "\n";
    std::ofstream(n / "statistics/tx_dropped") << 0 << "\n";
    fs::create_directories(root / "ethtool");
    std::ofstream e(root / "ethtool" / (ifname + ".txt"));
    e << "NIC statistics:\n";
    for (int prio = 0; prio < 8; ++prio)
      e << "     rx_prio" << prio << "_pause: 17\n     tx_prio" << prio << "_pause: 3\n";
    e << "     rx_discards_phy: 0\n     tx_discards_phy: 0\n";
  }
  return root;
}

void BM_ExporterScrape16Ports(benchmark::State& state) {
  const fs::path root = make_host(16);
  gf::ExporterOptions o;
  o.sysfs = root.string();
  o.ethtool_dir = (root / "ethtool").string();
  size_t bytes = 0;
  for (auto _ : state) {
    std::vector<std::string> log;
    bytes = gf::collect_metrics(o, log).size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  fs::remove_all(root);
}
BENCHMARK(BM_ExporterScrape16Ports)->Unit(benchmark::kMillisecond);

}  // namespace
