"""Layer parity with real Keras 3 (from PyPI, scripts/keras_venv.sh), one case per layer and option:

1. Forward: Keras builds Input -> BatchNormalization -> LAYER with random weights and saves
   it as .keras; `nnfit predict` on the file gives what Keras predicts, within the case's
   tolerance (1e-5; 1e-4 for recurrent and attention layers).
2. Gradients: one SGD step (learning rate 1, mean squared error, the whole batch, training
   mode) by `nnfit train` on the same file changes every trainable weight by the gradient
   Keras's own GradientTape computes, within 1e-4 of the largest gradient. The
   BatchNormalization in front gives a weightless layer weights whose gradients pass
   through that layer's backward pass.

Under a dtype policy (--policy mixed_bfloat16 or mixed_float16) Keras builds the layers under
that global policy, as a user's mixed-precision script does, and the comparison allows for
the compute type's rounding: forward within 1.5e-2 (bfloat16) or 2e-3 (float16) of the
largest output, gradients within 3e-2 / 4e-3 of the largest gradient (both frameworks round
to the compute type at each layer, at different points). Cases Keras itself cannot run
under the policy (TensorFlow has no bfloat16 gradient for its image transforms) are skipped,
named. --every N runs every Nth case (CI's sample of the policy run).

usage: keras_layers.py NNFIT_CLI WORK_DIR [CASE_SUBSTRING] [--policy NAME] [--every N]   (exit 0 when every case passes)
"""
import json
import os
import subprocess
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

BATCH = 4
failures = []
# The global dtype policy of the run (--policy), and the tolerances it calls for:
# (forward, gradient) relative to the largest output / gradient.
POLICY = {"name": "float32"}
# bfloat16 carries 8 significant bits (one rounding: 3.9e-3 relative): about 4 roundings apart
# forward, 8 in the gradients; float16 11 bits (4.9e-4).
POLICY_TOLERANCE = {"mixed_bfloat16": (1.5e-2, 3e-2), "mixed_float16": (2e-3, 4e-3)}


