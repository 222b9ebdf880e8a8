// The CliTest fixture shared by the CLI end-to-end tests: a temporary directory with a
// tiny IDX dataset, config builders, and a runner that checks nnfit's one-line errors.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace nnfit_test {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

// A raw u8 IDX file: magic 00 00 08 ndims, big-endian dims, then the bytes.
inline std::string idx_u8(const std::vector<std::uint32_t>& dims, const std::vector<std::uint8_t>& data) {
  std::string s{'\0', '\0', '\x08', static_cast<char>(dims.size())};
  for (std::uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((d >> shift) & 0xff);
  }
  s.append(data.begin(), data.end());
  return s;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nnfit_cli_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::vector<std::uint8_t> pixels(6 * 4 * 4);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 37 % 256);
    write_file(dir_ / "images.idx", idx_u8({6, 4, 4}, pixels));
    write_file(dir_ / "labels.idx", idx_u8({6}, {0, 1, 2, 0, 1, 2}));
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string model(const std::string& input = "[null, 4, 4, 1]", const std::string& extra_layers =
                                                                             R"({"class_name": "Flatten", "config": {"name": "flatten"}},)") {
    return R"({"module": "keras", "class_name": "Sequential", "config": {"name": "tiny", "layers": [)"
           R"({"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": )" +
           input + R"(, "dtype": "float32", "sparse": false, "name": "input_layer"}, "registered_name": null},)" +
           extra_layers +
           R"({"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense", "units": 3, "activation": "linear"}, "registered_name": null}]}})";
  }

  // A config with the given model, train files and fit section; validation = train.
  fs::path config(const std::string& model_json, const std::string& images = "images.idx",
                  const std::string& labels = "labels.idx", const std::string& fit = R"({"epochs": 2, "batch_size": 4, "seed": 1})") {
    const std::string files = R"({"images": ")" + images + R"(", "labels": ")" + labels + R"("})";
    return config_with_data(model_json, files, files, fit);
  }

  // A config with the given data.train and data.validation objects (JSON text).
  fs::path config_with_data(const std::string& model_json, const std::string& train, const std::string& validation,
                            const std::string& fit = R"({"epochs": 2, "batch_size": 4, "seed": 1})") {
    const std::string text = R"({"model": )" + model_json + R"(, "data": {"train": )" + train + R"(, "validation": )" + validation +
                             R"(}, "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}}, )"
                             R"("loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}}, )"
                             R"("metrics": ["accuracy"]}, "fit": )" + fit + "}";
    const fs::path p = dir_ / "config.json";
    write_file(p, text);
    return p;
  }

  // config_with_data's config (train = validation = the IDX files) with its compile
  // section's `"metrics": ["accuracy"]` replaced by `metrics_entries` (JSON members).
  fs::path config_with_metrics(const std::string& model_json, const std::string& metrics_entries,
                               const std::string& fit) {
    const std::string files = R"({"images": "images.idx", "labels": "labels.idx"})";
    const fs::path p = config_with_data(model_json, files, files, fit);
    std::string text = slurp(p);
    const std::string plain = R"("metrics": ["accuracy"])";
    text.replace(text.find(plain), plain.size(), metrics_entries);
    write_file(p, text);
    return p;
  }

  Result run(const std::string& args) const { return run_with_env("", args); }
  // The same with environment assignments before the command ("NNFIT_PLUGIN_DIR=/x").
  Result run_with_env(const std::string& env, const std::string& args) const {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd = env + " " + NNFIT_CLI + " " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  // Runs `train <config> args`, expects `code` and exactly one error line (plus at most a
  // hint) that contains every string in `expect`.
  void expect_error(const fs::path& cfg, int code, const std::vector<std::string>& expect,
                    const std::string& args = "") const {
    expect_error_of("train " + cfg.string() + " " + args, code, expect);
  }

  void expect_error_of(const std::string& args, int code, const std::vector<std::string>& expect) const {
    const Result r = run(args);
    EXPECT_EQ(r.code, code) << "nnfit " << args << "\nstderr:\n" << r.err;
    std::istringstream lines(r.err);
    std::string line, error;
    int errors = 0, hints = 0, other = 0;
    while (std::getline(lines, line)) {
      if (line.rfind("nnfit: error: ", 0) == 0) {
        ++errors;
        error = line;
      } else if (line.rfind("  hint: ", 0) == 0) {
        ++hints;
      } else {
        ++other;
      }
    }
    EXPECT_EQ(errors, 1) << r.err;
    EXPECT_LE(hints, 1) << r.err;
    EXPECT_EQ(other, 0) << r.err;
    for (const std::string& s : expect) EXPECT_NE(error.find(s), std::string::npos) << "'" << s << "' not in: " << error;
  }

  fs::path dir_;
};

}  // namespace nnfit_test
