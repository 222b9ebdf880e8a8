// Profiling wired through fit (issue 5): programs classify their steps into forward,
// backward and update; fit with a log dir writes steps.jsonl with exactly its keys and
// ops.json with FLOPs; profile_steps traces the asked steps into a Chrome trace whose
// kernel, step and pipeline ranges nest per thread.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "nnfit/core/error.h"
#include "nnfit/core/trace.h"
#include "nnfit/data/dataset.h"
#include "nnfit/data/sources.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"
#include "nnfit/profile/step_log.h"

namespace nnfit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/nnfit_profile_fit_XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    path_ = tmpl;
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string gunzip(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  if (f == nullptr) return {};
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

std::unique_ptr<Sequential> make_mlp(const std::string& optimizer = "adam") {
  auto model = std::make_unique<Sequential>("profiled");
  model->set_input_shape(Shape{8});
  model->add(std::make_unique<Dense>("dense", DenseOptions{16, "relu"}));
  model->add(std::make_unique<Dense>("dense_1", DenseOptions{3}));
  CompileOptions co;
  co.optimizer.name = optimizer;
  co.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  co.metrics = {"accuracy"};
  model->compile(co);
  return model;
}

std::pair<Tensor, Tensor> data(std::int64_t n) {
  Tensor x = Tensor::zeros(Shape{n, 8}, DType::f32);
  Tensor y = Tensor::zeros(Shape{n}, DType::i32);
  std::mt19937 rng(3);
  for (std::int64_t i = 0; i < n * 8; ++i) x.data<float>()[i] = static_cast<float>(rng() % 100) / 100.0f;
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng() % 3);
  return {x, y};
}

TEST(ProfileFit, StepsJsonlHasExactlyTheKeysOneLinePerStep) {
  TempDir dir;
  auto model = make_mlp();
  auto [x, y] = data(100);
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 32;  // 4 steps per epoch, the last of 4 rows (a second program)
  fo.log_dir = dir.path().string();
  model->fit(x, y, fo);
  std::ifstream in(dir.path() / "steps.jsonl");
  std::string line;
  std::int64_t expect_step = 1;
  const std::set<std::string> keys = {"step",         "input_wait_us", "h2d_us",    "forward_us",         "backward_us",
                                      "allreduce_us", "update_us",     "callbacks_us", "memory_in_use_bytes"};
  std::int64_t forward = 0, backward = 0, update = 0;
  while (std::getline(in, line)) {
    json j = json::parse(line);
    std::set<std::string> got;
    for (auto it = j.begin(); it != j.end(); ++it) {
      got.insert(it.key());
      EXPECT_TRUE(it.value().is_number_integer()) << it.key();
      EXPECT_GE(it.value().get<std::int64_t>(), 0) << it.key();
    }
    EXPECT_EQ(got, keys) << line;
    EXPECT_EQ(j["step"], expect_step++);
    EXPECT_EQ(j["h2d_us"], 0);
    EXPECT_EQ(j["allreduce_us"], 0);
    EXPECT_GT(j["memory_in_use_bytes"].get<std::int64_t>(), 0);
    forward += j["forward_us"].get<std::int64_t>();
    backward += j["backward_us"].get<std::int64_t>();
    update += j["update_us"].get<std::int64_t>();
  }
  EXPECT_EQ(expect_step, 9);  // 2 epochs x 4 steps
  EXPECT_GT(forward + backward + update, 0);
  // The library reader agrees.
  EXPECT_EQ(profile::read_step_log((dir.path() / "steps.jsonl").string()).size(), 8u);

  // ops.json: every node once, phases from the three appends, FLOPs of the matmuls.
  json ops = json::parse(std::ifstream(dir.path() / "ops.json"));
  EXPECT_EQ(ops["steps"], 8);
  std::map<std::string, int> phases;
  double matmul_flops = 0;
  for (const json& o : ops["ops"]) {
    phases[o["phase"].get<std::string>()]++;
    EXPECT_EQ(o["calls"], 8) << o["name"];
    if (o["op"] == "fused_matmul" && o["phase"] == "forward") matmul_flops += o["flops"].get<double>();
    if (o["op"] == "adam_update") EXPECT_EQ(o["phase"], "update") << o["name"];
    if (o["name"].get<std::string>().find("/grad_") != std::string::npos) EXPECT_EQ(o["phase"], "backward") << o["name"];
  }
  EXPECT_GT(phases["forward"], 0);
  EXPECT_GT(phases["backward"], 0);
  EXPECT_EQ(phases["update"], 4);  // two kernels and two biases
  // Forward matmuls: 2 epochs x (3 x 32 + 4 rows) x 2 x (8 x 16 + 16 x 3).
  EXPECT_DOUBLE_EQ(matmul_flops, 2.0 * 100 * 2 * (8 * 16 + 16 * 3));
}

