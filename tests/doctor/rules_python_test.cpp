// Framework rules that read the per-release tables: PyTorch's published arch list per wheel
// variant (pytorch_archs.csv) against the GPU, and JAX's per-release CUDA builds and lowest
// compute capability (jax_cuda.csv) against the driver and the GPU, for plugin wheels and
// for the old monolithic "+cudaNN" jaxlibs.
#include <gtest/gtest.h>

#include "fake_root.h"

namespace nnfit::doctor::testing {
namespace {

using Problems = std::vector<std::string>;

DoctorRun torch_machine(FakeRoot& root, const std::string& driver, const std::string& gpu, const std::string& version,
                        const std::string& cuda) {
  root.driver(driver);
  root.gpu("0000:01:00.0", gpu);
  std::string site = root.venv("/home/ana/venvs/pt", "3.12");
  root.torch(site, version, cuda);
  return run_doctor(root, {}, {"/home/ana/venvs/pt"});
}

// CUDA 12.8 still builds for Volta, but PyTorch 2.11's cu128 wheels dropped it.
TEST(DoctorTorchArchs, VoltaWithTorch211Cu128) {
  FakeRoot root;
  DoctorRun r = torch_machine(root, "570.124.06", "Tesla V100-SXM2-16GB", "2.11.0+cu128", "12.8");
  EXPECT_EQ(r.problems(), (Problems{"fail framework-arch:pt/torch:0"}));
  const Check* c = r.find("framework-arch:pt/torch:0");
  EXPECT_EQ(c->title, "torch 2.11.0+cu128 in pt has no kernels for GPU 0 (Tesla V100-SXM2-16GB)");
  EXPECT_EQ(c->detail, "built for sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 (PyTorch's published list for 2.11 cu128); "
                       "compute capability 7.0 is older than every target");
  EXPECT_EQ(c->fix, "pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/cu126");
}

TEST(DoctorTorchArchs, PascalWithTorch28Cu128GetsTheCu126Variant) {
  FakeRoot root;
  DoctorRun r = torch_machine(root, "570.124.06", "NVIDIA GeForce GTX 1080 Ti", "2.8.0+cu128", "12.8");
  EXPECT_EQ(r.problems(), (Problems{"fail framework-arch:pt/torch:0"}));
  EXPECT_EQ(r.find("framework-arch:pt/torch:0")->fix,
            "pip install torch==2.8.0 --index-url https://download.pytorch.org/whl/cu126");
}

// CUDA 13.0 itself dropped Volta: the CUDA-range rule answers before the arch list.
TEST(DoctorTorchArchs, VoltaWithTorch212Cu130) {
  FakeRoot root;
  DoctorRun r = torch_machine(root, "580.95.05", "Tesla V100-SXM2-16GB", "2.12.0+cu130", "13.0");
  EXPECT_EQ(r.problems(), (Problems{"fail framework-arch:pt/torch:0"}));
  EXPECT_EQ(r.find("framework-arch:pt/torch:0")->detail,
            "built with CUDA 13.0, which dropped Volta (compute capability 7.0, last supported by CUDA 12.9)");
}

TEST(DoctorTorchArchs, AdaWithTorch212Cu130HasKernels) {
  FakeRoot root;
  DoctorRun r = torch_machine(root, "580.95.05", "NVIDIA GeForce RTX 4090", "2.12.0+cu130", "13.0");
  EXPECT_EQ(r.problems(), Problems{});
  const Check* c = r.find("framework-arch:pt/torch:0");
  EXPECT_EQ(c->title, "torch 2.12.0+cu130 in pt has kernels for GPU 0");
  EXPECT_EQ(c->detail, "built for sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120 (PyTorch's published list for 2.12 "
                       "cu130)");
}

TEST(DoctorTorchArchs, ReleaseWithoutAPublishedListIsNotJudged) {
  FakeRoot root;
  DoctorRun r = torch_machine(root, "550.54.14", "Tesla V100-SXM2-16GB", "2.5.1+cu124", "12.4");
  EXPECT_EQ(r.problems(), Problems{});
  EXPECT_EQ(r.find("framework-arch:pt/torch:0"), nullptr);
}

TEST(DoctorTorchArchs, TableLookups) {
  const CompatTables& t = tables();
  EXPECT_EQ(t.torch_archs(*Version::parse("2.13.1"), *Version::parse("13.2")).back(), "compute_120");
  EXPECT_EQ(t.torch_archs(*Version::parse("2.9.0"), *Version::parse("12.8")).front(), "sm_70");
  EXPECT_TRUE(t.torch_archs(*Version::parse("2.10.0"), *Version::parse("12.8")).empty());
  EXPECT_EQ(t.torch_arch_variants(*Version::parse("2.11")).size(), 3u);
}

DoctorRun jax_machine(FakeRoot& root, const std::string& driver, const std::string& gpu,
                      const std::vector<std::pair<std::string, std::string>>& dists) {
  root.driver(driver);
  root.gpu("0000:01:00.0", gpu);
  std::string site = root.venv("/home/ana/venvs/jax", "3.12");
  for (const auto& [name, version] : dists) root.dist_info(site, name, version);
  return run_doctor(root, {}, {"/home/ana/venvs/jax"});
}

// JAX 0.7.1's CUDA 12 wheels are built with CUDA 12.9: a 535 driver (CUDA 12.2) runs them
// only through minor-version compatibility.
TEST(DoctorJax, Cuda12PluginBuiltWith129OnA535Driver) {
  FakeRoot root;
  DoctorRun r = jax_machine(root, "535.104.05", "NVIDIA A100-SXM4-80GB",
                            {{"jax", "0.7.1"}, {"jaxlib", "0.7.1"}, {"jax_cuda12_plugin", "0.7.1"}});
  EXPECT_EQ(r.problems(), (Problems{"warn framework-driver:jax/jax-cuda12-plugin"}));
  EXPECT_EQ(r.find("framework:jax/jax-cuda12-plugin")->detail, "built for CUDA 12 (JAX 0.7.1's CUDA 12 wheels: CUDA 12.9)");
  const Check* c = r.find("framework-driver:jax/jax-cuda12-plugin");
  EXPECT_EQ(c->title, "jax-cuda12-plugin 0.7.1 (CUDA 12.9) in jax");
  EXPECT_NE(c->detail.find("driver 535.104.05 is older than CUDA 12.9 asks for (575.51.03) but it runs through CUDA "
                           "minor-version compatibility"),
            std::string::npos)
      << c->detail;
}

// A monolithic jaxlib names its CUDA in the local version; CUDA 12 needs a 525+ driver.
TEST(DoctorJax, MonolithicCuda12JaxlibOnA470Driver) {
  FakeRoot root;
  DoctorRun r = jax_machine(root, "470.82.01", "NVIDIA A100-SXM4-80GB", {{"jax", "0.4.13"}, {"jaxlib", "0.4.13+cuda12.cudnn89"}});
  EXPECT_EQ(r.problems(), (Problems{"fail framework-driver:jax/jaxlib"}));
  const PackageFacts* p = r.facts.envs.back().find("jaxlib");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->cuda_version, "12");
  EXPECT_EQ(p->cudnn_version, "8.9");
  const Check* c = r.find("framework-driver:jax/jaxlib");
  EXPECT_EQ(c->title, "jaxlib 0.4.13+cuda12.cudnn89 (CUDA 12.0) in jax: driver too old");
  EXPECT_EQ(c->fix, "upgrade the NVIDIA driver to 525.60.13 or newer (Ubuntu: sudo apt install nvidia-driver-525), then "
                    "reboot");
}

TEST(DoctorJax, MonolithicCuda11JaxlibWithinMinorVersionCompatibility) {
  FakeRoot root;
  DoctorRun r = jax_machine(root, "470.82.01", "NVIDIA A100-SXM4-80GB", {{"jax", "0.4.20"}, {"jaxlib", "0.4.20+cuda11.cudnn86"}});
  EXPECT_EQ(r.problems(), (Problems{"warn framework-driver:jax/jaxlib"}));
  EXPECT_EQ(r.find("framework-driver:jax/jaxlib")->title, "jaxlib 0.4.20+cuda11.cudnn86 (CUDA 11.8) in jax");
}

TEST(DoctorJax, MaxwellGpuBelowJaxsLowestComputeCapability) {
  FakeRoot root;
  DoctorRun r = jax_machine(root, "575.57.08", "NVIDIA GeForce GTX 750 Ti",
                            {{"jax", "0.7.1"}, {"jaxlib", "0.7.1"}, {"jax_cuda12_plugin", "0.7.1"}});
  EXPECT_EQ(r.problems(), (Problems{"fail framework-arch:jax/jax-cuda12-plugin:0"}));
  const Check* c = r.find("framework-arch:jax/jax-cuda12-plugin:0");
  EXPECT_EQ(c->detail, "JAX's CUDA 12 wheels of release 0.7.1 are built for compute capability >= 5.2 "
                       "(data/compat/jax_cuda.csv); GPU 0 is 5.0");
  EXPECT_EQ(c->fix, "no JAX CUDA wheel covers compute capability 5.0: run JAX on the CPU (pip install jax) or build "
                    "jaxlib from source for sm_50");
}

TEST(DoctorJax, TableRanges) {
  const CompatTables& t = tables();
  auto row = t.jax_row(*Version::parse("0.9.2"));
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(t.jax_cuda_build(*row, 13)->str(), "13.0");
  EXPECT_EQ(t.jax_min_compute_capability(*row, 13)->str(), "7.5");
  EXPECT_EQ(t.jax_cuda_build(*t.jax_row(*Version::parse("0.12.0")), 12)->str(), "12.3");  // open-ended newest row
  EXPECT_FALSE(t.jax_row(*Version::parse("0.3.25")).has_value());
  EXPECT_FALSE(t.jax_cuda_build(*t.jax_row(*Version::parse("0.7.0")), 12).has_value());
}

}  // namespace
}  // namespace nnfit::doctor::testing
