// Device placement (nnfit/backend/device_placement.h): parsing the request, reading a fake
// driver tree, and the choice with its reason; Note [Placement without the plugin] is
// checked end to end in tests/e2e/device_test.cpp.
#include "nnfit/backend/device_placement.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "nnfit/backend/backend.h"
#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

namespace fs = std::filesystem;

TEST(DeviceRequest, ParsesEveryForm) {
  EXPECT_TRUE(parse_device_request("", "--device").automatic);
  EXPECT_TRUE(parse_device_request("auto", "--device").automatic);
  for (const char* cpu : {"cpu", "cpu:0"}) {
    const DeviceRequest r = parse_device_request(cpu, "--device");
    EXPECT_FALSE(r.automatic);
    EXPECT_EQ(r.device, (Device{DeviceType::cpu, 0}));
  }
  EXPECT_EQ(parse_device_request("cuda", "x").device, (Device{DeviceType::cuda, 0}));
  EXPECT_EQ(parse_device_request("cuda:0", "x").device, (Device{DeviceType::cuda, 0}));
  EXPECT_EQ(parse_device_request("cuda:12", "x").device, (Device{DeviceType::cuda, 12}));
  EXPECT_EQ(parse_device_request("cuda:1", "fit.device").where, "fit.device");
}

TEST(DeviceRequest, BadFormsNameWhereAndWhatIsAccepted) {
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:x", "cuda0", "cpu:1", "CUDA:0", "cuda:123456"}) {
    try {
      parse_device_request(bad, "c.json: fit.device");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), std::string("c.json: fit.device: unknown device \"") + bad + "\"");
      EXPECT_NE(e.hint().find("auto, cpu, cuda or cuda:N"), std::string::npos) << e.hint();
    }
  }
}

// A fake root: ROOT/proc/driver/nvidia/gpus with `gpus` folders, or none at all (-1).
class FakeDriverRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nnfit_driver_root_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  void list_gpus(int gpus) {
    const fs::path dir = root_ / "proc/driver/nvidia/gpus";
    fs::create_directories(dir);
    for (int i = 0; i < gpus; ++i) {
      fs::create_directories(dir / ("0000:0" + std::to_string(i) + ":00.0"));
      std::ofstream(dir / ("0000:0" + std::to_string(i) + ":00.0") / "information") << "Model: \t NVIDIA A100\n";
    }
  }
  std::string gpus_path() const { return (root_ / "proc/driver/nvidia/gpus").string(); }
  fs::path root_;
};

TEST_F(FakeDriverRoot, ProbeReadsTheDriverFolders) {
  GpuDriverProbe p = probe_gpu_driver(root_.string());
  EXPECT_FALSE(p.driver);
  EXPECT_EQ(p.path, gpus_path());
  list_gpus(0);
  p = probe_gpu_driver(root_.string());
  EXPECT_TRUE(p.driver);
  EXPECT_EQ(p.gpus, 0);
  list_gpus(2);
  p = probe_gpu_driver(root_.string());
  EXPECT_EQ(p.gpus, 2);
  EXPECT_FALSE(p.wsl);
}

TEST_F(FakeDriverRoot, WslDeviceCountsAsADriver) {
  fs::create_directories(root_ / "dev");
  std::ofstream(root_ / "dev/dxg") << "";
  const GpuDriverProbe p = probe_gpu_driver(root_.string());
  EXPECT_TRUE(p.driver);
  EXPECT_TRUE(p.wsl);
}

TEST_F(FakeDriverRoot, NoDriverGivesTheCpuAndSaysWhy) {
  const DevicePlacement p = place_device(parse_device_request("auto", "--device"), root_.string());
  EXPECT_EQ(p.device, Device{});
  EXPECT_EQ(p.to_string(), "cpu (no NVIDIA driver: " + gpus_path() + " absent)");
}

TEST_F(FakeDriverRoot, ADriverWithoutGpusGivesTheCpu) {
  list_gpus(0);
  const DevicePlacement p = place_device(parse_device_request("", "--device"), root_.string());
  EXPECT_EQ(p.device, Device{});
  EXPECT_EQ(p.reason, "the NVIDIA driver lists no GPU in " + gpus_path());
}

