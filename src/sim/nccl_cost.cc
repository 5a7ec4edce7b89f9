#include "sim/nccl_cost.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "sim/nccl_constants.h"

namespace gf {
namespace {

int log2_ceil(long long n) {
  int k = 0;
  while ((1LL << k) < n) ++k;
  return k;
}

}  // namespace

std::optional<Algorithm> parse_algorithm(const std::string& s) {
  if (s == "sharp") return Algorithm::kCollNet;
  return parse_name(kAlgorithmNames, s);
}

std::optional<Protocol> parse_protocol(const std::string& s) {
  for (const auto& e : kProtocolNames) {
    const std::string n = e.name;
    if (n.size() == s.size() && std::equal(n.begin(), n.end(), s.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        }))
      return e.value;
  }
  return std::nullopt;
}

double bus_factor(Op op, long long n) {
  const double N = static_cast<double>(n);
  switch (op) {
    case Op::kAllReduce:
      return n > 1 ? 2 * (N - 1) / N : 0;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAlltoall:
      return n > 1 ? (N - 1) / N : 0;
    default:
      return 1;
  }
}

double ring_traffic_factor(Op op, long long n) {
  const double N = static_cast<double>(n);
  switch (op) {
    case Op::kAllReduce:
      return 2 * (N - 1) / N;
    case Op::kAllGather:
    case Op::kReduceScatter:
      return (N - 1) / N;
    default:
      return 1.0;
  }
}

double latency_us(Algorithm a, Protocol p, const CostShape& s) {
  const long long N = s.ranks;
  const int n = s.domains;
  const double hop = s.net_hop_us;
  const int pi = static_cast<int>(p);
  auto hw = [&](nccl::Hw h, nccl::Algo al) { return nccl::kHwLatencyUs[h][al][pi]; };
  switch (a) {
    case Algorithm::kRing: {
      const long long steps = s.op == Op::kAllReduce                                   ? 2 * (N - 1)
                              : (s.op == Op::kAllGather || s.op == Op::kReduceScatter) ? N - 1
                                                                                       : N;
      const long long inter = n <= 1 ? 0 : s.op == Op::kAllReduce ? 2 * (n - 1) : n - 1;
      double intra = hw(nccl::kNvlink, nccl::kRing);
      if (n > 1 && p == Protocol::kLL) intra *= 1.8;  // NCCL tuning.cc
      return nccl::kBaseLatencyUs[nccl::kRing][pi] + (steps - inter) * intra +
             inter * (hw(nccl::kNet, nccl::kRing) + hop);
    }
    case Algorithm::kTree: {
      double intra = hw(nccl::kNvlink, nccl::kTree);
      if (n > 1 && p == Protocol::kLL) intra *= 1.8;
      return nccl::kBaseLatencyUs[nccl::kTree][pi] +
             2 * ((s.domain_gpus - 1) * intra + log2_ceil(n) * (hw(nccl::kNet, nccl::kTree) + hop));
    }
    case Algorithm::kNvls:
      return hw(nccl::kNvlink, nccl::kNvls);
    case Algorithm::kNvlsTree:
      return hw(nccl::kNvlink, nccl::kNvlsTree) +
             2 * log2_ceil(n) * (hw(nccl::kNet, nccl::kNvlsTree) + hop);
    case Algorithm::kCollNet:
      return hw(nccl::kNvlink, nccl::kCollNetDirect) + hw(nccl::kNet, nccl::kCollNetDirect) +
             2 * hop;
    case Algorithm::kPat:
      return nccl::kBaseLatencyUs[nccl::kPat][pi] +
             log2_ceil(N) *
                 ((n > 1 ? hw(nccl::kNet, nccl::kPat) : hw(nccl::kNvlink, nccl::kPat)) + hop);
    case Algorithm::kP2p: {
      const double one = n > 1 ? hw(nccl::kNet, nccl::kRing) + hop : hw(nccl::kNvlink, nccl::kRing);
      return nccl::kP2pBaseLatencyUs + one;  // an alltoall's posting: alltoall_time_us
    }
  }
  return 0;
}

double protocol_factor(Algorithm a, Protocol p, Op op, int domains) {
  if (p == Protocol::kSimple) return 1.0;
  if (a == Algorithm::kRing)
    return p == Protocol::kLL128 ? nccl::kRingLL128Factor
                                 : (domains > 1 || op == Op::kAllReduce ? nccl::kRingLLFactor
                                                                        : nccl::kRingLLFactorIntra);
  if (a == Algorithm::kTree)
    return p == Protocol::kLL128 ? nccl::kTreeLL128Factor : nccl::kTreeLLFactor;
  return 0;  // NVLS, CollNet, PAT and p2p run Simple only
}

double alltoall_posting_us(long long ranks) {
  return static_cast<double>(ranks - 1) * nccl::kP2pPerPeerLatencyUs;
}

double alltoall_time_us(double fixed_us, long long ranks, double data_us) {
  return fixed_us + std::max(alltoall_posting_us(ranks), data_us);
}

double collective_time_us(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                          double bytes) {
  const double f = protocol_factor(a, p, s.op, s.domains);
  if (f <= 0) return std::numeric_limits<double>::infinity();
  const double data_us = bytes * seconds_per_byte / f * 1e6;
  if (a == Algorithm::kP2p && s.op == Op::kAlltoall)
    return alltoall_time_us(latency_us(a, p, s), s.ranks, data_us);
  return latency_us(a, p, s) + data_us;
}

}  // namespace gf