// ops.json `bytes` of a real run, a Fashion-MNIST-sized MLP (784 -> 128 -> 10, Adam): the
// update of the 784x128 kernel reads param, grad, m and v and writes param, m and v, 7 x 4
// bytes per weight per call; the forward matmul reads the batch, kernel and bias and writes
// its output; a reshape the planner aliases moves nothing.
TEST(ProfileFit, OpsJsonHasTheBytesEachNodeMoves) {
  TempDir dir;
  auto model = std::make_unique<Sequential>("bytes");
  model->set_input_shape(Shape{28, 28});
  model->add(std::make_unique<Flatten>("flatten"));
  model->add(std::make_unique<Dense>("dense", DenseOptions{128, "relu"}));
  model->add(std::make_unique<Dense>("dense_1", DenseOptions{10}));
  CompileOptions co;
  co.optimizer.name = "adam";
  co.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  model->compile(co);
  model->set_num_threads(1);
  const std::int64_t rows = 96, batch = 32, steps = rows / batch;
  Tensor x = Tensor::zeros(Shape{rows, 28, 28}, DType::f32);
  Tensor y = Tensor::zeros(Shape{rows}, DType::i32);
  for (std::int64_t i = 0; i < rows * 784; ++i) x.data<float>()[i] = static_cast<float>(i % 7) / 7.0f;
  for (std::int64_t i = 0; i < rows; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(i % 10);
  FitOptions fo;
  fo.batch_size = batch;
  fo.log_dir = dir.path().string();
  model->fit(x, y, fo);

  const json ops = json::parse(std::ifstream(dir.path() / "ops.json"));
  ASSERT_EQ(ops["steps"], steps);
  std::map<std::string, json> by_name;
  for (const json& o : ops["ops"]) {
    ASSERT_TRUE(o.contains("bytes")) << o.dump();
    EXPECT_GE(o["bytes"].get<double>(), 0.0) << o.dump();
    by_name[o["name"].get<std::string>()] = o;
  }
  auto per_call = [&](const std::string& name) {
    EXPECT_TRUE(by_name.count(name)) << name << " not in " << ops.dump(1);
    const json& o = by_name[name];
    return o["bytes"].get<double>() / o["calls"].get<double>();
  };
  const double kernel = 784.0 * 128 * 4, bias = 128.0 * 4;
  EXPECT_DOUBLE_EQ(per_call("dense/kernel/adam"), 7 * kernel);
  EXPECT_DOUBLE_EQ(per_call("dense/bias/adam"), 7 * bias);
  EXPECT_DOUBLE_EQ(per_call("dense_1/kernel/adam"), 7 * 128.0 * 10 * 4);
  // Forward: x (32x784), kernel, bias read; y (32x128) written.
  EXPECT_DOUBLE_EQ(per_call("dense/matmul+bias+relu"), (batch * 784.0 + 128 * 784 + 128 + batch * 128) * 4);
  // The kernel's gradient x^T . dy: x and dy read, a 784x128 gradient written.
  EXPECT_DOUBLE_EQ(per_call("dense/matmul/grad_b"), (batch * 784.0 + batch * 128 + 784 * 128) * 4);
  // The flatten is a reshape the planner places on its input's buffer: no bytes.
  int reshapes = 0;
  for (const auto& [name, o] : by_name) {
    if (o["op"] != "reshape" || o["phase"] != "forward") continue;
    ++reshapes;
    EXPECT_EQ(o["bytes"].get<double>(), 0.0) << name;
  }
  EXPECT_EQ(reshapes, 1) << ops.dump(1);
}

TEST(ProfileFit, ASecondFitAppendsWithGlobalStepNumbers) {
  TempDir dir;
  auto model = make_mlp("sgd");
  auto [x, y] = data(64);
  FitOptions fo;
  fo.batch_size = 32;
  fo.log_dir = dir.path().string();
  model->fit(x, y, fo);
  model->fit(x, y, fo);
  auto steps = profile::read_step_log((dir.path() / "steps.jsonl").string());
  ASSERT_EQ(steps.size(), 4u);
  for (std::size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].step, static_cast<std::int64_t>(i + 1));
  // A fresh model starts the file again.
  auto other = make_mlp("sgd");
  other->fit(x, y, fo);
  EXPECT_EQ(profile::read_step_log((dir.path() / "steps.jsonl").string()).size(), 2u);
}

TEST(ProfileFit, ProfileStepsNeedALogDirAndAValidRange) {
  auto model = make_mlp();
  auto [x, y] = data(32);
  FitOptions fo;
  fo.profile_steps = "1-2";
  EXPECT_THROW(model->fit(x, y, fo), InvalidArgument);
  TempDir dir;
  fo.log_dir = dir.path().string();
  fo.profile_steps = "3-1";
  EXPECT_THROW(model->fit(x, y, fo), InvalidArgument);
  EXPECT_FALSE(trace::running());
}