TEST_F(FakeDriverRoot, ExplicitCpuIsTakenAsAsked) {
  list_gpus(1);  // even with a GPU listed: nothing is probed
  const DevicePlacement p = place_device(parse_device_request("cpu", "--device"), root_.string());
  EXPECT_EQ(p.device, Device{});
  EXPECT_EQ(p.reason, "requested by --device");
}

TEST_F(FakeDriverRoot, ExplicitCudaWithoutADriverIsAClearError) {
  try {
    place_device(parse_device_request("cuda:0", "--device"), root_.string());
    FAIL() << "cuda:0 was placed without a driver";
  } catch (const Unsupported& e) {
    EXPECT_EQ(std::string(e.what()),
              "--device cuda:0: no NVIDIA GPU on this machine (no NVIDIA driver: " + gpus_path() + " absent)");
    EXPECT_NE(e.hint().find("nnfit doctor"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("--device cpu"), std::string::npos) << e.hint();
  }
}

// A GPU listed by the (fake) driver: the plugin is asked, and its runtime's answer decides.
// Here (no GPU) the runtime sees none and the CPU runs, saying why; on a GPU machine the
// runtime sees it and `auto` picks cuda:0.
TEST_F(FakeDriverRoot, AListedGpuAsksTheRuntime) {
  list_gpus(1);
  std::string why_not;
  const int count = cuda_device_count(&why_not);
  const DevicePlacement p = place_device(parse_device_request("auto", "fit.device"), root_.string());
  if (count == 0) {
    EXPECT_EQ(p.device, Device{});
    EXPECT_EQ(p.reason, gpus_path() + " lists 1 GPU, but CUDA cannot use it: " + why_not);
    EXPECT_FALSE(why_not.empty());
    EXPECT_THROW(place_device(parse_device_request("cuda:0", "fit.device"), root_.string()), Unsupported);
  } else {
    EXPECT_EQ(p.device, (Device{DeviceType::cuda, 0}));
    EXPECT_NE(p.reason.find("the first usable GPU"), std::string::npos) << p.reason;
    // Data-parallel ranks on one host take its GPUs one each, by local rank.
    const DevicePlacement third = place_device(parse_device_request("auto", "fit.device"), root_.string(), 3);
    EXPECT_EQ(third.device, (Device{DeviceType::cuda, 3 % count}));
    EXPECT_NE(third.reason.find("for local rank 3"), std::string::npos) << third.reason;
  }
  // Without a usable GPU the local rank changes nothing.
  if (count == 0) {
    EXPECT_EQ(place_device(parse_device_request("auto", "fit.device"), root_.string(), 3).device, Device{});
  }
}

// The CPU unless set; cuda:0 where a GPU is usable, else Unsupported naming why, and the
// model stays where it was.
TEST(ModelDevice, CpuIsTheDefaultAndCudaNeedsAUsableGpu) {
  Sequential model("m");
  model.set_input_shape(Shape{4});
  model.add(std::make_unique<Dense>("dense", DenseOptions{.units = 2}));
  EXPECT_EQ(model.device(), Device{});
  model.set_device(Device{});
  std::string why_not;
  if (cuda_device_count(&why_not) == 0) {
    try {
      model.set_device(Device{DeviceType::cuda, 0});
      FAIL() << "cuda:0 accepted without a usable GPU";
    } catch (const Unsupported& e) {
      EXPECT_FALSE(std::string(e.what()).empty());
    }
    EXPECT_EQ(model.device(), Device{}) << "a refused device leaves the model where it was";
  } else {
    model.set_device(Device{DeviceType::cuda, 0});
    EXPECT_EQ(model.device(), (Device{DeviceType::cuda, 0}));
    model.set_device(Device{});
  }
  model.compile({.optimizer = {.name = "sgd"}, .loss = Loss::from_name("mse")});
  EXPECT_THROW(model.set_device(Device{}), InvalidArgument);
}

}  // namespace
}  // namespace nnfit