def cases(layers):
    """(name, input shape without the batch axis, layer factory, forward tolerance[, options]);
    options {"ids": V}: integer inputs in [0, V) fed straight to the layer; {"pad": True}: float
    inputs with some all-zero steps, fed straight to the layer; {"forward_only": True}: Keras
    has no gradient to compare (the forward pass, and the file nnfit writes after a step must
    load in Keras with the layer's config unchanged)."""
    return [
        ("Dense", (6,), lambda: layers.Dense(3, activation="tanh"), 1e-5),
        ("Dense on (steps, features)", (4, 5), lambda: layers.Dense(3, activation="softmax"), 1e-5),
        ("Dense on images", (3, 4, 2), lambda: layers.Dense(2, use_bias=False), 1e-5),
        # Random in training (Keras's draws cannot be reproduced): the forward pass (the
        # identity at inference) and the file nnfit writes after a training step, which Keras
        # must load with the same settings.
        ("LSTM recurrent_dropout", (5, 3), lambda: layers.LSTM(4, recurrent_dropout=0.3, return_sequences=True), 1e-4,
         {"random": True}),
        ("GRU dropout and recurrent_dropout", (5, 3), lambda: layers.GRU(4, dropout=0.2, recurrent_dropout=0.4), 1e-4,
         {"random": True}),
        ("Dropout noise_shape", (5, 3), lambda: layers.Dropout(0.4, noise_shape=(None, 1, 3)), 1e-5, {"random": True}),
        ("SpatialDropout1D", (5, 3), lambda: layers.SpatialDropout1D(0.3), 1e-5, {"random": True}),
        ("SpatialDropout2D", (4, 4, 3), lambda: layers.SpatialDropout2D(0.3), 1e-5, {"random": True}),
        ("LSTM dropout", (5, 3), lambda: layers.LSTM(3, dropout=0.3), 1e-4, {"random": True}),
        ("GaussianNoise", (5, 3), lambda: layers.GaussianNoise(0.1), 1e-5, {"random": True}),
        ("GaussianDropout", (5, 3), lambda: layers.GaussianDropout(0.2), 1e-5, {"random": True}),
        ("AlphaDropout", (5, 3), lambda: layers.AlphaDropout(0.2), 1e-5, {"random": True}),
        # The augmentation layers: the identity at inference, random in the training step.
        ("RandomFlip", (8, 8, 3), lambda: layers.RandomFlip(), 1e-5, {"random": True}),
        ("RandomFlip vertical seed", (8, 8, 3), lambda: layers.RandomFlip("vertical", seed=3), 1e-5, {"random": True}),
        ("RandomTranslation", (8, 8, 3), lambda: layers.RandomTranslation(0.2, (-0.1, 0.3)), 1e-5, {"random": True}),
        ("RandomTranslation wrap nearest", (8, 8, 3),
         lambda: layers.RandomTranslation(0.1, 0.2, fill_mode="wrap", interpolation="nearest", seed=4, fill_value=0.5),
         1e-5, {"random": True}),
        ("RandomRotation", (8, 8, 3), lambda: layers.RandomRotation(0.2), 1e-5, {"random": True}),
        ("RandomRotation constant", (8, 8, 3),
         lambda: layers.RandomRotation((-0.1, 0.3), fill_mode="constant", fill_value=0.5, seed=2), 1e-5, {"random": True}),
        ("RandomZoom", (8, 8, 3), lambda: layers.RandomZoom(0.2), 1e-5, {"random": True}),
        ("RandomZoom width nearest", (8, 8, 3),
         lambda: layers.RandomZoom((-0.3, 0.1), 0.2, fill_mode="nearest", interpolation="nearest"), 1e-5, {"random": True}),
        ("RandomContrast", (8, 8, 3), lambda: layers.RandomContrast(0.3), 1e-5, {"random": True}),
        ("RandomContrast value_range", (8, 8, 3),
         lambda: layers.RandomContrast((0.2, 0.5), value_range=(-3, 3), seed=7), 1e-5, {"random": True}),
        # Frozen layers (trainable=False): not updated; BatchNormalization in inference mode.
        ("Dense frozen", (6,), lambda: layers.Dense(3, trainable=False), 1e-5),
        ("BatchNormalization frozen", (5, 3), lambda: layers.BatchNormalization(trainable=False), 1e-5),
        ("LSTM frozen", (4, 3), lambda: layers.LSTM(2, trainable=False), 1e-4),
        ("Conv2D", (7, 6, 2), lambda: layers.Conv2D(3, 3, strides=2, padding="same", activation="relu"), 1e-5),
        ("Conv1D", (9, 3), lambda: layers.Conv1D(4, 3, activation="relu"), 1e-5),
        ("Conv1D same s2", (9, 3), lambda: layers.Conv1D(2, 4, strides=2, padding="same", use_bias=False), 1e-5),
        ("Conv1D causal", (8, 2), lambda: layers.Conv1D(3, 3, padding="causal", activation="tanh"), 1e-5),
        ("Conv1D causal dilated", (12, 2), lambda: layers.Conv1D(3, 3, padding="causal", dilation_rate=2), 1e-5),
        ("Conv1D groups", (9, 4), lambda: layers.Conv1D(6, 3, groups=2, padding="same"), 1e-5),
        ("Conv2D dilated same", (9, 8, 2), lambda: layers.Conv2D(3, 3, dilation_rate=2, padding="same"), 1e-5),
        ("Conv2D dilated (2, 3) valid", (9, 10, 2), lambda: layers.Conv2D(2, (2, 3), dilation_rate=(2, 3)), 1e-5),
        ("Conv2D groups", (7, 6, 4), lambda: layers.Conv2D(6, 3, strides=2, groups=2, activation="relu"), 1e-5),
        ("Conv3D", (5, 6, 4, 2), lambda: layers.Conv3D(3, 3, activation="relu"), 1e-5),
        ("Conv3D same s2", (5, 6, 7, 2), lambda: layers.Conv3D(2, (3, 2, 3), strides=2, padding="same"), 1e-5),
        ("Conv3D dilated 2", (7, 6, 6, 2),
         lambda: layers.Conv3D(2, 2, dilation_rate=2, padding="same", activation="tanh"), 1e-5),
        ("Conv3D groups 2", (4, 5, 5, 4), lambda: layers.Conv3D(6, 2, groups=2), 1e-5),
        ("Conv3D use_bias False", (4, 4, 5, 3), lambda: layers.Conv3D(2, (2, 3, 2), use_bias=False), 1e-5),
        ("DepthwiseConv2D", (7, 6, 3), lambda: layers.DepthwiseConv2D(3, padding="same"), 1e-5),
        ("DepthwiseConv2D x2 s2", (8, 7, 3),
         lambda: layers.DepthwiseConv2D(3, strides=2, depth_multiplier=2, activation="relu"), 1e-5),
        ("DepthwiseConv2D dilated", (9, 9, 2), lambda: layers.DepthwiseConv2D(3, dilation_rate=2, use_bias=False), 1e-5),
        ("DepthwiseConv1D x3", (9, 2), lambda: layers.DepthwiseConv1D(3, depth_multiplier=3, padding="same"), 1e-5),
        ("SeparableConv2D", (7, 6, 3), lambda: layers.SeparableConv2D(4, 3, padding="same", activation="relu"), 1e-5),
        ("SeparableConv2D x2 s2", (8, 8, 2), lambda: layers.SeparableConv2D(3, 3, strides=2, depth_multiplier=2), 1e-5),
        ("SeparableConv1D", (9, 3), lambda: layers.SeparableConv1D(4, 3, dilation_rate=2, use_bias=False), 1e-5),
        ("Conv2DTranspose", (4, 5, 3), lambda: layers.Conv2DTranspose(2, 3, strides=2), 1e-5),
        ("Conv2DTranspose same", (4, 5, 3),
         lambda: layers.Conv2DTranspose(2, 3, strides=2, padding="same", activation="relu"), 1e-5),
        ("Conv2DTranspose output_padding", (4, 4, 2),
         lambda: layers.Conv2DTranspose(3, (3, 4), strides=(2, 3), padding="same", output_padding=(1, 2)), 1e-5),
        ("Conv1DTranspose", (6, 3), lambda: layers.Conv1DTranspose(2, 4, strides=2, padding="same"), 1e-5),
        ("Conv1DTranspose valid k < s", (5, 2), lambda: layers.Conv1DTranspose(3, 2, strides=3), 1e-5),
        ("MaxPooling2D", (6, 6, 3), lambda: layers.MaxPooling2D(3, strides=2, padding="same"), 1e-5),
        ("AveragePooling2D", (5, 6, 3), lambda: layers.AveragePooling2D(2, padding="same"), 1e-5),
        ("MaxPooling3D", (4, 6, 5, 2), lambda: layers.MaxPooling3D(), 1e-5),
        ("MaxPooling3D same odd", (5, 7, 3, 2), lambda: layers.MaxPooling3D(3, strides=2, padding="same"), 1e-5),
        ("AveragePooling3D", (4, 5, 6, 3), lambda: layers.AveragePooling3D((2, 2, 3)), 1e-5),
        ("AveragePooling3D same odd", (5, 3, 7, 2),
         lambda: layers.AveragePooling3D((2, 3, 2), strides=(2, 1, 3), padding="same"), 1e-5),
        ("MaxPooling1D", (9, 3), lambda: layers.MaxPooling1D(), 1e-5),
        ("MaxPooling1D same s2", (9, 3), lambda: layers.MaxPooling1D(3, strides=2, padding="same"), 1e-5),
        ("AveragePooling1D same s1", (7, 4), lambda: layers.AveragePooling1D(3, strides=1, padding="same"), 1e-5),
        ("AveragePooling1D", (8, 2), lambda: layers.AveragePooling1D(2), 1e-5),
        ("GlobalAveragePooling1D", (7, 3), lambda: layers.GlobalAveragePooling1D(), 1e-5),
        ("GlobalAveragePooling2D", (5, 4, 3), lambda: layers.GlobalAveragePooling2D(), 1e-5),
        ("GlobalAveragePooling2D keepdims", (5, 4, 3), lambda: layers.GlobalAveragePooling2D(keepdims=True), 1e-5),
        ("GlobalAveragePooling3D", (3, 4, 2, 3), lambda: layers.GlobalAveragePooling3D(), 1e-5),
        ("GlobalMaxPooling1D keepdims", (7, 3), lambda: layers.GlobalMaxPooling1D(keepdims=True), 1e-5),
        ("GlobalMaxPooling2D", (5, 4, 3), lambda: layers.GlobalMaxPooling2D(), 1e-5),
        ("GlobalMaxPooling2D channels_first", (3, 5, 4),
         lambda: layers.GlobalMaxPooling2D(data_format="channels_first"), 1e-5),
        ("GlobalMaxPooling3D", (3, 4, 2, 3), lambda: layers.GlobalMaxPooling3D(), 1e-5),
        ("ZeroPadding1D", (9, 3), lambda: layers.ZeroPadding1D(), 1e-5),
        ("ZeroPadding1D (1, 2)", (9, 3), lambda: layers.ZeroPadding1D((1, 2)), 1e-5),
        ("ZeroPadding2D ((1, 2), (3, 0))", (5, 4, 3), lambda: layers.ZeroPadding2D(((1, 2), (3, 0))), 1e-5),
        ("ZeroPadding2D channels_first", (3, 5, 4), lambda: layers.ZeroPadding2D((2, 1), data_format="channels_first"), 1e-5),
        ("ZeroPadding3D", (3, 4, 2, 2), lambda: layers.ZeroPadding3D(1), 1e-5),
        ("Cropping1D (1, 2)", (9, 3), lambda: layers.Cropping1D((1, 2)), 1e-5),
        ("Cropping2D ((1, 0), (2, 1))", (6, 6, 3), lambda: layers.Cropping2D(((1, 0), (2, 1))), 1e-5),
        ("Cropping2D channels_first", (3, 6, 5), lambda: layers.Cropping2D(1, data_format="channels_first"), 1e-5),
        ("Cropping3D", (4, 4, 4, 2), lambda: layers.Cropping3D(((1, 0), (0, 1), (1, 1))), 1e-5),
        ("UpSampling1D 3", (4, 3), lambda: layers.UpSampling1D(3), 1e-5),
        ("UpSampling2D (2, 3)", (3, 4, 2), lambda: layers.UpSampling2D((2, 3)), 1e-5),
        ("UpSampling2D channels_first", (2, 3, 4), lambda: layers.UpSampling2D(2, data_format="channels_first"), 1e-5),
        ("UpSampling3D", (2, 3, 2, 2), lambda: layers.UpSampling3D(2), 1e-5),
        # Keras resizes (tf.image.resize, half-pixel centres) for any interpolation but nearest.
        ("UpSampling2D bilinear 2", (3, 4, 2), lambda: layers.UpSampling2D(2, interpolation="bilinear"), 1e-5),
        ("UpSampling2D bilinear (2, 3)", (3, 4, 2), lambda: layers.UpSampling2D((2, 3), interpolation="bilinear"), 1e-5),
        ("UpSampling2D bicubic channels_first", (2, 3, 4),
         lambda: layers.UpSampling2D(2, data_format="channels_first", interpolation="bicubic"), 1e-5),
        ("UpSampling2D lanczos3 (3, 1)", (3, 4, 2), lambda: layers.UpSampling2D((3, 1), interpolation="lanczos3"), 1e-5),
        ("Resizing bilinear up 7x9", (4, 5, 2), lambda: layers.Resizing(7, 9), 1e-5),
        ("Resizing bilinear down 3x2", (7, 5, 2), lambda: layers.Resizing(3, 2), 1e-5),
        ("Resizing nearest up 7x9", (4, 5, 2), lambda: layers.Resizing(7, 9, interpolation="nearest"), 1e-5),
        ("Resizing nearest down 3x2", (7, 5, 2), lambda: layers.Resizing(3, 2, interpolation="nearest"), 1e-5),
        ("Resizing bicubic 7x4", (5, 6, 2), lambda: layers.Resizing(7, 4, interpolation="bicubic"), 1e-5),
        ("Resizing lanczos3 4x8", (6, 5, 2), lambda: layers.Resizing(4, 8, interpolation="lanczos3"), 1e-5),
        ("Resizing lanczos5 antialias down", (9, 8, 2),
         lambda: layers.Resizing(4, 3, interpolation="lanczos5", antialias=True), 1e-5),
        ("Resizing bilinear antialias down", (9, 8, 2), lambda: layers.Resizing(4, 5, antialias=True), 1e-5),
        ("Resizing bicubic antialias down", (9, 7, 2),
         lambda: layers.Resizing(5, 3, interpolation="bicubic", antialias=True), 1e-5),
        # TensorFlow registers no gradient for ResizeArea, so Keras cannot train through it.
        ("Resizing area down", (9, 7, 2), lambda: layers.Resizing(4, 3, interpolation="area"), 1e-5,
         {"forward_only": True}),
        ("Resizing crop_to_aspect_ratio", (6, 9, 2), lambda: layers.Resizing(4, 3, crop_to_aspect_ratio=True), 1e-5),
        ("Resizing crop_to_aspect_ratio nearest up", (7, 4, 2),
         lambda: layers.Resizing(5, 6, interpolation="nearest", crop_to_aspect_ratio=True), 1e-5),
        ("Resizing pad_to_aspect_ratio fill 0.5", (4, 7, 2),
         lambda: layers.Resizing(5, 5, pad_to_aspect_ratio=True, fill_value=0.5), 1e-5),
        ("Resizing channels_first", (2, 5, 6), lambda: layers.Resizing(3, 4, data_format="channels_first"), 1e-5),
        ("CenterCrop smaller than the input", (7, 6, 2), lambda: layers.CenterCrop(4, 3), 1e-5),
        ("CenterCrop the input's size", (4, 5, 2), lambda: layers.CenterCrop(4, 5), 1e-5),
        # Larger on either axis: Keras's smart_resize (aspect-ratio crop, bilinear resize).
        ("CenterCrop larger than the input", (4, 5, 2), lambda: layers.CenterCrop(6, 7), 1e-5),
        ("CenterCrop taller, narrower than the input", (4, 8, 2), lambda: layers.CenterCrop(6, 3), 1e-5),
        ("CenterCrop channels_first larger", (2, 3, 4), lambda: layers.CenterCrop(5, 5, data_format="channels_first"), 1e-5),
        ("ReLU", (6,), lambda: layers.ReLU(), 1e-5),
        ("ReLU max_value 6", (6,), lambda: layers.ReLU(max_value=6.0), 1e-5),
        ("ReLU negative_slope", (6,), lambda: layers.ReLU(negative_slope=0.1), 1e-5),
        ("ReLU max_value 1", (6,), lambda: layers.ReLU(max_value=1.0), 1e-5),
        ("ReLU all three", (3, 6), lambda: layers.ReLU(max_value=1.2, negative_slope=0.2, threshold=0.3), 1e-5),
        ("LeakyReLU", (6,), lambda: layers.LeakyReLU(), 1e-5),
        ("LeakyReLU 0.05", (4, 3), lambda: layers.LeakyReLU(negative_slope=0.05), 1e-5),
        ("ELU", (6,), lambda: layers.ELU(), 1e-5),
        ("ELU 0.5", (4, 3), lambda: layers.ELU(alpha=0.5), 1e-5),
        ("PReLU", (5, 3), lambda: layers.PReLU(), 1e-5),
        ("PReLU shared_axes [1]", (5, 3), lambda: layers.PReLU(shared_axes=[1]), 1e-5),
        ("PReLU shared_axes [1, 2]", (4, 3, 2), lambda: layers.PReLU(shared_axes=[1, 2]), 1e-5),
        ("Softmax", (6,), lambda: layers.Softmax(), 1e-5),
        ("Softmax axis 1", (4, 3), lambda: layers.Softmax(axis=1), 1e-5),
        ("Softmax axis -2", (3, 4, 2), lambda: layers.Softmax(axis=-2), 1e-5),
        ("LayerNormalization", (6,), lambda: layers.LayerNormalization(), 1e-5),
        ("LayerNormalization 3-D eps 1e-5", (4, 5), lambda: layers.LayerNormalization(epsilon=1e-5), 1e-5),
        ("LayerNormalization no center", (4, 5), lambda: layers.LayerNormalization(center=False), 1e-5),
        ("LayerNormalization no scale", (6,), lambda: layers.LayerNormalization(scale=False), 1e-5),
        # Normalization over axes other than the last (moved last around the channels-last ops).
        ("LayerNormalization axes -2 -1", (4, 5), lambda: layers.LayerNormalization(axis=[-2, -1]), 1e-5),
        ("LayerNormalization axis 1", (4, 5), lambda: layers.LayerNormalization(axis=1, center=False), 1e-5),
        ("LayerNormalization axes 1 3", (3, 4, 2), lambda: layers.LayerNormalization(axis=[1, 3], epsilon=1e-5), 1e-5),
        ("LayerNormalization rms_scaling", (4, 6), lambda: layers.LayerNormalization(rms_scaling=True), 1e-5),
        ("LayerNormalization rms_scaling axes -2 -1", (4, 5),
         lambda: layers.LayerNormalization(axis=[-2, -1], rms_scaling=True, epsilon=1e-5), 1e-5),
        ("RMSNormalization", (4, 6), lambda: layers.RMSNormalization(), 1e-5),
        ("RMSNormalization axes -2 -1 eps 1e-3", (4, 5), lambda: layers.RMSNormalization(axis=[-2, -1], epsilon=1e-3), 1e-5),
        ("BatchNormalization axis 1", (4, 5), lambda: layers.BatchNormalization(axis=1), 1e-5),
        ("BatchNormalization axis 1 channels first", (3, 4, 5),
         lambda: layers.BatchNormalization(axis=1, momentum=0.9, scale=False), 1e-5),
        ("GroupNormalization", (5, 4, 6), lambda: layers.GroupNormalization(3), 1e-5),
        ("GroupNormalization 1-D no center", (7, 4), lambda: layers.GroupNormalization(2, center=False, epsilon=1e-5), 1e-5),
        ("GroupNormalization groups = channels", (6,), lambda: layers.GroupNormalization(6, scale=False), 1e-5),
        ("UnitNormalization", (6,), lambda: layers.UnitNormalization(), 1e-5),
        ("UnitNormalization axis 1", (4, 3), lambda: layers.UnitNormalization(axis=1), 1e-5),
        ("Rescaling", (3, 4, 2), lambda: layers.Rescaling(1.0 / 255), 1e-5),
        ("Rescaling offset", (5,), lambda: layers.Rescaling(2.0, offset=-1.0), 1e-5),
        ("Permute (2, 1)", (5, 3), lambda: layers.Permute((2, 1)), 1e-5),
        ("Permute (3, 1, 2)", (3, 4, 2), lambda: layers.Permute((3, 1, 2)), 1e-5),
        ("RepeatVector", (4,), lambda: layers.RepeatVector(3), 1e-5),
        ("SimpleRNN", (5, 3), lambda: layers.SimpleRNN(4), 1e-4),
        ("SimpleRNN sequences relu backwards", (5, 3),
         lambda: layers.SimpleRNN(3, activation="relu", return_sequences=True, go_backwards=True), 1e-4),
        ("LSTM", (6, 3), lambda: layers.LSTM(4), 1e-4),
        ("LSTM sequences", (5, 2), lambda: layers.LSTM(3, return_sequences=True), 1e-4),
        ("LSTM backwards no bias", (5, 3), lambda: layers.LSTM(4, go_backwards=True, use_bias=False), 1e-4),
        ("LSTM relu hard_sigmoid", (4, 3),
         lambda: layers.LSTM(3, activation="relu", recurrent_activation="hard_sigmoid", unit_forget_bias=False), 1e-4),
        ("GRU", (6, 3), lambda: layers.GRU(4), 1e-4),
        ("GRU reset_before sequences", (5, 3), lambda: layers.GRU(3, reset_after=False, return_sequences=True), 1e-4),
        ("GRU backwards no bias", (5, 2), lambda: layers.GRU(4, go_backwards=True, use_bias=False), 1e-4),
        ("GRU reset_before no bias", (4, 3), lambda: layers.GRU(3, reset_after=False, use_bias=False), 1e-4),
        ("Bidirectional LSTM", (5, 3), lambda: layers.Bidirectional(layers.LSTM(3)), 1e-4),
        ("Bidirectional GRU sequences sum", (5, 3),
         lambda: layers.Bidirectional(layers.GRU(3, return_sequences=True), merge_mode="sum"), 1e-4),
        ("Bidirectional SimpleRNN sequences ave", (4, 2),
         lambda: layers.Bidirectional(layers.SimpleRNN(2, return_sequences=True), merge_mode="ave"), 1e-4),
        ("Bidirectional GRU reset_before mul", (4, 3),
         lambda: layers.Bidirectional(layers.GRU(2, reset_after=False), merge_mode="mul"), 1e-4),
        ("Bidirectional LSTM backward_layer", (5, 2),
         lambda: layers.Bidirectional(layers.LSTM(3, return_sequences=True),
                                      backward_layer=layers.LSTM(3, return_sequences=True, go_backwards=True,
                                                                 activation="relu")), 1e-4),
        # Integer ids (int32 in Keras; nnfit trains on them as float32 values): no
        # BatchNormalization in front.
        ("Embedding", (5,), lambda: layers.Embedding(11, 4), 1e-5, {"ids": 11}),
        ("Embedding 2-D ids", (3, 4), lambda: layers.Embedding(7, 2), 1e-5, {"ids": 7}),
        ("Embedding + Bidirectional LSTM", (6,),
         lambda: __import__("keras").Sequential([layers.Embedding(13, 4), layers.Bidirectional(layers.LSTM(3))],
                                                name="bitext"), 1e-4, {"ids": 13}),
        # Masks: Embedding(mask_zero=True) with zero ids scattered through the batch, and
        # Masking on float steps that are all zeros; through RNNs, Bidirectional,
        # LayerNormalization (passes it on) and GlobalAveragePooling1D (averages the present steps).
        ("mask_zero + LSTM", (7,),
         lambda: __import__("keras").Sequential([layers.Embedding(9, 4, mask_zero=True), layers.LSTM(3)],
                                                name="masked"), 1e-4, {"ids": 4}),
        ("mask_zero + GRU sequences + GlobalAveragePooling1D", (7,),
         lambda: __import__("keras").Sequential([layers.Embedding(9, 4, mask_zero=True),
                                                 layers.GRU(3, return_sequences=True),
                                                 layers.GlobalAveragePooling1D()], name="masked_gap"), 1e-4,
         {"ids": 4}),
        ("mask_zero + Bidirectional GRU sequences + SimpleRNN", (6,),
         lambda: __import__("keras").Sequential([layers.Embedding(9, 3, mask_zero=True),
                                                 layers.Bidirectional(layers.GRU(2, return_sequences=True)),
                                                 layers.SimpleRNN(2)], name="masked_bi"), 1e-4, {"ids": 4}),
        ("mask_zero + Bidirectional LSTM", (6,),
         lambda: __import__("keras").Sequential([layers.Embedding(9, 3, mask_zero=True),
                                                 layers.Bidirectional(layers.LSTM(2), merge_mode="ave")],
                                                name="masked_bi2"), 1e-4, {"ids": 4}),
        ("Masking + LSTM sequences + LayerNormalization + GlobalAveragePooling1D", (6, 3),
         lambda: __import__("keras").Sequential([layers.Masking(), layers.LSTM(3, return_sequences=True),
                                                 layers.LayerNormalization(), layers.GlobalAveragePooling1D()],
                                                name="masking"), 1e-4, {"pad": True}),
        ("Masking + GRU backwards", (6, 3),
         lambda: __import__("keras").Sequential([layers.Masking(), layers.GRU(3, go_backwards=True)],
                                                name="masking_back"), 1e-4, {"pad": True}),
        ("Embedding + LSTM", (6,),
         lambda: __import__("keras").Sequential([layers.Embedding(13, 4), layers.LSTM(3)], name="text"), 1e-4,
         {"ids": 13}),
        # EinsumDense: contractions of one or two axes, free kernel axes, "..." on the left,
        # an output in another order, a bias on trailing output axes.
        ("EinsumDense abc,cd->abd", (4, 5), lambda: layers.EinsumDense("abc,cd->abd", (None, 3), bias_axes="d"), 1e-5),
        ("EinsumDense ab,bc->ac relu", (6,), lambda: layers.EinsumDense("ab,bc->ac", 4, activation="relu"), 1e-5),
        ("EinsumDense abc,cde->abde", (4, 5),
         lambda: layers.EinsumDense("abc,cde->abde", (None, 2, 3), bias_axes="de"), 1e-5),
        ("EinsumDense ...b,bc->...c", (3, 2, 5), lambda: layers.EinsumDense("...b,bc->...c", 3, bias_axes="c"), 1e-5),
        ("EinsumDense abcd,cde->abe", (4, 2, 3), lambda: layers.EinsumDense("abcd,cde->abe", (None, 5)), 1e-5),
        ("EinsumDense abc,cd->adb", (4, 5), lambda: layers.EinsumDense("abc,cd->adb", (3, 4), bias_axes="b"), 1e-5),
        # MultiHeadAttention (self-attention on the one input; the key= call passes it again).
        ("MultiHeadAttention", (5, 8), lambda: _self_attention(layers.MultiHeadAttention(2, 3)), 1e-4),
        ("MultiHeadAttention causal", (6, 4),
         lambda: _self_attention(layers.MultiHeadAttention(2, 4), use_causal_mask=True), 1e-4),
        ("MultiHeadAttention value_dim output_shape no bias", (5, 6),
         lambda: _self_attention(layers.MultiHeadAttention(3, 2, value_dim=4, output_shape=7, use_bias=False)), 1e-4),
        ("MultiHeadAttention key= gate", (4, 6),
         lambda: _self_attention(layers.MultiHeadAttention(2, 3, use_gate=True), key=True), 1e-4),
        ("MultiHeadAttention sliding_window causal", (7, 4),
         lambda: _self_attention(layers.MultiHeadAttention(2, 2, sliding_window=3), use_causal_mask=True), 1e-4),
        ("MultiHeadAttention dropout", (5, 4),
         lambda: _self_attention(layers.MultiHeadAttention(2, 2, dropout=0.3)), 1e-4, {"random": True}),
        # Attention and AdditiveAttention on [query, value(, key)] lists.
        ("Attention", (5, 4), lambda: _list_attention(layers.Attention()), 1e-4),
        ("Attention use_scale causal", (5, 4), lambda: _list_attention(layers.Attention(use_scale=True), use_causal_mask=True),
         1e-4),
        ("Attention concat", (4, 3), lambda: _list_attention(layers.Attention(score_mode="concat")), 1e-4),
        ("Attention concat use_scale key", (4, 3),
         lambda: _list_attention(layers.Attention(use_scale=True, score_mode="concat"), key=True), 1e-4),
        ("AdditiveAttention", (5, 4), lambda: _list_attention(layers.AdditiveAttention()), 1e-4),
        ("AdditiveAttention no scale", (5, 4), lambda: _list_attention(layers.AdditiveAttention(use_scale=False)), 1e-4),
        ("Attention dropout", (5, 4), lambda: _list_attention(layers.Attention(dropout=0.3)), 1e-4, {"random": True}),
        ("Attention masked by Embedding", (6,),
         lambda: _embedded(layers.Embedding(5, 4, mask_zero=True), layers.Attention(), as_list=True), 1e-4, {"ids": 5}),
        # Masks from Embedding(mask_zero=True): the query's and value's sequence masks.
        ("MultiHeadAttention masked by Embedding", (6,),
         lambda: _embedded(layers.Embedding(5, 4, mask_zero=True), layers.MultiHeadAttention(2, 3)), 1e-4, {"ids": 5}),
        # TimeDistributed: the layer on every step, the steps folded into the batch.
        ("TimeDistributed Dense", (4, 3), lambda: layers.TimeDistributed(layers.Dense(5, activation="tanh")), 1e-5),
        ("TimeDistributed Conv2D", (3, 6, 6, 2), lambda: layers.TimeDistributed(layers.Conv2D(3, 3, padding="same")),
         1e-5),
        ("TimeDistributed Flatten", (3, 2, 4), lambda: layers.TimeDistributed(layers.Flatten()), 1e-5),
        ("TimeDistributed Dense regularized", (4, 3),
         lambda: layers.TimeDistributed(layers.Dense(2, kernel_regularizer="l2")), 1e-5),
        ("TimeDistributed LayerNormalization", (4, 3, 2),
         lambda: layers.TimeDistributed(layers.LayerNormalization(axis=[-2, -1])), 1e-5),
    ] + regularizer_cases(layers)


