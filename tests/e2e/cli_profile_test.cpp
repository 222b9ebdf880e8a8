// `nnfit train --logdir --profile-steps` and `nnfit profile`: a deliberately input-bound
// run (a map that sleeps 5 ms per batch) is called input-bound with that map named as the
// slowest stage; a wide MLP on in-memory data is called compute-bound with its matmuls
// among the heaviest ops; flags and bad logs fail with one clear line and the documented
// exit code.
#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "cli_fixture.h"
#include "nnfit/data/dataset.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"
#include "nnfit/profile/step_log.h"

namespace {

using namespace nnfit_test;
using nlohmann::json;

std::unique_ptr<nnfit::Sequential> mlp(std::int64_t in, std::vector<std::int64_t> hidden) {
  using namespace nnfit;
  auto model = std::make_unique<Sequential>("m");
  model->set_input_shape(Shape{in});
  for (std::size_t i = 0; i < hidden.size(); ++i) {
    model->add(std::make_unique<Dense>("dense_" + std::to_string(i), DenseOptions{hidden[i], "relu"}));
  }
  model->add(std::make_unique<Dense>("logits", DenseOptions{4}));
  CompileOptions co;
  co.optimizer.name = "sgd";
  co.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  model->compile(co);
  // One compute thread: on a shared 2-core machine, OpenMP barriers of 2 threads can make
  // tiny kernels take milliseconds and blur the verdict the tests check.
  model->set_num_threads(1);
  return model;
}

std::pair<nnfit::Tensor, nnfit::Tensor> random_data(std::int64_t n, std::int64_t in) {
  using namespace nnfit;
  Tensor x = Tensor::zeros(Shape{n, in}, DType::f32);
  Tensor y = Tensor::zeros(Shape{n}, DType::i32);
  std::mt19937 rng(5);
  for (std::int64_t i = 0; i < n * in; ++i) x.data<float>()[i] = static_cast<float>(rng() % 100) / 100.0f;
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng() % 4);
  return {x, y};
}

