// Shapes known only per batch (Note [Shapes known per batch]): a model whose input has a
// None dimension infers and builds with it unknown, plans one program per batch's input
// shapes (the engine's program cache, counted), computes exactly what a model built for
// that fixed shape computes, and refuses, naming the layer, what it cannot take.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/core/error.h"
#include "nnfit/data/dataset.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/conv_layers.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/recurrent_layers.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit {
namespace {

// (steps, 3) -> Conv1D(4, 2, relu) -> LSTM(5, return_sequences) -> GlobalAveragePooling1D
// -> Dense(2), mean squared error, SGD: `steps` may be kUnknownDim.
std::unique_ptr<Sequential> sequence_model(std::int64_t steps) {
  auto m = std::make_unique<Sequential>("seq");
  m->set_input_shape(Shape{steps, 3});
  m->set_seed(7);
  Conv1DOptions conv;
  conv.filters = 4;
  conv.kernel_size = 2;
  conv.activation = "relu";
  m->add(std::make_unique<Conv1D>("conv1d", conv));
  RecurrentOptions lstm;
  lstm.units = 5;
  lstm.return_sequences = true;
  m->add(std::make_unique<LSTM>("lstm", lstm));
  GlobalPoolingOptions pool;
  pool.rank = 1;
  m->add(std::make_unique<GlobalPooling>("global_average_pooling1d", pool));
  m->add(std::make_unique<Dense>("dense", DenseOptions{2}));
  CompileOptions c;
  c.optimizer.name = "sgd";
  c.loss = Loss::from_name("mean_squared_error");
  m->compile(c);
  return m;
}

// Deterministic inputs [n, steps, 3] and targets [n, 2].
Tensor inputs(std::int64_t n, std::int64_t steps) {
  Tensor x = Tensor::zeros(Shape{n, steps, 3});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 37 % 101) - 50) / 50.0f;
  return x;
}
Tensor targets(std::int64_t n) {
  Tensor y = Tensor::zeros(Shape{n, 2});
  for (std::int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = static_cast<float>(i % 3) - 1.0f;
  return y;
}

std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

TEST(ShapesPerBatch, InfersUnknownDimensionsAndBuildsFromTheKnownOnes) {
  auto m = sequence_model(kUnknownDim);
  ASSERT_EQ(m->input_shapes().size(), 1u);
  EXPECT_EQ(m->input_shapes()[0], (Shape{kUnknownDim, 3}));
  EXPECT_EQ(m->input_shapes()[0].to_string(), "(None, 3)");
  EXPECT_EQ(m->output_shapes()[0], (Shape{2}));
  // The weights are those of the fixed-shape model: none depends on the steps.
  auto fixed = sequence_model(6);
  EXPECT_EQ(m->count_params(), fixed->count_params());
  EXPECT_EQ(m->output_shapes_for({Shape{9, 3}})[0], (Shape{2}));
}

TEST(ShapesPerBatch, PlansOneProgramPerInputShapeAndCountsHitsAndMisses) {
  auto m = sequence_model(kUnknownDim);
  FitOptions o;
  o.batch_size = 8;
  o.epochs = 1;
  o.shuffle = false;
  m->fit(inputs(16, 7), targets(16), o);
  ProgramCacheStats st = m->program_cache_stats();
  EXPECT_EQ(st.input_shapes, 1);
  EXPECT_EQ(st.misses, 1);  // planned before the first step
  EXPECT_EQ(st.hits, 2);    // the two batches
  InferenceOptions p;
  p.batch_size = 5;
  EXPECT_EQ(m->predict(inputs(5, 4), p).shape(), (Shape{5, 2}));
  EXPECT_EQ(m->predict(inputs(5, 9), p).shape(), (Shape{5, 2}));
  EXPECT_EQ(m->predict(inputs(5, 9), p).shape(), (Shape{5, 2}));
  st = m->program_cache_stats();
  EXPECT_EQ(st.input_shapes, 3);  // steps 7, 4 and 9
  EXPECT_EQ(st.misses, 3);
  EXPECT_EQ(st.hits, 3);
  EXPECT_GT(st.arena_bytes, 0);
  // A longer sequence needs a larger arena: planned per shape.
  EXPECT_GT(m->plan_memory(8, {Shape{40, 3}}).arena_bytes, m->plan_memory(8, {Shape{5, 3}}).arena_bytes);
}

TEST(ShapesPerBatch, KeepsAtMostTheCachesBoundOfPrograms) {
  // Note [A bounded program cache]: 80 lengths plan 80 programs; past 64 the least recently
  // used go, and a length that comes back is planned again with the same result.
  auto m = sequence_model(kUnknownDim);
  InferenceOptions p;
  p.batch_size = 2;
  const std::vector<float> first = values(m->predict(inputs(2, 2), p));
  for (std::int64_t steps = 3; steps < 82; ++steps) m->predict(inputs(2, steps), p);
  ProgramCacheStats st = m->program_cache_stats();
  EXPECT_EQ(st.programs, kMaxCachedPrograms);
  EXPECT_EQ(st.evicted, 80 - kMaxCachedPrograms);
  EXPECT_EQ(st.misses, 80);
  // The newest are kept, the oldest (2 steps) went.
  const std::int64_t misses = st.misses;
  m->predict(inputs(2, 81), p);
  EXPECT_EQ(m->program_cache_stats().misses, misses);
  EXPECT_EQ(values(m->predict(inputs(2, 2), p)), first);
  EXPECT_EQ(m->program_cache_stats().misses, misses + 1);
  EXPECT_EQ(m->program_cache_stats().programs, kMaxCachedPrograms);
}

TEST(ShapesPerBatch, ComputesWhatTheFixedShapeModelComputes) {
  auto dynamic = sequence_model(kUnknownDim);
  auto fixed = sequence_model(6);
  fixed->set_weights(dynamic->get_weights());
  InferenceOptions p;
  p.batch_size = 4;
  EXPECT_EQ(values(dynamic->predict(inputs(4, 6), p)), values(fixed->predict(inputs(4, 6), p)));
  FitOptions o;
  o.batch_size = 4;
  o.epochs = 2;
  o.shuffle = false;
  const History hd = dynamic->fit(inputs(12, 6), targets(12), o);
  const History hf = fixed->fit(inputs(12, 6), targets(12), o);
  EXPECT_EQ(log_value(hd.epochs.back(), "loss"), log_value(hf.epochs.back(), "loss"));
  const std::vector<Tensor> wd = dynamic->get_weights(), wf = fixed->get_weights();
  ASSERT_EQ(wd.size(), wf.size());
  for (std::size_t i = 0; i < wd.size(); ++i) EXPECT_EQ(values(wd[i]), values(wf[i])) << "weight " << i;
}

TEST(ShapesPerBatch, TrainsOnPaddedBatchesOfEachLength) {
  auto m = sequence_model(kUnknownDim);
  // Sequences of 3, 5 and 8 steps, two of each, padded per batch of 2: three shapes.
  const std::vector<std::int64_t> lengths{3, 3, 5, 5, 8, 8};
  data::ElementSpec spec{{DType::f32, Shape{-1, 3}}, {DType::f32, Shape{2}}};
  data::Dataset ds = data::Dataset::from_generator(
      [lengths] {
        auto i = std::make_shared<std::size_t>(0);
        return [lengths, i]() -> std::optional<data::Element> {
          if (*i == lengths.size()) return std::nullopt;
          const std::int64_t t = lengths[(*i)++];
          return data::Element{inputs(1, t).reshape(Shape{t, 3}), targets(1).reshape(Shape{2})};
        };
      },
      spec, static_cast<std::int64_t>(lengths.size()));
  FitOptions o;
  o.batch_size = 2;
  o.epochs = 2;
  const History h = m->fit(ds.padded_batch(2), o);
  ASSERT_EQ(h.epochs.size(), 2u);
  const ProgramCacheStats st = m->program_cache_stats();
  EXPECT_EQ(st.input_shapes, 3);
  EXPECT_EQ(st.misses, 3);  // each length's first batch; nothing planned ahead (the spec's steps are unknown)
  EXPECT_EQ(st.hits, 3);    // the second epoch's
}

TEST(ShapesPerBatch, RefusesWhatALayerCannotTakeNamingIt) {
  // A layer that has not opted in (Conv3D) is refused by name.
  auto m = std::make_unique<Sequential>("volumes");
  m->set_input_shape(Shape{kUnknownDim, 4, 4, 3});
  Conv3DOptions conv;
  conv.filters = 2;
  m->add(std::make_unique<Conv3D>("conv3d", conv));
  try {
    m->build();
    FAIL() << "built";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("'conv3d' (Conv3D)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(None, 4, 4, 3)"), std::string::npos) << e.what();
  }
  // Flatten gives (None), as Keras's; a Dense after it would need that size for its kernel.
  auto f = std::make_unique<Sequential>("flat");
  f->set_input_shape(Shape{kUnknownDim, 3});
  f->add(std::make_unique<Flatten>("flatten"));
  f->add(std::make_unique<Dense>("dense", DenseOptions{2}));
  try {
    f->build();
    FAIL() << "built";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'dense' (Dense)"), std::string::npos) << e.what();
  }
  // Dense on an unknown feature axis: its kernel would need it, as Keras says.
  auto d = std::make_unique<Sequential>("dense_on_none");
  d->set_input_shape(Shape{4, kUnknownDim});
  d->add(std::make_unique<Dense>("dense", DenseOptions{2}));
  try {
    d->build();
    FAIL() << "built";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'dense' (Dense)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("known only per batch"), std::string::npos) << e.what();
  }
  // The memory plan of a model with unknown dimensions needs a shape to plan for.
  auto s = sequence_model(kUnknownDim);
  EXPECT_THROW(s->plan_memory(8), InvalidArgument);
  EXPECT_GT(s->plan_memory(8, {Shape{10, 3}}).peak_bytes, 0);
  EXPECT_THROW(s->plan_memory(8, {Shape{10, 4}}), InvalidArgument);  // not this input's shape
}

}  // namespace
}  // namespace nnfit
