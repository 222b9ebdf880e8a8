// MPI probe: which implementation a user gets, found without initializing MPI. The first
// mpirun/mpiexec on PATH (its --version output on this machine, else its resolved file
// name: Debian's alternatives end in mpirun.openmpi / mpirun.mpich), the first mpi.h a
// compiler sees (version macros), and the libmpi sonames the loader finds. Absence is a
// fact, never a problem: most machines have no MPI.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "probes.h"
#include "pattern.h"

namespace nnfit::doctor {
namespace {

std::string macro(const std::string& text, const std::string& name) {
  const std::string v = define_value(text, name, "0123456789.abcdefghijklmnopqrstuvwxyz", 64);
  return !v.empty() && v[0] >= '0' && v[0] <= '9' ? v : "";
}

// The implementation a path names: /usr/bin/mpirun.openmpi, /usr/lib64/mpich/bin/mpiexec.hydra,
// /opt/intel/oneapi/mpi/2021.10.0/bin/mpirun, .../bin/orterun.
std::string implementation_of_path(const std::string& path) {
  if (path.find("intel") != std::string::npos || path.find("oneapi") != std::string::npos) return "Intel MPI";
  if (path.find("openmpi") != std::string::npos || ends_with(path, "/orterun") || ends_with(path, "/prterun")) {
    return "Open MPI";
  }
  if (path.find("mpich") != std::string::npos || ends_with(path, ".hydra")) return "MPICH";
  return "";
}

// Runs `program --version` without a shell and returns what it printed (stdout and
// stderr), or nullopt when it could not run or did not finish within `timeout`.
std::optional<std::string> run_version(const std::string& program, std::chrono::milliseconds timeout) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execl(program.c_str(), program.c_str(), "--version", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool done = false;
  while (!done && out.size() < (64 << 10)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) done = true;
    else out.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (!done) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!done || !WIFEXITED(status) || WEXITSTATUS(status) == 127) return std::nullopt;
  return out;
}

}  // namespace

bool parse_mpirun_version(const std::string& text, std::string& implementation, std::string& version) {
  static const Pattern kOpen("\\(Open MPI\\)[[:space:]]+([0-9][0-9.a-z]*)"),
      kIntel("Intel\\(R\\) MPI Library[^\n]*Version[[:space:]]+([0-9][0-9.]*)"),
      kHydraVersion("Version:[[:space:]]+([0-9][0-9.a-z]*)");
  std::optional<PatternMatch> m;
  if ((m = kOpen.search(text))) {
    implementation = "Open MPI";
  } else if ((m = kIntel.search(text))) {
    implementation = "Intel MPI";
  } else if (const std::size_t hydra = text.find("HYDRA build details:");
             hydra != std::string::npos && (m = kHydraVersion.search(text, hydra))) {
    implementation = "MPICH";  // the first "Version:" after the heading
  } else {
    return false;
  }
  version = (*m)[1];
  return true;
}

void probe_mpi(const RootFs& fs, const ProbeOptions& options, Facts& facts) {
  MpiFacts& mpi = facts.mpi;
  if (auto it = options.env.find("PATH"); it != options.env.end()) {
    for (const auto& d : split(it->second, ':')) {
      for (const char* name : {"mpirun", "mpiexec"}) {
        if (d.empty() || !mpi.mpirun.empty() || !fs.exists(d + "/" + name) || fs.is_dir(d + "/" + name)) continue;
        mpi.mpirun = fs.resolve(d + "/" + name);
      }
    }
  }
  if (!mpi.mpirun.empty()) {
    mpi.mpirun_implementation = implementation_of_path(mpi.mpirun);
    mpi.mpirun_source = "file name";
    if (facts.libraries_loaded) {
      std::string impl, version;
      auto out = run_version(mpi.mpirun, std::chrono::milliseconds(5000));
      if (out && parse_mpirun_version(*out, impl, version)) {
        mpi.mpirun_implementation = impl;
        mpi.mpirun_version = version;
        mpi.mpirun_source = "mpirun --version";
      }
    }
  }
  // The header programs compile against: the one under the mpirun's own prefix (its
  // mpicc is on PATH beside it), Debian's alternative, the default include dirs, then
  // each implementation's own directory.
  std::vector<std::string> headers;
  // An MPI installed under its own prefix (/opt/openmpi/bin/mpirun) keeps mpi.h in
  // <prefix>/include; the resolved mpirun finds it even when PATH names a symlink.
  if (std::size_t bin = mpi.mpirun.rfind("/bin/"); bin != std::string::npos && mpi.mpirun.substr(0, bin) != "/usr") {
    headers.push_back(mpi.mpirun.substr(0, bin) + "/include/mpi.h");
  }
  for (const char* h : {
      "/usr/include/x86_64-linux-gnu/mpi/mpi.h", "/usr/include/mpi.h", "/usr/local/include/mpi.h",
      "/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h", "/usr/include/x86_64-linux-gnu/mpich/mpi.h",
      "/usr/include/openmpi-x86_64/mpi.h", "/usr/include/mpich-x86_64/mpi.h", "/opt/openmpi/include/mpi.h"}) {
    headers.push_back(h);
  }
  for (const auto& h : headers) {
    auto text = fs.read(h);
    if (!text) continue;
    std::string impl, version;
    if (std::string v = macro(*text, "I_MPI_VERSION"); !v.empty()) {
      impl = "Intel MPI";  // Intel's mpi.h defines MPICH_VERSION too: test it first
      version = v;
    } else if (std::string major = macro(*text, "OMPI_MAJOR_VERSION"); !major.empty()) {
      impl = "Open MPI";
      version = major + "." + macro(*text, "OMPI_MINOR_VERSION") + "." + macro(*text, "OMPI_RELEASE_VERSION");
    } else if (std::string v = macro(*text, "MPICH_VERSION"); !v.empty()) {
      impl = "MPICH";
      version = v;
    } else {
      continue;  // an mpi.h of something else (a stub, a wrapper)
    }
    mpi.header = fs.resolve(h);
    mpi.header_implementation = impl;
    mpi.header_version = version;
    break;
  }
  // An mpirun whose name says nothing (/opt/ompi-5.0.3/bin/mpirun) is the MPI of the mpi.h
  // under its own prefix.
  std::size_t bin = mpi.mpirun.rfind("/bin/");
  if (mpi.mpirun_implementation.empty() && bin != std::string::npos && !mpi.header.empty() &&
      mpi.header == fs.resolve(mpi.mpirun.substr(0, bin) + "/include/mpi.h")) {
    mpi.mpirun_implementation = mpi.header_implementation;
    mpi.mpirun_source = "mpi.h under its prefix";
  }
  // Open MPI 3-5 ship libmpi.so.40 (2.x: .so.20); MPICH and Intel MPI share the MPICH ABI,
  // libmpi.so.12 / libmpich.so.12.
  for (const char* soname : {"libmpi.so.40", "libmpi.so.20", "libmpi.so.12", "libmpich.so.12"}) {
    for (const auto& d : facts.loader_dirs) {
      if (fs.exists(d + "/" + soname)) {
        mpi.libraries.push_back(d + "/" + soname);
        break;
      }
    }
  }
}

}  // namespace nnfit::doctor
