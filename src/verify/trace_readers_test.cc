#include "verify/trace_readers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace gf {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream f(std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/replay/" + name,
                  std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Result<TracedRank> kineto(const std::string& text, std::size_t max = kMaxTraceBytes) {
  std::istringstream in(text);
  return read_kineto_trace(in, "t.json", max);
}

Result<std::vector<TracedRank>> nccl(const std::string& text) {
  std::istringstream in(text);
  return read_nccl_coll_log(in, "n.log");
}

const TracedGroup* group_named(const TracedRank& r, const std::string& name) {
  for (const auto& g : r.groups)
    if (g.name == name) return &g;
  return nullptr;
}

TEST(KinetoTrace, ReadsPyTorch25KeysFromTheKernelsOwnArgs) {
  auto r = kineto(fixture("kineto-torch2.5-tp8-dp2-rank0.json"));
  ASSERT_TRUE(r) << format_diagnostics(r.errors());
  EXPECT_EQ(r->rank, 0);
  EXPECT_EQ(r->world, 16);
  EXPECT_NE(r->format.find("nanosecond"), std::string::npos);
  EXPECT_EQ(r->kernels.size(), 38u);      // 2 steps x (4 layers x 4 + 3)
  EXPECT_EQ(r->collectives.size(), 18u);  // 2 steps x (4 x 2 + 1)
  ASSERT_EQ(r->steps.size(), 2u);
  EXPECT_EQ(r->steps[1].name, "ProfilerStep#2");
  const auto& ag = r->collectives[0];
  EXPECT_EQ(ag.name, "_allgather_base");
  EXPECT_EQ(ag.op, Op::kAllGather);
  EXPECT_DOUBLE_EQ(ag.bytes, 33554432.0 * 2);  // the output, bf16
  const TracedGroup* tp = group_named(*r, "1");
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ(tp->desc, "TENSOR_MODEL_PARALLEL_GROUP");
  EXPECT_EQ(tp->ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  const TracedGroup* dp = group_named(*r, "2");
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ(dp->ranks, (std::vector<int>{0, 8}));
  // Times: "{}.{:03}" microseconds.
  EXPECT_DOUBLE_EQ(r->kernels[0].start_us, 10000000.0);
  EXPECT_DOUBLE_EQ(r->kernels[0].dur_us, 310.0);
}

TEST(KinetoTrace, ReadsPyTorch21KeysThroughTheExternalId) {
  auto r = kineto(fixture("kineto-torch2.1-tp8-dp2-rank0.json"));
  ASSERT_TRUE(r) << format_diagnostics(r.errors());
  EXPECT_NE(r->format.find("whole-microsecond"), std::string::npos);
  EXPECT_EQ(r->rank, -1);  // no distributedInfo, no "Rank"
  EXPECT_EQ(r->collectives.size(), 18u);
  // The name comes from record_param_comms (the kernel has the sizes only); no group name: the
  // size stands for the group.
  EXPECT_EQ(r->collectives[0].name, "_allgather_base");
  EXPECT_DOUBLE_EQ(r->collectives[0].bytes, 33554432.0 * 2);
  EXPECT_NE(group_named(*r, "size-8"), nullptr);
  EXPECT_NE(group_named(*r, "size-2"), nullptr);
  const auto& ar = r->collectives[8];
  EXPECT_EQ(ar.name, "allreduce");
  EXPECT_EQ(ar.op, Op::kAllReduce);
  EXPECT_DOUBLE_EQ(ar.bytes, 314572800.0 * 2);
}

TEST(KinetoTrace, StreamsAcrossBlocksAndKeepsLittle) {
  // 30,000 kernels (about 9 MB): the reader's 1 MiB blocks split events and strings anywhere.
  std::string t = "{\"traceEvents\": [";
  for (int i = 0; i < 30000; ++i)
    t += fmt::format(
        "\n  {{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void at::native::"
        "vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16> >\", "
        "\"pid\": 0, \"tid\": 7,\n    \"ts\": {}.500, \"dur\": 10.250,\n    \"args\": {{\n      "
        "\"External id\": {},\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n      "
        "\"stream\": 7, \"correlation\": {}, \"grid\": [264, 1, 1]\n    }}\n  }},",
        1000 + 20 * i, i, i);
  t += "\n  {\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", "
       "\"tid\": \"\", \"ts\": 1}\n  ]\n}";
  ASSERT_GT(t.size(), 8u * 1024 * 1024);
  auto r = kineto(t);
  ASSERT_TRUE(r) << format_diagnostics(r.errors());
  EXPECT_EQ(r->kernels.size(), 30000u);
  EXPECT_DOUBLE_EQ(r->kernels[29999].start_us, 1000 + 20 * 29999 + 0.5);
  EXPECT_DOUBLE_EQ(r->kernels[29999].dur_us, 10.25);
}

TEST(KinetoTrace, TruncatedGarbageAndHugeInputAreErrorsWithTheLine) {
  const std::string good = fixture("kineto-torch2.5-tp8-dp2-rank0.json");
  auto cut = kineto(good.substr(0, good.size() / 2));
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.errors()[0].file, "t.json");
  EXPECT_GT(cut.errors()[0].line, 100);
  EXPECT_NE(cut.errors()[0].hint.find("truncated"), std::string::npos)
      << format_diagnostics(cut.errors());

  auto garbage = kineto("{\"traceEvents\": [\n{\"ph\": \"X\", \"ts\": 1e}\n]}");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.errors()[0].line, 2);
  // A trace written as one line (as Kineto may) is placed by its column too.
  auto one_line = kineto("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1e}]}");
  ASSERT_FALSE(one_line);
  EXPECT_EQ(one_line.errors()[0].line, 1);
  EXPECT_GT(one_line.errors()[0].column, 30) << format_diagnostics(one_line.errors());

  auto not_json = kineto("hello");
  ASSERT_FALSE(not_json);
  EXPECT_EQ(not_json.errors()[0].line, 1);

  // A string of 20 MiB is refused as soon as it passes the limit, not held.
  std::string huge = "{\"traceEvents\": [{\"name\": \"" + std::string(20 << 20, 'x') + "\"}]}";
  auto h = kineto(huge);
  ASSERT_FALSE(h);
  EXPECT_NE(h.errors()[0].message.find("longer than"), std::string::npos);

  auto over = kineto(good, 4096);
  ASSERT_FALSE(over);
  EXPECT_NE(over.errors()[0].message.find("goes on past"), std::string::npos);

  auto deep = kineto("{\"traceEvents\": [{\"args\": " + std::string(200, '[') +
                     std::string(200, ']') + "}]}");
  ASSERT_FALSE(deep);
  EXPECT_NE(deep.errors()[0].message.find("nested too deep"), std::string::npos);

  auto no_kernels = kineto("{\"traceEvents\": []}");
  ASSERT_FALSE(no_kernels);
  EXPECT_NE(no_kernels.errors()[0].message.find("no GPU kernels"), std::string::npos);

  auto negative = kineto(
      "{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, "
      "\"dur\": -5}]}");
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.errors()[0].key, "dur");
  // Past what a profiler records or a rank sends: a kernel of over a day, a message of more
  // elements than a GPU holds, a negative count. Each at its line and key.
  const auto refused_at = [](const auto& r, const std::string& key) {
    return !r && r.errors()[0].key == key && r.errors()[0].line == 2;
  };
  EXPECT_TRUE(refused_at(kineto("{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", "
                                "\"name\": \"k\", \"ts\": 1, \"dur\": 1e300}]}"),
                         "dur"));
  // A dur that is not a number is named as dur, not ts.
  EXPECT_TRUE(refused_at(kineto("{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", "
                                "\"name\": \"k\", \"ts\": 1, \"dur\": \"5\"}]}"),
                         "dur"));
  for (const char* n : {"1e30", "-5"})
    EXPECT_TRUE(refused_at(kineto(std::string("{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": "
                                              "\"kernel\", \"name\": \"ncclDevKernel_AllReduce\", "
                                              "\"ts\": 1, \"dur\": 5, \"args\": {\"In msg "
                                              "nelems\": ") +
                                  n + "}}]}"),
                           "In msg nelems"))
        << n;
}

