// Bad input never crashes the doctor: corrupt files become "probe:" warnings and the
// rest of the report still comes out.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "doctor/probes.h"
#include "fake_root.h"
#include "nnfit/core/error.h"
#include "nnfit/doctor/report.h"

namespace nnfit::doctor::testing {
namespace {

TEST(DoctorBadInput, CorruptVersionJsonIsAFindingAndFallsBack) {
  FakeRoot root;
  root.write("/usr/local/cuda-12.2/version.json", "{\"cuda\": {\"name\": \"CUDA SDK\", \"vers");
  root.write("/usr/local/cuda-12.2/include/cuda.h", "#define CUDA_VERSION 12020\n");
  root.write("/usr/local/cuda-12.2/bin/nvcc", "");
  DoctorRun r = run_doctor(root);
  const Check* c = r.find("probe:/usr/local/cuda-12.2/version.json");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kWarn);
  EXPECT_NE(c->detail.find("corrupt version.json"), std::string::npos);
  EXPECT_EQ(r.find("toolkit:/usr/local/cuda-12.2")->title, "CUDA toolkit 12.2 at /usr/local/cuda-12.2");
}

TEST(DoctorBadInput, VersionJsonWithoutAVersionString) {
  FakeRoot root;
  root.write("/usr/local/cuda-12.2/version.json", "{\"cuda\": {\"version\": 12}}");
  root.write("/usr/local/cuda-12.2/bin/nvcc", "");
  DoctorRun r = run_doctor(root);
  EXPECT_NE(r.find("probe:/usr/local/cuda-12.2/version.json"), nullptr);
  EXPECT_EQ(r.find("toolkit:/usr/local/cuda-12.2")->status, Status::kWarn);
  EXPECT_NE(r.find("probe:/usr/local/cuda-12.2"), nullptr);  // no version anywhere
}

TEST(DoctorBadInput, MalformedCondaMetaRecord) {
  FakeRoot root;
  std::string prefix = "/root/miniconda3";
  root.write(prefix + "/conda-meta/history", "");
  root.write(prefix + "/conda-meta/cudnn-8.9.2-h0.json", "{\"name\": \"cudnn\", \"version\": [");
  root.write(prefix + "/conda-meta/nccl-2.18-h0.json", "{\"name\": \"nccl\"}");
  root.conda_record(prefix, "python", "3.11.5", "h955ad1f_0");
  DoctorRun r = run_doctor(root);
  EXPECT_NE(r.find("probe:/root/miniconda3/conda-meta/cudnn-8.9.2-h0.json"), nullptr);
  EXPECT_NE(r.find("probe:/root/miniconda3/conda-meta/nccl-2.18-h0.json"), nullptr);
  ASSERT_EQ(r.facts.envs.size(), 1u);
  EXPECT_EQ(r.facts.envs[0].python_version, "3.11.5");
}

TEST(DoctorBadInput, DirectoryWhereAFileBelongs) {
  FakeRoot root;
  root.mkdir("/proc/driver/nvidia/version");
  DoctorRun r = run_doctor(root);
  EXPECT_NE(r.find("probe:/proc/driver/nvidia/version"), nullptr);
  EXPECT_EQ(r.find("driver")->status, Status::kWarn);
}

TEST(DoctorBadInput, GarbageDriverFileAndBuildInfo) {
  FakeRoot root;
  root.write("/proc/driver/nvidia/version", std::string("\0\xff\xfe garbage", 11));
  std::string site = root.venv("/srv/env", "3.11");
  root.dist_info(site, "tensorflow", "2.15.0");
  root.write(site + "/tensorflow/python/platform/build_info.py", "not python at all (");
  root.dist_info(site, "torch", "2.1.0");
  root.write(site + "/torch/version.py", "");
  DoctorRun r = run_doctor(root, {}, {"/srv/env", "/does/not/exist"});
  EXPECT_NE(r.find("probe:/proc/driver/nvidia/version"), nullptr);
  EXPECT_NE(r.find("probe:" + site + "/tensorflow/python/platform/build_info.py"), nullptr);
  EXPECT_NE(r.find("probe:" + site + "/torch/version.py"), nullptr);
  EXPECT_NE(r.find("probe:/does/not/exist"), nullptr);
  // And the JSON of a run with invalid UTF-8 around still renders.
  EXPECT_FALSE(format_json(r.checks, r.facts).empty());
}

TEST(DoctorBadInput, SymlinkLoopDoesNotHang) {
  FakeRoot root;
  root.symlink("/usr/local/cuda", "/usr/local/cuda-loop");
  root.symlink("/usr/local/cuda-loop", "/usr/local/cuda");
  DoctorRun r = run_doctor(root);
  EXPECT_TRUE(r.facts.toolkits.empty()) << r.facts.toolkits[0].path;
}

TEST(DoctorBadInput, UnreadableDirectory) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: permissions do not stop reads";
  FakeRoot root;
  root.write("/usr/local/cuda-12.2/version.json", "{\"cuda\": {\"version\": \"12.2.2\"}}");
  chmod((root.path() + "/usr/local/cuda-12.2").c_str(), 0);
  DoctorRun r = run_doctor(root);
  chmod((root.path() + "/usr/local/cuda-12.2").c_str(), 0755);
  EXPECT_FALSE(r.facts.problems.empty());
}

