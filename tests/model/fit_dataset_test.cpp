// fit and evaluate fed by a data::Dataset: the same batches give the same training as
// the in-memory path, parallel pipelines stay deterministic, input wait is measured, the
// partial last batch is planned when met, and every element that does not fit the model
// is a clear error naming the batch.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>
#include <random>
#include <thread>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"
#include "small_models.h"

namespace nnfit {
namespace {

using test::small_mlp;

std::pair<Tensor, Tensor> data(std::int64_t n, std::uint32_t seed = 1) { return test::small_data(n, seed); }

double get(const Logs& logs, const std::string& key) { return log_value(logs, key, -1.0); }

TEST(FitDataset, SameBatchesTrainLikeTheInMemoryPath) {
  auto [x, y] = data(100);
  FitOptions fo;
  fo.epochs = 3;
  fo.batch_size = 32;  // 3 full batches and one of 4
  fo.shuffle = false;
  auto a = small_mlp();
  History ha = a->fit(x, y, fo);
  auto b = small_mlp();
  History hb = b->fit(data::Dataset::from_tensor_slices({x, y}).batch(32), fo);
  ASSERT_EQ(ha.epochs.size(), 3u);
  ASSERT_EQ(hb.epochs.size(), 3u);
  for (std::size_t e = 0; e < 3; ++e) {
    EXPECT_NEAR(get(ha.epochs[e], "loss"), get(hb.epochs[e], "loss"), 1e-6) << e;
    EXPECT_NEAR(get(ha.epochs[e], "accuracy"), get(hb.epochs[e], "accuracy"), 1e-9) << e;
  }
  // The same weights evaluate the same from tensors and from a dataset.
  auto [vx, vy] = data(50, 7);
  Logs ea = b->evaluate(vx, vy, 16);
  Logs eb = b->evaluate(data::Dataset::from_tensor_slices({vx, vy}).batch(16));
  EXPECT_NEAR(get(ea, "loss"), get(eb, "loss"), 1e-6);
  EXPECT_NEAR(get(ea, "accuracy"), get(eb, "accuracy"), 1e-9);
}

TEST(FitDataset, ParallelDeterministicPipelineRepeatsExactlyAndLearns) {
  const auto train = data(512), val = data(256, 9);  // pairs, not bindings: the lambda captures them (clang 14)
  const Tensor &x = train.first, &y = train.second, &vx = val.first, &vy = val.second;
  auto pipeline = [&] {
    return data::Dataset::from_tensor_slices({x, y})
        .map([](data::Element e) { return e; }, data::MapOptions{2, true})
        .shuffle(512, data::ShuffleOptions{42})
        .batch(32)
        .prefetch(data::kAutotune);
  };
  FitOptions fo;
  fo.epochs = 8;
  fo.batch_size = 32;
  fo.validation_dataset = data::Dataset::from_tensor_slices({vx, vy}).batch(64);
  auto a = small_mlp();
  History ha = a->fit(pipeline(), fo);
  auto b = small_mlp();
  History hb = b->fit(pipeline(), fo);
  for (std::size_t e = 0; e < ha.epochs.size(); ++e) {
    EXPECT_EQ(get(ha.epochs[e], "loss"), get(hb.epochs[e], "loss")) << e;
    EXPECT_EQ(get(ha.epochs[e], "val_accuracy"), get(hb.epochs[e], "val_accuracy")) << e;
  }
  // Reshuffled every epoch, and it learns: the labels are a simple function of x.
  EXPECT_GT(get(ha.epochs.back(), "val_accuracy"), 0.6);  // chance is about 0.36
  EXPECT_LT(get(ha.epochs.back(), "loss"), get(ha.epochs.front(), "loss"));
}

TEST(FitDataset, ReportsInputWaitOfASlowPipeline) {
  auto [x, y] = data(64);
  FitOptions fo;
  fo.epochs = 1;
  fo.batch_size = 16;
  auto fast = small_mlp()->fit(data::Dataset::from_tensor_slices({x, y}).batch(16), fo);
  const double fast_wait = get(fast.epochs[0], "input_wait_fraction");
  EXPECT_GE(fast_wait, 0.0);
  EXPECT_LE(fast_wait, 1.0);
  auto slow_ds = data::Dataset::from_tensor_slices({x, y}).batch(16).map([](data::Element e) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return e;
  });
  auto slow = small_mlp()->fit(slow_ds, fo);
  // Four batches of 30 ms each against a few ms of compute (the first steps are cold):
  // all 120 ms count as waiting, and they dominate the epoch.
  const double wait = get(slow.epochs[0], "input_wait_fraction");
  EXPECT_GT(wait, 0.5);
  EXPECT_GE(wait * get(slow.epochs[0], "train_seconds"), 0.12);
  EXPECT_GT(get(slow.epochs[0], "memory_peak_bytes"), 0);
}

TEST(FitDataset, TheNextEpochsPipelineStartsBeforeValidation) {
  // Training batches record how many validation batches had been made when they were; the
  // validation pipeline takes 5 ms a batch. The first batch of epochs 2 and 3 must be
  // made before that epoch's predecessor finished validating (at 4 and 8 batches).
  auto [x, y] = data(64);
  auto [vx, vy] = data(64, 9);
  auto validated = std::make_shared<std::atomic<int>>(0);
  auto seen_at_first = std::make_shared<std::vector<int>>();
  auto batch_in_epoch = std::make_shared<int>(0);
  FitOptions fo;
  fo.epochs = 3;
  fo.batch_size = 16;
  fo.validation_dataset = data::Dataset::from_tensor_slices({vx, vy}).batch(16).map([validated](data::Element e) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ++*validated;
    return e;
  });
  // Runs on the prefetch thread; batches of one pass are made in order, 4 per epoch.
  const data::Dataset train = data::Dataset::from_tensor_slices({x, y})
                                  .batch(16)
                                  .map([validated, seen_at_first, batch_in_epoch](data::Element e) {
                                    if ((*batch_in_epoch)++ % 4 == 0) seen_at_first->push_back(validated->load());
                                    return e;
                                  })
                                  .prefetch(2);
  small_mlp()->fit(train, fo);
  ASSERT_EQ(seen_at_first->size(), 3u);
  EXPECT_EQ((*seen_at_first)[0], 0);
  EXPECT_LT((*seen_at_first)[1], 4) << "epoch 2's first batch waited for epoch 1's validation";
  EXPECT_LT((*seen_at_first)[2], 8) << "epoch 3's first batch waited for epoch 2's validation";
  EXPECT_EQ(validated->load(), 12);
}

