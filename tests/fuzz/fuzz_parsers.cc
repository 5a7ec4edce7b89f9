// libFuzzer target: every tool-output parser (and the lab's netplan reader) takes any bytes
// without crashing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lab/netplan.h"
#include "verify/diagnose.h"
#include "verify/parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string t(reinterpret_cast<const char*>(data), size);
  (void)gf::parse_nccl_tests(t, "f");
  (void)gf::parse_perftest(t, "f");
  (void)gf::parse_iperf3(t, "f");
  (void)gf::parse_nccl_log(t, "f");
  (void)gf::parse_topo(t, "f");
  (void)gf::parse_ibv_devinfo(t, "f");
  (void)gf::parse_ethtool(t, "f");
  (void)gf::parse_ip_link(t, "f");
  if (auto np = gf::parse_netplan(t, "f"))  // the lab reads (possibly hand-edited) netplan files
    for (const auto& i : *np) (void)gf::netplan_ip_commands("ns", i);
  gf::ToolOutput o{"f", t, gf::detect_output_kind(t)};
  (void)gf::diagnose({o}, 400);
  return 0;
}
