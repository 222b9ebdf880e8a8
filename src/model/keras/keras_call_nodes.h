// Private to src/model: the call nodes of a Functional config (Keras 3's {"args",
// "kwargs"} and Keras 2's lists): tensor references, keyword tensors and flags, masks, and
// Keras operations' arguments (Note [Keras operations]), read for keras_model_config.cpp.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "model/keras/keras_json.h"
#include "nnfit/nn/layer.h"

namespace nnfit::keras_json {

using KerasHistory = std::tuple<std::string, std::int64_t, std::int64_t>;

// One call of a layer: the tensors passed positionally, and Keras 3's keyword arguments
// (tensors by name, booleans as flags).
struct CallNode {
  std::vector<KerasHistory> refs;
  std::vector<std::pair<std::string, KerasHistory>> keyword_refs;
  std::vector<std::pair<std::string, bool>> flags;
  std::vector<double> constants;
  std::vector<std::optional<KerasHistory>> masks;  // Keras's mask= argument: one tensor, or a list with nulls
  std::vector<OperationArg> operation_args;    // an operation's call (Note [Keras operations])
  std::string operation_kwargs;
  std::map<std::string, double> operation_kwarg_numbers;
  std::string path;

  CallArguments arguments() const {
    CallArguments a;
    a.positional = refs.size();
    for (const auto& [k, h] : keyword_refs) a.keyword_inputs.push_back(k);
    a.flags = flags;
    a.constants = constants;
    a.operation_args = operation_args;
    a.operation_kwargs = operation_kwargs;
    a.operation_kwarg_numbers = operation_kwarg_numbers;
    return a;
  }
  // Every tensor the call reads, positional ones first.
  std::vector<KerasHistory> every_ref() const {
    std::vector<KerasHistory> all = refs;
    for (const auto& kh : keyword_refs) all.push_back(kh.second);
    for (const auto& m : masks) {
      if (m) all.push_back(*m);
    }
    return all;
  }
  // Every tensor the call reads: positional ones, then keyword ones in `order`.
  std::vector<KerasHistory> inputs(const CallArguments& order) const {
    std::vector<KerasHistory> all = refs;
    for (const std::string& k : order.keyword_inputs) {
      for (const auto& [name, h] : keyword_refs) {
        if (name == k) all.push_back(h);
      }
    }
    return all;
  }
};

// A tensor reference [name, node, tensor] (Keras 2 and input_layers/output_layers).
KerasHistory read_history(const Reader& r, const std::string& path, const json& v);
// input_layers or output_layers: one reference, a list of them, or a dict of them (in the
// order of endpoint_keys).
std::vector<KerasHistory> read_endpoints(const Reader& r, const std::string& path, const json& config, const char* key);
// The keys of input_layers or output_layers given as a dict, sorted as Keras flattens a dict
// (tree.flatten); empty for a reference or a list.
std::vector<std::string> endpoint_keys(const json& config, const char* key);
// Whether a layer entry is a Keras operation nnfit reads as an Operation (module
// keras.src.ops.*; the four LogicalOp classes Keras writes for masks stay layers).
bool is_operation_entry(const json& entry);
// Two calls' arguments agree when they pass the same keyword tensors and flags (in any order).
bool same_arguments(CallArguments a, CallArguments b);
// The inbound nodes of a Functional layer entry: per call, the tensors it reads. Sets
// *keras2 when a node has Keras 2's list form.
std::vector<CallNode> read_nodes(const Reader& r, const std::string& path, const json& entry, bool* keras2);

}  // namespace nnfit::keras_json