TEST(FitDataset, PlansThePartialBatchWhenItArrivesAndKeepsThePeakExact) {
  auto [x, y] = data(70);
  auto m = small_mlp();
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 32;
  History h = m->fit(data::Dataset::from_tensor_slices({x, y}).batch(32), fo);
  EXPECT_NEAR(get(h.epochs[0], "samples_per_s") * get(h.epochs[0], "train_seconds"), 70.0, 1e-6)
      << "every sample trained once per epoch";
  EXPECT_EQ(m->memory_stats().peak_bytes, m->planned_peak_bytes());
}

// The first layer's kernel, for comparing two runs' training.
std::vector<float> kernel_of(Sequential& m) {
  const Tensor& k = m.layers()[0]->weights()[0].value;
  return std::vector<float>(k.data<float>(), k.data<float>() + k.numel());
}

// Keras's sample_weight and class_weight: the same weights from tensors and from a
// dataset's third component train the same; class weights are the sample weights of the
// samples' classes; zero weights leave the loss 0 and the weights as they were.
TEST(FitWeights, SampleAndClassWeightsTrainAlikeOnEveryPath) {
  auto [x, y] = data(40);
  Tensor w = Tensor::zeros(Shape{40});
  Tensor by_class = Tensor::zeros(Shape{40});
  std::mt19937 rng(5);
  const double class_weight[] = {2.0, 0.5, 1.0};  // class 2 unlisted: 1
  for (std::int64_t i = 0; i < 40; ++i) {
    w.data<float>()[i] = static_cast<float>(rng() % 100) / 50.0f;
    by_class.data<float>()[i] = static_cast<float>(class_weight[y.data<std::uint8_t>()[i]]);
  }
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 16;
  fo.shuffle = false;
  FitOptions weighted = fo;
  weighted.sample_weight = w;
  auto a = small_mlp();
  History ha = a->fit(x, y, weighted);
  auto b = small_mlp();
  History hb = b->fit(data::Dataset::from_tensor_slices({x, y, w}).batch(16), fo);
  auto plain = small_mlp();
  History hp = plain->fit(x, y, fo);
  EXPECT_NEAR(get(ha.epochs[1], "loss"), get(hb.epochs[1], "loss"), 1e-6);
  EXPECT_EQ(kernel_of(*a), kernel_of(*b));
  EXPECT_NE(kernel_of(*a), kernel_of(*plain));  // the weights changed the training
  EXPECT_GT(std::abs(get(ha.epochs[0], "loss") - get(hp.epochs[0], "loss")), 1e-4);

  FitOptions classes = fo;
  classes.class_weight = {{0, 2.0}, {1, 0.5}};
  auto c = small_mlp();
  History hc = c->fit(x, y, classes);
  FitOptions as_samples = fo;
  as_samples.sample_weight = by_class;
  auto d = small_mlp();
  History hd = d->fit(x, y, as_samples);
  EXPECT_NEAR(get(hc.epochs[1], "loss"), get(hd.epochs[1], "loss"), 1e-6);
  EXPECT_EQ(kernel_of(*c), kernel_of(*d));

  // After a weighted fit the model trains unweighted again (its programs re-planned).
  auto e = small_mlp();
  e->fit(x, y, weighted);
  auto f = small_mlp();
  f->fit(x, y, weighted);
  e->fit(x, y, fo);
  f->fit(data::Dataset::from_tensor_slices({x, y}).batch(16), fo);
  EXPECT_EQ(kernel_of(*e), kernel_of(*f));

  FitOptions zero = fo;
  zero.epochs = 1;
  zero.sample_weight = Tensor::zeros(Shape{40});
  auto z = small_mlp();
  const std::vector<float> before = kernel_of(*z);
  History hz = z->fit(x, y, zero);
  EXPECT_EQ(get(hz.epochs[0], "loss"), 0.0);
  EXPECT_EQ(kernel_of(*z), before);  // Adam's update of a zero gradient is zero
}

