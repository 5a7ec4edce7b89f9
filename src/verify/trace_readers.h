// Readers of the traces `replay` replays: PyTorch profiler (Kineto) Chrome trace-event JSON, and
// NCCL_DEBUG=INFO logs with NCCL_DEBUG_SUBSYS=INIT,COLL. Both stream: a trace of gigabytes is read
// in blocks and only what the replay needs is kept (a kernel is 24 bytes, a collective its name,
// size and group), so memory stays bounded whatever the file's size. Malformed, truncated or
// oversized input is an error naming the file and line, never a crash.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <vector>

#include "common/diag.h"
#include "common/file.h"
#include "sim/replay.h"
#include "spec/spec.h"

namespace gf {

/// A profiler trace of one rank: a few hundred MiB per recorded step on a large model is common,
/// several GiB when many steps are recorded; 64 GiB is far beyond any (and streamed anyway).
constexpr std::size_t kMaxTraceBytes = 64ULL * 1024 * kMiB;
/// One trace event: Kineto writes a few hundred bytes each; an op with long "Input Dims" or a
/// call stack reaches tens of KiB. 16 MiB is refused as garbage.
constexpr std::size_t kMaxTraceEventBytes = 16 * kMiB;
/// One NCCL log line: NCCL formats each into a 1,024-byte buffer (src/debug.cc, v2.18.6-1 and
/// v2.29.7-1, `char buffer[1024]`), so 64 KiB is not a line NCCL wrote.
constexpr std::size_t kMaxNcclLogLineBytes = 64 * kKiB;
/// One collective's bytes on one rank: no GPU holds a tebibyte (the catalog's largest has 288 GB),
/// so a message that large is not one a traced run sent.
constexpr double kMaxTracedCollectiveBytes = 1024.0 * 1024 * kMiB;
/// One kernel's duration, microseconds: a day. A profiled step runs seconds; a longer kernel is
/// not one a profiler recorded.
constexpr double kMaxTracedKernelUs = 86400e6;
/// Nesting of JSON values in a trace event: Kineto nests four deep ("args" -> "grid" array).
constexpr int kMaxTraceJsonDepth = 64;

/// What a file is, from its first bytes.
enum class TraceKind { kUnknown, kKineto, kNcclLog, kGzip };
TraceKind detect_trace_kind(const std::string& head);

/// A PyTorch profiler trace (torch.profiler, export_chrome_trace): the GPU kernels with their
/// streams and durations; the NCCL kernels (ncclDevKernel_*, ncclKernel_*) tied to their
/// record_param_comms op (by the kernel's own "Collective name" args, newer Kineto, else by
/// "External id") for the collective's name, sizes, dtype and process group; ProfilerStep#N
/// windows; distributedInfo's rank and process groups.
Result<TracedRank> read_kineto_trace(std::istream& in, const std::string& file,
                                     std::size_t max_bytes = kMaxTraceBytes);

/// An NCCL_DEBUG=INFO log (NCCL_DEBUG_SUBSYS including INIT and COLL), possibly of several
/// processes written into one file: per process (host:pid) a rank with its communicators (the
/// "Init COMPLETE" lines: rank, nranks, cudaDev, busId, commId or the split's parent and color)
/// and its collectives in call order (the COLL lines: operation, count, datatype, comm). Both
/// v2.18's and v2.29's lines. The log has no durations: TracedRank::timed is false.
Result<std::vector<TracedRank>> read_nccl_coll_log(std::istream& in, const std::string& file,
                                                   std::size_t max_bytes = kMaxToolOutputBytes);

/// Every trace named, each read by the reader its first byte calls for (`{`: a profiler trace,
/// else an NCCL log; a gzip file is refused with the command that unzips it). `key` names the
/// paths in messages (the flag, "TRACE").
Result<std::vector<TracedRank>> read_trace_files(const std::vector<std::string>& paths,
                                                 const std::string& key = "TRACE");

/// The traces of the spec's trace jobs (`jobs[i].trace`), per job in spec order; empty for a
/// workload job. A file that cannot be opened names the spec's file, line and key; what is wrong
/// inside a trace names the trace's file and line.
Result<std::vector<std::vector<TracedRank>>> read_job_traces(const Spec& spec);

/// Bytes of one element of NCCL's ncclDataType_t value `datatype` (nccl.h.in); 0 when unknown.
double nccl_datatype_bytes(int datatype);

}  // namespace gf
