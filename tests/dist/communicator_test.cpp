// The single-process communicator, the launcher detection and --collective-timeout's
// duration parsing. The MPI communicator is tested through `mpirun nnfit train` in
// mpi_train_test.cpp.
#include "nnfit/dist/communicator.h"

#include <gtest/gtest.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace nnfit::dist {
namespace {

TEST(SingleProcessCommunicator, IsRankZeroOfOneAndLeavesDataAlone) {
  auto comm = make_single_process_communicator();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_EQ(comm->local_rank(), 0);
  std::vector<float> f{1.5f, -2.0f};
  std::vector<double> d{3.25};
  comm->all_reduce_sum(f.data(), 2, "test");
  comm->all_reduce_sum(d.data(), 1, "test");
  comm->start_all_reduce_sum(f.data(), 2, "test");
  comm->progress();
  comm->wait_all();
  comm->broadcast(d.data(), sizeof(double), 0, "test");
  comm->barrier("test");
  EXPECT_EQ(f, (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(d[0], 3.25);
  EXPECT_THROW(comm->broadcast(d.data(), sizeof(double), 1, "test"), InvalidArgument);
}

TEST(ParseDuration, TakesSecondsMinutesHours) {
  EXPECT_DOUBLE_EQ(parse_duration_seconds("20s", "--collective-timeout"), 20);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("5m", "--collective-timeout"), 300);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("1h", "--collective-timeout"), 3600);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("1.5m", "--collective-timeout"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("30", "--collective-timeout"), 30);
}

TEST(ParseDuration, RejectsBadTextNamingTheFlag) {
  for (const char* bad : {"", "s", "5d", "-3s", "0s", "5 m", "abc"}) {
    try {
      parse_duration_seconds(bad, "--collective-timeout");
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("--collective-timeout"), std::string::npos) << e.what();
    }
  }
}

// Saves and restores the launcher variables a test sets.
class LauncherEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kNames) {
      const char* v = std::getenv(name);
      saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) setenv(name, value->c_str(), 1);
      else unsetenv(name);
    }
  }
  static constexpr const char* kNames[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "NNFIT_PLUGIN_DIR"};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

TEST_F(LauncherEnv, WithoutALauncherTrainsAlone) {
  EXPECT_EQ(launcher_world_size(), 0);
  EXPECT_EQ(make_communicator({})->size(), 1);
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  EXPECT_EQ(launcher_world_size(), 1);
  EXPECT_EQ(make_communicator({})->size(), 1);
}

TEST_F(LauncherEnv, ReadsTheWorldSizeTheLauncherAnnounces) {
  setenv("PMI_SIZE", "4", 1);
  EXPECT_EQ(launcher_world_size(), 4);
  unsetenv("PMI_SIZE");
  setenv("PMIX_RANK", "0", 1);
  EXPECT_EQ(launcher_world_size(), -1);
}

TEST_F(LauncherEnv, SeveralRanksWithoutMpiIsAnErrorNotNIndependentRuns) {
  if (mpi_available()) GTEST_SKIP() << "this nnfit has MPI; the error is for builds without it";
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  try {
    make_communicator({});
    ADD_FAILURE() << "no error";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("2 ranks"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("libopenmpi-dev"), std::string::npos) << e.hint();
  }
}

// The MPI communicator is a plugin (libnnfit_mpi.so): where it cannot be loaded, several
// ranks are the same clear error as a build without MPI, naming the file and the variable.
TEST_F(LauncherEnv, SeveralRanksWithoutTheMpiPluginIsAnError) {
  if (!mpi_available()) GTEST_SKIP() << "this nnfit was built without MPI (the test above covers it)";
  char empty[] = "/tmp/nnfit_no_plugins_XXXXXX";
  ASSERT_NE(mkdtemp(empty), nullptr);
  setenv("NNFIT_PLUGIN_DIR", empty, 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  std::string what, hint;
  try {
    make_communicator({});
  } catch (const Unsupported& e) {
    what = e.what();
    hint = e.hint();
  }
  rmdir(empty);
  EXPECT_EQ(what, std::string("started by an MPI launcher with 2 ranks, but cannot load the MPI communicator: its plugin "
                              "libnnfit_mpi.so is in none of ") + empty + " (NNFIT_PLUGIN_DIR)");
  EXPECT_NE(hint.find("set NNFIT_PLUGIN_DIR to the directory that holds libnnfit_mpi.so"), std::string::npos) << hint;
  EXPECT_NE(hint.find("run one process without mpirun"), std::string::npos) << hint;
  // Without a launcher nothing is loaded: one process trains.
  unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(make_communicator({})->size(), 1);
}

TEST(NotifyTerminationSignal, DoesNothingWithoutAnMpiCommunicator) {
  // No communicator lives: no flag, no timer (a SIGALRM 0.6 s later would end this test).
  notify_termination_signal();
  EXPECT_EQ(make_single_process_communicator()->size(), 1);
  itimerval t{};
  getitimer(ITIMER_REAL, &t);
  EXPECT_EQ(t.it_value.tv_sec, 0);
  EXPECT_EQ(t.it_value.tv_usec, 0);
}

TEST(MpiCommunicator, RefusesANonPositiveTimeout) {
  CommunicatorOptions o;
  o.timeout_s = 0;
  EXPECT_THROW(make_mpi_communicator(o), InvalidArgument);
}

}  // namespace
}  // namespace nnfit::dist
