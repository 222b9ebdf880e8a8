// Keras metric objects in compile configs: every argument nnfit reads, written back as Keras
// writes it, and the errors for values nnfit refuses. Numbers against Keras itself:
// tests/interop/keras_training.py's metric cases.
#include <gtest/gtest.h>

#include "keras_config_helpers.h"
#include "nnfit/model/keras_config.h"

namespace nnfit {
namespace {

using keras_test::error_of;

MetricSpec read(const std::string& text) { return metric_from_keras_json(text, "m.json"); }

TEST(KerasMetrics, ReadsKerasObjectsAndWritesThemBack) {
  // As Keras 3.15's serialize_keras_object wrote them.
  const char* const kObjects[] = {
      R"({"module": "keras.metrics", "class_name": "Precision", "config": {"name": "precision", "dtype": "float32", "thresholds": 0.7, "top_k": 2, "class_id": 1}, "registered_name": null})",
      R"({"module": "keras.metrics", "class_name": "AUC", "config": {"name": "pr", "dtype": "float32", "num_thresholds": 4, "curve": "PR", "summation_method": "majoring", "multi_label": false, "num_labels": null, "label_weights": null, "from_logits": true}, "registered_name": null})",
      R"({"module": "keras.metrics", "class_name": "F1Score", "config": {"name": "f1_score", "dtype": "float32", "average": null, "threshold": null}, "registered_name": null})",
      R"({"module": "keras.metrics", "class_name": "FBetaScore", "config": {"name": "fbeta_score", "dtype": "float32", "average": "macro", "beta": 2.0, "threshold": 0.3}, "registered_name": null})",
      R"({"module": "keras.metrics", "class_name": "BinaryAccuracy", "config": {"name": "binary_accuracy", "dtype": "float32", "threshold": 0.3}, "registered_name": null})",
      R"({"module": "keras.metrics", "class_name": "TopKCategoricalAccuracy", "config": {"name": "top3", "dtype": "float32", "k": 3}, "registered_name": null})",
  };
  for (const char* text : kObjects) {
    const MetricSpec m = read(text);
    EXPECT_EQ(read(metric_to_keras_json(m)), m) << text;
  }
  const MetricSpec p = read(kObjects[0]);
  EXPECT_EQ(p.threshold, 0.7);
  EXPECT_EQ(p.top_k, 2);
  EXPECT_EQ(p.class_id, 1);
  const MetricSpec auc = read(kObjects[1]);
  EXPECT_EQ(auc.name, "pr");
  EXPECT_EQ(auc.curve, "PR");
  EXPECT_EQ(auc.summation_method, "majoring");
  EXPECT_EQ(auc.num_thresholds, 4);
  EXPECT_TRUE(auc.from_logits);
  const MetricSpec fb = read(kObjects[3]);
  EXPECT_EQ(fb.average, "macro");
  EXPECT_EQ(fb.beta, 2.0);
  EXPECT_EQ(read(kObjects[5]).k, 3);
  // A name stays a name; a class without config takes Keras's snake-case name.
  EXPECT_EQ(metric_to_keras_json(read(R"("accuracy")")), R"("accuracy")");
  EXPECT_EQ(read(R"({"class_name": "F1Score"})").name, "f1_score");
  // Thresholds given as a list of one, as Keras also accepts.
  EXPECT_EQ(read(R"({"class_name": "Recall", "config": {"thresholds": [0.25]}})").threshold, 0.25);
  const MetricSpec listed = read(R"({"class_name": "AUC", "config": {"thresholds": [0.2, 0.5]}})");
  EXPECT_EQ(listed.thresholds, (std::vector<double>{0.2, 0.5}));
  EXPECT_EQ(read(metric_to_keras_json(listed)), listed);
}

TEST(KerasMetrics, ReadsKerasFunctionsAndWritesThemBackAsKerasDoes) {
  // compile(loss=keras.losses.categorical_crossentropy, metrics=[keras.metrics.categorical_accuracy])
  // as Keras 3.15 writes them in compile_config.
  const std::string metric =
      R"({"module": "builtins", "class_name": "function", "config": "categorical_accuracy", "registered_name": "function"})";
  const MetricSpec m = read(metric);
  EXPECT_EQ(m.name, "categorical_accuracy");
  EXPECT_TRUE(m.keras_function);
  const std::string compact =
      R"({"module":"builtins","class_name":"function","config":"categorical_accuracy","registered_name":"function"})";
  EXPECT_EQ(metric_to_keras_json(m), compact);
  const std::string loss =
      R"({"module": "builtins", "class_name": "function", "config": "categorical_crossentropy", "registered_name": "function"})";
  const Loss l = loss_from_keras_json(loss, "l.json");
  EXPECT_EQ(l.kind, "categorical_crossentropy");
  EXPECT_EQ(loss_to_keras_json(l),
            R"({"module":"builtins","class_name":"function","config":"categorical_crossentropy","registered_name":"function"})");
  // A function that is not Keras's is refused by the reader, saying where such functions work.
  EXPECT_NE(error_of<Unsupported>([] { read(R"({"module": "__main__", "class_name": "function", "config": "mine", "registered_name": "function"})"); })
                .find("is not one of Keras's"),
            std::string::npos);
  EXPECT_NE(error_of<InvalidArgument>([] { loss_from_keras_json(R"({"module": "builtins", "class_name": "function", "config": "nope", "registered_name": "function"})", "l.json"); })
                .find("unknown loss 'nope'"),
            std::string::npos);
}

TEST(KerasMetrics, RefusesWhatItCannotCompute) {
  struct Case {
    const char* json;
    const char* expect;
  };
  const Case kCases[] = {
      {R"({"class_name": "AUC", "config": {"multi_label": true}})", "m.json: config: \"multi_label\" = true"},
      {R"({"class_name": "AUC", "config": {"curve": "XY"}})", "\"curve\" = \"XY\"; Keras's curves are ROC, PR and PRGAIN"},
      {R"({"class_name": "AUC", "config": {"summation_method": "left"}})", "Keras's are interpolation, minoring and majoring"},
      {R"({"class_name": "AUC", "config": {"num_thresholds": 1}})", "\"num_thresholds\" must be > 1, got 1"},
      {R"({"class_name": "AUC", "config": {"thresholds": [0.5, 2]}})", "\"thresholds\" must lie in [0, 1]"},
      {R"({"class_name": "AUC", "config": {"label_weights": [1, 2]}})", "label_weights"},
      {R"({"class_name": "Precision", "config": {"thresholds": [0.3, 0.6]}})", "nnfit takes one threshold"},
      {R"({"class_name": "Precision", "config": {"top_k": 0}})", "\"top_k\" must be >= 1, got 0"},
      {R"({"class_name": "Precision", "config": {"k": 3}})", "\"k\""},
      {R"({"class_name": "F1Score", "config": {"average": "samples"}})", "\"average\" = \"samples\""},
      {R"({"class_name": "F1Score", "config": {"beta": 2.0}})", "\"beta\""},
      {R"({"class_name": "FBetaScore", "config": {"beta": 0}})", "\"beta\" must be > 0, got 0"},
      {R"({"class_name": "F1Score", "config": {"threshold": 1.5}})", "\"threshold\" must be in (0, 1], got 1.5"},
      {R"({"class_name": "TopKCategoricalAccuracy", "config": {"k": 0}})", "\"k\" must be >= 1, got 0"},
      {R"({"class_name": "MeanAbsoluteError", "config": {"dtype": "float16"}})", "metrics are computed in float32"},
      {R"(42)", "a metric given as 42 is not supported"},
      {R"({"class_name": "AUC", "config": []})", "config"},
  };
  for (const Case& c : kCases) {
    std::string msg;
    try {
      read(c.json);
      ADD_FAILURE() << "accepted: " << c.json;
    } catch (const Error& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.expect << " not in: " << msg;
  }
  // An unknown name is caught where the metric meets the model (compile), naming the known ones.
  const std::string msg = error_of<InvalidArgument>([] {
    Metric(read(R"({"class_name": "Specificity"})"), Loss::from_name("mse"), TensorDesc{Shape{1, 1}, DType::f32});
  });
  EXPECT_NE(msg.find("unknown metric 'specificity'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("f1_score"), std::string::npos) << msg;
}

}  // namespace
}  // namespace nnfit
