// Issue 39 through the `nnfit` binary: special files as model, data and sample-weight
// paths refused by name (never opened: a FIFO would hang, /dev/zero never ends), 64-bit
// batch sizes that oneDNN cannot take answered without a crash, empty device and dtype
// policy values refused, and a huge value in a config cut from the one error line.
#include <sys/stat.h>

#include "cli_fixture.h"
#include "nnfit/core/tensor.h"
#include "nnfit/io/npy.h"

namespace {

using namespace nnfit_test;

// Every run is under `timeout`: a hang is a failure with exit 124, not a stuck suite.
constexpr const char* kTimeout = "timeout 60";

class HostileInputsTest : public CliTest {
 protected:
  void write_npy(const std::string& name, const nnfit::Shape& shape) const {
    nnfit::io::write_npy((dir_ / name).string(), nnfit::Tensor::zeros(shape));
  }
  std::string fifo(const std::string& name) const {
    const fs::path p = dir_ / name;
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    return p.string();
  }
  // The one error line of a run that must end by itself (no signal, no timeout).
  std::string error_of(const std::string& args, int code) const {
    const Result r = run_with_env(kTimeout, args);
    EXPECT_EQ(r.code, code) << "nnfit " << args << "\n" << r.err;
    return r.err.substr(0, r.err.find('\n'));
  }
};

TEST_F(HostileInputsTest, SpecialFilesAsModelPathsAreRefusedByName) {
  write_npy("x.npy", nnfit::Shape{2, 4, 4, 1});
  const std::string x = (dir_ / "x.npy").string() + " --output " + (dir_ / "p.npy").string();
  std::string e = error_of("predict " + fifo("model.keras") + " --input " + x, 1);
  EXPECT_NE(e.find("model.keras: is a FIFO (named pipe), not a model file"), std::string::npos) << e;
  e = error_of("predict /dev/urandom --input " + x, 1);
  EXPECT_NE(e.find("/dev/urandom: is a character device, not a model file"), std::string::npos) << e;
}

TEST_F(HostileInputsTest, SpecialFilesAsDataPathsAreRefusedByName) {
  write_npy("x.npy", nnfit::Shape{6, 4, 4, 1});
  write_npy("y.npy", nnfit::Shape{6});
  const auto source = [&](const std::string& weights) {
    return R"({"source": {"format": "npy", "x": "x.npy", "y": "y.npy", "sample_weight": ")" + weights + R"("}})";
  };
  const fs::path cfg = config_with_data(model(), source("/dev/zero"), source("/dev/zero"));
  std::string e = error_of("train " + cfg.string() + " --quiet", 1);
  EXPECT_NE(e.find("/dev/zero: is a character device, not a .npy file"), std::string::npos) << e;
  const std::string pipe = fifo("weights.npy");
  const fs::path cfg2 = config_with_data(model(), source(pipe), source(pipe));
  e = error_of("train " + cfg2.string() + " --quiet", 1);
  EXPECT_NE(e.find("weights.npy: is a FIFO (named pipe), not a .npy file"), std::string::npos) << e;
  const fs::path cfg3 = config(model(), fifo("images.pipe"));
  e = error_of("train " + cfg3.string() + " --quiet", 1);
  EXPECT_NE(e.find("images.pipe: is a FIFO (named pipe), not an IDX file"), std::string::npos) << e;
}

TEST_F(HostileInputsTest, AnotherLayoutOfTheInputIsRefusedNamingTheFiles) {
  // Train and save the fixture's (4, 4, 1) model, then predict on (6, 16): same size, another
  // layout, refused as Keras refuses it; (6, 4, 4) is Keras's trailing-1 rule and runs.
  const fs::path saved = dir_ / "m.keras";
  const Result trained = run_with_env(kTimeout, "train " + config(model()).string() + " --quiet --save " + saved.string());
  ASSERT_EQ(trained.code, 0) << trained.err;
  write_npy("flat.npy", nnfit::Shape{6, 16});
  const std::string out = " --output " + (dir_ / "p.npy").string();
  const std::string e = error_of("predict " + saved.string() + " --input " + (dir_ / "flat.npy").string() + out, 2);
  EXPECT_NE(e.find("m.keras on --input " + (dir_ / "flat.npy").string() + ": inputs of shape (6, 16) do not match the "
                   "model's input shape (4, 4, 1) per sample"),
            std::string::npos)
      << e;
  write_npy("rank3.npy", nnfit::Shape{6, 4, 4});
  const Result r = run_with_env(kTimeout, "predict " + saved.string() + " --input " + (dir_ / "rank3.npy").string() + out);
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(HostileInputsTest, BatchSizesPastOneDnnsDimensionsDoNotCrash) {
  // A multiple of 2^32 died of SIGFPE inside oneDNN (Note [oneDNN's 32-bit dimensions]).
  const fs::path cfg = config(model());
  for (const char* batch : {"4294967296", "8589934592", "2147483648"}) {
    const Result r = run_with_env(kTimeout, std::string("plan ") + cfg.string() + " --batch-sizes " + batch + " --json");
    EXPECT_TRUE(r.code == 0 || r.code == 1 || r.code == 2) << batch << ": exit " << r.code << "\n" << r.err;
    EXPECT_LT(r.code, 100) << batch << ": killed by a signal\n" << r.err;
  }
  const Result r = run_with_env(kTimeout, "train " + cfg.string() + " --quiet --epochs 1 --batch-size 4294967296");
  EXPECT_LT(r.code, 100) << "killed by a signal\n" << r.err;
}

TEST_F(HostileInputsTest, OutOfMemoryNamesTheConfigAndTheBatchSize) {
  // The training arena of 4 rows does not fit a 1 KiB limit: the line says which value.
  const std::string e = error_of("train " + config(model()).string() + " --quiet --epochs 1 --batch-size 4 --memory-limit 1KiB", 1);
  EXPECT_NE(e.find("config.json: training with batch size"), std::string::npos) << e;
  EXPECT_NE(e.find("(--batch-size): "), std::string::npos) << e;
}

TEST_F(HostileInputsTest, EmptyDeviceAndDtypePolicyAreRefused) {
  std::string e = error_of("train " + config(model()).string() + " --quiet --dtype-policy ''", 2);
  EXPECT_NE(e.find("--dtype-policy"), std::string::npos) << e;
  EXPECT_NE(e.find("must not be empty"), std::string::npos) << e;
  e = error_of("plan " + config(model()).string() + " --dtype-policy ''", 2);
  EXPECT_NE(e.find("must not be empty"), std::string::npos) << e;
  const fs::path cfg = config(model(), "images.idx", "labels.idx", R"({"epochs": 1, "batch_size": 4, "device": ""})");
  e = error_of("train " + cfg.string() + " --quiet", 2);
  EXPECT_NE(e.find("fit.device: is empty"), std::string::npos) << e;
}

TEST_F(HostileInputsTest, AHugeValueIsCutFromTheErrorLine) {
  const std::string huge(10 << 20, 'v');  // a 10 MB model path
  write_file(dir_ / "config.json", R"({"model": ")" + huge + R"(", "data": {"train": {"images": "images.idx", "labels": "labels.idx"}}})");
  const Result r = run_with_env(kTimeout, "train " + (dir_ / "config.json").string() + " --quiet");
  EXPECT_EQ(r.code, 2) << r.err.substr(0, 400);
  const std::string line = r.err.substr(0, r.err.find('\n'));
  EXPECT_LE(line.size(), 420u) << line.substr(0, 400);
  EXPECT_NE(line.find("bytes cut ...]"), std::string::npos) << line.substr(0, 400);
  EXPECT_NE(line.find("cannot read model JSON"), std::string::npos) << line.substr(0, 400);
  EXPECT_EQ(line.find("internal error"), std::string::npos) << line.substr(0, 400);
}

}  // namespace
