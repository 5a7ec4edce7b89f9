// Quantities and their parsing: data sizes, bit and byte rates, times, counts, ratios.
// One parser for every number a user types, in the spec or on the command line.
#pragma once

#include <string>
#include <string_view>

#include "common/diag.h"

namespace gf::units {

/// How bare K/M/G suffixes on sizes are read: decimal (spec: "1GB" = 1e9) or as nccl-tests
/// reads its -b/-e flags (binary: "1G" = 2^30).
enum class SizeStyle { kSpec, kNccl };

/// A size in bytes: "8", "512B", "4KB", "4KiB", "1.5GB", "8G" (binary with kNccl).
Result<double> parse_bytes(std::string_view text, SizeStyle style = SizeStyle::kSpec);
/// A link rate in bits per second: "400G", "400Gbps", "400Gb/s", "400 Gbit/s"; "50GB/s" is bytes/s.
Result<double> parse_bitrate(std::string_view text);
/// A time in seconds: "10s", "250ms", "3us", "5ns", "2min", "1.5h", "3d".
Result<double> parse_seconds(std::string_view text);
/// A count: "1024", "70B" (7e10), "15T", "2k", "1.5M", "1e9".
Result<double> parse_count(std::string_view text);
/// A ratio such as an oversubscription: "2", "1.5", "2:1", "3:2".
Result<double> parse_ratio(std::string_view text);
/// A money amount in USD: "50M", "$1.2B", "250k", "1000".
Result<double> parse_usd(std::string_view text);

/// A binary gigabyte, as GPU memory is counted ("80 GB" of HBM is 80 GiB).
inline constexpr double kBytesPerGiB = 1073741824.0;

/// Human formatting with units, for text output (3 significant digits).
std::string format_bytes(double bytes);         ///< decimal: "280 GB"
std::string format_bitrate(double bits_per_s);  ///< "400 Gbps"
std::string format_seconds(double s);           ///< "5.6 s", "155.6 h", "35 us"
/// A time before and after, in the larger one's unit: "48.3 -> 47.3 h" (not "2.01 d -> 47.3 h").
std::string format_seconds_pair(double a, double b);
std::string format_usd(double usd);             ///< "$12.3M"
std::string format_count(double n);             ///< "70B", "1.02k"
std::string format_power(double watts);         ///< "1.23 MW"

}  // namespace gf::units
