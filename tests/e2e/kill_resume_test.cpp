// Nothing is ever lost: `nnfit train` with a BackupAndRestore callback is SIGKILLed at
// random moments (half of them after the first backup exists, whatever the load makes the
// run's pace; backups every 50 batches, so some kills land inside a backup write) and
// restarted with the same backup dir; every trial must end with exactly the weights and
// metrics of an uninterrupted run, and after every kill the last completed backup must be
// whole. The Fashion-MNIST MLP of examples/ trains on its tf.data-style pipeline (cache,
// shuffle, batch, normalize, prefetch AUTOTUNE), so the shuffle order of a resumed epoch
// is checked too (Note [Resumed passes]).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "e2e/cli_fixture.h"
#include "nnfit/io/hdf5_file.h"
#include "nnfit/model/saving.h"
#include "nnfit/profile/event_file_reader.h"

namespace nnfit_test {
namespace {

using nlohmann::json;

class KillResume : public CliTest {};

// Starts nnfit with args; returns the child's pid. file_limit > 0: no file it writes may
// grow past that many bytes (RLIMIT_FSIZE: a write past it fails with EFBIG, as on a full
// disk; SIGXFSZ ignored).
pid_t spawn(const std::vector<std::string>& args, const fs::path& log, rlim_t file_limit = 0) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (file_limit > 0) {
      signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{file_limit, file_limit};
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    std::string cli = NNFIT_CLI;
    argv.push_back(cli.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(cli.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// The metrics of each epoch a run finished, timing keys dropped.
json epochs_of(const fs::path& metrics) {
  json out = json::array();
  const json doc = json::parse(slurp(metrics));
  for (const json& e : doc["epochs"]) {
    json kept;
    for (const char* k : {"epoch", "loss", "accuracy", "val_loss", "val_accuracy"}) kept[k] = e[k];
    out.push_back(kept);
  }
  return out;
}

TEST_F(KillResume, KilledRunsResumeToTheUninterruptedResult) {
  const char* data = std::getenv("FASHION_MNIST_DIR");
  const std::string mnist = data ? data : "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(mnist + "/train-images-idx3-ubyte.gz")) GTEST_SKIP() << "Fashion-MNIST not installed (scripts/setup.sh)";
  json cfg = json::parse(slurp(fs::path(NNFIT_SOURCE_DIR) / "examples/fashion_mnist_mlp.json"));
  const fs::path backup = dir_ / "backup";
  cfg["fit"]["epochs"] = 2;
  cfg["fit"]["callbacks"] = {{{"class_name", "BackupAndRestore"},
                              {"config", {{"backup_dir", backup.string()}, {"save_freq", 50}}}}};
  write_file(dir_ / "cfg.json", cfg.dump());
  auto args = [&](const std::string& tag) {
    return std::vector<std::string>{"train", (dir_ / "cfg.json").string(), "--threads", "2", "--quiet",
                                    "--save", (dir_ / (tag + ".keras")).string(),
                                    "--metrics-json", (dir_ / (tag + ".json")).string()};
  };

  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(wait_for(spawn(args("ref"), dir_ / "ref.log")), 0) << slurp(dir_ / "ref.log");
  const double full_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(fs::exists(backup)) << "a run that ends normally deletes its backup";
  const json ref_epochs = epochs_of(dir_ / "ref.json");
  const std::vector<nnfit::Tensor> ref_weights = nnfit::load_model((dir_ / "ref.keras").string())->get_weights();

  std::mt19937 rng(2024);
  std::uniform_real_distribution<double> when(0.05, full_s);
  int resumed = 0, mid_epoch = 0;
  for (int trial = 0; trial < 20; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const pid_t pid = spawn(args("t"), dir_ / "kill.log");
    if (trial % 2 == 0) {
      // Any moment of the run, start-up included.
      std::this_thread::sleep_for(std::chrono::duration<double>(when(rng)));
    } else {
      // A moment (at most 0.2 s) after the first backup, whatever the machine's load makes
      // the run's pace: these trials resume, often mid-epoch (a backup every 50 batches).
      // A delay in proportion to the reference run's length let a run slowed by other work
      // on the machine be killed before its first backup, or after its last.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(10 * full_s + 5);
      while (!fs::exists(backup / "training_metadata.json") && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.2, full_s / 4) * when(rng) / full_s));
    }
    kill(pid, SIGKILL);
    wait_for(pid);
    // The last completed backup is whole: an HDF5 file with its metadata.
    const fs::path latest = backup / "latest.weights.h5";
    if (fs::exists(latest)) {
      nnfit::io::H5File f = nnfit::io::H5File::open(latest.string());
      ASSERT_TRUE(f.string_attr("/", "nnfit_training_metadata").has_value());
    }
    const bool had_backup = fs::exists(latest);
    ASSERT_EQ(wait_for(spawn(args("t"), dir_ / "resume.log")), 0) << slurp(dir_ / "resume.log");
    const json meta = json::parse(slurp(dir_ / "t.json"));
    if (had_backup) {
      ++resumed;
      mid_epoch += meta["initial_step"].get<int>() > 0;
    }
    // The resumed run's epochs continue the numbering and end as the uninterrupted run's did.
    const json epochs = epochs_of(dir_ / "t.json");
    ASSERT_FALSE(epochs.empty()) << slurp(dir_ / "t.json") << slurp(dir_ / "resume.log");
    EXPECT_EQ(epochs.back()["epoch"], 2);
    EXPECT_EQ(epochs.size(), 2u - meta["initial_epoch"].get<std::size_t>());
    for (const json& e : epochs) EXPECT_EQ(e, ref_epochs[e["epoch"].get<std::size_t>() - 1]);
    const std::vector<nnfit::Tensor> w = nnfit::load_model((dir_ / "t.keras").string())->get_weights();
    ASSERT_EQ(w.size(), ref_weights.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
      ASSERT_EQ(0, std::memcmp(w[i].raw(), ref_weights[i].raw(), w[i].nbytes())) << "weight " << i;
    }
    EXPECT_FALSE(fs::exists(backup));
  }
  // The kills must have exercised resuming, mid-epoch as well.
  EXPECT_GE(resumed, 5);
  EXPECT_GE(mid_epoch, 3);
}

// SIGINT and SIGTERM stop `nnfit train` at the next step: exit 130 / 143 (exit(), not death
// by the signal), a backup of exactly that step that a rerun goes on from (its metrics JSON
// starts there, the result is the uninterrupted run's to the bit), TensorBoard files that
// read back whole; a second signal exits at once.
TEST_F(KillResume, SignalsStopAtAStepAndTheRerunGoesOnFromIt) {
  const char* data = std::getenv("FASHION_MNIST_DIR");
  const std::string mnist = data ? data : "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(mnist + "/train-images-idx3-ubyte.gz")) GTEST_SKIP() << "Fashion-MNIST not installed (scripts/setup.sh)";
  json cfg = json::parse(slurp(fs::path(NNFIT_SOURCE_DIR) / "examples/fashion_mnist_mlp.json"));
  cfg["fit"]["epochs"] = 3;
  write_file(dir_ / "cfg.json", cfg.dump());
  const fs::path backup = dir_ / "backup";
  auto args = [&](const std::string& tag) {
    return std::vector<std::string>{"train", (dir_ / "cfg.json").string(), "--threads", "2", "--quiet",
                                    "--backup-dir", backup.string(), "--logdir", (dir_ / (tag + "_logs")).string(),
                                    "--save", (dir_ / (tag + ".keras")).string(),
                                    "--metrics-json", (dir_ / (tag + ".json")).string()};
  };
  ASSERT_EQ(wait_for(spawn(args("ref"), dir_ / "ref.log")), 0) << slurp(dir_ / "ref.log");
  const json ref_epochs = epochs_of(dir_ / "ref.json");
  const std::vector<nnfit::Tensor> ref_weights = nnfit::load_model((dir_ / "ref.keras").string())->get_weights();
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    fs::remove_all(backup);
    const pid_t pid = spawn(args("sig"), dir_ / "sig.log");
    // Signalled once the first epoch is done (its metrics JSON is written), mid-epoch 2 or 3.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    const auto epochs_done = [&] {
      if (!fs::exists(dir_ / "sig.json")) return std::size_t{0};  // written whole, by rename
      return json::parse(slurp(dir_ / "sig.json"))["epochs"].size();
    };
    while (epochs_done() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    kill(pid, sig);
    ASSERT_EQ(wait_for(pid), 128 + sig) << slurp(dir_ / "sig.log");
    const std::string log = slurp(dir_ / "sig.log");
    EXPECT_NE(log.find("training stopped after"), std::string::npos) << log;
    EXPECT_FALSE(fs::exists(dir_ / "sig.keras")) << "--save is skipped when training did not finish";
    const json meta = json::parse(slurp(backup / "training_metadata.json"));
    ASSERT_GE(meta["epoch"].get<int>(), 1) << meta.dump();
    // The TensorBoard file of the stopped run reads back whole.
    int event_files = 0;
    for (const auto& f : fs::recursive_directory_iterator(dir_ / "sig_logs" / "train")) {
      if (f.path().filename().string().find("tfevents") == std::string::npos) continue;
      const nnfit::profile::EventFileContents events = nnfit::profile::read_event_file(f.path().string());
      EXPECT_FALSE(events.truncated);
      EXPECT_FALSE(events.scalars.empty());
      ++event_files;
    }
    EXPECT_GE(event_files, 1);
    // The rerun goes on from the step where training stopped and ends as the reference.
    fs::remove_all(dir_ / "sig_logs");
    ASSERT_EQ(wait_for(spawn(args("sig"), dir_ / "resume.log")), 0) << slurp(dir_ / "resume.log");
    const json resumed = json::parse(slurp(dir_ / "sig.json"));
    EXPECT_EQ(resumed["initial_epoch"], meta["epoch"]);
    EXPECT_EQ(resumed["initial_step"], meta["batch"]);
    for (const json& e : epochs_of(dir_ / "sig.json")) EXPECT_EQ(e, ref_epochs[e["epoch"].get<std::size_t>() - 1]);
    const std::vector<nnfit::Tensor> w = nnfit::load_model((dir_ / "sig.keras").string())->get_weights();
    ASSERT_EQ(w.size(), ref_weights.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
      ASSERT_EQ(0, std::memcmp(w[i].raw(), ref_weights[i].raw(), w[i].nbytes())) << "weight " << i;
    }
    fs::remove(dir_ / "sig.json");
    fs::remove(dir_ / "sig.keras");
  }
  // A second signal once training runs (its metrics JSON is written at the start) exits at
  // once: SIGINT then SIGTERM (two SIGINTs sent together may merge into one pending signal).
  fs::remove_all(backup);
  const pid_t pid = spawn(args("twice"), dir_ / "twice.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (!fs::exists(dir_ / "twice.json") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGINT);
  kill(pid, SIGTERM);
  // Both pending at once, the kernel may run either handler first: the exit is 128 + the
  // signal handled second.
  const int code = wait_for(pid);
  EXPECT_TRUE(code == 128 + SIGTERM || code == 128 + SIGINT) << code << "\n" << slurp(dir_ / "twice.log");
  EXPECT_EQ(slurp(dir_ / "twice.log").find("training stopped after"), std::string::npos) << "it did not wait for a step";
}

// Same seed, same thread count: two runs are bitwise identical (issue 20). The convnet
// example (Dropout; its pipeline caches, shuffles, batches, normalizes and prefetches with
// AUTOTUNE) on the first 6,400 training images, 2 epochs at 2 threads: equal weights to the
// bit and equal losses and metrics; a third run with another seed differs.
TEST_F(KillResume, SameSeedAndThreadsGiveBitwiseEqualRuns) {
  const char* data = std::getenv("FASHION_MNIST_DIR");
  const std::string mnist = data ? data : "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(mnist + "/train-images-idx3-ubyte.gz")) GTEST_SKIP() << "Fashion-MNIST not installed (scripts/setup.sh)";
  json cfg = json::parse(slurp(fs::path(NNFIT_SOURCE_DIR) / "examples/fashion_mnist_cnn.json"));
  cfg["fit"]["epochs"] = 2;
  json& pipeline = cfg["data"]["train"]["pipeline"];
  pipeline.insert(pipeline.begin(), json{{"take", 6400}});
  write_file(dir_ / "cfg.json", cfg.dump());
  auto run = [&](const std::string& tag, const std::string& seed) {
    const std::vector<std::string> args{"train", (dir_ / "cfg.json").string(), "--threads", "2", "--quiet", "--seed", seed,
                                        "--save", (dir_ / (tag + ".keras")).string(),
                                        "--metrics-json", (dir_ / (tag + ".json")).string()};
    EXPECT_EQ(wait_for(spawn(args, dir_ / (tag + ".log"))), 0) << slurp(dir_ / (tag + ".log"));
    return std::make_pair(epochs_of(dir_ / (tag + ".json")), nnfit::load_model((dir_ / (tag + ".keras")).string())->get_weights());
  };
  const auto [ea, wa] = run("a", "7");
  const auto [eb, wb] = run("b", "7");
  EXPECT_EQ(ea, eb);
  ASSERT_EQ(wa.size(), wb.size());
  for (std::size_t i = 0; i < wa.size(); ++i) EXPECT_EQ(0, std::memcmp(wa[i].raw(), wb[i].raw(), wa[i].nbytes())) << "weight " << i;
  const auto [ec, wc] = run("c", "8");
  EXPECT_NE(0, std::memcmp(wa[0].raw(), wc[0].raw(), wa[0].nbytes())) << "another seed, other weights";
}

// A backup that cannot be written (the file system refuses to grow the file, as a full
// disk does) ends the run with one line naming the file, and the previous backup stays
// whole: the backup of a SIGINTed run, then a rerun whose files may not pass 64 KiB.
TEST_F(KillResume, AFailedBackupWriteKeepsThePreviousBackup) {
  const char* data = std::getenv("FASHION_MNIST_DIR");
  const std::string mnist = data ? data : "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(mnist + "/train-images-idx3-ubyte.gz")) GTEST_SKIP() << "Fashion-MNIST not installed (scripts/setup.sh)";
  json cfg = json::parse(slurp(fs::path(NNFIT_SOURCE_DIR) / "examples/fashion_mnist_mlp.json"));
  cfg["fit"]["epochs"] = 50;
  const fs::path backup = dir_ / "backup";
  cfg["fit"]["callbacks"] = {{{"class_name", "BackupAndRestore"},
                              {"config", {{"backup_dir", backup.string()}, {"save_freq", 20}}}}};
  write_file(dir_ / "cfg.json", cfg.dump());
  const std::vector<std::string> args{"train", (dir_ / "cfg.json").string(), "--threads", "2", "--quiet"};
  const pid_t pid = spawn(args, dir_ / "first.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (!fs::exists(backup / "training_metadata.json") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGINT);
  ASSERT_EQ(wait_for(pid), 130) << slurp(dir_ / "first.log");
  const std::string meta = slurp(backup / "training_metadata.json");
  const std::string weights = slurp(backup / "latest.weights.h5");
  ASSERT_GT(weights.size(), 64u * 1024) << "the backup must be larger than the limit below";
  // The rerun resumes, trains 20 steps and fails to write its first backup.
  EXPECT_EQ(wait_for(spawn(args, dir_ / "full.log", 64 * 1024)), 1) << slurp(dir_ / "full.log");
  const std::string log = slurp(dir_ / "full.log");
  EXPECT_NE(log.find("nnfit: error: "), std::string::npos) << log;
  EXPECT_NE(log.find((backup / "latest.weights.h5").string()), std::string::npos) << "the message names the file: " << log;
  EXPECT_EQ(slurp(backup / "training_metadata.json"), meta);
  EXPECT_EQ(slurp(backup / "latest.weights.h5"), weights) << "the previous backup is intact";
  for (const auto& f : fs::directory_iterator(backup)) {
    EXPECT_TRUE(f.path().filename() == "latest.weights.h5" || f.path().filename() == "training_metadata.json")
        << "left behind: " << f.path();
  }
}

}  // namespace
}  // namespace nnfit_test