// Issue 20's sweep: a FIFO where a probe reads a file blocked the doctor forever, a
// 100,000-digit version macro overflowed the stack (std::regex recursion), and a cuDNN
// wheel named for a CUDA major that is not a number escaped as std::stoi's exception.
TEST(DoctorBadInput, FifoHugeMacroAndOddWheelNames) {
  FakeRoot root;
  root.mkdir("/proc/driver/nvidia");
  ASSERT_EQ(::mkfifo((root.path() + "/proc/driver/nvidia/version").c_str(), 0600), 0);
  root.write("/usr/local/cuda-12.2/bin/nvcc", "");
  root.write("/usr/local/cuda-12.2/include/cuda.h", "#define CUDA_VERSION " + std::string(100000, '9') + "\n");
  root.write("/usr/local/cuda-12.2/include/cudnn_version.h",
             "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR " + std::string(30, '7') + "\n#define CUDNN_PATCHLEVEL 1\n");
  root.mkdir("/usr/local/cuda-12.2/dist-info/nvidia_cudnn_cu-9.1.0.dist-info");
  root.mkdir("/usr/local/cuda-12.2/dist-info/nvidia_cudnn_cu" + std::string(40, '1') + "-9.1.0.dist-info");
  DoctorRun r = run_doctor(root);
  const Check* fifo = r.find("probe:/proc/driver/nvidia/version");
  ASSERT_NE(fifo, nullptr);
  EXPECT_NE(fifo->detail.find("FIFO"), std::string::npos) << fifo->detail;
  EXPECT_NE(r.find("toolkit:/usr/local/cuda-12.2"), nullptr);
  EXPECT_FALSE(format_json(r.checks, r.facts).empty());
}

// The doctor_root fuzz target overflowed the stack in std::regex's executor, which recursed
// once per character a repeat matched: every patterned file now holds one line of most of the
// 1 MiB a probe reads, where each pattern's repeat runs the whole line.
TEST(DoctorBadInput, MegabyteLinesInEveryPatternedFile) {
  const std::size_t n = 300000;
  const std::string digits(n, '1'), dots(n, '.'), spaces(n, ' ');
  FakeRoot root;
  root.write("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + digits + "\n");
  root.write("/usr/local/cuda-12.2/bin/nvcc", "");
  root.write("/usr/local/cuda-12.2/version.txt", "CUDA Version" + spaces + "12." + digits + "\n");
  root.write("/usr/include/oneapi/dnnl/dnnl_version.h", "#define DNNL_VERSION_MAJOR" + spaces + digits + "\n");
  const std::string site = root.venv("/root/venv", "3.11");
  root.write("/root/venv/pyvenv.cfg", "home = /usr/bin\nversion =" + spaces + "3" + dots + "\n");
  root.dist_info(site, "tensorflow", "2.15.0");
  root.write(site + "/tensorflow/python/platform/build_info.py",
             "build_info = {'is_cuda_build':" + spaces + "True, 'cuda_compute_capabilities': ['sm_" + digits +
                 "'], 'cuda_version': '" + std::string(n, 'x') + "'}\n");
  root.dist_info(site, "torch", "2.1.0");
  root.write(site + "/torch/version.py", "__version__ = '" + dots + "'\ncuda: Optional[str] =" + spaces + "'12.1'\n");
  DoctorRun r = run_doctor(root, {{"PATH", "/usr/local/cuda-12.2/bin:/usr/bin"}}, {"/root/venv"});
  EXPECT_EQ(r.find("toolkit:/usr/local/cuda-12.2")->title.substr(0, 18), "CUDA toolkit 12.11");
  ASSERT_EQ(r.facts.envs.size(), 1u);
  EXPECT_EQ(r.facts.envs[0].python_version.size(), n + 1);
  EXPECT_FALSE(format_text(r.checks, r.facts).empty());
  std::string impl, version;
  ASSERT_TRUE(parse_mpirun_version("mpirun (Open MPI)" + spaces + "4" + dots, impl, version));
  EXPECT_EQ(version.size(), n + 1);
  ASSERT_TRUE(parse_mpirun_version("HYDRA build details:" + spaces + "Version:" + spaces + "4.0.2", impl, version));
  EXPECT_EQ(impl + " " + version, "MPICH 4.0.2");
}

TEST(DoctorBadInput, CsvErrorsNameFileAndLine) {
  try {
    parse_csv("a,b\n1,2\n3\n", "t.csv");
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), "t.csv");
    EXPECT_EQ(e.offset(), 3);
  }
  EXPECT_THROW(parse_csv("a,b\n\"1,2\n", "t.csv"), DataError);
  EXPECT_THROW(load_compat_tables("/nonexistent"), DataError);
  CsvTable t = parse_csv("a,b\r\n\"x, \"\"y\"\"\",2\r\n", "t.csv");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.cell(0, "a"), "x, \"y\"");
  EXPECT_THROW(t.column("c"), DataError);
}

}  // namespace
}  // namespace nnfit::doctor::testing