def regularizer_cases(layers):
    """Regularizers (their penalties in the loss, so in the gradients) and constraints (applied
    after the step: the weights after nnfit's step against the constraint of Keras's)."""
    from keras import constraints as k, regularizers as r
    return [
        ("Dense L2 kernel, L1 bias, L1L2 activity", (6,),
         lambda: layers.Dense(3, kernel_regularizer=r.L2(0.05), bias_regularizer=r.L1(0.1),
                              activity_regularizer=r.L1L2(0.01, 0.02)), 1e-5),
        ("Dense orthogonal rows", (6,), lambda: layers.Dense(4, kernel_regularizer=r.OrthogonalRegularizer(0.3)), 1e-5),
        ("Dense orthogonal columns", (6,),
         lambda: layers.Dense(4, kernel_regularizer=r.OrthogonalRegularizer(0.2, mode="columns")), 1e-5),
        ("Dense MaxNorm kernel, NonNeg bias", (6,),
         lambda: layers.Dense(3, kernel_constraint=k.MaxNorm(1.0), bias_constraint=k.NonNeg()), 1e-5),
        ("Dense UnitNorm axis 1", (6,), lambda: layers.Dense(3, kernel_constraint=k.UnitNorm(axis=1)), 1e-5),
        ("Dense MinMaxNorm", (6,), lambda: layers.Dense(3, kernel_constraint=k.MinMaxNorm(0.5, 1.0, rate=0.7)), 1e-5),
        ("Conv2D MaxNorm over [0, 1, 2], L2", (5, 5, 2),
         lambda: layers.Conv2D(3, 3, kernel_constraint=k.MaxNorm(1.5, axis=[0, 1, 2]), kernel_regularizer=r.L2(0.02)),
         1e-5),
        ("Conv3D MaxNorm over [0, 1, 2, 3], L2, NonNeg bias", (3, 4, 4, 2),
         lambda: layers.Conv3D(3, 2, kernel_constraint=k.MaxNorm(1.5, axis=[0, 1, 2, 3]),
                               kernel_regularizer=r.L2(0.02), bias_constraint=k.NonNeg()), 1e-5),
        ("LSTM recurrent L2, kernel MaxNorm", (4, 3),
         lambda: layers.LSTM(2, recurrent_regularizer=r.L2(0.1), kernel_constraint=k.MaxNorm(1.0)), 1e-4),
        ("Bidirectional GRU kernel L1", (4, 3), lambda: layers.Bidirectional(layers.GRU(2, kernel_regularizer=r.L1(0.05))),
         1e-4),
        ("Embedding L2 and activity L1", (5,),
         lambda: layers.Embedding(9, 3, embeddings_regularizer=r.L2(0.1), activity_regularizer=r.L1(0.05)), 1e-5,
         {"ids": 9}),
        ("BatchNormalization gamma L2, beta NonNeg", (5,),
         lambda: layers.BatchNormalization(gamma_regularizer=r.L2(0.1), beta_constraint=k.NonNeg()), 1e-5),
        ("LayerNormalization beta L1", (5,), lambda: layers.LayerNormalization(beta_regularizer=r.L1(0.2)), 1e-5),
        ("Normalization adapted", (6,), lambda: layers.Normalization(), 1e-5),
        ("Normalization adapted axis None", (3, 4), lambda: layers.Normalization(axis=None), 1e-5),
        ("Normalization adapted axis 1", (3, 4), lambda: layers.Normalization(axis=1), 1e-5),
        ("Normalization adapted axes 1 3 invert", (3, 4, 2), lambda: layers.Normalization(axis=(1, 3), invert=True), 1e-5),
        ("Normalization given", (3,), lambda: layers.Normalization(mean=[0.5, -1.0, 2.0], variance=[4.0, 0.25, 1.0]),
         1e-5),
        ("Normalization given invert, a zero variance", (3, 2), lambda: layers.Normalization(mean=[3.0, -1.0], variance=[2.0, 0.0], invert=True),
         1e-5),
        ("ActivityRegularization", (6,), lambda: layers.ActivityRegularization(l1=0.05, l2=0.1), 1e-5),
        ("Identity", (6,), lambda: layers.Identity(), 1e-6),
        ("MultiHeadAttention kernel L2", (4, 3), lambda: _self_attention(layers.MultiHeadAttention(
            2, 2, kernel_regularizer=r.L2(0.05))), 1e-4),
    ]


