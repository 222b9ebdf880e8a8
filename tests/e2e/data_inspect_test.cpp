// `nnfit data inspect`: JSON output for the real TFX TFRecord sample, an .npy file and a
// CSV with inferred column types,
// and a corrupt TFRecord giving the one-line DataError with file and offset, exit code 1.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "nnfit/io/npy.h"
#include "nnfit/io/tfrecord.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int code = 0;
  std::string out, err;
};

fs::path temp_dir() {
  fs::path d = fs::path(::testing::TempDir()) / ("nnfit_inspect_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Result run(const std::string& args) {
  const fs::path out = temp_dir() / "stdout.txt", err = temp_dir() / "stderr.txt";
  const int status = std::system((std::string(NNFIT_CLI) + " " + args + " >" + out.string() + " 2>" + err.string()).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, slurp(out), slurp(err)};
}

TEST(DataInspect, TfxExamplesAsJson) {
  const std::string path = std::string(NNFIT_SOURCE_DIR) + "/../shared/formats/samples/tfrecord/tfx_penguin_eval_gzip.tfrecord.gz";
  if (!fs::exists(path)) GTEST_SKIP() << "sample not found: " << path;
  const Result r = run("data inspect " + path + " --take 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["path"], path);
  EXPECT_EQ(j["format"], "tfrecord (tf.train.Example)");
  EXPECT_EQ(j["records"], 100);
  EXPECT_EQ(j["element_spec"].size(), 5u);
  ASSERT_EQ(j["first"].size(), 2u);
  EXPECT_TRUE(j["first"][0].contains("species"));
}

TEST(DataInspect, CsvColumnTypesAreInferredAndTextColumnsListed) {
  const fs::path p = temp_dir() / "t.csv";
  std::ofstream(p) << "id,weight,species,ok\n1,2.5,adelie,true\n2,4,gentoo,false\n3,-1e3,chinstrap,TRUE\n";
  const Result r = run("data inspect " + p.string() + " --take 1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "csv");
  EXPECT_EQ(j["records"], 3);
  ASSERT_EQ(j["element_spec"].size(), 3u);
  EXPECT_EQ(j["element_spec"][0]["dtype"], "int64");
  EXPECT_EQ(j["element_spec"][1]["dtype"], "float32");
  EXPECT_EQ(j["element_spec"][2]["name"], "ok");
  EXPECT_EQ(j["element_spec"][2]["dtype"], "bool");
  ASSERT_EQ(j["text_columns"].size(), 1u);
  EXPECT_EQ(j["text_columns"][0]["name"], "species");
  EXPECT_EQ(j["text_columns"][0]["example"], "adelie");
  EXPECT_EQ(j["first"][0]["weight"][0], 2.5);
}

TEST(DataInspect, CsvWithARaggedRowNamesTheLine) {
  const fs::path p = temp_dir() / "bad.csv";
  std::ofstream(p) << "a,b\n1,2\n3\n";
  const Result r = run("data inspect " + p.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("line 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bad.csv"), std::string::npos) << r.err;
}

TEST(DataInspect, NpyShapeAndValues) {
  nnfit::Tensor t = nnfit::Tensor::zeros(nnfit::Shape{5, 2}, nnfit::DType::i32);
  t.data<std::int32_t>()[3] = 42;
  const fs::path p = temp_dir() / "a.npy";
  nnfit::io::write_npy(p.string(), t);
  const Result r = run("data inspect " + p.string() + " --json --take 10");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "npy");
  EXPECT_EQ(j["records"], 5);
  EXPECT_EQ(j["element_spec"][0]["shape"], nlohmann::json::array({2}));
  EXPECT_EQ(j["first"].size(), 5u);
  EXPECT_EQ(j["first"][1]["array"][1], 42);
}

TEST(DataInspect, CorruptRecordIsOneLineWithFileAndOffset) {
  const fs::path p = temp_dir() / "bad.tfrecord";
  {
    nnfit::io::TfRecordWriter w(p.string());
    w.write("abc");
    w.write("defgh");
  }
  std::string bytes = slurp(p);
  bytes[19 + 14] ^= 1;  // data of the second record (the first is 16 + 3 bytes)
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  const Result r = run("data inspect " + p.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("nnfit: error: " + p.string() + " (offset 19): corrupt record"), std::string::npos) << r.err;
}

// Issue 20's sweep: empty files were reported as "tfrecord, 0 records", a file of unknown
// kind as a TFRecord CRC error, a Latin-1 CSV header as an internal JSON error, and a
// folder as an empty CSV.
TEST(DataInspect, EmptyUnknownAndFolderInputsAreNamedForWhatTheyAre) {
  const fs::path dir = temp_dir() / "hostile";
  fs::create_directories(dir);
  for (const char* name : {"empty.npy", "empty.png", "empty.tfrecord", "empty.csv"}) {
    std::ofstream(dir / name).flush();
    const Result r = run("data inspect " + (dir / name).string());
    EXPECT_EQ(r.code, 1) << name;
    EXPECT_NE(r.err.find("the file is empty"), std::string::npos) << name << ": " << r.err;
  }
  std::ofstream(dir / "notes.txt") << "just some text, long enough to be a record header";
  Result r = run("data inspect " + (dir / "notes.txt").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("unknown kind of file"), std::string::npos) << r.err;
  std::ofstream(dir / "bad.png") << "not a png at all";
  r = run("data inspect " + (dir / "bad.png").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("not a JPEG or PNG image"), std::string::npos) << r.err;
  fs::create_directories(dir / "folder.csv");
  r = run("data inspect " + (dir / "folder.csv").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

TEST(DataInspect, NonUtf8CsvNamesArePrintedNotAnInternalError) {
  const fs::path p = temp_dir() / "latin1.csv";
  std::ofstream(p, std::ios::binary) << "caf\xe9,label\n1.5,2\nx,3\n";
  for (const char* flags : {" --json", ""}) {
    const Result r = run("data inspect " + p.string() + flags);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("caf\xef\xbf\xbd"), std::string::npos) << "U+FFFD for the Latin-1 byte: " << r.out;
  }
}

}  // namespace
