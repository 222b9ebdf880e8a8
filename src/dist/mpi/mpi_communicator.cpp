// The MPI communicator (CPU buffers): the MPI plugin, libnnfit_mpi.so, built where CMake
// finds MPI and loaded only when used (mpi_plugin.h). Every collective is the non-blocking
// MPI call polled against a deadline, with a control channel (a duplicate of the world
// communicator) read in the same loop: Note [Collective watchdog] in
// nnfit/dist/communicator.h, and the protocol in docs/design/distributed.md.
#include <mpi.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "dist/mpi_plugin.h"
#include "nnfit/dist/communicator.h"

#ifndef NNFIT_BUILD_ID
#error "NNFIT_BUILD_ID is set by cmake/plugins.cmake"
#endif

namespace nnfit::dist {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// What travels on the control channel. A rank that failed sends `error` to every other;
// a rank whose collective timed out sends `query`, every rank that can answer sends
// `reply` (where it is), and the asker names the silent ranks in a `verdict`; `ack` tells
// the failing (or asking) rank that the message was reported, so it may end the job.
enum class Kind : int { error = 1, query = 2, reply = 3, verdict = 4, ack = 5 };
struct Notice {
  Kind kind = Kind::error;
  int origin = -1;
  std::int64_t step = 0;
  char text[1536] = {};
};
constexpr int kControlTag = 77;

// Note [Launcher termination]: when a rank dies, mpirun sends the others SIGTERM and,
// a second later (odls_base_sigkill_timeout), SIGKILL. The handler only raises a flag; the
// watchdog loop (or progress(), between kernels) sees it, asks the other ranks where they
// are for a short grace and names the ones that do not answer, the dead. Should the rank
// be inside a long kernel, a timer prints the line written at the last collective
// instead, without the name, before the SIGKILL. Two buffers, so the handler never reads
// the one being rewritten.
struct TermLine {
  char text[2][640] = {};
  std::atomic<int> current{0};
  std::atomic<int> pending{0};
  std::atomic<int> live{0};  // an MPI communicator exists
};
TermLine g_term;
constexpr double kTermGraceS = 0.3;  // the query's grace; the timer fires at 0.6 s

extern "C" void on_term_timer(int) {
  const char* line = g_term.text[g_term.current.load()];
  ssize_t unused = ::write(STDERR_FILENO, line, std::strlen(line));
  (void)unused;
  std::signal(SIGTERM, SIG_DFL);
  std::raise(SIGTERM);
}

extern "C" void on_sigterm(int) {
  if (g_term.pending.exchange(1)) return;
  std::signal(SIGALRM, on_term_timer);
  itimerval t{};
  t.it_value.tv_usec = 600000;
  setitimer(ITIMER_REAL, &t, nullptr);
}

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw BackendError(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(const CommunicatorOptions& options) : timeout_s_(options.timeout_s) {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      int provided = 0;
      check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      initialized_here_ = true;
    }
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &control_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm node = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_free(&node);
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(version, &len);
    library_ = std::string(version, static_cast<std::size_t>(len));
    library_ = library_.substr(0, library_.find_first_of(",\n"));
    post_receive();
    mark("startup");
    g_term.live.store(1);
    std::signal(SIGTERM, on_sigterm);
  }

