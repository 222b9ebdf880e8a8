// model_to_onnx / export_onnx (include/nnfit/model/onnx_export.h): walks the model's layer
// graph (nested models in place) in call order, hands each call to its class's converter
// (layer_converters.h) with the layer's Keras config as the Keras writer produces it, and
// wraps the result in the graph's named inputs and outputs.
#include "nnfit/model/onnx_export.h"

#include <algorithm>
#include <limits>

#include "model/keras/codecs/codec.h"
#include "model/onnx/layer_converters.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/nested_model.h"
#include "nnfit/nn/operation.h"
#include "nnfit/nn/traced_layer.h"

#ifndef NNFIT_MODEL_VERSION
#define NNFIT_MODEL_VERSION "0.1.0"
#endif

namespace nnfit::onnx_export {
namespace {

ElemType elem_type(DType d, const std::string& input) {
  switch (d) {
    case DType::f32: return ElemType::float32;
    case DType::i32: return ElemType::int32;
    case DType::i64: return ElemType::int64;
    case DType::u8: return ElemType::uint8;
    default:
      throw Unsupported("input '" + input + "' of dtype " + std::string(dtype_name(d)) + " has no ONNX export in nnfit",
                        "declare the Input as float32 or an integer type");
  }
}

const ConverterEntry* converter_for(const std::string& cls) {
  for (const ConverterEntry& e : all_converters()) {
    if (cls == e.class_name) return &e;
  }
  return nullptr;
}

[[noreturn]] void refuse_layer(const Layer& l, const std::string& why) {
  std::string known;
  for (const ConverterEntry& e : all_converters()) known += (known.empty() ? "" : ", ") + std::string(e.class_name);
  throw Unsupported("cannot export layer '" + l.name() + "' (" + l.class_name() + ") to ONNX: " + why,
                    "the layers nnfit exports: " + known + ", and Sequential or Functional models nested in them");
}

class Walker {
 public:
  Walker(const Model& model, Emitter& emit) : model_(model), emit_(emit) {}