def _self_attention(layer, key=False, **kwargs):
    """The layer as a one-input factory result: layer(t, t[, key=t], **kwargs)."""
    def call(t):
        return layer(t, t, key=t, **kwargs) if key else layer(t, t, **kwargs)
    call.layer = layer
    return call


def _list_attention(layer, key=False, **kwargs):
    """Attention's form: layer([t, t(, t)], **kwargs)."""
    def call(t):
        return layer([t, t, t] if key else [t, t], **kwargs)
    call.layer = layer
    return call


def _embedded(embedding, attention, as_list=False):
    """Embedding, self-attention on its (masked) output, and a masked average over the steps."""
    def call(t):
        e = embedding(t)
        a = attention([e, e]) if as_list else attention(e, e)
        return __import__("keras").layers.GlobalAveragePooling1D()(a)
    call.layer = attention
    return call


def build(keras, name, shape, factory, rng, ids=None, pad=False):
    inp = keras.Input(shape=shape, name="x", dtype="int32" if ids else "float32")
    h = inp if ids or pad else keras.layers.BatchNormalization(name="bn")(inp)
    out = factory()(h)
    model = keras.Model(inp, out, name="".join(ch if ch.isalnum() else "_" for ch in name))
    weights = []
    for w in model.weights:
        if "variance" in w.path:  # BatchNormalization's moving variance, Normalization's
            weights.append(rng.uniform(0.5, 1.5, w.shape))
        elif "int" in str(w.dtype):  # Normalization's sample count
            weights.append(rng.integers(1, 100, w.shape))
        else:
            weights.append(rng.standard_normal(w.shape) * 0.5)
    model.set_weights([v.astype(w.dtype) for v, w in zip(weights, model.weights)])
    for layer in model.layers:  # Normalization reads its variables only when finalized (as on load)
        if isinstance(layer, keras.layers.Normalization) and layer.input_mean is None:
            layer.finalize_state()
    return model