// uint8 and integer inputs reach the model as stored and are cast as Keras casts them: a
// pipeline of uint8 values trains exactly as the same values in float32.
TEST(FitDataset, IntegerInputsTrainAsTheirFloatValues) {
  auto [x, y] = data(32);
  Tensor xu8 = Tensor::zeros(Shape{32, 8}, DType::u8);
  Tensor xf = Tensor::zeros(Shape{32, 8});
  Tensor xi64 = Tensor::zeros(Shape{32, 8}, DType::i64);
  for (std::int64_t i = 0; i < 32 * 8; ++i) {
    const auto v = static_cast<std::uint8_t>(x.data<float>()[i] * 255.0f);
    xu8.data<std::uint8_t>()[i] = v;
    xf.data<float>()[i] = v;
    xi64.data<std::int64_t>()[i] = v;
  }
  FitOptions fo;
  fo.epochs = 2;
  fo.shuffle = false;
  auto a = small_mlp();
  History ha = a->fit(data::Dataset::from_tensor_slices({xu8, y}).batch(8), fo);
  auto b = small_mlp();
  History hb = b->fit(data::Dataset::from_tensor_slices({xf, y}).batch(8), fo);
  auto c = small_mlp();
  History hc = c->fit(data::Dataset::from_tensor_slices({xi64, y}).batch(8), fo);
  EXPECT_EQ(get(ha.epochs[1], "loss"), get(hb.epochs[1], "loss"));
  EXPECT_EQ(kernel_of(*a), kernel_of(*b));
  EXPECT_EQ(kernel_of(*c), kernel_of(*b));
  // Evaluation takes them too.
  EXPECT_EQ(get(a->evaluate(data::Dataset::from_tensor_slices({xu8, y}).batch(8)), "loss"),
            get(a->evaluate(data::Dataset::from_tensor_slices({xf, y}).batch(8)), "loss"));
}

