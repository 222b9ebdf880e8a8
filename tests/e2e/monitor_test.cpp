// `nnfit monitor`: host figures always; GPU figures, with the processes holding memory,
// from NVML loaded at run time (a stand-in libnvidia-ml built by the test plays the
// driver); no driver is said plainly; a bad --interval is a usage error.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {

namespace fs = std::filesystem;

const char* const kFakeNvml = R"(
#include <string.h>
#include <unistd.h>
typedef struct { unsigned long long total, free, used; } Memory;
typedef struct { unsigned gpu, memory; } Utilization;
typedef struct { unsigned pid; unsigned long long used; unsigned gi, ci; } Proc;
int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlSystemGetDriverVersion(char* v, unsigned n) { strncpy(v, "570.86.15", n); return 0; }
int nvmlDeviceGetCount_v2(unsigned* n) { *n = 1; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** d) { *d = (void*)(1 + (long)i); return 0; }
int nvmlDeviceGetName(void* d, char* name, unsigned n) { (void)d; strncpy(name, "NVIDIA L4", n); return 0; }
int nvmlDeviceGetMemoryInfo(void* d, Memory* m) { (void)d; m->total = 24ull << 30; m->used = 2ull << 30; m->free = m->total - m->used; return 0; }
int nvmlDeviceGetUtilizationRates(void* d, Utilization* u) { (void)d; u->gpu = 37; u->memory = 12; return 0; }
int nvmlDeviceGetComputeRunningProcesses_v3(void* d, unsigned* n, Proc* p) {
  (void)d;
  if (*n < 2) { *n = 2; return 7; }
  *n = 2;
  p[0].pid = (unsigned)getpid(); p[0].used = 1ull << 30;
  p[1].pid = 999999; p[1].used = ~0ull;
  return 0;
}
)";

struct Result {
  int code = 0;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class Monitor : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("nnfit_monitor_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Result run(const std::string& args) const {
    const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
    const int status =
        std::system((std::string(NNFIT_CLI) + " " + args + " >" + out.string() + " 2>" + err.string()).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, slurp(out), slurp(err)};
  }
  fs::path dir_;
};

TEST_F(Monitor, GpuFiguresAndProcessesFromNvml) {
  std::ofstream(dir_ / "fake_nvml.c") << kFakeNvml;
  const fs::path lib = dir_ / "libnvidia-ml.so.1";
  ASSERT_EQ(std::system(("cc -shared -fPIC -o " + lib.string() + " " + (dir_ / "fake_nvml.c").string()).c_str()), 0);
  Result r = run("monitor --count 2 --interval 100ms --json --nvml " + lib.string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int samples = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    ++samples;
    EXPECT_EQ(j["gpu_status"], "");
    EXPECT_EQ(j["driver_version"], "570.86.15");
    ASSERT_EQ(j["gpus"].size(), 1u);
    const auto& g = j["gpus"][0];
    EXPECT_EQ(g["name"], "NVIDIA L4");
    EXPECT_EQ(g["utilization_percent"], 37);
    EXPECT_EQ(g["memory_utilization_percent"], 12);
    EXPECT_EQ(g["memory_used_bytes"], 2ll << 30);
    EXPECT_EQ(g["memory_total_bytes"], 24ll << 30);
    ASSERT_EQ(g["processes"].size(), 2u);
    EXPECT_EQ(g["processes"][0]["command"], "nnfit");
    EXPECT_EQ(g["processes"][0]["used_bytes"], 1ll << 30);
    EXPECT_EQ(g["processes"][1]["used_bytes"], -1) << "NVML_VALUE_NOT_AVAILABLE";
    EXPECT_GT(j["host"]["ram_total_bytes"].get<std::int64_t>(), 0);
    EXPECT_GE(j["host"]["cores"].get<int>(), 1);
  }
  EXPECT_EQ(samples, 2);
  r = run("monitor --count 1 --interval 100ms --nvml " + lib.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("NVIDIA driver 570.86.15"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpu 0 NVIDIA L4: util 37%, memory 2.00 GiB / 24.00 GiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nnfit"), std::string::npos) << r.out;
}

TEST_F(Monitor, WithoutADriverItSaysSoAndShowsTheHost) {
  const Result r = run("monitor --count 1 --interval 100ms --nvml " + (dir_ / "no-such-libnvidia-ml.so.1").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no NVIDIA driver"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host: CPU"), std::string::npos) << r.out;
}

TEST_F(Monitor, BadIntervalIsAUsageError) {
  const Result r = run("monitor --interval soon");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--interval soon"), std::string::npos) << r.err;
}

}  // namespace
