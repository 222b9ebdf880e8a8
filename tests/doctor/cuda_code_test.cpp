// nnfit's own CUDA build against the GPUs found: machine code for the GPU's major at or
// below its minor runs (ok); PTX at or below it runs after a JIT compile (warn, with the
// rebuild); neither cannot run (fail). And CMake's architecture lists as nvcc targets.
#include <gtest/gtest.h>

#include "fake_root.h"

namespace nnfit::doctor::testing {
namespace {

using Strings = std::vector<std::string>;

TEST(DoctorCudaCode, CmakeArchitectureListsAsNvccTargets) {
  EXPECT_EQ(cuda_architectures_from_cmake("80"), (Strings{"sm_80", "compute_80"}));
  EXPECT_EQ(cuda_architectures_from_cmake("75-real;80-real;86-real;89-real;90-real;100-real;100-virtual"),
            (Strings{"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "compute_100"}));
  EXPECT_EQ(cuda_architectures_from_cmake("75-real,80"), (Strings{"sm_75", "sm_80", "compute_80"}));
  EXPECT_EQ(cuda_architectures_from_cmake(""), Strings{});
  EXPECT_EQ(cuda_architectures_from_cmake("native;all"), Strings{});  // unknown until the build ran
}

// One GPU of `model` on a fake machine, nnfit built for `archs`.
DoctorRun with_gpu(const std::string& model, const std::string& archs) {
  FakeRoot root;
  root.driver("580.95.05");
  root.gpu("0000:01:00.0", model);
  DoctorRun r = run_doctor(root);
  r.facts.nnfit.cuda_architectures = cuda_architectures_from_cmake(archs);
  r.checks = run_rules(r.facts, tables());
  return r;
}

TEST(DoctorCudaCode, SameMajorMachineCodeRuns) {
  const DoctorRun r = with_gpu("NVIDIA GeForce RTX 4090", "80");  // 8.9 runs sm_80 code
  const Check* c = r.find("nnfit-cuda-code:0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kOk);
  EXPECT_NE(c->title.find("runs nnfit's sm_80 code"), std::string::npos) << c->title;
  EXPECT_NE(c->title.find("compute capability 8.9"), std::string::npos) << c->title;
}

TEST(DoctorCudaCode, NewerMajorRunsThePtxAfterAJitCompile) {
  const DoctorRun r = with_gpu("NVIDIA H100 80GB HBM3", "80");  // 9.0: no sm_9x, compute_80 PTX
  const Check* c = r.find("nnfit-cuda-code:0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kWarn);
  EXPECT_NE(c->title.find("JIT-compiled from compute_80 PTX"), std::string::npos) << c->title;
  EXPECT_EQ(c->fix, "rebuild with -DCMAKE_CUDA_ARCHITECTURES=90 (this GPU only) or the cuda-release preset (sm_75 to sm_100)");
  // The fat binary has sm_90 machine code for it.
  const DoctorRun fat = with_gpu("NVIDIA H100 80GB HBM3", "75-real;80-real;86-real;89-real;90-real;100-real;100-virtual");
  EXPECT_EQ(fat.find("nnfit-cuda-code:0")->status, Status::kOk);
  EXPECT_NE(fat.find("nnfit-cuda-code:0")->title.find("sm_90"), std::string::npos);
}

TEST(DoctorCudaCode, OlderGpuCannotRunTheDefaultBuild) {
  const DoctorRun r = with_gpu("Tesla T4", "80");  // 7.5 < 8.0: neither machine code nor PTX
  const Check* c = r.find("nnfit-cuda-code:0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kFail);
  EXPECT_NE(c->title.find("cannot run nnfit's CUDA kernels"), std::string::npos) << c->title;
  EXPECT_NE(c->fix.find("-DCMAKE_CUDA_ARCHITECTURES=75"), std::string::npos) << c->fix;
  EXPECT_EQ(exit_code(r.checks), 1);
}

// The CUDA backend is a plugin; where it does not load, the report says why (the backends
// line nnfit's CLI fills from backend_infos()) and what to do.
TEST(DoctorCudaPlugin, APluginThatDoesNotLoadIsAWarningNamingTheLibrary) {
  FakeRoot root;
  DoctorRun r = run_doctor(root);
  r.facts.nnfit.backends = {"cpu (oneDNN 2.6.3, OpenMP) compiled, available (always built)",
                            "cuda not compiled, unavailable (plugin not loaded: cannot load the CUDA backend: "
                            "libcudnn.so.9: cannot open shared object file: No such file or directory)"};
  r.checks = run_rules(r.facts, tables());
  const Check* c = r.find("nnfit-plugin:cuda");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kWarn);
  EXPECT_EQ(c->detail, "cannot load the CUDA backend: libcudnn.so.9: cannot open shared object file: No such file or directory");
  EXPECT_NE(c->fix.find("NNFIT_PLUGIN_DIR"), std::string::npos) << c->fix;
  // A build without CUDA, or one whose plugin loads: no such check.
  r.facts.nnfit.backends = {"cuda not compiled, unavailable (not built: no CUDA toolkit was found at configure time)"};
  r.checks = run_rules(r.facts, tables());
  EXPECT_EQ(r.find("nnfit-plugin:cuda"), nullptr);
}

// The communicator plugins likewise (the CLI fills their lines from dist::communicator_infos).
TEST(DoctorCudaPlugin, ACommunicatorPluginThatDoesNotLoadIsAWarning) {
  FakeRoot root;
  DoctorRun r = run_doctor(root);
  r.facts.nnfit.communicators = {"mpi compiled, unavailable (plugin not loaded: cannot load the MPI communicator: "
                                 "libmpi.so.40: cannot open shared object file: No such file or directory)",
                                 "nccl compiled, available (libnnfit_nccl.so loads)"};
  r.checks = run_rules(r.facts, tables());
  const Check* c = r.find("nnfit-plugin:mpi");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kWarn);
  EXPECT_NE(c->title.find("mpirun starts no data-parallel job"), std::string::npos) << c->title;
  EXPECT_NE(c->detail.find("libmpi.so.40"), std::string::npos) << c->detail;
  EXPECT_EQ(r.find("nnfit-plugin:nccl"), nullptr) << "a plugin that loads is no warning";
  const Check* n = r.find("nnfit");
  ASSERT_NE(n, nullptr);
  EXPECT_NE(n->detail.find("communicators: mpi compiled, unavailable"), std::string::npos) << n->detail;
}

TEST(DoctorCudaCode, NoCheckWithoutCudaInTheBuild) {
  const DoctorRun r = with_gpu("Tesla T4", "");
  EXPECT_EQ(r.find("nnfit-cuda-code:0"), nullptr);
}

}  // namespace
}  // namespace nnfit::doctor::testing
