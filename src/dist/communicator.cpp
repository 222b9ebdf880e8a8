// The single-process communicator, the choice between it and MPI, and duration parsing.
// The only `#if NNFIT_WITH_MPI` of the dist module lives here: the MPI implementation is a
// plugin (src/dist/mpi/, libnnfit_mpi.so) built only where CMake found MPI, and loaded
// here only when a communicator over MPI is asked for (mpi_plugin.h).
#include "nnfit/dist/communicator.h"

#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dist/mpi_plugin.h"
#include "nnfit/dist/nccl_communicator.h"

namespace nnfit::dist {

namespace {

// Set once the plugin has loaded; read by notify_termination_signal from a signal handler.
std::atomic<const MpiPlugin*> g_mpi_plugin{nullptr};
static_assert(std::atomic<const MpiPlugin*>::is_always_lock_free);

// The loaded plugin. throws: Unsupported (no MPI in this build; the plugin or libmpi
// cannot be loaded), naming the library and what to install.
const MpiPlugin& mpi_plugin() {
#if NNFIT_WITH_MPI
  static const PluginSpec kSpec = {"libnnfit_mpi.so", "nnfit_mpi_plugin", "the MPI communicator",
                                   "Open MPI's library (Debian: apt-get install libopenmpi3 openmpi-bin)", true};
  const auto& plugin = reinterpret_cast<const MpiPlugin&>(load_plugin(kSpec));
  g_mpi_plugin.store(&plugin);
  return plugin;
#else
  throw Unsupported("this nnfit was built without MPI",
                    "install Open MPI (apt-get install libopenmpi-dev openmpi-bin, or scripts/setup.sh) and rebuild");
#endif
}

class SingleProcessCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  std::string name() const override { return "single process"; }
  void all_reduce_sum(float*, std::int64_t, const char*) override {}
  void all_reduce_sum(double*, std::int64_t, const char*) override {}
  void broadcast(void*, std::int64_t, int root, const char*) override {
    NNFIT_CHECK(root == 0, InvalidArgument, "broadcast from rank ", root, " in a job of one rank");
  }
  void barrier(const char*) override {}
  void start_all_reduce_sum(float*, std::int64_t, const char*) override {}
  void progress() override {}
  void wait_all() override {}
  [[noreturn]] void abort_job(const std::string&, int exit_code) override {
    std::fflush(nullptr);
    std::_Exit(exit_code);
  }
};

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return (*end == '\0' && n > 0 && n < (1L << 30)) ? static_cast<int>(n) : 0;
}

}  // namespace

std::unique_ptr<Communicator> make_single_process_communicator() {
  return std::make_unique<SingleProcessCommunicator>();
}

int launcher_world_size() {
  // Open MPI's mpirun (and srun starting Open MPI ranks); MPICH/Hydra and Slurm's PMI-2.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (int n = env_int(name)) return n;
  }
  // A PMIx launcher (srun --mpi=pmix) names the rank, not the size: MPI will tell.
  return std::getenv("PMIX_RANK") ? -1 : 0;
}

bool mpi_available() { return NNFIT_WITH_MPI != 0; }

std::vector<CommunicatorInfo> communicator_infos() {
  std::vector<CommunicatorInfo> infos;
#if NNFIT_WITH_MPI
  try {
    mpi_plugin();
    infos.push_back({"mpi", true, true, "libnnfit_mpi.so loads"});
  } catch (const Error& e) {
    infos.push_back({"mpi", true, false, std::string("plugin not loaded: ") + e.what()});
  }
#else
  infos.push_back({"mpi", false, false, "not built: no MPI was found at configure time (apt-get install libopenmpi-dev)"});
#endif
  infos.push_back(nccl_info());
  return infos;
}

void notify_termination_signal() {
  if (const MpiPlugin* plugin = g_mpi_plugin.load()) plugin->notify_termination_signal();
}

std::unique_ptr<Communicator> make_mpi_communicator(const CommunicatorOptions& options) {
  NNFIT_CHECK(options.timeout_s > 0, InvalidArgument, "the collective timeout must be positive, got ",
              options.timeout_s, " s");
  return mpi_plugin().make_communicator(options);
}

std::unique_ptr<Communicator> make_communicator(const CommunicatorOptions& options) {
  const int launched = launcher_world_size();
  if (launched == 0 || launched == 1 || (launched < 0 && !mpi_available())) return make_single_process_communicator();
  const std::string launcher =
      launched > 0 ? "an MPI launcher with " + std::to_string(launched) + " ranks" : "a PMIx launcher";
  if (!mpi_available()) {
    throw Unsupported("started by " + launcher + ", but this nnfit was built without MPI, so each rank would train alone",
                      "install Open MPI (apt-get install libopenmpi-dev openmpi-bin, or scripts/setup.sh) and "
                      "rebuild nnfit, or run one process without mpirun");
  }
  try {
    return make_mpi_communicator(options);
  } catch (const Unsupported& e) {
    // Every rank fails alike here, before any collective: none trains alone.
    throw Unsupported("started by " + launcher + ", but " + e.what(), e.hint() + "; or run one process without mpirun");
  }
}

double parse_duration_seconds(std::string_view text, std::string_view where) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument(std::string(where) + ": invalid duration \"" + std::string(text) + "\": " + why,
                           "write a number with s, m or h, e.g. 20s, 5m, 1h");
  };
  std::size_t i = 0;
  bool digits = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, digits = true;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, digits = true;
  }
  if (!digits) throw bad("it does not start with a number");
  const double value = std::stod(std::string(text.substr(0, i)));
  const std::string_view unit = text.substr(i);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "m") scale = 60;
  else if (unit == "h") scale = 3600;
  else throw bad("unknown unit \"" + std::string(unit) + "\" (s, m or h)");
  const double seconds = value * scale;
  if (!(seconds > 0) || !std::isfinite(seconds)) throw bad("it must be more than zero");
  return seconds;
}

}  // namespace nnfit::dist
