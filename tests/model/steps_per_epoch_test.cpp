// FitOptions::steps_per_epoch (Note [Steps per epoch]): an epoch of N batches, the data's
// pass going on into the next epoch. Each case trains a second model on the same batches
// in one plain epoch (the pass written out with repeat/take) and expects the same weights
// bit for bit: so the epochs read consecutive batches, and a pass that runs out inside an
// epoch ends that epoch and is begun anew in the next.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"
#include "small_models.h"

namespace nnfit {
namespace {

std::unique_ptr<Sequential> small_mlp() { return test::small_mlp(); }

std::pair<Tensor, Tensor> data(std::int64_t n) { return test::small_data(n, 5, /*learnable=*/false); }

void expect_same_weights(const Model& a, const Model& b) {
  const std::vector<Tensor> wa = a.get_weights(), wb = b.get_weights();
  ASSERT_EQ(wa.size(), wb.size());
  for (std::size_t i = 0; i < wa.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(wa[i].raw(), wb[i].raw(), wa[i].nbytes())) << "weight " << i;
  }
}

bool has_note(const History& h, const std::string& needle) {
  for (const std::string& n : h.notes) {
    if (n.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(StepsPerEpoch, AnInfiniteDatasetTrainsConsecutiveBatches) {
  auto [x, y] = data(20);
  const data::Dataset ds = data::Dataset::from_tensor_slices({x, y}).batch(4);  // 5 batches a pass
  FitOptions fo;
  fo.epochs = 3;
  fo.steps_per_epoch = 7;
  auto a = small_mlp();
  const History h = a->fit(ds.repeat(), fo);
  EXPECT_EQ(h.epochs.size(), 3u);
  EXPECT_EQ(a->iterations(), 21);
  EXPECT_TRUE(h.notes.empty());
  FitOptions one;
  auto b = small_mlp();
  b->fit(ds.repeat(5).take(21), one);
  EXPECT_EQ(b->iterations(), 21);
  expect_same_weights(*a, *b);
}

TEST(StepsPerEpoch, APassThatRunsOutEndsTheEpochAndTheNextBeginsAnew) {
  auto [x, y] = data(20);
  const data::Dataset ds = data::Dataset::from_tensor_slices({x, y}).batch(4);  // 5 batches
  FitOptions fo;
  fo.epochs = 3;
  fo.steps_per_epoch = 3;  // epoch 1: batches 1-3; epoch 2: 4-5 (ran out); epoch 3: 1-3
  auto a = small_mlp();
  const History h = a->fit(ds, fo);
  EXPECT_EQ(a->iterations(), 8);
  EXPECT_TRUE(has_note(h, "ran out after 2 of epoch 2's steps_per_epoch 3")) << (h.notes.empty() ? "" : h.notes[0]);
  auto b = small_mlp();
  b->fit(ds.repeat(2).take(8), FitOptions{});
  expect_same_weights(*a, *b);
}

TEST(StepsPerEpoch, APassUsedUpAtAnEpochsEndIsBegunAnewWithoutANote) {
  auto [x, y] = data(24);
  const data::Dataset known = data::Dataset::from_tensor_slices({x, y}).batch(4);  // 6 batches
  // The same batches through a filter: a pass of unknown length.
  const data::Dataset unknown = known.filter([](const data::Element&) { return true; });
  FitOptions fo;
  fo.epochs = 4;
  fo.steps_per_epoch = 3;
  for (const data::Dataset* ds : {&known, &unknown}) {
    auto a = small_mlp();
    const History h = a->fit(*ds, fo);
    EXPECT_EQ(a->iterations(), 12);
    EXPECT_TRUE(h.notes.empty()) << h.notes[0];
    auto b = small_mlp();
    b->fit(known.repeat(2), FitOptions{});
    expect_same_weights(*a, *b);
  }
}

TEST(StepsPerEpoch, TensorsGoOnThroughTheirPassAcrossEpochs) {
  auto [x, y] = data(40);
  FitOptions fo;
  fo.batch_size = 8;  // 5 batches
  fo.shuffle = false;
  fo.epochs = 3;
  fo.steps_per_epoch = 2;  // 1-2 | 3-4 | 5 (ran out)
  auto a = small_mlp();
  const History h = a->fit(x, y, fo);
  EXPECT_EQ(a->iterations(), 5);
  EXPECT_EQ(h.epochs.size(), 3u);
  EXPECT_TRUE(has_note(h, "ran out after 1 of epoch 3's"));
  FitOptions plain;
  plain.batch_size = 8;
  plain.shuffle = false;
  auto b = small_mlp();
  b->fit(x, y, plain);
  expect_same_weights(*a, *b);
}

TEST(StepsPerEpoch, ANegativeCountIsRefused) {
  auto [x, y] = data(8);
  FitOptions fo;
  fo.steps_per_epoch = -1;
  auto m = small_mlp();
  EXPECT_THROW(m->fit(x, y, fo), InvalidArgument);
}

}  // namespace
}  // namespace nnfit
