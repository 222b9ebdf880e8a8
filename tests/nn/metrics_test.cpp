// Metrics against hand-computed values of Keras 3's formulas (keras/src/metrics); the
// parity with Keras itself is tests/interop/keras_training.py's metric cases.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nnfit/core/error.h"
#include "nnfit/nn/metrics.h"

namespace nnfit {
namespace {

TEST(Metrics, AccuracyResolvesLikeKeras) {
  TensorDesc ten{Shape{1, 10}, DType::f32}, one{Shape{1, 1}, DType::f32};
  EXPECT_EQ(Metric("accuracy", Loss::from_name("sparse_categorical_crossentropy"), ten).resolved(), "sparse_categorical_accuracy");
  EXPECT_EQ(Metric("acc", Loss::from_name("categorical_crossentropy"), ten).resolved(), "categorical_accuracy");
  EXPECT_EQ(Metric("accuracy", Loss::from_name("binary_crossentropy"), one).resolved(), "binary_accuracy");
  EXPECT_EQ(Metric("accuracy", Loss::from_name("mse"), one).resolved(), "binary_accuracy");
  EXPECT_THROW(Metric("f1_scorez", Loss::from_name("mse"), one), InvalidArgument);

  Metric m("accuracy", Loss::from_name("sparse_categorical_crossentropy"), {Shape{3, 3}, DType::f32});
  float pred[] = {0.1f, 0.8f, 0.1f, 0.9f, 0.05f, 0.05f, 0.2f, 0.3f, 0.5f};
  std::int32_t labels[] = {1, 0, 1};
  m.update(pred, labels, 3, {Shape{3, 3}, DType::f32});
  EXPECT_NEAR(m.result(), 2.0 / 3.0, 1e-12);
}

// Precision, recall, AUC, top-k and the regression metrics against hand-computed values,
// accumulated over two batches; names, target mismatches and resumed sums are checked.
TEST(Metrics, KerasFormulasAndSums) {
  const TensorDesc col{Shape{4, 1}, DType::f32};
  const Loss bce = Loss::from_name("binary_crossentropy");
  Metric precision("precision", bce, col), recall("Recall", bce, col), auc("auc", bce, col);
  const float pred[] = {0.9f, 0.6f, 0.4f, 0.1f}, target[] = {1, 0, 1, 0};
  for (Metric* m : {&precision, &recall, &auc}) {
    m->update(pred, target, 2, col);          // the first two rows
    m->update(pred + 2, target + 2, 2, col);  // then the rest
  }
  EXPECT_DOUBLE_EQ(precision.result(), 0.5);  // tp 1 (0.9), fp 1 (0.6)
  EXPECT_DOUBLE_EQ(recall.result(), 0.5);     // tp 1, fn 1 (0.4)
  EXPECT_EQ(recall.name(), "Recall") << "logged as written, as Keras logs it";
  EXPECT_NEAR(auc.result(), 0.75, 0.01);      // 3 of the 4 positive/negative pairs ordered right
  Metric perfect("AUC", bce, col);
  const float sorted[] = {0.8f, 0.2f, 0.7f, 0.3f};
  perfect.update(sorted, target, 4, col);
  EXPECT_NEAR(perfect.result(), 1.0, 1e-9);

  const TensorDesc five{Shape{1, 6}, DType::f32};
  Metric top("top_k_categorical_accuracy", Loss::from_name("categorical_crossentropy"), five);
  const float p6[] = {0.6f, 0.5f, 0.4f, 0.3f, 0.2f, 0.1f}, last[] = {0, 0, 0, 0, 0, 1}, fifth[] = {0, 0, 0, 0, 1, 0};
  top.update(p6, last, 1, five);
  top.update(p6, fifth, 1, five);
  EXPECT_DOUBLE_EQ(top.result(), 0.5);  // the sixth class is not in the top 5, the fifth is

  const TensorDesc two{Shape{2, 2}, DType::f32};
  Metric rmse("root_mean_squared_error", Loss::from_name("mse"), two), mae("mae", Loss::from_name("mse"), two);
  const float p[] = {1, 2, 3, 4}, t[] = {1, 4, 3, 0};
  rmse.update(p, t, 2, two);
  mae.update(p, t, 2, two);
  EXPECT_DOUBLE_EQ(rmse.result(), std::sqrt((4.0 / 2 + 16.0 / 2) / 2));
  EXPECT_DOUBLE_EQ(mae.result(), (2.0 / 2 + 4.0 / 2) / 2);

  Metric resumed("precision", bce, col);
  resumed.set_sums(precision.sums());
  EXPECT_DOUBLE_EQ(resumed.result(), precision.result());
  EXPECT_THROW(resumed.set_sums(auc.sums()), InvalidArgument);
  EXPECT_THROW(Metric("precision", Loss::from_name("sparse_categorical_crossentropy"), TensorDesc{Shape{1, 3}}),
               InvalidArgument);
  EXPECT_THROW(Metric("sparse_top_k_categorical_accuracy", Loss::from_name("categorical_crossentropy"), five),
               InvalidArgument);
}

// Weighted metrics (Keras's weighted_metrics): a mean is sum(w * value) / sum(w), a
// confusion count adds w; weights of 1 change nothing and a zero weight drops the row. The
// parity with Keras itself is tests/python/keras_arguments_parity.py's weighted cases.
TEST(Metrics, SampleWeightsCountEachRowByItsWeight) {
  const TensorDesc three{Shape{3, 3}, DType::f32};
  const Loss sparse = Loss::from_name("sparse_categorical_crossentropy");
  const float pred[] = {0.1f, 0.8f, 0.1f, 0.9f, 0.05f, 0.05f, 0.2f, 0.3f, 0.5f};
  const std::int32_t labels[] = {1, 0, 1};  // right, right, wrong
  const float w[] = {2.0f, 0.5f, 1.5f}, ones[] = {1, 1, 1}, drop_wrong[] = {1, 1, 0};
  Metric acc("accuracy", sparse, three), plain("accuracy", sparse, three), dropped("accuracy", sparse, three);
  acc.update(pred, labels, 3, three, w);
  plain.update(pred, labels, 3, three, ones);
  dropped.update(pred, labels, 3, three, drop_wrong);
  EXPECT_NEAR(acc.result(), 2.5 / 4.0, 1e-12);
  EXPECT_NEAR(plain.result(), 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(dropped.result(), 1.0, 1e-12);

  const TensorDesc col{Shape{4, 1}, DType::f32};
  const Loss bce = Loss::from_name("binary_crossentropy");
  const float p[] = {0.9f, 0.6f, 0.4f, 0.1f}, t[] = {1, 0, 1, 0}, pw[] = {3, 1, 2, 5};
  Metric precision("precision", bce, col), recall("recall", bce, col), bin("binary_accuracy", bce, col),
      mse("mse", bce, col), auc("auc", bce, col), auc_ones("auc", bce, col), auc_plain("auc", bce, col);
  for (Metric* m : {&precision, &recall, &bin, &mse, &auc}) m->update(p, t, 4, col, pw);
  auc_ones.update(p, t, 4, col, std::vector<float>(4, 1.0f).data());
  auc_plain.update(p, t, 4, col);
  EXPECT_DOUBLE_EQ(precision.result(), 3.0 / (3.0 + 1.0));  // tp 0.9 (w 3), fp 0.6 (w 1)
  EXPECT_DOUBLE_EQ(recall.result(), 3.0 / (3.0 + 2.0));     // fn 0.4 (w 2)
  EXPECT_DOUBLE_EQ(bin.result(), (3.0 + 5.0) / 11.0);        // right: 0.9 and 0.1
  EXPECT_NEAR(mse.result(), (3 * 0.01 + 1 * 0.36 + 2 * 0.36 + 5 * 0.01) / 11.0, 1e-7);
  EXPECT_DOUBLE_EQ(auc_ones.result(), auc_plain.result());
  EXPECT_NE(auc.result(), auc_plain.result());
}

// Precision / Recall with a threshold, top_k (Keras's default threshold then NEG_INF: every
// kept prediction is positive) and class_id.
TEST(Metrics, PrecisionRecallArguments) {
  const TensorDesc three{Shape{2, 3}, DType::f32};
  const Loss bce = Loss::from_name("binary_crossentropy");
  const float pred[] = {0.9f, 0.2f, 0.6f, 0.3f, 0.7f, 0.1f}, target[] = {1, 0, 0, 0, 1, 1};
  MetricSpec strict("precision");
  strict.threshold = 0.65;
  Metric p(strict, bce, three);
  p.update(pred, target, 2, three);
  EXPECT_DOUBLE_EQ(p.result(), 1.0);  // 0.9 and 0.7 above 0.65, both positive targets
  MetricSpec top1("precision");
  top1.top_k = 1;
  Metric pt(top1, bce, three);
  pt.update(pred, target, 2, three);
  EXPECT_DOUBLE_EQ(pt.result(), 1.0);  // each row's largest (0.9, 0.7) is a positive
  MetricSpec top2("recall");
  top2.top_k = 2;
  Metric rt(top2, bce, three);
  rt.update(pred, target, 2, three);
  EXPECT_DOUBLE_EQ(rt.result(), 2.0 / 3.0);  // kept: 0.9, 0.6 | 0.7, 0.3: the 0.1 positive is missed
  MetricSpec last("recall");
  last.class_id = 2;
  Metric rc(last, bce, three);
  rc.update(pred, target, 2, three);
  EXPECT_DOUBLE_EQ(rc.result(), 0.0);  // column 2: target only in row 1, predicted 0.1
  last.class_id = 3;
  EXPECT_THROW(Metric(last, bce, three), InvalidArgument);
}

// F1Score / FBetaScore: per class without average (logged "<name>_<class>"), micro, macro and
// weighted, with the argmax rule (ties count, an all-zero row predicts nothing) or a threshold.
TEST(Metrics, FBetaScores) {
  const TensorDesc three{Shape{4, 3}, DType::f32};
  const Loss cce = Loss::from_name("categorical_crossentropy");
  const float pred[] = {0.7f, 0.2f, 0.1f, 0.4f, 0.4f, 0.2f, 0.0f, 0.0f, 0.0f, 0.1f, 0.1f, 0.8f};
  const float target[] = {1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1};
  // Predicted: row 0 {0}, row 1 {0, 1} (a tie), row 2 {} (all zero), row 3 {2}.
  // Class 0: tp 1, fp 1, fn 0; class 1: tp 1, fp 0, fn 1; class 2: tp 1, fp 0, fn 0.
  const double e = 1e-7;
  const auto f = [&](double tp, double fp, double fn, double b2) {
    const double pr = tp / (tp + fp + e), re = tp / (tp + fn + e);
    return pr * re / (b2 * pr + re + e) * (1 + b2);
  };
  Metric per("f1_score", cce, three);
  per.update(pred, target, 4, three);
  const std::vector<double> got = per.results();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_NEAR(got[0], f(1, 1, 0, 1), 1e-12);
  EXPECT_NEAR(got[1], f(1, 0, 1, 1), 1e-12);
  EXPECT_NEAR(got[2], f(1, 0, 0, 1), 1e-12);
  EXPECT_EQ(per.keys("f1_score"), (std::vector<std::string>{"f1_score_0", "f1_score_1", "f1_score_2"}));

  MetricSpec micro("f1_micro");
  micro.class_name = "F1Score";
  micro.average = "micro";
  Metric mi(micro, cce, three);
  mi.update(pred, target, 4, three);
  EXPECT_NEAR(mi.result(), f(3, 1, 1, 1), 1e-12);
  EXPECT_EQ(mi.keys("f1_micro"), std::vector<std::string>{"f1_micro"});

  MetricSpec weighted("fb");
  weighted.class_name = "FBetaScore";
  weighted.average = "weighted";
  weighted.beta = 2.0;
  weighted.threshold = 0.3;  // row 0 {0}, row 1 {0, 1}, row 2 {}, row 3 {2}: the same sets here
  Metric w(weighted, cce, three);
  w.update(pred, target, 4, three);
  const double total = 1 + 2 + 1;  // positive targets per class: 1, 2, 1
  EXPECT_NEAR(w.result(), (f(1, 1, 0, 4) * 1 + f(1, 0, 1, 4) * 2 + f(1, 0, 0, 4) * 1) / (total + e), 1e-12);

  EXPECT_THROW(Metric("f1_score", cce, TensorDesc{Shape{1, 2, 3}, DType::f32}), InvalidArgument);
  EXPECT_THROW(Metric("f1_score", Loss::from_name("sparse_categorical_crossentropy"), three), InvalidArgument);
}

// AUC's curves and sums on 3 thresholds (-eps, 0.5, 1+eps), computed by hand.
TEST(Metrics, AucCurvesAndSums) {
  const TensorDesc col{Shape{4, 1}, DType::f32};
  const Loss bce = Loss::from_name("binary_crossentropy");
  const float pred[] = {0.9f, 0.6f, 0.4f, 0.1f}, target[] = {1, 0, 1, 0};
  // At 0.5: tp 1, fp 1, tn 1, fn 1. At -eps: tp 2, fp 2. At 1+eps: tn 2, fn 2.
  const auto run = [&](const char* curve, const char* sum) {
    MetricSpec s("auc");
    s.num_thresholds = 3;
    s.curve = curve;
    s.summation_method = sum;
    Metric m(s, bce, col);
    m.update(pred, target, 4, col);
    return m.result();
  };
  // ROC points (fpr, tpr): (1, 1), (0.5, 0.5), (0, 0).
  EXPECT_NEAR(run("ROC", "interpolation"), 0.5 * 0.75 + 0.5 * 0.25, 1e-12);
  EXPECT_NEAR(run("ROC", "minoring"), 0.5 * 0.5 + 0.5 * 0.0, 1e-12);
  EXPECT_NEAR(run("ROC", "majoring"), 0.5 * 1.0 + 0.5 * 0.5, 1e-12);
  // PR points (recall, precision): (1, 0.5), (0.5, 0.5), (0, 0): majoring 0.5*0.5 + 0.5*0.5.
  EXPECT_NEAR(run("PR", "majoring"), 0.5, 1e-12);
  // Davis-Goadrich: first interval slope dtp/dp = 1/2, intercept 1 - 0.5*2 = 0: 0.5*(1 + 0)/2;
  // the second, P from 2 to 0: slope 1/2, ratio 1 (P_B = 0): 0.5 * 1 / 2.
  EXPECT_NEAR(run("PR", "interpolation"), 0.25 + 0.25, 1e-12);
  MetricSpec logits("auc");
  logits.from_logits = true;
  logits.thresholds = {0.5};
  Metric l(logits, bce, col);
  const float raw[] = {2.0f, 0.5f, -0.5f, -2.0f};  // sigmoid: 0.88, 0.62, 0.38, 0.12
  l.update(raw, target, 4, col);
  EXPECT_NEAR(l.result(), run("ROC", "interpolation"), 1e-12);
  EXPECT_EQ(l.sums().size(), 12u);
}

}  // namespace
}  // namespace nnfit