// Note [Kernel range names]: a trace collected after the model (and its programs) is gone
// still reads the kernel names.
TEST(ProfileFit, KernelNamesOutliveTheModel) {
  trace::start();
  {
    auto model = make_mlp("sgd");
    auto [x, y] = data(32);
    FitOptions fo;
    fo.batch_size = 32;
    model->fit(x, y, fo);
  }
  trace::stop();
  std::set<std::string> kernels;
  for (const trace::Event& e : trace::collect().events) {
    if (std::string(e.category) == "kernel") kernels.insert(e.name);
  }
  EXPECT_TRUE(kernels.count("dense/matmul+bias+relu"));
  EXPECT_TRUE(kernels.count("dense/kernel/sgd"));
}

// A fit that fails mid-trace stops its session (a later fit can trace again).
TEST(ProfileFit, AFailingFitStopsItsTraceSession) {
  TempDir dir;
  auto model = make_mlp();
  auto [x, y] = data(64);
  int batches = 0;
  data::Dataset bad = data::Dataset::from_tensor_slices({x, y}).batch(8).map([&](data::Element e) {
    if (++batches == 3) throw DataError("bad.bin", 24, "corrupt record");
    return e;
  });
  FitOptions fo;
  fo.batch_size = 8;
  fo.log_dir = dir.path().string();
  fo.profile_steps = "1-5";
  EXPECT_THROW(model->fit(bad, fo), DataError);
  EXPECT_FALSE(trace::running());
  data::Dataset good = data::Dataset::from_tensor_slices({x, y}).batch(8);
  fo.profile_steps = "3-4";  // global steps: the failed fit ran 2
  model->fit(good, fo);
  EXPECT_FALSE(trace::running());
}

// The traced steps of a dataset fit: a trace file with exactly those train_step ranges,
// kernel ranges named after nodes inside them, pipeline ranges on their own threads, and
// every thread's ranges nested.
TEST(ProfileFit, ProfileStepsWriteANestedTraceOfThoseSteps) {
  TempDir dir;
  auto model = make_mlp();
  auto [x, y] = data(256);
  data::Dataset ds = data::Dataset::from_tensor_slices({x, y})
                         .map([](data::Element e) { return e; }, data::MapOptions{2, true, "identity"})
                         .batch(16)
                         .prefetch(2);
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 16;
  fo.log_dir = dir.path().string();
  fo.profile_steps = "5-20";  // crosses the epoch boundary (16 steps per epoch)
  model->fit(ds, fo);
  EXPECT_FALSE(trace::running());
  std::vector<fs::path> files;
  for (const auto& f : fs::recursive_directory_iterator(dir.path() / "train" / "plugins" / "profile")) {
    if (f.path().string().ends_with(".trace.json.gz")) files.push_back(f.path());
  }
  ASSERT_EQ(files.size(), 1u);
  json doc = json::parse(gunzip(files[0]));
  std::set<std::int64_t> steps;
  std::set<std::string> kernels, data_ranges;
  std::map<std::int64_t, std::vector<std::pair<double, double>>> by_tid;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    by_tid[e["tid"].get<std::int64_t>()].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
    const std::string name = e["name"], cat = e.value("cat", "");
    if (name == "train_step") steps.insert(e["args"]["arg"].get<std::int64_t>());
    if (cat == "kernel") kernels.insert(name);
    if (cat == "data") data_ranges.insert(name);
  }
  std::set<std::int64_t> want;
  for (std::int64_t s = 5; s <= 20; ++s) want.insert(s);
  EXPECT_EQ(steps, want);
  EXPECT_TRUE(kernels.count("dense/matmul+bias+relu")) << *kernels.begin();
  EXPECT_TRUE(std::any_of(kernels.begin(), kernels.end(), [](const std::string& k) { return k.find("/grad_") != std::string::npos; }));
  EXPECT_TRUE(data_ranges.count("map"));
  EXPECT_TRUE(data_ranges.count("prefetch/produce"));
  ASSERT_GE(by_tid.size(), 2u);
  for (auto& [tid, spans] : by_tid) {
    std::stable_sort(spans.begin(), spans.end(),
                     [](auto a, auto b) { return a.first < b.first || (a.first == b.first && a.second > b.second); });
    std::vector<double> open_ends;
    for (auto [ts, dur] : spans) {
      while (!open_ends.empty() && open_ends.back() <= ts) open_ends.pop_back();
      if (!open_ends.empty()) EXPECT_LE(ts + dur, open_ends.back() + 1e-9) << "tid " << tid << " span at " << ts;
      open_ends.push_back(ts + dur);
    }
  }
  // Kernel ranges sit inside a train_step on the training thread.
  EXPECT_EQ(doc["otherData"]["dropped_events"], 0);
}

}  // namespace
}  // namespace nnfit
