// CSV: typed columns, quoting, selection, and bad input whose DataError names the file,
// the byte offset, and the line and column.
#include "nnfit/io/csv.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "nnfit/core/error.h"

namespace nnfit::io {
namespace {

std::string write_csv(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::path(::testing::TempDir()) / ("nnfit_csv_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

TEST(Csv, TypedColumnsQuotingAndCrlf) {
  const std::string path = write_csv("ok.csv",
                                     "x, label ,name,flag\r\n"
                                     "1.5,3,\"a, b\",true\r\n"
                                     "\r\n"
                                     "-2e3,-4,\"say \"\"hi\"\"\",0\r\n");
  CsvOptions o;
  o.column_dtypes = {{"label", DType::i64}, {"name", DType::u8}, {"flag", DType::boolean}};
  o.select_columns = {"label", "x", "flag"};
  CsvTable t = read_csv(path, o);
  EXPECT_EQ(t.rows, 2);
  EXPECT_EQ(t.names, (std::vector<std::string>{"label", "x", "flag"}));
  EXPECT_EQ(t.columns[0].dtype(), DType::i64);
  EXPECT_EQ(t.columns[0].data<std::int64_t>()[1], -4);
  EXPECT_EQ(t.columns[1].dtype(), DType::f32);
  EXPECT_EQ(t.columns[1].data<float>()[0], 1.5f);
  EXPECT_EQ(t.columns[1].data<float>()[1], -2000.0f);
  EXPECT_EQ(t.columns[2].data<std::uint8_t>()[0], 1);
  EXPECT_EQ(t.columns[2].data<std::uint8_t>()[1], 0);
}

TEST(Csv, WrongColumnCountNamesLineAndOffset) {
  const std::string text = "a,b,c\n1,2,3\n4,5\n";
  const std::string path = write_csv("count.csv", text);
  try {
    read_csv(path);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.offset(), static_cast<std::int64_t>(text.find("4,5")));
    const std::string what = e.what();
    EXPECT_NE(what.find("line 3"), std::string::npos) << what;
    EXPECT_NE(what.find("expected 3 columns"), std::string::npos) << what;
    EXPECT_NE(what.find("got 2"), std::string::npos) << what;
  }
}

TEST(Csv, BadValueNamesLineColumnAndDtype) {
  const std::string text = "a,b\n1,2\n3,x7\n";
  const std::string path = write_csv("value.csv", text);
  CsvOptions o;
  o.column_dtypes = {{"b", DType::i32}};
  try {
    read_csv(path, o);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), static_cast<std::int64_t>(text.find("x7")));
    const std::string what = e.what();
    EXPECT_NE(what.find("line 3, column 2 ('b')"), std::string::npos) << what;
    EXPECT_NE(what.find("'x7' as int32"), std::string::npos) << what;
  }
  EXPECT_THROW(read_csv(write_csv("empty_value.csv", "a,b\n1,\n")), DataError);
  EXPECT_THROW(read_csv(write_csv("overflow.csv", "a\n300\n"), {.column_dtypes = {{"a", DType::u8}}}), DataError);
}

TEST(Csv, StructuralErrors) {
  EXPECT_THROW(read_csv(write_csv("empty.csv", "")), DataError);
  try {
    read_csv(write_csv("quote.csv", "a\n\"open\n"));
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2: unterminated"), std::string::npos) << e.what();
    EXPECT_EQ(e.offset(), 2);
  }
  try {
    read_csv(write_csv("unknown.csv", "a,b\n1,2\n"), {.select_columns = {"c"}});
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("the header has: a, b"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_csv(write_csv("dtype.csv", "a\n1\n"), {.column_dtypes = {{"a", DType::bf16}}}), InvalidArgument);
  EXPECT_THROW(read_csv("/nonexistent/x.csv"), DataError);
}

}  // namespace
}  // namespace nnfit::io

namespace nnfit::io {
namespace {

TEST(CsvInfer, NarrowestTypeThatParsesEveryValue) {
  const std::string path = write_csv("infer.csv", "i,f,b,t,mixed\n+1,1,true,x,1\n-2,2.5,FALSE,y,2\n3,1e3,True,z,a\n");
  const CsvSchema s = infer_csv_schema(path);
  EXPECT_EQ(s.rows, 3);
  ASSERT_EQ(s.columns.size(), 5u);
  EXPECT_EQ(s.columns[0].dtype, DType::i64);
  EXPECT_EQ(s.columns[1].dtype, DType::f32);
  EXPECT_EQ(s.columns[2].dtype, DType::boolean);
  EXPECT_EQ(s.columns[3].dtype, std::nullopt);
  EXPECT_EQ(s.columns[4].dtype, std::nullopt) << "a text value in any row makes the column text";
  EXPECT_EQ(s.columns[3].example, "x");
  // Only the first max_rows rows decide: here the text value comes later.
  EXPECT_EQ(infer_csv_schema(path, ',', 2).columns[4].dtype, DType::i64);
}

TEST(CsvInfer, BadInput) {
  EXPECT_THROW(infer_csv_schema(write_csv("empty.csv", "")), DataError);
  EXPECT_THROW(infer_csv_schema("/nonexistent/x.csv"), DataError);
  try {
    infer_csv_schema(write_csv("ragged.csv", "a,b\n1,2\n3\n"));
    ADD_FAILURE() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
  const CsvSchema header_only = infer_csv_schema(write_csv("header.csv", "a,b\n"));
  EXPECT_EQ(header_only.rows, 0);
  EXPECT_EQ(header_only.columns[1].dtype, DType::f32);
}

// Issue 20's sweep: 2 MB of commas took 2 GB of RSS and a line of 100,000 columns seconds
// of name lookups (Note [CSV header]); a folder read as an empty file.
TEST(CsvHostile, RepeatedNamesAreRefusedAndWideHeadersReadInLinearTime) {
  const std::string commas = write_csv("commas.csv", std::string(2000000, ',') + "\n");
  for (int i = 0; i < 2; ++i) {
    try {
      i == 0 ? (void)infer_csv_schema(commas) : (void)read_csv(commas);
      ADD_FAILURE() << "no error";
    } catch (const DataError& e) {
      EXPECT_EQ(e.offset(), 1);
      EXPECT_NE(std::string(e.what()).find("line 1: column 2 has the same name as column 1 ('')"), std::string::npos) << e.what();
    }
  }
  std::string header, row;
  CsvOptions options;
  for (int c = 0; c < 100000; ++c) {
    header += (c ? "," : "") + ("c" + std::to_string(c));
    row += (c ? "," : "") + std::to_string(c);
    if (c % 2 == 0) options.select_columns.push_back("c" + std::to_string(c));
  }
  const std::string wide = write_csv("wide.csv", header + "\n" + row + "\n");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(infer_csv_schema(wide).columns.size(), 100000u);
  const CsvTable t = read_csv(wide, options);
  ASSERT_EQ(t.columns.size(), 50000u);
  EXPECT_EQ(t.columns[49999].data<float>()[0], 99998.0f);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0)
      << "a scan of the header per selected column is quadratic";
}

TEST(CsvHostile, AFolderIsNamedAsOne) {
  const std::string dir = std::filesystem::path(write_csv("x.csv", "a\n1\n")).parent_path().string();
  for (int i = 0; i < 2; ++i) {
    try {
      i == 0 ? (void)infer_csv_schema(dir) : (void)read_csv(dir);
      ADD_FAILURE() << "no error";
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), dir);
      EXPECT_NE(std::string(e.what()).find("is a directory, not a CSV file"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace nnfit::io