def keras_gradients(model, x, y):
    import tensorflow as tf
    with tf.GradientTape() as tape:
        pred = tf.cast(model(x, training=True), tf.float32)
        loss = tf.reduce_mean(tf.square(pred - y))
        if model.losses:  # regularizers' penalties, as Keras's compute_loss adds them
            loss = loss + tf.add_n([tf.cast(penalty, tf.float32) for penalty in model.losses])
    grads = tape.gradient(loss, model.trainable_weights)
    # An Embedding's gradient comes as IndexedSlices; the dense form is what SGD applies.
    return {w.path: tf.convert_to_tensor(g).numpy() for w, g in zip(model.trainable_weights, grads)}


def nnfit_step(cli, path, x, y, work):
    np.save(os.path.join(work, "x.npy"), x.astype(np.float32))
    np.save(os.path.join(work, "y.npy"), y)
    cfg = {
        "model": path,
        "data": {"train": {"source": {"format": "npy", "x": "x.npy", "y": "y.npy"}, "pipeline": [{"batch": BATCH}]}},
        "compile": {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 1.0}}, "loss": "mean_squared_error"},
        "fit": {"epochs": 1, "seed": 1},
    }
    with open(os.path.join(work, "step.json"), "w") as f:
        json.dump(cfg, f)
    after = os.path.join(work, "after.keras")
    subprocess.run([cli, "train", os.path.join(work, "step.json"), "--quiet", "--save", after], check=True,
                   stdout=subprocess.DEVNULL)
    return after


