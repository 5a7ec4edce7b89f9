#include "common/csv.h"

#include <algorithm>
#include <sstream>

namespace gf {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

CsvTable::CsvTable(const std::string& text) {
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, any = false;  // inside quotes; the record has a character
  int line = 1, start = 1, quote_line = 0;
  auto end_record = [&] {
    record.push_back(field);
    field.clear();
    if (!(record.size() == 1 && record[0].empty())) {  // a blank line is no record
      if (header_.empty()) {
        header_ = record;
        for (size_t i = 0; i < header_.size() && problem_.empty(); ++i)
          for (size_t j = 0; j < i; ++j)
            if (header_[i] == header_[j]) {
              problem_ = "column '" + header_[i] + "' is named twice in the header";
              problem_line_ = start;
              break;
            }
      } else {
        rows_.push_back(record);
        lines_.push_back(start);
      }
    }
    record.clear();
    any = false;
  };
  for (size_t i = 0; i < text.size() && problem_.empty(); ++i) {
    const char c = text[i];
    if (c == '\0') {
      problem_ = "a NUL byte: not a text file";
      problem_line_ = line;
      break;
    }
    if (!any) start = line;
    any = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';  // a doubled quote is one
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
      quote_line = line;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      end_record();
      ++line;
    } else {
      field += c;
    }
  }
  if (problem_.empty() && quoted) {
    problem_ = "a quote opened here is never closed";
    problem_line_ = quote_line;
  }
  if (problem_.empty() && any) {
    if (!field.empty() && field.back() == '\r') field.pop_back();
    end_record();
  }
}

bool CsvTable::has(const std::string& column) const {
  return std::find(header_.begin(), header_.end(), column) != header_.end();
}

std::string CsvTable::at(size_t row, const std::string& column) const {
  for (size_t i = 0; i < header_.size() && i < rows_[row].size(); ++i)
    if (header_[i] == column) return rows_[row][i];
  return "";
}

}  // namespace gf
