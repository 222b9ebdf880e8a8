// `nnfit train --device` and the default device (docs/cli.md; Note [Placement without the
// plugin]): with a driver root that lists no GPU the CUDA plugin is never loaded and the
// log says why the CPU runs; an explicit cuda:0 there is one clear error (exit 2). And the
// Fashion-MNIST CNN trained on cuda:0, which skips where there is no usable GPU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "e2e/cli_fixture.h"

namespace nnfit_test {
namespace {

const std::regex kCudaLibrary(R"(lib(cudart|cudnn|cublas|cublasLt|nnfit_cuda)[^/\s]*\.so)");

bool loads_cuda(const std::string& ld_debug) { return std::regex_search(ld_debug, kCudaLibrary); }

class DeviceFlag : public CliTest {
 protected:
  // A driver root with no /proc/driver/nvidia, or one listing `gpus` GPUs.
  fs::path driver_root(int gpus = -1) const {
    const fs::path root = dir_ / "root";
    fs::create_directories(root);
    for (int i = 0; i < gpus; ++i) fs::create_directories(root / "proc/driver/nvidia/gpus" / ("0000:0" + std::to_string(i) + ":00.0"));
    return root;
  }
  Result train(const fs::path& root, const std::string& flags, const std::string& fit = R"({"epochs": 1, "batch_size": 4})") {
    return run_with_env("LD_DEBUG=files NNFIT_DRIVER_ROOT=" + root.string(),
                        "train " + config(model(), "images.idx", "labels.idx", fit).string() + " " + flags);
  }
};

TEST_F(DeviceFlag, NoDriverTrainsOnTheCpuWithoutLoadingThePlugin) {
  const fs::path root = driver_root();
  const Result r = train(root, "");
  ASSERT_EQ(r.code, 0) << r.err.substr(r.err.size() > 3000 ? r.err.size() - 3000 : 0);
  EXPECT_NE(r.out.find("Device: cpu (no NVIDIA driver: " + (root / "proc/driver/nvidia/gpus").string() + " absent)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("file=libdnnl.so"), std::string::npos) << "the trace works";
  EXPECT_FALSE(loads_cuda(r.err)) << "the CUDA plugin was loaded to find there is no GPU";
}

TEST_F(DeviceFlag, ExplicitCpu) {
  const fs::path metrics = dir_ / "metrics.json";
  const Result r = train(driver_root(1), "--device cpu --metrics-json " + metrics.string());
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find("Device: cpu (requested by --device)\n"), std::string::npos) << r.out;
  EXPECT_FALSE(loads_cuda(r.err)) << "--device cpu loaded CUDA";
  const std::string json = slurp(metrics);
  EXPECT_NE(json.find("\"device\": {\n    \"name\": \"cpu\",\n    \"reason\": \"requested by --device\"\n  }"),
            std::string::npos)
      << json;
}

TEST_F(DeviceFlag, ConfigKeyAndTheFlagOverridesIt) {
  const fs::path root = driver_root();
  Result r = train(root, "", R"({"epochs": 1, "batch_size": 4, "device": "cpu"})");
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find("Device: cpu (requested by " + (dir_ / "config.json").string() + ": fit.device)\n"), std::string::npos)
      << r.out;
  r = train(root, "--device auto", R"({"epochs": 1, "batch_size": 4, "device": "cuda:0"})");
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find("Device: cpu (no NVIDIA driver"), std::string::npos) << r.out;
}

TEST_F(DeviceFlag, ExplicitCudaWithoutAGpuIsAClearError) {
  const fs::path root = driver_root();
  const Result r = run_with_env("NNFIT_DRIVER_ROOT=" + root.string(), "train " + config(model()).string() + " --device cuda:0");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "") << "nothing trained";
  EXPECT_EQ(r.err, "nnfit: error: --device cuda:0: no NVIDIA GPU on this machine (no NVIDIA driver: " +
                       (root / "proc/driver/nvidia/gpus").string() +
                       " absent)\n  hint: run 'nnfit doctor' to check the driver; or train on the CPU with --device cpu "
                       "(fit.device \"cpu\"), or leave the device out: the default is the first usable GPU, else the CPU\n");
}

TEST_F(DeviceFlag, BadDeviceNamesTheKey) {
  expect_error(config(model(), "images.idx", "labels.idx", R"({"device": "gpu0"})"), 2,
               {"config.json: fit.device: unknown device \"gpu0\""});
  expect_error(config(model()), 2, {"--device: unknown device \"tpu\""}, "--device tpu");
  expect_error(config(model()), 2, {"--communication-implementation", "nccl_ring", "auto", "nccl", "ring"},
               "--communication-implementation nccl_ring");
}

// A GPU listed by the driver is what lets the plugin load; this machine's runtime then finds
// no device (no GPU here), and the CPU runs, saying why.
TEST_F(DeviceFlag, AListedGpuLoadsThePluginAndItsAnswerIsLogged) {
#if NNFIT_TEST_WITH_CUDA
  const fs::path root = driver_root(1);
  const Result r = train(root, "");
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  EXPECT_TRUE(loads_cuda(r.err)) << "the plugin was not asked";
  // On a machine with a GPU the runtime sees it, and auto trains there.
  const bool no_device = r.out.find("Device: cpu (" + (root / "proc/driver/nvidia/gpus").string() +
                                    " lists 1 GPU, but CUDA cannot use it: ") != std::string::npos;
  const bool on_gpu = r.out.find("Device: cuda:0 (the first usable GPU") != std::string::npos;
  EXPECT_TRUE(no_device || on_gpu) << r.out;
#else
  GTEST_SKIP() << "this build has no CUDA plugin";
#endif
}

}  // namespace
}  // namespace nnfit_test

namespace nnfit_test {
namespace {

// The issue's device training run: the Fashion-MNIST CNN example on cuda:0 for one epoch
// reaches the accuracy it reaches on the CPU (test accuracy above 0.85). Where there is no
// usable GPU, `--device cuda:0` stops before training with the reason, and the test skips
// naming it. The model's device path it runs was checked on cuda-sim, never on a GPU
// (docs/design/cuda.md, "What a first GPU run must check").
TEST_F(CliTest, FashionMnistCnnTrainsOnCuda0) {
  const fs::path metrics = dir_ / "metrics.json";
  const Result r = run("train " + std::string(NNFIT_SOURCE_DIR) + "/examples/fashion_mnist_cnn.json --device cuda:0 --epochs 1 "
                       "--quiet --metrics-json " + metrics.string());
  for (const char* no_gpu : {"no NVIDIA GPU on this machine", "CUDA cannot use it"}) {
    if (r.code == 2 && r.err.find(no_gpu) != std::string::npos) GTEST_SKIP() << r.err.substr(0, r.err.find('\n'));
  }
  ASSERT_EQ(r.code, 0) << r.err;
  const auto m = nlohmann::json::parse(slurp(metrics));
  EXPECT_EQ(m["device"]["name"], "cuda:0") << m.dump();
  EXPECT_GT(m["epochs"][0]["val_accuracy"].get<double>(), 0.85) << m.dump();
}

}  // namespace
}  // namespace nnfit_test
