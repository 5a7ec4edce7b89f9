// Reading small CSV files (calibration data): quoted fields, a header row, lookup by column.
#pragma once

#include <string>
#include <vector>

namespace gf {

/// Splits one CSV line; double quotes group a field that holds commas.
std::vector<std::string> split_csv(const std::string& line);

/// A CSV text read whole (RFC 4180: a quoted field may hold commas, doubled quotes and line
/// breaks): its header and its rows with the line each starts on. What no CSV writer produces
/// (a quote left open to the end, a NUL byte, a column named twice in the header) is the
/// table's problem(), at its line; the rows before it are kept.
class CsvTable {
 public:
  explicit CsvTable(const std::string& text);
  /// What makes the text no CSV, "" when it is one; at problem_line().
  const std::string& problem() const { return problem_; }
  int problem_line() const { return problem_line_; }
  const std::vector<std::string>& header() const { return header_; }
  bool has(const std::string& column) const;
  size_t rows() const { return rows_.size(); }
  int line(size_t row) const { return lines_[row]; }
  /// The fields `row` has (more than the header's when the row is malformed).
  size_t fields(size_t row) const { return rows_[row].size(); }
  /// The field of `column` in `row`, or "" when the row is short or the column unknown.
  std::string at(size_t row, const std::string& column) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<int> lines_;
  std::string problem_;
  int problem_line_ = 0;
};

}  // namespace gf