def run_case(keras, cli, work, case, rng):
    name, shape, factory, tol = case[:4]
    options = case[4] if len(case) > 4 else {}
    ids, pad, random = options.get("ids"), options.get("pad", False), options.get("random", False)
    model = build(keras, name, shape, factory, rng, ids, pad)
    path = os.path.join(work, "layer.keras")
    model.save(path)
    if ids:
        x = rng.integers(0, ids, (BATCH,) + shape).astype(np.int32)
    else:
        x = rng.standard_normal((BATCH,) + shape).astype(np.float32)
    if pad:  # some all-zero steps, which Masking masks
        x[rng.random((BATCH, shape[0])) < 0.35] = 0.0
    want = np.asarray(model.predict(x, verbose=0)).astype(np.float32)
    subprocess.run([cli, "predict", path, "--input", _save(work, "in.npy", x), "--output",
                    os.path.join(work, "out.npy")], check=True)
    got = np.load(os.path.join(work, "out.npy"))
    fwd = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
    grad_tol = 1e-4
    if POLICY["name"] in POLICY_TOLERANCE:
        rel_fwd, grad_tol = POLICY_TOLERANCE[POLICY["name"]]
        tol = max(tol, rel_fwd * max(1.0, float(np.abs(want).max())))
    ok = fwd <= tol
    # One SGD step in nnfit against Keras's gradients at the same weights.
    y = rng.standard_normal(want.shape).astype(np.float32)
    if options.get("forward_only"):
        after = keras.models.load_model(nnfit_step(cli, path, x, y, work))
        same = model.layers[-1].get_config() == after.layers[-1].get_config()
        ok = ok and same
        print(f"{'ok  ' if ok else 'FAIL'} {name}: forward max |diff| {fwd:.3g} (tol {tol:g}), "
              f"{'its config comes back as Keras wrote it' if same else 'the config nnfit wrote differs'} "
              "(Keras has no gradient here)")
        if not ok:
            failures.append(name)
        return
    grads = keras_gradients(model, x, y)
    after = keras.models.load_model(nnfit_step(cli, path, x, y, work))
    if random:
        keys = ("rate", "stddev", "noise_shape", "dropout", "recurrent_dropout", "data_format", "units",
                # the augmentation layers'
                "mode", "seed", "factor", "height_factor", "width_factor", "fill_mode", "interpolation",
                "fill_value", "value_range")
        # Through JSON, as a file holds them: Keras's own get_config() has tuples where a
        # loaded layer's has lists.
        want_cfg, got_cfg = (json.loads(json.dumps(layer.get_config())) for layer in (model.layers[-1], after.layers[-1]))
        same = type(model.layers[-1]) is type(after.layers[-1]) and all(
            want_cfg.get(k) == got_cfg.get(k) for k in keys)
        ok = ok and same
        print(f"{'ok  ' if ok else 'FAIL'} {name}: forward max |diff| {fwd:.3g} (tol {tol:g}), "
              f"{'its settings come back as Keras wrote them' if same else 'the settings nnfit wrote differ'} (training is random)")
        if not ok:
            failures.append(name)
        return
    worst = 0.0
    for w0, w1 in zip(model.trainable_weights, after.trainable_weights):
        g = grads[w0.path]
        want_after = w0.numpy() - g
        if w0.constraint is not None:  # Keras projects the weight after the update
            want_after = keras.ops.convert_to_numpy(w0.constraint(want_after))
        scale = max(1.0, float(np.abs(g).max()))
        worst = max(worst, float(np.abs(w1.numpy() - want_after).max()) / scale)
    ok = ok and worst <= grad_tol
    # A frozen layer's weights come back as they went in, and still frozen.
    for layer in model.layers:
        if not layer.trainable and layer.weights:
            twin = after.get_layer(layer.name)
            same = all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(layer.weights, twin.weights))
            if not same or twin.trainable:
                ok = False
                print(f"     frozen layer {layer.name}: weights changed or no longer frozen")
    ok = ok and len(model.trainable_weights) == len(after.trainable_weights)
    # Regularizers and constraints come back in the file nnfit wrote as Keras wrote them.
    for layer in model.layers:
        want_cfg, got_cfg = layer.get_config(), after.get_layer(layer.name).get_config()
        for key in want_cfg:
            if key.endswith(("_regularizer", "_constraint")) and want_cfg[key] != got_cfg.get(key):
                ok = False
                print(f"     {layer.name}.{key}: Keras wrote {want_cfg[key]}, nnfit {got_cfg.get(key)}")
    print(f"{'ok  ' if ok else 'FAIL'} {name}: forward max |diff| {fwd:.3g} (tol {tol:g}), "
          f"gradient max |diff|/scale {worst:.3g} (tol {grad_tol:g})")
    if not ok:
        failures.append(name)