  // The outputs of `g` called on `inputs` (one per graph input).
  std::vector<Value> walk(const LayerGraph& g, const std::vector<Value>& inputs) {
    const std::vector<std::vector<Shape>> shapes = g.infer_shapes();
    std::vector<std::vector<Value>> values(g.nodes().size());
    for (std::size_t i = 0; i < g.nodes().size(); ++i) {
      const LayerNode& n = g.nodes()[i];
      if (n.layer == nullptr) {
        values[i] = {inputs.at(static_cast<std::size_t>(n.input_index))};
        continue;
      }
      std::vector<Value> in;
      std::vector<Shape> in_shapes;
      for (const TensorRef& r : n.inputs) {
        in.push_back(values[static_cast<std::size_t>(r.node)].at(static_cast<std::size_t>(r.index)));
        in_shapes.push_back(shapes[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
      }
      for (const TensorRef& m : n.masks) {
        if (m.node >= 0) refuse_layer(*n.layer, "a mask= argument of its call is not exported");
      }
      values[i] = call(*n.layer, std::move(in), std::move(in_shapes), shapes[i]);
    }
    std::vector<Value> out;
    for (const TensorRef& r : g.outputs()) out.push_back(values[static_cast<std::size_t>(r.node)].at(static_cast<std::size_t>(r.index)));
    return out;
  }

 private:
  std::vector<Value> call(const Layer& l, std::vector<Value> in, std::vector<Shape> in_shapes, const std::vector<Shape>& out_shapes) {
    if (const auto* nested = dynamic_cast<const NestedModel*>(&l)) return walk(nested->graph(), in);
    if (dynamic_cast<const TracedLayer*>(&l)) refuse_layer(l, "a traced Layer subclass has no ONNX form in nnfit yet");
    if (dynamic_cast<const Operation*>(&l) || dynamic_cast<const LogicalOp*>(&l)) {
      refuse_layer(l, "keras.ops operations have no ONNX form in nnfit yet");
    }
    const ConverterEntry* entry = converter_for(l.class_name());
    if (entry == nullptr) refuse_layer(l, "nnfit has no ONNX form for this layer class yet");
    std::string in_mask;
    for (const Value& v : in) {
      if (!v.mask_from.empty()) in_mask = v.mask_from;
    }
    if (entry->reads_mask && !in_mask.empty()) {
      refuse_layer(l, "the mask of '" + in_mask + "' (mask_zero=True) reaches it, and the exported graph carries no masks; "
                      "export the model with mask_zero=False or without the masked layers");
    }
    const ojson object = keras_json::write_layer_object({}, l);
    LayerCall c{l, object.at("config"), std::move(in), std::move(in_shapes), out_shapes, emit_,
                [this](const Tensor& t) { return model_.host_view(t); }};
    std::vector<Value> out = entry->convert(c);
    if (out.size() != static_cast<std::size_t>(l.num_outputs())) {
      refuse_layer(l, "its converter gave " + std::to_string(out.size()) + " outputs for the layer's " +
                          std::to_string(l.num_outputs()));
    }
    // Keras's masks: a mask the layer makes stays, else the input's flows on where the
    // layer supports masking (Keras's compute_mask) and stops where it does not.
    for (Value& v : out) {
      if (v.mask_from != l.name()) v.mask_from = l.supports_masking() ? in_mask : "";
    }
    return out;
  }

  const Model& model_;
  Emitter& emit_;
};

std::vector<io::onnx::Dim> input_dims(const InputSpec& spec, std::size_t index, const OnnxInputSpec* given) {
  std::vector<std::int64_t> dims{kUnknownDim};
  dims.insert(dims.end(), spec.shape.dims().begin(), spec.shape.dims().end());
  if (given != nullptr && !given->shape.empty()) {
    NNFIT_CHECK(given->shape.size() == dims.size(), InvalidArgument, "input_signature[", index, "] has shape of rank ",
                given->shape.size(), "; input '", spec.name, "' has rank ", dims.size(), " (with the batch axis)");
    for (std::size_t a = 0; a < dims.size(); ++a) {
      const std::int64_t d = given->shape[a];
      NNFIT_CHECK(d == kUnknownDim || d > 0, InvalidArgument, "input_signature[", index, "]: dimension ", a,
                  " must be positive or None, got ", d);
      NNFIT_CHECK(dims[a] == kUnknownDim || d == dims[a], InvalidArgument, "input_signature[", index, "]: dimension ", a,
                  " is ", d == kUnknownDim ? std::string("None") : std::to_string(d), " but input '", spec.name, "' has ",
                  dims[a]);
      dims[a] = d;
    }
  }
  std::vector<io::onnx::Dim> out;
  for (std::size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] != kUnknownDim) out.push_back(io::onnx::Dim::known(dims[a]));
    else if (a == 0) out.push_back(io::onnx::Dim::symbol("batch"));
    else out.push_back(io::onnx::Dim::symbol("dim_" + std::to_string(index) + "_" + std::to_string(a)));
  }
  return out;
}

}  // namespace
}  // namespace nnfit::onnx_export

