// The CUDA backend and the MPI communicator are plugins (docs/design/cuda.md, "Plugins"):
// nnfit's ELF needs none of the vendor libraries, a CPU training run never maps them, the
// commands that ask for them load the plugins, and where a plugin is missing asking for it
// is one clear error.
#include <elf.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "e2e/cli_fixture.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"

namespace nnfit_test {
namespace {

// The vendor libraries only the plugins may bring into a process.
const std::regex kVendorLibrary(R"(lib(cudart|cudnn|cublas|cublasLt|nccl|mpi|open-pal|open-rte|nnfit_cuda|nnfit_mpi)[^/\s]*\.so)");

// DT_NEEDED of a 64-bit ELF file, from its SHT_DYNAMIC section and the string table it links.
std::vector<std::string> elf_needed(const fs::path& file) {
  const std::string bytes = slurp(file);
  std::vector<std::string> needed;
  auto* eh = reinterpret_cast<const Elf64_Ehdr*>(bytes.data());
  if (bytes.size() < sizeof(Elf64_Ehdr) || bytes.compare(0, SELFMAG, ELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) {
    ADD_FAILURE() << file << " is not a 64-bit ELF file";
    return needed;
  }
  auto section = [&](std::size_t i) {
    return reinterpret_cast<const Elf64_Shdr*>(bytes.data() + eh->e_shoff + i * eh->e_shentsize);
  };
  for (std::size_t i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr* dyn = section(i);
    if (dyn->sh_type != SHT_DYNAMIC) continue;
    const char* strtab = bytes.data() + section(dyn->sh_link)->sh_offset;
    for (auto* d = reinterpret_cast<const Elf64_Dyn*>(bytes.data() + dyn->sh_offset); d->d_tag != DT_NULL; ++d) {
      if (d->d_tag == DT_NEEDED) needed.emplace_back(strtab + d->d_un.d_val);
    }
  }
  return needed;
}

std::string vendor_libraries_in(const std::string& text) {
  std::string found;
  for (std::sregex_iterator it(text.begin(), text.end(), kVendorLibrary), end; it != end; ++it) found += it->str() + " ";
  return found;
}

TEST(NnfitBinary, NeedsNoCudaOrMpiLibrary) {
  const std::vector<std::string> needed = elf_needed(NNFIT_CLI);
  std::string all;
  for (const std::string& n : needed) all += n + " ";
  // The reader works: the libraries nnfit does link are there.
  EXPECT_NE(all.find("libc.so.6"), std::string::npos) << all;
  EXPECT_NE(all.find("libdnnl.so"), std::string::npos) << all;
  EXPECT_EQ(vendor_libraries_in(all), "") << "nnfit's DT_NEEDED: " << all;
}

TEST(NnfitBinary, EachPluginNeedsItsVendorLibraries) {
#if NNFIT_TEST_WITH_CUDA
  std::string cuda;
  for (const std::string& n : elf_needed(fs::path(NNFIT_BINARY_DIR) / "libnnfit_cuda.so")) cuda += n + " ";
  EXPECT_NE(cuda.find("libcudart.so"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("libcublasLt.so"), std::string::npos) << cuda;
#endif
#if NNFIT_TEST_WITH_MPI
  std::string mpi;
  for (const std::string& n : elf_needed(fs::path(NNFIT_BINARY_DIR) / "libnnfit_mpi.so")) mpi += n + " ";
  EXPECT_NE(mpi.find("libmpi.so"), std::string::npos) << mpi;
#endif
#if NNFIT_TEST_WITH_NCCL
  std::string nccl;
  for (const std::string& n : elf_needed(fs::path(NNFIT_BINARY_DIR) / "libnnfit_nccl.so")) nccl += n + " ";
  EXPECT_NE(nccl.find("libnccl.so"), std::string::npos) << nccl;
  EXPECT_NE(nccl.find("libcudart.so"), std::string::npos) << nccl;
  EXPECT_EQ(nccl.find("libmpi"), std::string::npos) << "the NCCL plugin bootstraps through nnfit's communicator: " << nccl;
#endif
#if !NNFIT_TEST_WITH_CUDA && !NNFIT_TEST_WITH_MPI
  GTEST_SKIP() << "this build has no plugin";
#endif
}

// LD_DEBUG=files makes the dynamic loader list every object it loads, at start and by
// dlopen, on stderr: what the process mapped over its whole run.
class PluginLoading : public CliTest {
 protected:
  Result run_traced(const std::string& args, const std::string& env = "") const {
    return run_with_env("LD_DEBUG=files " + env, args);
  }
  fs::path empty_dir() const {
    fs::create_directories(dir_ / "no_plugins");
    return dir_ / "no_plugins";
  }
};

TEST_F(PluginLoading, CpuTrainingLoadsNoVendorLibrary) {
  const Result r = run_traced("train " + config(model()).string() + " -q");
  ASSERT_EQ(r.code, 0) << r.err.substr(r.err.size() > 3000 ? r.err.size() - 3000 : 0);
  // The trace works: it shows the libraries nnfit does load.
  EXPECT_NE(r.err.find("file=libdnnl.so"), std::string::npos) << r.err.substr(0, 2000);
  EXPECT_EQ(vendor_libraries_in(r.err), "");
}

TEST_F(PluginLoading, OpsLoadsTheCudaPluginAndListsItsKernels) {
  const Result r = run_traced("ops --json");
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
#if NNFIT_TEST_WITH_CUDA
  EXPECT_NE(r.err.find("libnnfit_cuda.so [0];  dynamically loaded by"), std::string::npos) << r.err.substr(0, 4000);
  EXPECT_NE(r.out.find(R"("backend": "cuda")"), std::string::npos);
#else
  EXPECT_EQ(r.out.find(R"("backend": "cuda")"), std::string::npos);
#endif
  EXPECT_EQ(r.err.find("libnnfit_mpi.so"), std::string::npos) << "nnfit ops has no use for MPI";
  EXPECT_EQ(r.err.find("libnccl"), std::string::npos) << "nnfit ops has no use for NCCL";
}

TEST_F(PluginLoading, WithoutTheCudaPluginOpsListsTheCpuAndSaysWhy) {
  const Result r = run_with_env("NNFIT_PLUGIN_DIR=" + empty_dir().string(), "ops");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("0 with CUDA kernels"), std::string::npos) << r.out.substr(r.out.size() - 400);
#if NNFIT_TEST_WITH_CUDA
  EXPECT_NE(r.out.find("(CUDA backend: plugin not loaded: cannot load the CUDA backend: its plugin libnnfit_cuda.so is in "
                       "none of " + empty_dir().string() + " (NNFIT_PLUGIN_DIR))"),
            std::string::npos)
      << r.out.substr(r.out.size() - 400);
#else
  EXPECT_NE(r.out.find("(CUDA backend: not built)"), std::string::npos) << r.out.substr(r.out.size() - 400);
#endif
}

// nnfit doctor says which plugin does not load and why, one warning each.
TEST_F(PluginLoading, DoctorWarnsOfEachPluginThatDoesNotLoad) {
  const Result r = run_with_env("NNFIT_PLUGIN_DIR=" + empty_dir().string(), "doctor");
  const std::string none = "is in none of " + empty_dir().string() + " (NNFIT_PLUGIN_DIR)";
#if NNFIT_TEST_WITH_MPI
  EXPECT_NE(r.out.find("! nnfit's mpi communicator is built but its plugin does not load: mpirun starts no data-parallel "
                       "job\n    cause: cannot load the MPI communicator: its plugin libnnfit_mpi.so " + none),
            std::string::npos)
      << r.out;
#else
  EXPECT_EQ(r.out.find("nnfit's mpi communicator"), std::string::npos) << r.out;
#endif
#if NNFIT_TEST_WITH_CUDA
  EXPECT_NE(r.out.find("its plugin libnnfit_cuda.so " + none), std::string::npos) << r.out;
#endif
  const Result ok = run_with_env("", "doctor --json");
  const auto facts = nlohmann::json::parse(ok.out)["facts"]["nnfit"]["communicators"];
  ASSERT_EQ(facts.size(), 2u) << ok.out.substr(0, 400);
#if NNFIT_TEST_WITH_MPI
  EXPECT_EQ(facts[0], "mpi compiled, available (libnnfit_mpi.so loads)");
#endif
}

// What every rank of `mpirun -np 2 nnfit train` sees (OMPI_COMM_WORLD_SIZE=2) when the MPI
// plugin is missing: one error line, exit 2, no training (tests/dist runs it under mpirun).
TEST_F(PluginLoading, UnderALauncherWithoutTheMpiPluginTrainingIsRefused) {
  const fs::path saved = dir_ / "model.keras";
  const std::string env = "NNFIT_PLUGIN_DIR=" + empty_dir().string() + " OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1";
  const std::string args = "train " + config(model()).string() + " --save " + saved.string();
  const Result r = run_with_env(env, args);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "") << "a rank trained alone";
  EXPECT_FALSE(fs::exists(saved));
#if NNFIT_TEST_WITH_MPI
  EXPECT_NE(r.err.find("nnfit: error: started by an MPI launcher with 2 ranks, but cannot load the MPI communicator: its "
                       "plugin libnnfit_mpi.so is in none of " + empty_dir().string() + " (NNFIT_PLUGIN_DIR)\n  hint: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("set NNFIT_PLUGIN_DIR to the directory that holds libnnfit_mpi.so"), std::string::npos) << r.err;
#else
  EXPECT_NE(r.err.find("built without MPI"), std::string::npos) << r.err;
#endif
}

// In the process itself, through the library: after a CPU fit, /proc/self/maps holds no
// vendor library (nnfit_e2e_tests links nnfit's libraries as any program does).
TEST(CpuFitInProcess, MapsNoVendorLibrary) {
  using namespace nnfit;
  // ctest runs each case in a process of its own; run together, an earlier case may have
  // loaded a plugin (ops_test asks the registry for every kernel, the CUDA ones included).
  const std::string before = vendor_libraries_in(slurp("/proc/self/maps"));
  if (!before.empty()) GTEST_SKIP() << "an earlier test of this process loaded " << before;
  Sequential model("tiny");
  model.set_input_shape(Shape{4});
  model.add(std::make_unique<Dense>("dense", DenseOptions{.units = 3}));
  model.set_num_threads(1);
  model.compile({.optimizer = {.name = "adam"},
                 .loss = Loss::from_name("sparse_categorical_crossentropy", /*from_logits=*/true)});
  Tensor x = Tensor::zeros(Shape{8, 4});
  Tensor y = Tensor::zeros(Shape{8}, DType::i32);
  FitOptions fit;
  fit.epochs = 1;
  fit.batch_size = 4;
  model.fit(x, y, fit);
  const std::string maps = slurp("/proc/self/maps");
  EXPECT_NE(maps.find("libdnnl.so"), std::string::npos) << "the maps do not list the libraries: " << maps.substr(0, 1000);
  EXPECT_EQ(vendor_libraries_in(maps), "");
}

}  // namespace
}  // namespace nnfit_test