def _save(work, name, array):
    path = os.path.join(work, name)
    np.save(path, array)
    return path


def main(cli, work, only=None, policy=None, every=1):
    import keras
    if policy:
        POLICY["name"] = policy
        keras.mixed_precision.set_global_policy(policy)
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    keras.utils.set_random_seed(7)
    skipped = []
    for index, case in enumerate(cases(keras.layers)):
        if (only and only not in case[0]) or index % every:
            continue
        try:
            run_case(keras, cli, work, case, rng)
        except subprocess.CalledProcessError as e:
            print(f"FAIL {case[0]}: nnfit exited with {e.returncode}")
            failures.append(case[0])
        except Exception as e:  # noqa: BLE001 - Keras's own failure under a policy
            if not policy or isinstance(e, OSError):  # not Keras's: running nnfit failed
                raise
            skipped.append(case[0])
            print(f"skip {case[0]}: Keras itself fails under {policy}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
    under = f" under {policy}" if policy else ""
    if skipped:
        print(f"{len(skipped)} case(s) skipped{under}, Keras failing on them: {', '.join(skipped)}")
    if failures:
        print(f"{len(failures)} layer case(s) failed{under}: {', '.join(failures)}")
        return 1
    print(f"every layer case passed{under}")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    flags = {}
    for flag in ("--policy", "--every"):
        if flag in args:
            at = args.index(flag)
            flags[flag] = args[at + 1]
            del args[at:at + 2]
    sys.exit(main(args[0], args[1], args[2] if len(args) > 2 else None, flags.get("--policy"),
                  int(flags.get("--every", 1))))