class CliProfileTest : public CliTest {
 protected:
  json profile_json(const fs::path& log_dir, const std::string& extra = "--peak-gflops 100") {
    const Result r = run("profile " + log_dir.string() + " --json " + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return json::parse(r.out);
  }
};

TEST_F(CliProfileTest, SlowMapIsInputBoundAndNamedAsTheSlowStage) {
  using namespace nnfit;
  auto model = mlp(8, {16});
  auto [x, y] = random_data(256, 8);
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 32;
  fo.log_dir = (dir_ / "logs").string();
  std::vector<std::shared_ptr<data::StageStats>> st(4);
  for (auto& s : st) s = std::make_shared<data::StageStats>();
  data::Dataset ds = data::Dataset::from_tensor_slices({x, y})
                         .measure(st[0])
                         .batch(32)
                         .measure(st[1])
                         .map(
                             [](data::Element e) {
                               std::this_thread::sleep_for(std::chrono::milliseconds(5));
                               return e;
                             },
                             data::MapOptions{0, true, "slow"})
                         .measure(st[2])
                         .prefetch(2)
                         .measure(st[3]);
  fo.pipeline_stages = {{"source: tensors", st[0]}, {"batch", st[1]}, {"map(slow)", st[2]}, {"prefetch", st[3]}};
  model->fit(ds, fo);
  const json p = profile_json(dir_ / "logs");
  EXPECT_EQ(p["verdict"], "input-bound") << p.dump(1);
  ASSERT_TRUE(p["slowest_stage"].is_object()) << p.dump(1);
  EXPECT_EQ(p["slowest_stage"]["name"], "map(slow)");
  EXPECT_NE(p["slowest_stage"]["advice"].get<std::string>().find("num_parallel_calls"), std::string::npos);
  EXPECT_GT(p["fractions"]["input_wait"].get<double>(), 0.5);
  EXPECT_EQ(p["steps"], 16);
  // The text form says the same.
  const Result text = run("profile " + (dir_ / "logs").string() + " --peak-gflops 100");
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("verdict: input-bound"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("slowest pipeline stage: map(slow)"), std::string::npos) << text.out;
}

TEST_F(CliProfileTest, WideMlpOnInMemoryDataIsComputeBoundWithItsMatmulsOnTop) {
  using namespace nnfit;
  auto model = mlp(256, {512, 512});
  auto [x, y] = random_data(2048, 256);
  FitOptions fo;
  fo.batch_size = 256;
  fo.log_dir = (dir_ / "logs").string();
  model->fit(x, y, fo);
  // Measure the peak here (once) to cover that path.
  const json p = profile_json(dir_ / "logs", "");
  EXPECT_EQ(p["verdict"], "compute-bound") << p.dump(1);
  EXPECT_TRUE(p["slowest_stage"].is_null());
  ASSERT_FALSE(p["heaviest_ops"].empty());
  const json& top = p["heaviest_ops"][0];
  EXPECT_TRUE(top["op"] == "matmul" || top["op"] == "fused_matmul") << top.dump();
  EXPECT_GT(top["gflops_per_s"].get<double>(), 0.5);
  EXPECT_GT(top["fraction_of_peak"].get<double>(), 0.0);
  EXPECT_GT(p["peak"]["gflops_per_s"].get<double>(), 1.0);
  EXPECT_NE(p["peak"]["source"].get<std::string>().find("measured"), std::string::npos);
  // The bandwidth too, and the matmul's bytes against it.
  EXPECT_GT(p["peak_gbps"].get<double>(), 0.5);
  EXPECT_NE(p["peak_gbps_source"].get<std::string>().find("measured now: STREAM triad"), std::string::npos);
  EXPECT_GT(top["bytes_per_step"].get<double>(), 256.0 * 512 * 4);  // at least its kernel
  EXPECT_GT(top["gbps"].get<double>(), 0.0);
  EXPECT_GT(top["fraction_of_bandwidth"].get<double>(), 0.0);
  for (const char* k : {"log_dir", "steps", "steps_used", "mean_step_us", "breakdown_us", "fractions",
                        "memory_in_use_bytes_max", "slowest_stage", "heaviest_ops", "verdict", "evidence", "peak",
                        "peak_gbps", "peak_gbps_source"}) {
    EXPECT_TRUE(p.contains(k)) << k;
  }
}

TEST_F(CliProfileTest, TrainWritesStepsPipelineAndATraceOfTheAskedSteps) {
  const std::string train = R"({"source": {"format": "idx", "images": "images.idx", "labels": "labels.idx"}, )"
                            R"("pipeline": [{"map": "normalize", "scale": 0.00392156862745098}, {"batch": 2}, {"prefetch": 2}]})";
  const fs::path cfg = config_with_data(model(), train, train, R"({"epochs": 2, "batch_size": 2, "seed": 1})");
  const fs::path logs = dir_ / "logs";
  const Result r = run("train " + cfg.string() + " --quiet --logdir " + logs.string() + " --profile-steps 2-4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nnfit::profile::read_step_log((logs / "steps.jsonl").string()).size(), 6u);  // 2 epochs x 3 batches
  const json pipe = json::parse(slurp(logs / "pipeline.json"));
  EXPECT_EQ(pipe["epochs"], 2);
  ASSERT_GE(pipe["stages"].size(), 4u);
  EXPECT_EQ(pipe["stages"][0]["name"], "source: idx");
  EXPECT_EQ(pipe["stages"][1]["name"], "map(normalize)");
  int traces = 0;
  for (const auto& f : fs::recursive_directory_iterator(logs / "train" / "plugins" / "profile")) {
    traces += f.path().string().ends_with(".trace.json.gz");
  }
  EXPECT_EQ(traces, 1);
  const Result p = run("profile " + logs.string() + " --peak-gflops 100");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("verdict: "), std::string::npos);
}

TEST_F(CliProfileTest, ProfileStepsFlagErrors) {
  const fs::path cfg = config(model());
  expect_error(cfg, 2, {"--profile-steps 2-4 needs --logdir"}, "--profile-steps 2-4");
  expect_error(cfg, 2, {"profile steps \"4-2\"", "expected FIRST-LAST"}, "--logdir " + (dir_ / "l").string() + " --profile-steps 4-2");
  expect_error(cfg, 2, {"profile steps \"ten\"", "is not a step number"}, "--logdir " + (dir_ / "l").string() + " --profile-steps ten");
  EXPECT_FALSE(fs::exists(dir_ / "l"));  // nothing ran
}

// The verdict rules on hand-made logs (docs/design/profile.md): all-reduce past 20% is
// synchronization-bound; kernels mostly outside matmul/conv are memory-bound; an
// input-bound run without pipeline.json says the per-stage figures are missing.
std::string step_line(int step, int wait, int fwd, int bwd, int allreduce, int update) {
  return nnfit::profile::step_json({step, wait, 0, fwd, bwd, allreduce, update, 0, 1000}) + "\n";
}

TEST_F(CliProfileTest, VerdictRulesOnHandMadeLogs) {
  const fs::path sync = dir_ / "sync", mem = dir_ / "mem", input = dir_ / "input";
  for (const fs::path& d : {sync, mem, input}) fs::create_directories(d);
  std::string s, m, in;
  for (int i = 1; i <= 5; ++i) {
    s += step_line(i, 10, 300, 300, 400, 50);
    m += step_line(i, 10, 300, 300, 0, 400);
    in += step_line(i, 900, 50, 50, 0, 10);
  }
  write_file(sync / "steps.jsonl", s);
  write_file(mem / "steps.jsonl", m);
  write_file(input / "steps.jsonl", in);
  write_file(mem / "ops.json", R"({"threads": 1, "device": "cpu:0", "steps": 5, "ops": [)"
                                R"({"name": "dense/matmul", "op": "matmul", "impl": "x", "phase": "forward", "calls": 5, "seconds": 0.001, "flops": 1e8},)"
                                R"({"name": "dense/kernel/adam", "op": "adam_update", "impl": "x", "phase": "update", "calls": 5, "seconds": 0.004, "flops": 0}]})");
  json p = profile_json(sync);
  EXPECT_EQ(p["verdict"], "synchronization-bound") << p.dump(1);
  p = profile_json(mem);
  EXPECT_EQ(p["verdict"], "memory-bound") << p.dump(1);
  ASSERT_EQ(p["heaviest_ops"].size(), 2u);
  EXPECT_EQ(p["heaviest_ops"][0]["name"], "dense/kernel/adam");
  EXPECT_TRUE(p["heaviest_ops"][0]["gflops_per_s"].is_null());
  EXPECT_DOUBLE_EQ(p["heaviest_ops"][1]["gflops_per_s"].get<double>(), 100.0);  // 1e8 FLOPs in 1 ms
  EXPECT_DOUBLE_EQ(p["heaviest_ops"][1]["fraction_of_peak"].get<double>(), 1.0);  // --peak-gflops 100
  // This ops.json has no `bytes` (as nnfit wrote it before it had them): read all the same,
  // with null rates, no bandwidth measured, and the evidence saying what is missing.
  for (const json& h : p["heaviest_ops"]) {
    EXPECT_TRUE(h["bytes_per_step"].is_null()) << h.dump();
    EXPECT_TRUE(h["gbps"].is_null()) << h.dump();
    EXPECT_TRUE(h["fraction_of_bandwidth"].is_null()) << h.dump();
  }
  EXPECT_TRUE(p["peak_gbps"].is_null()) << p.dump(1);
  EXPECT_NE(p["evidence"].dump().find("ops.json has no bytes per op"), std::string::npos) << p.dump(1);
  EXPECT_EQ(p["steps_used"], 4);
  EXPECT_DOUBLE_EQ(p["mean_step_us"].get<double>(), 1010.0);
  p = profile_json(input);
  EXPECT_EQ(p["verdict"], "input-bound") << p.dump(1);
  EXPECT_TRUE(p["slowest_stage"].is_null());
  EXPECT_NE(p["evidence"].dump().find("no pipeline.json"), std::string::npos) << p.dump(1);
}

// Memory-bound evidence from bytes: each op's bytes per step and GB/s, its fraction of the
// bandwidth given with --peak-gbps, and the heaviest ops without FLOPs named with those
// figures, in the JSON, the text and the page.
TEST_F(CliProfileTest, MemoryBoundEvidenceIsBytesMovedAgainstTheBandwidth) {
  const fs::path mem = dir_ / "mem";
  fs::create_directories(mem);
  std::string m;
  for (int i = 1; i <= 5; ++i) m += step_line(i, 10, 300, 300, 0, 400);
  write_file(mem / "steps.jsonl", m);
  // Over 4 steps: adam moves 2 x 2809856 B in 0.9 ms (under half the bandwidth); grad_x
  // 1.2 MB in 0.1 ms; matmul 2e6 B with its FLOPs; the reshape moves nothing.
  write_file(mem / "ops.json", R"({"threads": 1, "device": "cpu:0", "steps": 4, "ops": [)"
                               R"({"name": "dense/matmul", "op": "matmul", "impl": "x", "phase": "forward", "calls": 4, "seconds": 0.0004, "flops": 4e7, "bytes": 2e6},)"
                               R"({"name": "flatten/reshape", "op": "reshape", "impl": "x", "phase": "forward", "calls": 4, "seconds": 0.00001, "flops": 0, "bytes": 0},)"
                               R"({"name": "dense/relu/grad_x", "op": "activation_grad", "impl": "x", "phase": "backward", "calls": 4, "seconds": 0.0001, "flops": 0, "bytes": 1.2e6},)"
                               R"({"name": "dense/kernel/adam", "op": "adam_update", "impl": "x", "phase": "update", "calls": 4, "seconds": 0.0009, "flops": 0, "bytes": 5619712}]})");
  const json p = profile_json(mem, "--peak-gflops 100 --peak-gbps 20");
  EXPECT_EQ(p["verdict"], "memory-bound") << p.dump(1);
  EXPECT_DOUBLE_EQ(p["peak_gbps"].get<double>(), 20.0);
  EXPECT_EQ(p["peak_gbps_source"], "given with --peak-gbps");
  ASSERT_EQ(p["heaviest_ops"].size(), 4u) << p.dump(1);
  const json& adam = p["heaviest_ops"][0];
  EXPECT_EQ(adam["name"], "dense/kernel/adam");
  EXPECT_DOUBLE_EQ(adam["bytes_per_step"].get<double>(), 1404928.0);
  EXPECT_NEAR(adam["gbps"].get<double>(), 5619712 / 0.0009 / 1e9, 1e-9);  // 6.244 GB/s
  EXPECT_NEAR(adam["fraction_of_bandwidth"].get<double>(), 5619712 / 0.0009 / 1e9 / 20, 1e-9);
  const json& matmul = p["heaviest_ops"][1];
  EXPECT_DOUBLE_EQ(matmul["bytes_per_step"].get<double>(), 5e5);
  EXPECT_NEAR(matmul["gbps"].get<double>(), 5.0, 1e-9);
  EXPECT_NEAR(matmul["fraction_of_bandwidth"].get<double>(), 0.25, 1e-9);
  EXPECT_NEAR(p["heaviest_ops"][2]["fraction_of_bandwidth"].get<double>(), 0.6, 1e-9);  // 12 GB/s
  const json& reshape = p["heaviest_ops"][3];
  EXPECT_DOUBLE_EQ(reshape["bytes_per_step"].get<double>(), 0.0);
  EXPECT_TRUE(reshape["gbps"].is_null());
  EXPECT_TRUE(reshape["fraction_of_bandwidth"].is_null());
  // Evidence: the heaviest ops without FLOPs, heaviest first; no "no bytes" line.
  const std::vector<std::string> evidence = p["evidence"];
  ASSERT_EQ(evidence.size(), 4u) << p.dump(1);
  EXPECT_EQ(evidence[2], "dense/kernel/adam moves 1.4 MB per step at 6.2 GB/s = 31% of the 20.0 GB/s given with --peak-gbps "
                         "(under half of it: arithmetic or threading overhead, not bandwidth, limits it)");
  EXPECT_EQ(evidence[3], "dense/relu/grad_x moves 300.0 kB per step at 12.0 GB/s = 60% of the 20.0 GB/s given with --peak-gbps");

  // Text: the same lines and the table's bytes columns.
  const Result text = run("profile " + mem.string() + " --peak-gflops 100 --peak-gbps 20");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("  " + evidence[2] + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("bandwidth 20.0 GB/s, given with --peak-gbps"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("MB/step     GB/s      bw"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1.405      6.2   31.2%"), std::string::npos) << text.out;

  // The page's table has the same figures.
  const fs::path page = dir_ / "report.html";
  const Result html = run("profile " + mem.string() + " --peak-gflops 100 --peak-gbps 20 --html " + page.string());
  ASSERT_EQ(html.code, 0) << html.err;
  const std::string report = slurp(page);
  EXPECT_NE(report.find("<td>1.405</td><td>6.2</td><td>31.2%</td>"), std::string::npos);
  EXPECT_NE(report.find("Memory bandwidth 20.0 GB/s (given with --peak-gbps)."), std::string::npos);

  // An op that outruns the bandwidth is said to work in cache.
  const json fast = profile_json(mem, "--peak-gflops 100 --peak-gbps 8");
  EXPECT_NE(fast["evidence"][3].get<std::string>().find("150% of the 8.0 GB/s given with --peak-gbps (more than the memory's rate"),
            std::string::npos) << fast.dump(1);
  expect_error_of("profile " + mem.string() + " --peak-gbps 0", 2, {"--peak-gbps"});
}

TEST_F(CliProfileTest, BadLogDirectories) {
  expect_error_of("profile " + (dir_ / "nope").string(), 1, {"no such log directory"});
  fs::create_directories(dir_ / "empty");
  expect_error_of("profile " + (dir_ / "empty").string(), 1, {"steps.jsonl", "no step log"});
  fs::create_directories(dir_ / "bad");
  const std::string good = R"({"step":1,"input_wait_us":1,"h2d_us":0,"forward_us":1,"backward_us":1,"allreduce_us":0,"update_us":1,"callbacks_us":0,"memory_in_use_bytes":1})";
  write_file(dir_ / "bad" / "steps.jsonl", good + "\n" + good.substr(0, 40));
  expect_error_of("profile " + (dir_ / "bad").string(), 1, {"steps.jsonl", "line 2", "truncated"});
  write_file(dir_ / "bad" / "steps.jsonl", good + "\n" + good + "\n{\"step\":3,oops}\n");
  expect_error_of("profile " + (dir_ / "bad").string(), 1, {"steps.jsonl", "line 3", "expected a quoted key"});
  write_file(dir_ / "bad" / "steps.jsonl", "");
  expect_error_of("profile " + (dir_ / "bad").string(), 1, {"no steps"});
  expect_error_of("profile", 2, {"logdir"});
}

}  // namespace
