// CSV with a header row and typed columns (RFC 4180 quoting; "\n" or "\r\n" line ends).
// Every column becomes one rank-1 tensor, so a table feeds Dataset::from_tensor_slices.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"

namespace nnfit::io {

struct CsvOptions {
  char delimiter = ',';
  // dtype per column name (f32, i32, i64, u8 or boolean); others get default_dtype.
  std::map<std::string, DType> column_dtypes;
  DType default_dtype = DType::f32;
  // Keep only these columns, in this order (empty: all, in file order).
  std::vector<std::string> select_columns;
};

struct CsvTable {
  std::vector<std::string> names;  // column names, in the order of columns
  std::vector<Tensor> columns;     // each [rows], of the column's dtype
  std::int64_t rows = 0;
};

// A column's type as the data shows it: the narrowest of bool (true/false/1/0 words only
// true/false), int64, float32 that parses every value of the first `max_rows` rows;
// nullopt for text (nnfit has no string dtype, so such columns cannot be loaded).
struct CsvColumnGuess {
  std::string name;
  std::optional<DType> dtype;
  std::string example;  // the first value, for reports
};
struct CsvSchema {
  std::vector<CsvColumnGuess> columns;
  std::int64_t rows = 0;  // data rows in the whole file (the header excluded)
};
// throws: DataError as read_csv for a file that does not split into rows and columns.
CsvSchema infer_csv_schema(const std::string& path, char delimiter = ',', std::int64_t max_rows = 1000);

// throws: DataError(file, byte offset, ...) whose message names the line (1-based, the
//   header is line 1) and, for a bad value, the column: a row with the wrong number of
//   fields, an empty or unparsable value, an unterminated quote, a missing header, an
//   unknown column in select_columns/column_dtypes. InvalidArgument for an unsupported dtype.
CsvTable read_csv(const std::string& path, const CsvOptions& options = {});

}  // namespace nnfit::io
