// Note [OpenMP spin] (apps/nnfit/omp_env.cpp): the CLI gives libgomp a short spin on a
// busy machine unless the user chose one. libgomp's own OMP_DISPLAY_ENV report is the witness: it prints the
// GOMP_SPINCOUNT it actually uses, once per start.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

namespace {

// The GOMP_SPINCOUNT values libgomp reported, in order, for `nnfit --version` under `env`.
std::vector<std::string> reported_spin_counts(const std::string& env) {
  const std::string cmd = "env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY -u NNFIT_OPENMP_SPIN OMP_DISPLAY_ENV=VERBOSE " + env +
                          " " + NNFIT_CLI + " --version 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = p ? pclose(p) : -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_NE(out.find("nnfit "), std::string::npos) << out;
  std::vector<std::string> counts;
  const std::regex line(R"(GOMP_SPINCOUNT = '(\d+)')");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it) {
    counts.push_back((*it)[1]);
  }
  return counts;
}

// The 1-minute load average against the cores this process may use, as nnfit sees it.
double load_per_core() {
  double load = 0;
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr || std::fscanf(f, "%lf", &load) != 1) ADD_FAILURE() << "cannot read /proc/loadavg";
  if (f) std::fclose(f);
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  return load / CPU_COUNT(&set);
}

TEST(OpenMpSpin, AutoShortensTheSpinOnlyOnABusyMachine) {
  const double before = load_per_core();
  const std::vector<std::string> counts = reported_spin_counts("");
  const double after = load_per_core();
  ASSERT_FALSE(counts.empty());
  if (before < 0.9 && after < 0.9) {
    EXPECT_EQ(counts, std::vector<std::string>{"300000"}) << "quiet machine: libgomp's default, no restart";
  } else if (before >= 1.1 && after >= 1.1) {
    EXPECT_EQ(counts.back(), "1000") << "busy machine: the short spin";
  } else {
    GTEST_SKIP() << "load per core " << before << " .. " << after << " is too near 1 to say which applies";
  }
}

TEST(OpenMpSpin, TheRestartedProcessKeepsItsName) {
  // NNFIT_OPENMP_SPIN=1000 forces the restart whatever the load.
  // ps, top and nvidia-smi show the command name; exec through /proc/self/exe would make
  // it "exe".
  FILE* p = popen(("env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY NNFIT_OPENMP_SPIN=1000 sh -c 'exec " + std::string(NNFIT_CLI) +
                   " monitor --count 1 --json' >/dev/null & sleep 0.3; cat /proc/$!/comm; wait")
                      .c_str(),
                  "r");
  ASSERT_NE(p, nullptr);
  char buf[256] = {};
  const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
  pclose(p);
  ASSERT_TRUE(got);
  EXPECT_EQ(std::string(buf), "nnfit\n");
}

TEST(OpenMpSpin, WhatTheUserSetWins) {
  EXPECT_EQ(reported_spin_counts("GOMP_SPINCOUNT=7"), std::vector<std::string>{"7"});
  // OMP_WAIT_POLICY=passive means no spinning at all: libgomp reports 0, and nnfit does
  // not start again.
  EXPECT_EQ(reported_spin_counts("OMP_WAIT_POLICY=passive"), std::vector<std::string>{"0"});
  EXPECT_EQ(reported_spin_counts("NNFIT_OPENMP_SPIN=default"), std::vector<std::string>{"300000"});
  // A number applies on any machine: libgomp's first start reports its default, the
  // restarted one the number.
  const std::vector<std::string> chosen = reported_spin_counts("NNFIT_OPENMP_SPIN=2500");
  ASSERT_FALSE(chosen.empty());
  EXPECT_EQ(chosen.back(), "2500");
}

}  // namespace
