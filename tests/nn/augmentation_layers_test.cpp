// The augmentation layers (nn/layers/random_*.cpp): in training each emits its op with
// the attributes Keras's settings mean (ranges derived as Keras derives them, a seed that
// differs between layers), at inference it emits nothing; bad settings given through the
// C++ API are refused naming the layer, the key and the value.
#include <gtest/gtest.h>

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

// Calls `layer` on an [2, 6, 8, 3] input; returns the graph and the output value id.
std::pair<int, int> call(Layer& layer, Graph& g, bool training) {
  const int x = g.add_input("x", {Shape{2, 6, 8, 3}, DType::f32});
  GraphBuilder b(g, training);
  return {x, layer.call(b, x)};
}

const Node& producer(const Graph& g, int v) { return g.node(g.value(v).producer); }

TEST(RandomAugmentLayers, EmitTheirOpInTrainingOnly) {
  RandomFlip flip("flip", {});
  RandomAffineOptions zoom_options;
  zoom_options.height_factor = {0.3, -0.2};
  RandomAffine zoom("zoom", RandomAffineKind::zoom, zoom_options);
  RandomAffineOptions rotation_options;
  rotation_options.height_factor = {0.25};
  rotation_options.fill_mode = "constant";
  rotation_options.fill_value = 2.0;
  RandomAffine rotation("rotation", RandomAffineKind::rotation, rotation_options);
  RandomContrastOptions contrast_options;
  contrast_options.upper = 0.4;
  RandomContrast contrast("contrast", contrast_options);
  for (Layer* l : std::initializer_list<Layer*>{&flip, &zoom, &rotation, &contrast}) {
    Graph g;
    const auto [x, y] = call(*l, g, false);
    EXPECT_EQ(x, y) << l->name() << " is not the identity at inference";
  }
  Graph g;
  const Node z = producer(g, call(zoom, g, true).second);  // a copy: later calls add nodes
  EXPECT_EQ(z.op, "random_affine");
  EXPECT_EQ(z.attrs.s("kind"), "zoom");
  EXPECT_EQ(z.attrs.f("height_lower"), -0.2);  // the pair sorted, as Keras sorts it
  EXPECT_EQ(z.attrs.f("height_upper"), 0.3);
  EXPECT_EQ(z.attrs.i("same_zoom"), 1);  // width_factor null: the height's zoom
  const Node r = producer(g, call(rotation, g, true).second);
  EXPECT_EQ(r.attrs.f("height_lower"), -0.25);
  EXPECT_EQ(r.attrs.s("fill_mode"), "constant");
  EXPECT_EQ(r.attrs.f("fill_value"), 2.0);
  EXPECT_NE(r.attrs.i("seed"), z.attrs.i("seed")) << "two layers draw the same";
  const Node c = producer(g, call(contrast, g, true).second);
  EXPECT_EQ(c.op, "random_contrast");
  EXPECT_EQ(c.attrs.f("factor_lower"), 1.0);  // factor 0.4 is Keras's (0, 0.4)
  EXPECT_DOUBLE_EQ(c.attrs.f("factor_upper"), 1.4);
  EXPECT_EQ(c.attrs.f("value_upper"), 255.0);
  EXPECT_EQ(producer(g, call(flip, g, true).second).attrs.s("mode"), "horizontal_and_vertical");
}

std::string message(void (*f)()) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

TEST(RandomAugmentLayers, BadSettingsNameLayerKeyAndValue) {
  EXPECT_NE(message([] { RandomFlip("f", {"sideways"}); }).find("f: mode \"sideways\" is not one of"), std::string::npos);
  EXPECT_NE(message([] {
              RandomAffineOptions o;
              o.height_factor = {0.1};
              RandomAffine("t", RandomAffineKind::translation, o);
            }).find("t: width_factor must be a number or a list of two numbers"),
            std::string::npos);
  EXPECT_NE(message([] {
              RandomAffineOptions o;
              o.height_factor = {0.1};
              o.fill_mode = "mirror";
              RandomAffine("z", RandomAffineKind::zoom, o);
            }).find("z: fill_mode \"mirror\" is not one of reflect, wrap, constant, nearest"),
            std::string::npos);
  EXPECT_NE(message([] {
              RandomAffineOptions o;
              o.height_factor = {0.1, 1.2};
              RandomAffine("t", RandomAffineKind::translation, o);
            }).find("t: height_factor = [0.1, 1.2] is outside [-1, 1]"),
            std::string::npos);
  EXPECT_NE(message([] {
              RandomContrastOptions o;
              o.value_min = 1.0;
              o.value_max = 0.0;
              RandomContrast("c", o);
            }).find("c: value_range (1, 0) must be (lower, upper)"),
            std::string::npos);
}

}  // namespace
}  // namespace nnfit