// distributedInfo's rank and world size are torch.distributed's: a rank outside 0 to world - 1,
// a negative or fractional one, or a world beyond a cluster's GPUs was not written so (a rank of
// 10^9 had been taken, and -1 read as rank 0).
TEST(KinetoTrace, ARankOutsideItsWorldIsRefused) {
  const std::string good = fixture("kineto-torch2.5-tp8-dp2-rank0.json");
  const std::string from = "\"rank\": 0, \"world_size\": 16";
  ASSERT_NE(good.find(from), std::string::npos);
  for (const auto& [to, key] : std::vector<std::pair<std::string, std::string>>{
           {"\"rank\": 1000000000, \"world_size\": 16", "distributedInfo.rank"},
           {"\"rank\": -1, \"world_size\": 16", "distributedInfo.rank"},
           {"\"rank\": 1.5, \"world_size\": 16", "distributedInfo.rank"},
           {"\"rank\": 0, \"world_size\": 0", "distributedInfo.world_size"},
           {"\"rank\": 16, \"world_size\": 16", "distributedInfo.rank"}}) {
    std::string bad = good;
    bad.replace(bad.find(from), from.size(), to);
    auto r = kineto(bad);
    ASSERT_FALSE(r) << to;
    EXPECT_EQ(r.errors()[0].key, key) << to;
  }
}