TEST(FitWeightsBadInput, WeightsThatDoNotFitAreNamed) {
  const auto xy = data(8);  // a pair, not a binding: the lambdas capture x and y (clang 14)
  const Tensor &x = xy.first, &y = xy.second;
  auto m = small_mlp();
  auto expect_error = [&](const std::function<void()>& f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  FitOptions fo;
  fo.batch_size = 4;
  FitOptions short_weights = fo;
  short_weights.sample_weight = Tensor::zeros(Shape{5});
  expect_error([&] { m->fit(x, y, short_weights); }, "sample_weight must be float32 with one weight per sample (8)");
  FitOptions both = fo;
  both.sample_weight = Tensor::zeros(Shape{8});
  both.class_weight = {{0, 1.0}};
  expect_error([&] { m->fit(x, y, both); }, "give class_weight or sample weights, not both");
  FitOptions negative = fo;
  negative.class_weight = {{1, -2.0}};
  expect_error([&] { m->fit(x, y, negative); }, "class 1 has weight -2");
  Tensor wi = Tensor::zeros(Shape{8}, DType::i32);
  expect_error([&] { m->fit(data::Dataset::from_tensor_slices({x, y, wi}).batch(4), fo); },
               "training batch 1: sample weights must be float32, one per sample (4), got int32");
  expect_error([&] { m->fit(data::Dataset::from_tensor_slices({x, y}).batch(4), short_weights); },
               "a dataset brings its weights as a third component");
}

TEST(FitDatasetBadInput, ElementsThatDoNotFitTheModel) {
  const auto xy = data(8);  // a pair, not a binding: the lambdas capture x and y (clang 14)
  const Tensor &x = xy.first, &y = xy.second;
  FitOptions fo;
  fo.batch_size = 4;
  auto m = small_mlp();
  auto expect_error = [&](const data::Dataset& ds, const std::string& needle) {
    try {
      m->fit(ds, fo);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  Tensor xf16 = Tensor::zeros(Shape{8, 8}, DType::f16);
  expect_error(data::Dataset::from_tensor_slices({xf16, y}).batch(4), "inputs are float16");
  expect_error(data::Dataset::from_tensor_slices({x, y}), "single samples; batch the dataset");
  expect_error(data::Dataset::from_tensor_slices({x}).batch(4), "need (x, y)");
  expect_error(data::Dataset::from_tensor_slices({x, y}).batch(4).repeat(), "infinite");
  expect_error(data::Dataset::from_tensor_slices({x, y}).take(0).batch(4), "empty");
  Tensor x5 = Tensor::zeros(Shape{8, 5}, DType::f32);
  expect_error(data::Dataset::from_tensor_slices({x5, y}).batch(4), "training batch 1");
  Tensor y2 = Tensor::zeros(Shape{8, 2}, DType::f32);
  expect_error(data::Dataset::from_tensor_slices({x, y2}).batch(4), "sparse losses want one class id");
}

TEST(FitDatasetBadInput, APipelineErrorReachesTheCaller) {
  const auto xy = data(8);  // a pair, not a binding: the lambdas capture x and y (clang 14)
  const Tensor &x = xy.first, &y = xy.second;
  auto ds = data::Dataset::from_tensor_slices({x, y}).batch(4).map(
      [](data::Element) -> data::Element { throw DataError("records.tfrecord", 120, "bad CRC", ""); },
      data::MapOptions{2, true});
  FitOptions fo;
  fo.batch_size = 4;
  auto m = small_mlp();
  try {
    m->fit(ds.prefetch(2), fo);
    ADD_FAILURE() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("records.tfrecord"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nnfit
