// CSV reader: the whole file is read, split into records by a small RFC 4180 state
// machine (quotes may hold delimiters, newlines and "" escapes), and each field parsed
// with std::from_chars into its column's dtype. Errors carry the byte offset of the
// record (DataError's offset) and name the line and column in the message.
#include "nnfit/io/csv.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <unordered_map>

#include "nnfit/core/error.h"
#include "nnfit/io/atomic_file.h"

namespace nnfit::io {
namespace {

struct Field {
  std::string text;
  std::int64_t offset;  // byte offset of the field in the file
};
struct Record {
  std::vector<Field> fields;
  std::int64_t line;    // 1-based line where the record starts
  std::int64_t offset;  // byte offset where it starts
};

// Splits into records; skips blank lines.
std::vector<Record> split(const std::string& text, char delim, const std::string& path) {
  std::vector<Record> records;
  std::size_t i = 0;
  std::int64_t line = 1;
  const std::size_t n = text.size();
  while (i < n) {
    if (text[i] == '\n' || text[i] == '\r') {  // blank line
      if (text[i] == '\n') ++line;
      ++i;
      continue;
    }
    Record r{{}, line, static_cast<std::int64_t>(i)};
    for (;;) {
      Field f{{}, static_cast<std::int64_t>(i)};
      if (i < n && text[i] == '"') {
        const std::int64_t quote_line = line;
        ++i;
        for (;;) {
          if (i >= n) {
            throw DataError(path, f.offset, "line " + std::to_string(quote_line) + ": unterminated quoted field",
                            "close the quote, or escape quotes inside a field as \"\"");
          }
          if (text[i] == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              f.text.push_back('"');
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (text[i] == '\n') ++line;
          f.text.push_back(text[i++]);
        }
      }
      while (i < n && text[i] != delim && text[i] != '\n' && text[i] != '\r') f.text.push_back(text[i++]);
      r.fields.push_back(std::move(f));
      if (i < n && text[i] == delim) {
        ++i;
        continue;
      }
      if (i < n && text[i] == '\r') ++i;
      if (i < n && text[i] == '\n') {
        ++i;
        ++line;
      }
      break;
    }
    records.push_back(std::move(r));
  }
  return records;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <typename T>
bool parse_number(std::string_view s, T& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parse_bool(std::string_view s, std::uint8_t& out) {
  if (s == "1" || s == "true" || s == "True" || s == "TRUE") { out = 1; return true; }
  if (s == "0" || s == "false" || s == "False" || s == "FALSE") { out = 0; return true; }
  return false;
}

// Note [CSV header]: columns are found by name, so every name must be unique; a header of
// repeated names (2 MB of commas is two million empty ones) is refused at line 1 instead
// of being read column by column (it took 2 GB). The lookup is a hash map: a header of
// 100,000 columns costs linear time, not a scan per selected column.
std::unordered_map<std::string, std::size_t> column_index(const Record& header, const std::string& path) {
  std::unordered_map<std::string, std::size_t> index;
  index.reserve(header.fields.size());
  for (std::size_t c = 0; c < header.fields.size(); ++c) {
    const auto [it, fresh] = index.emplace(std::string(trim(header.fields[c].text)), c);
    if (!fresh) {
      throw DataError(path, header.fields[c].offset,
                      "line 1: column " + std::to_string(c + 1) + " has the same name as column " +
                          std::to_string(it->second + 1) + " ('" + it->first + "')",
                      "give every column its own name in the header row");
    }
  }
  return index;
}

}  // namespace

CsvTable read_csv(const std::string& path, const CsvOptions& options) {
  std::string text = read_file_bytes(path, "CSV file");
  if (text.starts_with("\xEF\xBB\xBF")) text.replace(0, 3, 3, ' ');  // UTF-8 BOM; keeps offsets
  std::vector<Record> records = split(text, options.delimiter, path);
  if (records.empty()) throw DataError(path, 0, "line 1: no header row (the file is empty)", "the first line must name the columns");

  std::vector<std::string> header;
  for (const Field& f : records[0].fields) header.emplace_back(trim(f.text));
  const std::unordered_map<std::string, std::size_t> columns = column_index(records[0], path);
  auto index_of = [&](const std::string& name) -> std::size_t {
    if (auto it = columns.find(name); it != columns.end()) return it->second;
    std::string have;
    for (const std::string& h : header) have += (have.empty() ? "" : ", ") + h;
    throw DataError(path, 0, "line 1: no column named '" + name + "' (the header has: " + have + ")");
  };
  for (const auto& [name, dtype] : options.column_dtypes) {
    index_of(name);
    NNFIT_CHECK(dtype == DType::f32 || dtype == DType::i32 || dtype == DType::i64 || dtype == DType::u8 ||
                    dtype == DType::boolean,
                InvalidArgument, "read_csv: column '", name, "' asks for ", dtype_name(dtype),
                "; CSV columns can be float32, int32, int64, uint8 or bool");
  }
  std::vector<std::size_t> selected;
  if (options.select_columns.empty()) {
    for (std::size_t c = 0; c < header.size(); ++c) selected.push_back(c);
  } else {
    for (const std::string& name : options.select_columns) selected.push_back(index_of(name));
  }

  CsvTable table;
  table.rows = static_cast<std::int64_t>(records.size()) - 1;
  std::vector<DType> dtypes;
  for (std::size_t c : selected) {
    auto it = options.column_dtypes.find(header[c]);
    const DType dtype = it == options.column_dtypes.end() ? options.default_dtype : it->second;
    dtypes.push_back(dtype);
    table.names.push_back(header[c]);
    table.columns.push_back(Tensor::zeros(Shape{table.rows}, dtype));
  }

  for (std::size_t r = 1; r < records.size(); ++r) {
    const Record& rec = records[r];
    if (rec.fields.size() != header.size()) {
      throw DataError(path, rec.offset,
                      "line " + std::to_string(rec.line) + ": expected " + std::to_string(header.size()) +
                          " columns (as in the header), got " + std::to_string(rec.fields.size()),
                      "check for a missing or extra delimiter, or quote fields that contain one");
    }
    const auto row = static_cast<std::size_t>(r - 1);
    for (std::size_t k = 0; k < selected.size(); ++k) {
      const Field& f = rec.fields[selected[k]];
      const std::string_view v = trim(f.text);
      const Tensor& col = table.columns[k];
      bool ok = !v.empty();
      if (ok) {
        switch (dtypes[k]) {
          case DType::f32: ok = parse_number(v, col.data<float>()[row]); break;
          case DType::i32: ok = parse_number(v, col.data<std::int32_t>()[row]); break;
          case DType::i64: ok = parse_number(v, col.data<std::int64_t>()[row]); break;
          case DType::u8: ok = parse_number(v, col.data<std::uint8_t>()[row]); break;
          case DType::boolean: ok = parse_bool(v, col.data<std::uint8_t>()[row]); break;
          default: ok = false; break;
        }
      }
      if (!ok) {
        throw DataError(path, f.offset,
                        "line " + std::to_string(rec.line) + ", column " + std::to_string(selected[k] + 1) + " ('" +
                            header[selected[k]] + "'): " +
                            (v.empty() ? std::string("empty value") : "cannot parse '" + std::string(v) + "'") +
                            " as " + std::string(dtype_name(dtypes[k])),
                        "fix the value, or give the column another dtype in the CSV options");
      }
    }
  }
  return table;
}

CsvSchema infer_csv_schema(const std::string& path, char delimiter, std::int64_t max_rows) {
  std::string text = read_file_bytes(path, "CSV file");
  if (text.starts_with("\xEF\xBB\xBF")) text.replace(0, 3, 3, ' ');
  std::vector<Record> records = split(text, delimiter, path);
  if (records.empty()) throw DataError(path, 0, "line 1: no header row (the file is empty)", "the first line must name the columns");
  (void)column_index(records[0], path);
  std::vector<CsvColumnGuess> cols;
  for (const Field& f : records[0].fields) cols.push_back({std::string(trim(f.text)), std::nullopt, {}});
  // Per column: can every value seen so far be a bool word, an int64, a float32?
  std::vector<bool> as_bool(cols.size(), true), as_int(cols.size(), true), as_float(cols.size(), true);
  const std::size_t last = std::min(records.size(), static_cast<std::size_t>(std::max<std::int64_t>(1, max_rows)) + 1);
  for (std::size_t r = 1; r < last; ++r) {
    const Record& rec = records[r];
    if (rec.fields.size() != cols.size()) {
      throw DataError(path, rec.offset, "line " + std::to_string(rec.line) + ": " + std::to_string(rec.fields.size()) +
                                            " fields, but the header has " + std::to_string(cols.size()));
    }
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const std::string_view v = trim(rec.fields[c].text);
      if (r == 1) cols[c].example = std::string(v);
      std::int64_t i = 0;
      float x = 0;
      as_bool[c] = as_bool[c] && (v == "true" || v == "false" || v == "True" || v == "False" || v == "TRUE" || v == "FALSE");
      as_int[c] = as_int[c] && parse_number(v, i);
      as_float[c] = as_float[c] && parse_number(v, x);
    }
  }
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (last <= 1) cols[c].dtype = DType::f32;  // no rows: read_csv's default
    else if (as_bool[c]) cols[c].dtype = DType::boolean;
    else if (as_int[c]) cols[c].dtype = DType::i64;
    else if (as_float[c]) cols[c].dtype = DType::f32;
  }
  return {std::move(cols), static_cast<std::int64_t>(records.size()) - 1};
}

}  // namespace nnfit::io
