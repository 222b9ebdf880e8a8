// cuDNN <-> toolkit CUDA-major pairing: fake machines whose cuDNN is the build for another
// CUDA major (known from a wheel's dist-info or a Debian package) or a release that was
// never built for the toolkit's major (known from cudnn_cuda.csv), each with its fix.
#include <gtest/gtest.h>

#include "fake_root.h"

namespace nnfit::doctor::testing {
namespace {

using Problems = std::vector<std::string>;

// A toolkit assembled from NVIDIA's wheels, like this machine's, with a cuDNN wheel.
void wheel_toolkit(FakeRoot& root, const std::string& mm, const std::string& runtime, const std::string& cudnn_wheel,
                   int cudnn_major, int cudnn_minor, int cudnn_patch) {
  std::string tk = "/usr/local/cuda-" + mm;
  root.write(tk + "/bin/nvcc", "");
  root.mkdir(tk + "/dist-info/nvidia_cuda_runtime-" + runtime + ".dist-info");
  root.mkdir(tk + "/dist-info/" + cudnn_wheel + ".dist-info");
  root.cudnn(tk, cudnn_major, cudnn_minor, cudnn_patch);
  root.symlink("/usr/local/cuda", tk);
}

TEST(DoctorCudnnPairing, WheelBuiltForCuda12InACuda13Toolkit) {
  FakeRoot root;
  root.driver("580.95.05");
  root.gpu("0000:01:00.0", "NVIDIA GeForce RTX 4090");
  wheel_toolkit(root, "13.0", "13.0.96", "nvidia_cudnn_cu12-9.10.2.21", 9, 10, 2);
  DoctorRun r = run_doctor(root);
  EXPECT_EQ(r.problems(), (Problems{"fail cudnn-cuda:/usr/local/cuda-13.0/include/cudnn_version.h"}));
  const Check* c = r.find("cudnn-cuda:/usr/local/cuda-13.0/include/cudnn_version.h");
  EXPECT_EQ(c->title, "cuDNN 9.10.2 (built for CUDA 12) does not match the CUDA 13.0.96 toolkit at /usr/local/cuda-13.0");
  EXPECT_NE(c->detail.find("(/usr/local/cuda-13.0/dist-info/nvidia_cudnn_cu12-9.10.2.21.dist-info); it loads "
                           "libcublasLt.so.12, which a CUDA 13 toolkit does not ship"),
            std::string::npos)
      << c->detail;
  EXPECT_EQ(c->fix, "replace it with the build for CUDA 13: pip install --no-deps --target <dir> "
                    "nvidia-cudnn-cu13==9.10.2.* and copy its include/ and lib/ into /usr/local/cuda-13.0");
  EXPECT_EQ(exit_code(r.checks), 1);
}

TEST(DoctorCudnnPairing, MatchingWheelIsOk) {
  FakeRoot root;
  wheel_toolkit(root, "13.0", "13.0.96", "nvidia_cudnn_cu13-9.19.0.56", 9, 19, 0);
  DoctorRun r = run_doctor(root);
  EXPECT_EQ(r.problems(), Problems{"warn driver"});
  EXPECT_EQ(r.find("cudnn-cuda:/usr/local/cuda-13.0/include/cudnn_version.h")->title,
            "cuDNN 9.19.0 (built for CUDA 13) matches the CUDA 13.0.96 toolkit at /usr/local/cuda-13.0");
}

// A cuDNN 8.9 tarball copied into a CUDA 13 toolkit: cuDNN 8.9 exists only for 11.x and 12.x.
TEST(DoctorCudnnPairing, Cudnn8TarballInACuda13Toolkit) {
  FakeRoot root;
  root.driver("580.95.05");
  root.toolkit("13.0", "13.0.2", "13.0.96");
  root.cudnn("/usr/local/cuda-13.0", 8, 9, 6);
  DoctorRun r = run_doctor(root);
  EXPECT_EQ(r.problems(), (Problems{"fail cudnn-cuda:/usr/local/cuda-13.0/include/cudnn_version.h"}));
  const Check* c = r.find("cudnn-cuda:/usr/local/cuda-13.0/include/cudnn_version.h");
  EXPECT_EQ(c->title, "cuDNN 8.9.6 has no build for the CUDA 13.0.96 toolkit at /usr/local/cuda-13.0");
  EXPECT_NE(c->detail.find("cuDNN 8.9 was released only for CUDA 12.x and 11.x (data/compat/cudnn_cuda.csv)"),
            std::string::npos)
      << c->detail;
  EXPECT_EQ(c->fix, "install a cuDNN release built for CUDA 13 (newest known: 9.17.0 (for CUDA 13.x)) into "
                    "/usr/local/cuda-13.0");
}

// The tarball case where the release does exist for the toolkit's major: the build is not
// known from the files, so the check says only that a matching build exists.
TEST(DoctorCudnnPairing, TarballOfAReleaseThatExistsForTheMajor) {
  FakeRoot root;
  root.toolkit("12.2", "12.2.2", "12.2.140");
  root.cudnn("/usr/local/cuda-12.2", 8, 9, 4);
  DoctorRun r = run_doctor(root);
  EXPECT_EQ(r.problems(), Problems{"warn driver"});
  const Check* c = r.find("cudnn-cuda:/usr/local/cuda-12.2/include/cudnn_version.h");
  EXPECT_EQ(c->title, "cuDNN 8.9.4 exists for the CUDA 12.2.140 toolkit at /usr/local/cuda-12.2");
  EXPECT_EQ(c->status, Status::kOk);
}

std::string dpkg_stanza(const std::string& package, const std::string& version) {
  return "Package: " + package + "\nStatus: install ok installed\nPriority: optional\nSection: multiverse/libdevel\n"
         "Installed-Size: 1234\nMaintainer: cudatools <cudatools@nvidia.com>\nArchitecture: amd64\nSource: cudnn\n"
         "Version: " + version + "\nDescription: cuDNN development headers\n";
}

// Ubuntu with NVIDIA's apt repository: the cuDNN 9 packages for CUDA 11 next to a CUDA 12.4
// toolkit; the headers come through the alternatives link /usr/include/cudnn_version.h.
TEST(DoctorCudnnPairing, DebianPackagesForCuda11WithACuda12Toolkit) {
  FakeRoot root;
  root.driver("550.54.14");
  root.toolkit("12.4", "12.4.1", "12.4.127");
  root.symlink("/usr/local/cuda", "/usr/local/cuda-12.4");
  root.write("/usr/include/x86_64-linux-gnu/cudnn_version_v9.h",
             "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n");
  root.symlink("/etc/alternatives/cudnn_version_h", "/usr/include/x86_64-linux-gnu/cudnn_version_v9.h");
  root.symlink("/usr/include/cudnn_version.h", "/etc/alternatives/cudnn_version_h");
  root.write("/var/lib/dpkg/status", dpkg_stanza("libc6", "2.35-0ubuntu3.8") + "\n" +
                                         dpkg_stanza("libcudnn9-cuda-11", "9.1.0.70-1") + "\n" +
                                         dpkg_stanza("libcudnn9-dev-cuda-11", "9.1.0.70-1"));
  DoctorRun r = run_doctor(root);
  EXPECT_EQ(r.problems(), (Problems{"fail cudnn-cuda:/usr/include/cudnn_version.h"}));
  const Check* c = r.find("cudnn-cuda:/usr/include/cudnn_version.h");
  EXPECT_EQ(c->title, "cuDNN 9.1.0 (built for CUDA 11) does not match the CUDA 12.4.127 toolkit at /usr/local/cuda-12.4");
  EXPECT_NE(c->detail.find("(/var/lib/dpkg/status (libcudnn9-dev-cuda-11))"), std::string::npos) << c->detail;
  EXPECT_EQ(c->fix, "sudo apt install libcudnn9-cuda-12 libcudnn9-dev-cuda-12 (and remove the -cuda-11 ones)");
}

TEST(DoctorCudnnPairing, DebianCudnn8PackageBuiltForTheToolkitsMajor) {
  FakeRoot root;
  root.driver("535.104.05");
  root.toolkit("12.2", "12.2.2", "12.2.140");
  root.symlink("/usr/local/cuda", "/usr/local/cuda-12.2");
  root.write("/usr/include/x86_64-linux-gnu/cudnn_version.h",
             "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n");
  root.write("/var/lib/dpkg/status", dpkg_stanza("libcudnn8", "8.9.7.29-1+cuda12.2") + "\n" +
                                         dpkg_stanza("libcudnn8-dev", "8.9.7.29-1+cuda12.2"));
  DoctorRun r = run_doctor(root);
  EXPECT_EQ(r.problems(), Problems{});
  EXPECT_EQ(r.find("cudnn-cuda:/usr/include/x86_64-linux-gnu/cudnn_version.h")->title,
            "cuDNN 8.9.7 (built for CUDA 12) matches the CUDA 12.2.140 toolkit at /usr/local/cuda-12.2");
}

TEST(DoctorCudnnPairing, TableLookups) {
  const CompatTables& t = tables();
  EXPECT_EQ(t.cudnn_cuda_majors(*Version::parse("9.17.0")), (std::vector<int>{13, 12}));
  EXPECT_EQ(t.cudnn_cuda_majors(*Version::parse("8.9.4")), (std::vector<int>{12, 11}));
  EXPECT_EQ(t.cudnn_cuda_majors(*Version::parse("7.6.5")), (std::vector<int>{10, 9}));
  EXPECT_EQ(t.cudnn_cuda_majors(*Version::parse("9.13.0")), std::vector<int>{});  // "(not retrieved)"
  EXPECT_EQ(t.newest_cudnn_for_cuda(13), "9.17.0 (for CUDA 13.x)");
  EXPECT_EQ(t.newest_cudnn_for_cuda(11), "9.10.2 (for CUDA 11.x)");
  EXPECT_EQ(t.newest_cudnn_for_cuda(7), "");
}

}  // namespace
}  // namespace nnfit::doctor::testing
