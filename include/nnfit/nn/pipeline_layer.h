// PipelineLayer: Keras's keras.layers.Pipeline, a layer that applies its layers one after
// the other (a preprocessing or augmentation chain: Rescaling, Normalization, RandomFlip,
// ...), each on the previous one's output and mask, in the model's mode. Its weights are its
// layers' own, grouped in files as Keras groups them (the reader names the groups).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nnfit/nn/layer.h"

namespace nnfit {

class PipelineLayer final : public Layer {
 public:
  // `groups[i]`: the file group of layer i inside the Pipeline's own (Keras's
  // "layers/<class in snake case>", numbered from _1 when a class repeats).
  // requires: at least one layer, and one group per layer.
  PipelineLayer(std::string name, std::vector<std::unique_ptr<Layer>> layers, std::vector<std::string> groups);
  std::string class_name() const override { return "Pipeline"; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  bool supports_unknown_dims() const override;  // when every layer does
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;
  void attach_weight_options() override;
  void set_trainable(bool trainable) override;
  std::vector<Weight*> all_weights() override;
  std::vector<Weight*> saved_weights() override;
  std::vector<WeightGroup> saved_weight_groups() override;

 private:
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<std::string> groups_;
};

}  // namespace nnfit