// A rank traced twice (one file given twice) would count as two of the run's ranks: refused,
// naming the file.
TEST(KinetoTrace, ARankTracedTwiceIsRefused) {
  const std::string path =
      std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json";
  ASSERT_TRUE(read_trace_files({path}, "TRACE"));
  auto twice = read_trace_files({path, path}, "TRACE");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.errors()[0].file, path);
  EXPECT_NE(twice.errors()[0].message.find("rank 0 is read twice"), std::string::npos)
      << twice.errors()[0].message;
}

TEST(KinetoTrace, KernelsLaunchedUnderAnNcclOpTakeTheRecordParamCommsAroundIt) {
  // PyTorch's ProcessGroupNCCL launches inside "nccl:all_reduce", itself inside the
  // record_param_comms scope: the kernel's External id names the inner op.
  const std::string t = R"JSON({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 5, "tid": 5, "ts": 100, "dur": 50,
   "args": {"External id": 10, "Collective name": "allreduce", "dtype": "Float", "In msg nelems": 1000, "Out msg nelems": 1000, "Group size": 4, "Process Group Name": "7", "Process Group Ranks": "[0, 2, 4, 6]"}},
  {"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": 5, "tid": 5, "ts": 110, "dur": 20, "args": {"External id": 11}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": 140, "dur": 30, "args": {"External id": 11, "stream": 20}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 90, "dur": 40, "args": {"External id": 12, "stream": 7}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 5, "tid": 5, "ts": 50, "dur": 200},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#4", "pid": 0, "tid": 7, "ts": 89, "dur": 82}
  ]
})JSON";
  auto r = kineto(t);
  ASSERT_TRUE(r) << format_diagnostics(r.errors());
  ASSERT_EQ(r->collectives.size(), 1u);
  EXPECT_EQ(r->collectives[0].name, "allreduce");
  EXPECT_DOUBLE_EQ(r->collectives[0].bytes, 4000);
  const auto& g = r->groups[static_cast<size_t>(r->collectives[0].group)];
  EXPECT_EQ(g.name, "7");
  EXPECT_EQ(g.ranks, (std::vector<int>{0, 2, 4, 6}));
  // The GPU's own step window wins over the CPU's.
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_DOUBLE_EQ(r->steps[0].start_us, 89);
  // Kernels come out in start order, each pointing at its collective.
  EXPECT_DOUBLE_EQ(r->kernels[0].start_us, 90);
  EXPECT_EQ(r->kernels[0].collective, -1);
  EXPECT_EQ(r->kernels[1].collective, 0);
}

TEST(NcclLog, ReadsV218InitAndCollLinesPerProcess) {
  auto r = nccl(fixture("nccl-2.18.6-coll.log"));
  ASSERT_TRUE(r) << format_diagnostics(r.errors());
  ASSERT_EQ(r->size(), 2u);
  const TracedRank& a = (*r)[0];
  EXPECT_EQ(a.host, "node001");
  EXPECT_EQ(a.rank, 0);
  EXPECT_EQ(a.world, 16);
  EXPECT_EQ(a.cuda_dev, 0);
  EXPECT_FALSE(a.timed);
  EXPECT_NE(a.format.find("2.18.6"), std::string::npos);
  ASSERT_EQ(a.collectives.size(), 9u);
  // AllGather's count is per rank: nccl-tests' size is count x nranks x 2 bytes.
  EXPECT_EQ(a.collectives[0].op, Op::kAllGather);
  EXPECT_DOUBLE_EQ(a.collectives[0].bytes, 4194304.0 * 8 * 2);
  EXPECT_EQ(a.collectives[8].op, Op::kAllReduce);
  EXPECT_DOUBLE_EQ(a.collectives[8].bytes, 268435456.0 * 2);
  const auto& world = a.groups[static_cast<size_t>(a.collectives[8].group)];
  EXPECT_EQ(world.name, "0x7c1e4f3b2a9d8e61");
  EXPECT_EQ(world.size, 16);
  EXPECT_TRUE(world.ranks.empty());  // 2 of its 16 members' logs are here
  EXPECT_EQ((*r)[1].rank, 8);
  EXPECT_EQ((*r)[1].host, "node002");
}

