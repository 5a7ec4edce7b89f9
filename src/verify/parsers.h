// Parsers of the outputs of real tools: nccl-tests, perftest, iperf3, NCCL_DEBUG logs,
// nvidia-smi topo -m, ibv_devinfo, ethtool -S, ip -d link. Truncated or garbage input is an
// error naming the file and line, never a crash.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/diag.h"
#include "sim/nccl_cost.h"

namespace gf {

/// The kinds of file `diagnose` and `check` read.
enum class OutputKind {
  kUnknown,
  kNcclTests,
  kPerftest,
  kIperf3,
  kNcclLog,
  kTopo,
  kIbvDevinfo,
  kEthtool,
  kIpLink
};
const char* output_kind_name(OutputKind k);
/// Guesses what produced `text`.
OutputKind detect_output_kind(const std::string& text);

/// A tool output read from a file.
struct ToolOutput {
  std::string file;
  std::string text;
  OutputKind kind = OutputKind::kUnknown;
};
/// Whether `f` holds an nccl-tests table: nccl-tests output, or an NCCL log with one among its
/// lines (a run's stdout with NCCL_DEBUG set).
bool holds_nccl_tests_table(const ToolOutput& f);

/// The outputs given more than once (the same text under another name, or the same file
/// twice): an error for each later copy naming the first, "the same output as FILE", and, where
/// `repeated` is given, true at each later copy's index. A copy would count its rows twice.
std::vector<Diagnostic> repeated_outputs(const std::vector<ToolOutput>& files,
                                         std::vector<bool>* repeated = nullptr);

/// Parses `out` with `parse` (one of the parse_* below) and hands the value to `use`; a file
/// that does not parse adds its diagnostics to `errs` instead.
template <typename Parse, typename Use>
void with_parsed(Parse parse, const ToolOutput& out, std::vector<Diagnostic>& errs, Use use) {
  auto r = parse(out.text, out.file);
  if (r)
    use(*r);
  else
    errs.insert(errs.end(), r.errors().begin(), r.errors().end());
}

/// One row of a nccl-tests table (out-of-place figures, and both #wrong columns).
struct NcclTestsRow {
  int line = 0;
  double bytes = 0, count = 0, time_us = 0, algbw_gbs = 0, busbw_gbs = 0;  ///< out of place
  double busbw_in_place_gbs = -1;  ///< the in-place run's (-1: its column does not read)
  std::string wrong;           ///< out of place: "0", "N/A", or the old float error column
  std::string wrong_in_place;  ///< the same for the in-place run
};
/// Whether a #wrong column reports wrong results: a count above 0, or the old float error
/// column above 1e-3, or anything else that is not a number ("N/A": the run did not check, -c 0).
bool reports_wrong_results(const std::string& column);
/// A nccl-tests run.
struct NcclTestsRun {
  std::string collective;  ///< all_reduce, ... ("" when the file does not say)
  int ranks = 0, nodes = 0;  ///< nodes: distinct hosts named (0 where ranks_elided)
  std::vector<std::string> hosts;
  /// The devices the rank lines name after their PCI address ("NVIDIA H100 80GB HBM3"), each once.
  std::vector<std::string> devices;
  /// A '#  ... ranks A to B on nodes C to D' line stood for rank lines left out (gpufabric
  /// simulate prints one): the hosts named are not all the run's.
  bool ranks_elided = false;
  /// The banner's '# nThread T nGpus G ... iters: I ...' (0 where the file has none): the GPUs
  /// one thread drives (-g) and the calls each size was timed over (-n).
  int gpus_per_thread = 0, iters = 0;
  /// '# Blocking Enabled: ...' (nccl-tests -z, util.cu@v2.19.6:629-632): every call was waited
  /// for before the next, so none ran back to back.
  bool blocking = false;
  /// The NCCL release that ran, as the output names it ("2.24.3"; "" where it does not), and the
  /// line that names it: NCCL's "NCCL version X" line, else nccl-tests' "nccl-library=CODE".
  std::string nccl_version;
  int nccl_version_line = 0;
  bool nccl_version_from_library = false;
  std::vector<NcclTestsRow> rows;
  double avg_busbw_gbs = 0;
  bool has_avg = false;
  /// The table's type and redop columns and its root column (absent in the layout before
  /// nccl-tests 2.x), as its first row prints them: what tells the collective where no banner
  /// names it (op_of).
  std::string type, redop;
  std::optional<long long> root;
  /// The lines where the run failed ("HOST: Test NCCL failure common.cu:1005 '...'", a CUDA or
  /// other test failure, common.cu's error macros): the sizes after them did not run.
  std::vector<std::pair<int, std::string>> failures;
};
Result<NcclTestsRun> parse_nccl_tests(const std::string& text, const std::string& file);
/// The calls the run timed back to back: its banner's iters, 1 under -z (each call waited for);
/// 0 where the banner does not say.
int back_to_back_calls(const NcclTestsRun& run);
/// Where the banner's nGpus (-g: one thread drives GPUs of its own node) does not divide the
/// `gpus_per_node` of `whose` ("the run's", "the spec's"), the error naming `file`.
std::optional<Diagnostic> banner_gpus_error(const NcclTestsRun& run, int gpus_per_node,
                                            const std::string& whose, const std::string& file,
                                            const std::string& hint);
/// Where a device the run's rank lines name is another GPU than the catalog's `gpu_id` (its
/// family, the id up to its first '-': h100 of h100-sxm), the error naming `file`. A device name
/// counts as another GPU where it names a model (a word of one to three letters and two to four
/// digits: B200, A100, MI300X) and not the id's family, or where one of the two is a PCIe card
/// ("NVIDIA A100-PCIE-40GB", "NVIDIA H100 PCIe"; a catalog id with "pcie") and the other not:
/// a card runs its own clocks and no NVLink, unlike the SXM module of its name.
std::optional<Diagnostic> device_gpu_error(const NcclTestsRun& run, const std::string& gpu_id,
                                           const std::string& file, const std::string& hint);
/// The nodes a run used: its distinct hosts, else its ranks over `gpus_per_node`; at least 1.
int nodes_of(const NcclTestsRun& run, int gpus_per_node);
/// The collective a run is: its banner's "# Collective test starting: X_perf", else the file's
/// name (all_gather_perf.out, allreduce.txt), else its table's columns where they tell one
/// collective alone (op_of_columns); none where nothing says, or the banner names none.
std::optional<Op> op_of(const NcclTestsRun& run, const std::string& file);
/// A run's nodes and GPUs a node, as `check` and `calibrate --fit` simulate it.
struct RunShape {
  int nodes = 0, gpus_per_node = 0;
};
/// The hosts its rank lines name, every node with the same GPUs; where the rank lines are left
/// out (or `nodes_given`), `nodes_given` and `gpus_per_node_given` (0: not given; GPUs a node
/// default to `spec_gpus_per_node`), else its ranks over them. An error naming `file` where the
/// ranks do not spread evenly over the hosts, or nothing gives the nodes (`no_ranks_hint` says
/// what to do).
/// The collective a table's columns tell, where only one prints them so: the reduction, the
/// root, and the count against the size (a rank's part, size / ranks, or the whole): all_reduce
/// (sum, -1, whole), reduce_scatter (sum, part), reduce (sum, a root), broadcast (none, a root),
/// sendrecv (none, -1, whole). all_gather and alltoall print alike (none, -1, part), and the
/// layout without a root column leaves reduce and broadcast apart from the others: none there.
std::optional<Op> op_of_columns(const NcclTestsRun& run);
Result<RunShape> run_shape(const NcclTestsRun& run, int nodes_given, int gpus_per_node_given,
                           int spec_gpus_per_node, const std::string& file,
                           const std::string& no_ranks_hint);
/// Where the run used other GPUs a node than the spec's nodes have (the model simulates whole
/// nodes), the error naming `file`.
std::optional<Diagnostic> shape_gpus_error(const RunShape& shape, int spec_gpus_per_node,
                                           const std::string& file, const std::string& hint);

/// A perftest run (ib_write_bw, ib_read_bw, ib_send_bw, *_lat), text or --out_json.
struct PerftestRun {
  std::string test;  ///< e.g. "RDMA_Write BW Test"
  std::string device, link_type;
  int mtu = 0;
  bool latency = false;
  /// 2 for a bidirectional test (-b: "RDMA_Write Bidirectional BW Test"), whose bandwidth is
  /// both directions' sum; else 1.
  int directions = 1;
  struct Row {
    int line = 0;
    double bytes = 0, iterations = 0;
    double bw_peak_gbps = 0, bw_avg_gbps = 0, msg_rate_mpps = 0;  ///< BW tests, Gb/s
    double t_min_us = 0, t_typical_us = 0, t_avg_us = 0;          ///< latency tests
  };
  std::vector<Row> rows;
  std::vector<std::string> warnings;  ///< e.g. "Conflicting CPU frequency values detected"
};
Result<PerftestRun> parse_perftest(const std::string& text, const std::string& file);
/// Why a perftest run printed no result table (nullopt where it printed one, or is JSON): its
/// first line that says so (perftest's "Completion with error", "Failed status 12", "Couldn't
/// connect", ssh's "No route to host"), quoted; "the output is empty"; or that it ended before
/// its table. A link test's own result file that has no table is a test that failed, not bad
/// input.
std::optional<std::string> perftest_run_failure(const std::string& text);

/// An iperf3 --json run.
struct Iperf3Run {
  std::string protocol;  ///< TCP or UDP
  int streams = 0;
  double sent_bps = 0, received_bps = 0, retransmits = 0, lost_percent = 0;
};
Result<Iperf3Run> parse_iperf3(const std::string& text, const std::string& file);

/// What an NCCL_DEBUG=INFO log says.
struct NcclLog {
  std::string version;
  int nranks = 0;
  std::string network;                  ///< IB, Socket, or a plugin's name
  std::vector<std::string> ib_devices;  ///< "mlx5_0:1/IB", "mlx5_0:1/RoCE"
  int ib_devices_line = 0;              ///< the first "NET/IB : Using" line (0: none)
  struct Event {
    int line = 0;
    std::string text;
  };
  std::vector<Event> transports;  ///< "via NET/IB/0/GDRDMA", "via P2P/IPC", ...
  int net_ib = 0, net_ib_gdr = 0, net_socket = 0, p2p = 0, shm = 0;
  bool nvls = false, collnet = false;
  std::vector<Event> errors;  ///< WARN lines and known failures
  std::vector<Event> socket_fallback, no_ib_device;
  /// NCCL's tuner model as rank 0 prints it at init with NCCL_DEBUG_SUBSYS=TUNING (tuning.cc@
  /// v2.18.6-1:301-336, @v2.29.7-1:500-540): per collective, algorithm and protocol the fixed
  /// latency (us) and the algorithm bandwidth (GB/s) its estimates use; bandwidth 0 where NCCL
  /// will not run the combination (disabled, or no model), latency 0 where it has no model.
  struct TunerEntry {
    int line = 0;
    Op op = Op::kAllReduce;
    Algorithm algorithm = Algorithm::kRing;
    Protocol protocol = Protocol::kSimple;
    double latency_us = 0, bandwidth_GBs = 0;
  };
  std::vector<TunerEntry> tuner;  ///< every table of the log (one per communicator), in order
  int tuner_tables = 0;
  /// The tuner's choice for one call (rank 0, NCCL_DEBUG_SUBSYS=TUNING): "Broadcast: 1024 Bytes
  /// -> Algo RING proto LL channel{Lo..Hi}={0..0}" (enqueue.cc@v2.29.7-1:793, 2.24 on), or
  /// "1024 Bytes -> Algo 1 proto 0 time 9.7" (2.20-2.23: no collective, no channels, NCCL's
  /// estimate; algorithm and protocol by their index in NCCL's enums).
  struct TunerPick {
    int line = 0;
    std::optional<Op> op;  ///< absent before 2.23
    long long bytes = 0;
    Algorithm algorithm = Algorithm::kRing;
    Protocol protocol = Protocol::kSimple;
    int channels = 0;  ///< channelHi - channelLo + 1 (0: not printed)
    std::optional<double> estimate_us;
  };
  std::vector<TunerPick> picks;
};
Result<NcclLog> parse_nccl_log(const std::string& text, const std::string& file);

/// nvidia-smi topo -m: how each GPU reaches each NIC.
struct TopoMatrix {
  std::vector<std::string> gpus, nics;            ///< row/column names (GPU0.., NIC0..)
  std::map<std::string, std::string> nic_device;  ///< NIC0 -> mlx5_0
  std::map<std::string, std::map<std::string, std::string>> link;  ///< GPU -> NIC -> PIX/SYS/...
  std::map<std::string, int> line;                                 ///< GPU row -> line
};
Result<TopoMatrix> parse_topo(const std::string& text, const std::string& file);

/// ibv_devinfo: devices and their ports.
struct IbvDevice {
  std::string name, transport;
  struct Port {
    int number = 0, line = 0;
    std::string state, link_layer;
    std::string active_width, active_speed;  ///< with ibv_devinfo -v
    int active_mtu = 0;
  };
  std::vector<Port> ports;
};
Result<std::vector<IbvDevice>> parse_ibv_devinfo(const std::string& text, const std::string& file);

/// ethtool -S: counter name -> value (and the line).
struct EthtoolStats {
  std::map<std::string, double> counters;
  std::map<std::string, int> line;
};
Result<EthtoolStats> parse_ethtool(const std::string& text, const std::string& file);

/// perfquery (infiniband-diags), basic, extended (-x), or the two one after the other: one
/// port's counters, name -> value (PortXmitData and PortRcvData count 4-byte words, as the
/// IBTA's PortCounters define them; the extended block's 64-bit ones win).
struct PerfqueryCounters {
  int lid = 0, port = 0;
  bool extended = false;  ///< "# Port extended counters" (perfquery -x)
  std::map<std::string, double> counters;
  std::map<std::string, int> line;
};
Result<PerfqueryCounters> parse_perfquery(const std::string& text, const std::string& file);

/// ip -d link: interfaces with MTU and state.
struct IpLinkInterface {
  std::string name, state;
  int mtu = 0, line = 0;
};
Result<std::vector<IpLinkInterface>> parse_ip_link(const std::string& text,
                                                   const std::string& file);

}  // namespace gf
