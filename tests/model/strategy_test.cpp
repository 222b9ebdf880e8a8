// Model::set_strategy (nnfit/dist/strategy.h): chosen before compile; MirroredStrategy is
// the one-process case on the model's one device and refuses several devices;
// MultiWorkerMirroredStrategy over one process trains exactly as no strategy does.
// Several processes are tested under mpirun (tests/dist/mpi_train_test.cpp: the CLI trains
// through MultiWorkerMirroredStrategy).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "nnfit/core/error.h"
#include "nnfit/dist/communicator.h"
#include "nnfit/dist/strategy.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

std::unique_ptr<Sequential> mlp(std::shared_ptr<dist::Strategy> strategy) {
  auto m = std::make_unique<Sequential>("mlp");
  m->set_seed(7);
  m->set_num_threads(1);
  if (strategy) m->set_strategy(std::move(strategy));
  m->set_input_shape(Shape{6});
  m->add(std::make_unique<Dense>("dense", DenseOptions{8, "relu"}));
  m->add(std::make_unique<Dense>("dense_1", DenseOptions{3}));
  CompileOptions c;
  c.optimizer.name = "adam";
  c.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  m->compile(c);
  return m;
}

// The weights after two epochs on fixed data.
std::vector<Tensor> trained(Model& m) {
  const std::int64_t n = 40;
  Tensor x = Tensor::zeros(Shape{n, 6}, DType::f32), y = Tensor::zeros(Shape{n}, DType::i32);
  std::mt19937 rng(1);
  for (std::int64_t i = 0; i < n * 6; ++i) x.data<float>()[i] = static_cast<float>(rng() % 100) / 50.0f - 1.0f;
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng() % 3);
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 8;
  fo.seed = 2;
  m.fit(x, y, fo);
  return m.get_weights();
}

void expect_same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t t = 0; t < a.size(); ++t) {
    ASSERT_EQ(a[t].nbytes(), b[t].nbytes());
    EXPECT_EQ(std::memcmp(a[t].raw(), b[t].raw(), a[t].nbytes()), 0) << "weight " << t;
  }
}

TEST(Strategy, MirroredIsOneReplicaOnTheModelsDevice) {
  auto s = std::make_shared<dist::MirroredStrategy>();
  EXPECT_EQ(s->name(), "MirroredStrategy");
  EXPECT_EQ(s->num_replicas_in_sync(), 1);
  ASSERT_EQ(s->devices().size(), 1u);
  EXPECT_EQ(s->devices()[0].to_string(), "cpu:0");
  EXPECT_EQ(s->communicator(), nullptr);
  auto with = mlp(s);
  EXPECT_EQ(with->strategy(), s.get());
  EXPECT_EQ(with->num_replicas_in_sync(), 1);
  auto without = mlp(nullptr);
  EXPECT_EQ(without->strategy(), nullptr);
  EXPECT_EQ(without->num_replicas_in_sync(), 1);
  // One replica: the same training, bit for bit.
  expect_same_bits(trained(*with), trained(*without));
  // Naming the device it runs on is the same strategy.
  EXPECT_EQ(dist::MirroredStrategy({Device{}}).devices().size(), 1u);
}

TEST(Strategy, MirroredRefusesDevicesItWouldNotRun) {
  try {
    dist::MirroredStrategy({Device{DeviceType::cpu, 0}, Device{DeviceType::cuda, 0}});
    ADD_FAILURE() << "accepted two devices";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("MirroredStrategy over 2 devices (cpu:0, cuda:0)"), std::string::npos)
        << e.what();
    EXPECT_NE(e.hint().find("MultiWorkerMirroredStrategy"), std::string::npos) << e.hint();
  }
  try {
    dist::MirroredStrategy({Device{DeviceType::cuda, 1}});
    ADD_FAILURE() << "accepted cuda:1";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("MirroredStrategy on cuda:1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dist::MirroredStrategy({Device{}, Device{}}), InvalidArgument);
}

TEST(Strategy, IsChosenBeforeCompile) {
  auto m = mlp(nullptr);
  try {
    m->set_strategy(std::make_shared<dist::MirroredStrategy>());
    ADD_FAILURE() << "set_strategy after compile was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("choose the strategy before compile"), std::string::npos) << e.what();
  }
}

TEST(Strategy, MultiWorkerOverOneProcessTrainsAsOneProcess) {
  auto comm = std::shared_ptr<dist::Communicator>(dist::make_single_process_communicator());
  dist::CommunicationOptions co;
  co.bytes_per_pack = 1024;
  auto s = std::make_shared<dist::MultiWorkerMirroredStrategy>(comm, co);
  EXPECT_EQ(s->name(), "MultiWorkerMirroredStrategy");
  EXPECT_EQ(s->num_replicas_in_sync(), 1);
  EXPECT_EQ(s->replica_index(), 0);
  EXPECT_EQ(s->communicator(), comm);
  EXPECT_EQ(s->communication_options().bytes_per_pack, 1024);
  auto with = mlp(s);
  EXPECT_EQ(with->communicator(), comm.get());
  expect_same_bits(trained(*with), trained(*mlp(nullptr)));
  dist::CommunicationOptions bad;
  bad.bytes_per_pack = -1;
  EXPECT_THROW(dist::MultiWorkerMirroredStrategy(comm, bad), InvalidArgument);
  EXPECT_THROW(dist::MultiWorkerMirroredStrategy(nullptr), InvalidArgument);
  // Not under a launcher, the strategy's own communicator is the one process's.
  EXPECT_EQ(dist::MultiWorkerMirroredStrategy().num_replicas_in_sync(), 1);
}

// Model::set_communicator, the seam under the strategy, names what it makes.
TEST(Strategy, SetCommunicatorIsTheMultiWorkerStrategy) {
  auto m = std::make_unique<Sequential>("mlp");
  m->set_communicator(std::shared_ptr<dist::Communicator>(dist::make_single_process_communicator()));
  ASSERT_NE(m->strategy(), nullptr);
  EXPECT_EQ(m->strategy()->name(), "MultiWorkerMirroredStrategy");
  m->set_communicator(nullptr);
  EXPECT_EQ(m->strategy(), nullptr);
}

}  // namespace
}  // namespace nnfit
