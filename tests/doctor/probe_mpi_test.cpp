// MPI and oneDNN facts: the mpirun on PATH, mpi.h and libmpi on fake roots, real
// `mpirun --version` outputs, the mpirun/mpi.h mismatch warning, and the oneDNN versions
// (the loader's libdnnl, the header, and what the CLI reports it was built with and loaded).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "doctor/probes.h"
#include "fake_root.h"

namespace nnfit::doctor::testing {
namespace {

using Problems = std::vector<std::string>;

// Debian/Ubuntu with openmpi-bin and libopenmpi-dev: alternatives select Open MPI.
void debian_open_mpi(FakeRoot& root) {
  root.write("/usr/bin/mpirun.openmpi", "");
  root.symlink("/etc/alternatives/mpirun", "/usr/bin/mpirun.openmpi");
  root.symlink("/usr/bin/mpirun", "/etc/alternatives/mpirun");
  root.write("/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h",
             "#define OMPI_MAJOR_VERSION 4\n#define OMPI_MINOR_VERSION 1\n#define OMPI_RELEASE_VERSION 4\n");
  root.symlink("/usr/include/x86_64-linux-gnu/mpi", "/usr/lib/x86_64-linux-gnu/openmpi/include");
  root.write("/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4", "");
  root.symlink("/usr/lib/x86_64-linux-gnu/libmpi.so.40", "libmpi.so.40.30.4");
}

TEST(DoctorMpi, DebianOpenMpiFromItsAlternatives) {
  FakeRoot root;
  debian_open_mpi(root);
  DoctorRun r = run_doctor(root, {{"PATH", "/usr/local/bin:/usr/bin"}});
  const MpiFacts& m = r.facts.mpi;
  EXPECT_EQ(m.mpirun, "/usr/bin/mpirun.openmpi");
  EXPECT_EQ(m.mpirun_implementation, "Open MPI");
  EXPECT_EQ(m.mpirun_source, "file name");
  EXPECT_EQ(m.header, "/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h");
  EXPECT_EQ(m.header_version, "4.1.4");
  EXPECT_EQ(m.libraries, std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/libmpi.so.40"});
  EXPECT_EQ(r.problems(), Problems{"warn driver"});
  EXPECT_NE(r.find("nnfit")->title.find("; MPI: Open MPI 4.1.4)"), std::string::npos) << r.find("nnfit")->title;
  EXPECT_NE(r.find("nnfit")->detail.find("MPI: mpirun /usr/bin/mpirun.openmpi (Open MPI, from its file name), mpi.h "
                                         "/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h (Open MPI 4.1.4), "
                                         "libmpi.so.40 (Open MPI) in /usr/lib/x86_64-linux-gnu"),
            std::string::npos)
      << r.find("nnfit")->detail;
}

TEST(DoctorMpi, MpichMpirunWithOpenMpiHeadersIsAWarning) {
  FakeRoot root;
  debian_open_mpi(root);
  root.write("/usr/bin/mpirun.mpich", "");
  std::filesystem::remove(root.path() + "/etc/alternatives/mpirun");
  root.symlink("/etc/alternatives/mpirun", "/usr/bin/mpirun.mpich");
  DoctorRun r = run_doctor(root, {{"PATH", "/usr/bin"}});
  EXPECT_EQ(r.problems(), (Problems{"warn driver", "warn mpi"}));
  const Check* c = r.find("mpi");
  EXPECT_EQ(c->title, "mpirun is MPICH's but mpi.h is Open MPI's");
  EXPECT_EQ(c->fix, "launch with Open MPI's mpirun (Debian/Ubuntu: sudo update-alternatives --set mpirun "
                    "/usr/bin/mpirun.openmpi), or put its bin/ directory ahead of /usr/bin on PATH");
  EXPECT_NE(c->detail.find("all report rank 0 of 1"), std::string::npos);
}

TEST(DoctorMpi, IntelMpiAndMpichShareAnAbiSoNoWarning) {
  FakeRoot root;
  std::string dir = "/opt/intel/oneapi/mpi/2021.10.0";
  root.write(dir + "/bin/mpirun", "");
  root.write(dir + "/include/mpi.h", "#define MPICH_VERSION \"3.4a2\"\n#define I_MPI_VERSION \"2021.10.0\"\n");
  root.write(dir + "/lib/libmpi.so.12", "");
  DoctorRun r = run_doctor(root, {{"PATH", dir + "/bin:/usr/bin"}, {"LD_LIBRARY_PATH", dir + "/lib"}});
  EXPECT_EQ(r.facts.mpi.mpirun_implementation, "Intel MPI");
  EXPECT_EQ(r.facts.mpi.header_implementation, "Intel MPI");
  EXPECT_EQ(r.facts.mpi.header_version, "2021.10.0");
  EXPECT_EQ(r.facts.mpi.libraries, std::vector<std::string>{dir + "/lib/libmpi.so.12"});
  EXPECT_EQ(r.problems(), Problems{"warn driver"});
}

// Open MPI built from source into its own prefix: the mpirun's name says nothing, the
// mpi.h under the same prefix does.
TEST(DoctorMpi, SourceBuiltOpenMpiUnderItsOwnPrefix) {
  FakeRoot root;
  root.write("/opt/ompi-5.0.3/bin/mpirun", "");
  root.write("/opt/ompi-5.0.3/include/mpi.h",
             "#define OMPI_MAJOR_VERSION 5\n#define OMPI_MINOR_VERSION 0\n#define OMPI_RELEASE_VERSION 3\n");
  root.symlink("/usr/local/bin/mpirun", "/opt/ompi-5.0.3/bin/mpirun");
  // Debian's MPICH headers are installed too; the mpi.h beside the mpirun comes first.
  root.write("/usr/include/x86_64-linux-gnu/mpich/mpi.h", "#define MPICH_VERSION \"4.0\"\n");
  DoctorRun r = run_doctor(root, {{"PATH", "/usr/local/bin:/usr/bin"}});
  EXPECT_EQ(r.facts.mpi.mpirun, "/opt/ompi-5.0.3/bin/mpirun");
  EXPECT_EQ(r.facts.mpi.mpirun_implementation, "Open MPI");
  EXPECT_EQ(r.facts.mpi.mpirun_source, "mpi.h under its prefix");
  EXPECT_EQ(r.facts.mpi.header, "/opt/ompi-5.0.3/include/mpi.h");
  EXPECT_NE(r.find("nnfit")->title.find("; MPI: Open MPI 5.0.3)"), std::string::npos) << r.find("nnfit")->title;
  EXPECT_EQ(r.problems(), Problems{"warn driver"});
}

TEST(DoctorMpi, NoMpiIsAFactNotAProblem) {
  FakeRoot root;
  root.mkdir("/usr/bin");
  root.write("/usr/include/mpi.h", "/* not an MPI header */\n");
  DoctorRun r = run_doctor(root, {{"PATH", "/usr/bin"}});
  EXPECT_FALSE(r.facts.mpi.found());
  EXPECT_EQ(r.problems(), Problems{"warn driver"});
  EXPECT_NE(r.find("nnfit")->title.find("; MPI: none)"), std::string::npos) << r.find("nnfit")->title;
  EXPECT_NE(r.find("nnfit")->detail.find("MPI: no mpirun on PATH, no mpi.h, no libmpi found by the loader"),
            std::string::npos);
}

TEST(DoctorMpi, MpirunVersionOutputs) {
  std::string impl, version;
  ASSERT_TRUE(parse_mpirun_version("mpirun (Open MPI) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n",
                                   impl, version));
  EXPECT_EQ(impl + " " + version, "Open MPI 4.1.4");
  ASSERT_TRUE(parse_mpirun_version("HYDRA build details:\n    Version:                                 4.0.2\n"
                                   "    Release Date:                            Thu Apr  8 17:12:41 CDT 2021\n",
                                   impl, version));
  EXPECT_EQ(impl + " " + version, "MPICH 4.0.2");
  ASSERT_TRUE(parse_mpirun_version("Intel(R) MPI Library for Linux* OS, Version 2021.10 Build 20230619 (id: c2e19c2f3e)\n",
                                   impl, version));
  EXPECT_EQ(impl + " " + version, "Intel MPI 2021.10");
  EXPECT_FALSE(parse_mpirun_version("mpirun: command not found\n", impl, version));
}

// On this machine (root "/") the doctor runs the mpirun it finds with --version; a stand-in
// script on PATH answers like Open MPI does.
TEST(DoctorMpi, RunsMpirunVersionOnThisMachine) {
  FakeRoot bin;
  bin.write("/mpirun", "#!/bin/sh\necho 'mpirun (Open MPI) 5.0.3'\necho\necho 'Report bugs to https://www.open-mpi.org/community/help/'\n");
  std::filesystem::permissions(bin.path() + "/mpirun", std::filesystem::perms::owner_all);
  ProbeOptions o;
  o.root = "/";
  o.env = {{"PATH", bin.path()}};
  o.load_libraries = true;
  Facts f = probe(o);
  EXPECT_EQ(f.mpi.mpirun, bin.path() + "/mpirun");
  EXPECT_EQ(f.mpi.mpirun_implementation, "Open MPI");
  EXPECT_EQ(f.mpi.mpirun_version, "5.0.3");
  EXPECT_EQ(f.mpi.mpirun_source, "mpirun --version");
}

TEST(DoctorOnednn, LoaderAndHeaderOnAFakeRoot) {
  FakeRoot root;
  root.write("/usr/lib/x86_64-linux-gnu/libdnnl.so.2.6", "");
  root.symlink("/usr/lib/x86_64-linux-gnu/libdnnl.so.2", "libdnnl.so.2.6");
  root.write("/usr/include/oneapi/dnnl/dnnl_version.h",
             "#define DNNL_VERSION_MAJOR 2\n#define DNNL_VERSION_MINOR 6\n#define DNNL_VERSION_PATCH 3\n");
  DoctorRun r = run_doctor(root);
  const OneDnnFacts& o = r.facts.onednn;
  EXPECT_EQ(o.loader_soname, "libdnnl.so.2");
  EXPECT_EQ(o.loader_path, "/usr/lib/x86_64-linux-gnu/libdnnl.so.2.6");
  EXPECT_EQ(o.loader_version, "2.6");
  EXPECT_EQ(o.header_version, "2.6.3");
  EXPECT_EQ(r.facts.loader_finds.at("libdnnl.so.2"), "/usr/lib/x86_64-linux-gnu");
  EXPECT_NE(r.find("nnfit")->title.find("; oneDNN 2.6 on the system;"), std::string::npos) << r.find("nnfit")->title;
}

TEST(DoctorOnednn, LoadedOlderThanBuiltIsAWarning) {
  FakeRoot root;
  root.write("/usr/lib/wsl/lib/libcuda.so.1", "");
  DoctorRun r = run_doctor(root);
  r.facts.onednn.compiled = "3.4.1";
  r.facts.onednn.loaded = "3.4.1";
  auto checks = run_rules(r.facts, tables());
  EXPECT_EQ(exit_code(checks), 0);
  std::vector<std::string> ids;
  for (const auto& c : checks) {
    if (c.status != Status::kOk) ids.push_back(c.id);
    if (c.id == "nnfit") EXPECT_NE(c.title.find("; oneDNN 3.4.1;"), std::string::npos) << c.title;
  }
  EXPECT_EQ(ids, std::vector<std::string>{});
  r.facts.onednn.loaded = "3.2.0";
  r.facts.onednn.loaded_path = "/usr/lib/x86_64-linux-gnu/libdnnl.so.3";
  checks = run_rules(r.facts, tables());
  const Check* c = nullptr;
  for (const auto& k : checks) c = k.id == "onednn" ? &k : c;
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kWarn);
  EXPECT_EQ(c->title, "nnfit was built with oneDNN 3.4.1 but loads 3.2.0");
  EXPECT_EQ(c->fix, "install oneDNN 3.4 or newer where the loader finds it (Debian: sudo apt install libdnnl3), or "
                    "rebuild nnfit against the oneDNN you have");
}

TEST(DoctorOnednn, LibraryPathOfASymbol) {
  EXPECT_NE(library_path_of(reinterpret_cast<const void*>(&::fopen)).find("libc"), std::string::npos);
  EXPECT_EQ(library_path_of(nullptr), "");
}

// The CLI reports the oneDNN nnfit was built with and the one its process loaded.
TEST(DoctorOnednn, CliReportsBuiltAndLoadedVersions) {
  if (FILE* f = std::fopen(NNFIT_CLI, "r")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "the nnfit CLI is not built at " << NNFIT_CLI;
  }
  FakeRoot root;
  root.mkdir("/usr");
  std::string cmd = std::string("env -u CUDA_VISIBLE_DEVICES ") + NNFIT_CLI + " doctor --json --root " + root.path() +
                    " 2>/dev/null";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  auto j = nlohmann::json::parse(out);
  std::string compiled = j["facts"]["onednn"]["compiled"], loaded = j["facts"]["onednn"]["loaded"];
  EXPECT_TRUE(Version::parse(compiled).has_value()) << compiled;
  EXPECT_EQ(Version::parse(loaded)->major(), Version::parse(compiled)->major());
  EXPECT_NE(j["facts"]["onednn"]["loaded_path"].get<std::string>().find("libdnnl"), std::string::npos);
  for (const auto& c : j["checks"]) {
    if (c["id"] == "nnfit") EXPECT_NE(c["title"].get<std::string>().find("oneDNN " + compiled), std::string::npos);
  }
}

}  // namespace
}  // namespace nnfit::doctor::testing

namespace nnfit::doctor::testing {
namespace {

// Which dtype policies run natively follows the CPU's features, whatever the machine.
TEST(DoctorDtypePolicies, NativeWhereTheCpuHasTheInstructions) {
  FakeRoot root;
  DoctorRun r = run_doctor(root);
  const auto title = [&](std::vector<std::string> features) {
    Facts f = r.facts;
    f.nnfit.cpu_features = std::move(features);
    for (const Check& c : run_rules(f, tables())) {
      if (c.id == "dtype-policies") return c.title;
    }
    return std::string("missing");
  };
  EXPECT_EQ(title({"avx2", "avx512f", "avx512_bf16"}), "mixed_bfloat16: native (AVX-512 BF16); mixed_float16: emulated on this CPU");
  EXPECT_EQ(title({"avx512f", "amx_tile", "amx_bf16", "avx512_bf16", "avx512_fp16"}),
            "mixed_bfloat16: native (AMX); mixed_float16: native (AVX-512 FP16) on this CPU");
  EXPECT_EQ(title({"avx2"}), "mixed_bfloat16: emulated; mixed_float16: emulated on this CPU");
}

}  // namespace
}  // namespace nnfit::doctor::testing