  ~MpiCommunicator() override {
    g_term.live.store(0);
    std::signal(SIGTERM, SIG_DFL);
    if (inbox_request_ != MPI_REQUEST_NULL) {
      MPI_Cancel(&inbox_request_);
      MPI_Wait(&inbox_request_, MPI_STATUS_IGNORE);
    }
    for (auto& [request, notice] : outbox_) MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Comm_free(&control_);
    MPI_Comm_free(&comm_);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (initialized_here_ && !finalized) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  std::string name() const override { return "MPI (" + library_ + ")"; }

  void all_reduce_sum(float* data, std::int64_t count, const char* what) override {
    start_all_reduce_sum(data, count, what);
    wait_all();
  }
  void all_reduce_sum(double* data, std::int64_t count, const char* what) override {
    mark(what);
    for (std::int64_t off = 0; off < count; off += INT_MAX) {
      pending_.push_back({MPI_REQUEST_NULL, what});
      check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data + off, static_cast<int>(std::min<std::int64_t>(INT_MAX, count - off)),
                               MPI_DOUBLE, MPI_SUM, comm_, &pending_.back().request),
                "MPI_Iallreduce");
    }
    wait_all();
  }
  void broadcast(void* data, std::int64_t bytes, int root, const char* what) override {
    mark(what);
    for (std::int64_t off = 0; off < bytes; off += INT_MAX) {
      pending_.push_back({MPI_REQUEST_NULL, what});
      check_mpi(MPI_Ibcast(static_cast<char*>(data) + off, static_cast<int>(std::min<std::int64_t>(INT_MAX, bytes - off)),
                           MPI_BYTE, root, comm_, &pending_.back().request),
                "MPI_Ibcast");
    }
    wait_all();
  }
  void barrier(const char* what) override {
    mark(what);
    pending_.push_back({MPI_REQUEST_NULL, what});
    check_mpi(MPI_Ibarrier(comm_, &pending_.back().request), "MPI_Ibarrier");
    wait_all();
  }
  void start_all_reduce_sum(float* data, std::int64_t count, const char* what) override {
    mark(what);
    for (std::int64_t off = 0; off < count; off += INT_MAX) {
      pending_.push_back({MPI_REQUEST_NULL, what});
      check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data + off, static_cast<int>(std::min<std::int64_t>(INT_MAX, count - off)),
                               MPI_FLOAT, MPI_SUM, comm_, &pending_.back().request),
                "MPI_Iallreduce");
    }
  }
  void progress() override {
    if (g_term.pending.load() == 1) on_launcher_termination(pending_.empty() ? "computing" : pending_.front().what);
    // MPI advances non-blocking collectives inside MPI calls: test the oldest pending one.
    if (pending_.empty()) return;
    int done = 0;
    MPI_Test(&pending_.front().request, &done, MPI_STATUS_IGNORE);
  }
  void wait_all() override {
    for (Pending& p : pending_) wait(p.request, p.what);
    pending_.clear();
  }

  [[noreturn]] void abort_job(const std::string& message, int exit_code) override {
    std::signal(SIGTERM, SIG_DFL);  // our line is printed; the launcher's SIGTERM needs no other
    aborting_ = true;
    std::fflush(nullptr);
    if (g_term.pending.load() != 0) std::_Exit(exit_code);  // the launcher is ending the job already
    const double grace = grace_s();
    if (!owe_ack_.empty()) {
      // Told of another rank's failure: acknowledge, and let that rank end the job (its
      // MPI_Abort), so every rank has printed its line first.
      for (int r : owe_ack_) send(r, Kind::ack, "");
      const double until = now_s() + 2 * grace;
      while (now_s() < until) {
        poll_control("ending the job");
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    } else {
      // This rank's own failure (or the verdict it sent): tell the others and wait until
      // they have printed it, then end the job.
      if (!sent_verdict_) {
        for (int r = 0; r < size_; ++r) {
          if (r != rank_) send(r, Kind::error, message);
        }
        expected_acks_ = size_ - 1;
      }
      const double until = now_s() + grace;
      while (now_s() < until && acks_ < expected_acks_) {
        poll_control("ending the job");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);
  }

 private:
  struct Pending {
    MPI_Request request;
    const char* what;
  };

  // How long the failure paths wait for other ranks to answer: a quarter of the timeout,
  // within [0.2 s, 5 s].
  double grace_s() const { return std::clamp(timeout_s_ / 4, 0.2, 5.0); }

  std::string position(const char* what) const {
    return std::string(what) + " at step " + std::to_string(step_);
  }

  void mark(const char* what) {
    const int next = 1 - g_term.current.load();
    std::snprintf(g_term.text[next], sizeof(g_term.text[next]),
                  "nnfit: error: rank %d: ended by the launcher (SIGTERM) at step %lld, last in %s; another rank "
                  "failed first (the launcher's message names it)\n",
                  rank_, static_cast<long long>(step_), what);
    g_term.current.store(next);
  }

  // The watchdog loop: test the request, read the control channel, check the deadline;
  // spin briefly, then sleep so a waiting rank leaves its core to ranks still computing.
  void wait(MPI_Request& request, const char* what) {
    const double deadline = now_s() + timeout_s_;
    for (int spins = 0;; ++spins) {
      int done = 0;
      check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      poll_control(what);
      if (g_term.pending.load() == 1) on_launcher_termination(what);
      if (spins > 200) {
        if (now_s() > deadline) on_timeout(what);
        std::this_thread::sleep_for(std::chrono::microseconds(spins > 2000 ? 200 : 20));
      }
    }
  }

  void post_receive() {
    check_mpi(MPI_Irecv(&inbox_, sizeof(Notice), MPI_BYTE, MPI_ANY_SOURCE, kControlTag, control_, &inbox_request_),
              "MPI_Irecv");
  }

  void send(int to, Kind kind, const std::string& text) {
    auto n = std::make_unique<Notice>();
    n->kind = kind;
    n->origin = rank_;
    n->step = step_;
    std::snprintf(n->text, sizeof(n->text), "%s", text.c_str());
    outbox_.emplace_back(MPI_REQUEST_NULL, std::move(n));
    MPI_Isend(outbox_.back().second.get(), sizeof(Notice), MPI_BYTE, to, kControlTag, control_,
              &outbox_.back().first);
  }

  // Reads every notice that has arrived. Outside abort_job an error or a verdict throws
  // (PeerFailure, CollectiveTimeout) with the line to print.
  void poll_control(const char* what) {
    for (;;) {
      int got = 0;
      MPI_Test(&inbox_request_, &got, MPI_STATUS_IGNORE);
      if (!got) break;
      const Notice n = inbox_;
      post_receive();
      handle(n, what);
    }
    std::erase_if(outbox_, [](auto& o) {
      int done = 0;
      MPI_Test(&o.first, &done, MPI_STATUS_IGNORE);
      return done != 0;
    });
  }

  void handle(const Notice& n, const char* what) {
    switch (n.kind) {
      case Kind::query:
        send(n.origin, Kind::reply, position(what));
        return;
      case Kind::reply:
        if (asking_) replied_.push_back(n.origin);
        return;
      case Kind::ack:
        ++acks_;
        return;
      case Kind::error:
      case Kind::verdict:
        if (aborting_) {  // two failures at once: report nothing more, let either end the job
          send(n.origin, Kind::ack, "");
          return;
        }
        owe_ack_.push_back(n.origin);
        if (n.kind == Kind::error) {
          throw PeerFailure("rank " + std::to_string(n.origin) + " failed at step " + std::to_string(n.step) + ": " +
                            n.text + " (rank " + std::to_string(rank_) + " stopped in " + position(what) + ")");
        }
        throw CollectiveTimeout(std::string(n.text) + " (reported by rank " + std::to_string(n.origin) + "; rank " +
                                std::to_string(rank_) + " stopped in " + position(what) + ")");
    }
  }

  // Asks every other rank where it is and returns the ones that did not answer within
  // `grace_s` ("1" or "1, 2"; their count in n_silent). An error or verdict arriving
  // meanwhile throws.
  std::string ask(const char* what, double grace, int& n_silent) {
    asking_ = true;
    replied_.clear();
    for (int r = 0; r < size_; ++r) {
      if (r != rank_) send(r, Kind::query, "");
    }
    const double until = now_s() + grace;
    while (now_s() < until && static_cast<int>(replied_.size()) < size_ - 1) {
      poll_control(what);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    asking_ = false;
    std::string silent;
    n_silent = 0;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_ || std::find(replied_.begin(), replied_.end(), r) != replied_.end()) continue;
      silent += (silent.empty() ? "" : ", ") + std::to_string(r);
      ++n_silent;
    }
    return silent;
  }

  // Note [Launcher termination]: name the ranks that no longer answer.
  [[noreturn]] void on_launcher_termination(const char* what) {
    g_term.pending.store(2);  // handled here: once
    int n_silent = 0;
    const std::string silent = ask(what, kTermGraceS, n_silent);
    itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
    throw PeerFailure((n_silent == 0 ? std::string("another rank")
                                     : (n_silent == 1 ? "rank " : "ranks ") + silent) +
                      " failed (the launcher ended the job; it names the exit or signal) while rank " +
                      std::to_string(rank_) + " was in " + position(what));
  }

  // The deadline passed: ask every rank where it is; the ones that do not answer within
  // the grace time are stalled or dead. Tell the ones that answered, then throw.
  [[noreturn]] void on_timeout(const char* what) {
    int n_silent = 0;
    const std::string silent = ask(what, grace_s(), n_silent);
    char limit[32];
    std::snprintf(limit, sizeof(limit), "%gs", timeout_s_);
    std::string message;
    if (n_silent > 0) {
      message = (n_silent == 1 ? "rank " : "ranks ") + silent + " did not reach " + position(what) +
                " within the collective timeout of " + limit + " (stalled or dead: " +
                (n_silent == 1 ? "it does" : "they do") + " not answer)";
    } else {
      message = std::string("every rank answered, but ") + position(what) + " did not complete within " + limit +
                "; the ranks are at different collectives (a rank skipped or added one)";
    }
    for (int r : replied_) send(r, Kind::verdict, message);
    sent_verdict_ = true;
    expected_acks_ = static_cast<int>(replied_.size());
    throw CollectiveTimeout(message);
  }

  double timeout_s_;
  bool initialized_here_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL, control_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  std::string library_;
  std::vector<Pending> pending_;
  Notice inbox_;
  MPI_Request inbox_request_ = MPI_REQUEST_NULL;
  std::vector<std::pair<MPI_Request, std::unique_ptr<Notice>>> outbox_;
  std::vector<int> owe_ack_;
  std::vector<int> replied_;
  bool asking_ = false, aborting_ = false, sent_verdict_ = false;
  int acks_ = 0, expected_acks_ = 0;
};

void notify_termination_signal_impl() {
  if (g_term.live.load()) on_sigterm(SIGTERM);
}

std::unique_ptr<Communicator> make_mpi_communicator_impl(const CommunicatorOptions& options) {
  return std::make_unique<MpiCommunicator>(options);
}

const MpiPlugin kPlugin = {{NNFIT_BUILD_ID}, &make_mpi_communicator_impl, &notify_termination_signal_impl};

}  // namespace
}  // namespace nnfit::dist

// The plugin's entry point (mpi_plugin.h).
extern "C" const nnfit::PluginHeader* nnfit_mpi_plugin() { return &nnfit::dist::kPlugin.header; }