TEST(NcclLog, ReadsV229SplitCommunicators) {
  auto r = nccl(fixture("nccl-2.29.7-coll.log"));
  ASSERT_TRUE(r) << format_diagnostics(r.errors());
  ASSERT_EQ(r->size(), 2u);
  const TracedRank& b = (*r)[1];
  EXPECT_NE(b.format.find("2.29.7"), std::string::npos);
  const auto& tp = b.groups[static_cast<size_t>(b.collectives[0].group)];
  EXPECT_EQ(tp.name, "split(0x7c1e4f3b2a9d8e61, color 1)");
  EXPECT_EQ(tp.size, 8);
}

TEST(NcclLog, MalformedLinesNameTheLine) {
  auto cut = nccl(
      "NCCL version 2.18.6+cuda12.2\n"
      "node001:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count\n");
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.errors()[0].file, "n.log");
  EXPECT_EQ(cut.errors()[0].line, 2);
  auto garbage = nccl("just some text\nand more\n");
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.errors()[0].message.find("NCCL"), std::string::npos);
  auto huge = nccl("node001:1:1 [0] NCCL INFO " + std::string(100000, 'a') + "\n");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.errors()[0].message.find("longer than"), std::string::npos);
  auto bad_rank = nccl(
      "node001:1:1 [0] NCCL INFO comm 0x1 rank 9 nranks 4 cudaDev 0 nvmlDev 0 busId 1 commId "
      "0x2 - Init COMPLETE\n");
  ASSERT_FALSE(bad_rank);
  EXPECT_EQ(bad_rank.errors()[0].line, 1);
  // A datatype NCCL lacks, a count too long to be a number, one more than a GPU holds.
  const std::string coll =
      "NCCL version 2.18.6+cuda12.2\n"
      "node001:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count {} "
      "datatype {} op 0 root 0 comm 0x2 [nranks=2] stream 0x3\n";
  struct Case {
    const char *count, *datatype, *key, *says;
  };
  for (const Case& c : {Case{"1024", "42", "datatype", "datatype 42 is none of NCCL's"},
                        Case{"99999999999999999999999", "7", "count", "not a number NCCL prints"},
                        Case{"9223372036854775807", "7", "count", "more than any GPU holds"}}) {
    auto r = nccl(fmt::format(fmt::runtime(coll), c.count, c.datatype));
    ASSERT_FALSE(r) << c.says;
    EXPECT_EQ(r.errors()[0].line, 2) << c.says;
    EXPECT_EQ(r.errors()[0].key, c.key) << c.says;
    EXPECT_NE(r.errors()[0].message.find(c.says), std::string::npos) << r.errors()[0].message;
  }
  EXPECT_TRUE(nccl(fmt::format(fmt::runtime(coll), "1024", "7")));
}

TEST(TraceKind, FromTheFirstBytes) {
  EXPECT_EQ(detect_trace_kind("\n  {\n    \"schemaVersion\": 1,"), TraceKind::kKineto);
  EXPECT_EQ(detect_trace_kind("host:1:1 [0] NCCL INFO Bootstrap"), TraceKind::kNcclLog);
  EXPECT_EQ(detect_trace_kind("\x1f\x8b\x08"), TraceKind::kGzip);
  EXPECT_EQ(detect_trace_kind("hello"), TraceKind::kUnknown);
  EXPECT_DOUBLE_EQ(nccl_datatype_bytes(9), 2);   // ncclBfloat16
  EXPECT_DOUBLE_EQ(nccl_datatype_bytes(10), 1);  // ncclFloat8e4m3 (2.29)
  EXPECT_DOUBLE_EQ(nccl_datatype_bytes(12), 0);
}

}  // namespace
}  // namespace gf