namespace nnfit {

io::onnx::ModelFile model_to_onnx(const Model& model, const OnnxExportOptions& options) {
  NNFIT_CHECK(model.built(), InvalidArgument, "model '", model.name(), "' is not built; build, fit or predict before exporting");
  const std::int64_t ir = io::onnx::ir_version_for_opset(options.opset);
  const LayerGraph& g = model.graph();
  NNFIT_CHECK(options.input_signature.empty() || options.input_signature.size() == g.inputs().size(), InvalidArgument,
              "input_signature has ", options.input_signature.size(), " entries; model '", model.name(), "' has ",
              g.inputs().size(), " inputs");
  onnx_export::Emitter emit(options.opset);
  io::onnx::Graph& graph = emit.graph();
  graph.name = model.name();
  std::vector<onnx_export::Value> inputs;
  for (std::size_t i = 0; i < g.inputs().size(); ++i) {
    const InputSpec& spec = g.inputs()[i];
    const OnnxInputSpec* given = options.input_signature.empty() ? nullptr : &options.input_signature[i];
    io::onnx::ValueInfo v;
    v.name = given != nullptr && !given->name.empty() ? given->name : spec.name;
    v.type = onnx_export::elem_type(spec.dtype, spec.name);
    v.shape = onnx_export::input_dims(spec, i, given);
    for (const io::onnx::ValueInfo& other : graph.inputs) {
      NNFIT_CHECK(other.name != v.name, InvalidArgument, "two inputs are named '", v.name, "'; name them apart in input_signature");
    }
    emit.fresh(v.name);  // reserved: no node output takes an input's name
    inputs.push_back({v.name, spec.shape.rank() + 1, v.type, onnx_export::Layout::keras, ""});
    graph.inputs.push_back(std::move(v));
  }
  const std::vector<onnx_export::Value> outputs = onnx_export::Walker(model, emit).walk(g, inputs);
  const std::vector<Shape> out_shapes = model.output_shapes();
  const std::vector<std::string> keras_names = model.output_names();
  bool batch_known = !graph.inputs.empty();
  std::int64_t batch = -1;
  for (const io::onnx::ValueInfo& v : graph.inputs) {
    if (v.shape[0].value < 0 || (batch >= 0 && v.shape[0].value != batch)) batch_known = false;
    batch = v.shape[0].value;
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    // Keras's TensorFlow export (tf2onnx) names the outputs after the graph's Identity ops.
    const std::string name = k == 0 ? "Identity:0" : "Identity_" + std::to_string(k) + ":0";
    const onnx_export::Value v = emit.to_keras(outputs[k]);
    io::onnx::Node n;
    n.op_type = "Identity";
    n.name = emit.fresh("output_" + std::to_string(k) + "/Identity");
    n.inputs = {v.name};
    n.outputs = {name};
    graph.nodes.push_back(std::move(n));
    io::onnx::ValueInfo info;
    info.name = name;
    info.type = v.type;
    info.doc = "the output of layer '" + keras_names[k] + "'";
    info.shape.push_back(batch_known ? io::onnx::Dim::known(batch) : io::onnx::Dim::symbol("batch"));
    for (std::int64_t d : out_shapes[k].dims()) info.shape.push_back(d == kUnknownDim ? io::onnx::Dim{} : io::onnx::Dim::known(d));
    graph.outputs.push_back(std::move(info));
  }
  std::uint64_t weight_bytes = 0;
  for (const io::onnx::Initializer& t : graph.initializers) weight_bytes += t.raw.size();
  NNFIT_CHECK(weight_bytes < (std::uint64_t{1} << 31) - (std::uint64_t{1} << 24), Unsupported, "model '", model.name(),
              "' has ", weight_bytes, " bytes of weights, past the 2 GiB a single ONNX protobuf file holds; nnfit does not ",
              "write ONNX's external-data form");
  io::onnx::ModelFile file;
  file.ir_version = ir;
  file.opset = options.opset;
  file.producer_name = "nnfit";
  file.producer_version = NNFIT_MODEL_VERSION;
  file.doc = "Keras model '" + model.name() + "' (" + model.class_name() + ") in inference mode";
  file.graph = std::move(graph);
  return file;
}

OnnxExportSummary export_onnx(const Model& model, const std::string& path, const OnnxExportOptions& options) {
  const io::onnx::ModelFile file = model_to_onnx(model, options);
  OnnxExportSummary s;
  for (const io::onnx::ValueInfo& v : file.graph.inputs) s.input_names.push_back(v.name);
  for (const io::onnx::ValueInfo& v : file.graph.outputs) s.output_names.push_back(v.name);
  s.nodes = file.graph.nodes.size();
  s.initializers = file.graph.initializers.size();
  s.bytes = io::onnx::write_model_file(path, file);
  return s;
}

}  // namespace nnfit
