# keras.io "Image classification from scratch", previewing the augmentation: the
# augmentation Sequential called on a batch of images as arrays, where Keras's random layers
# run in training mode by default (their call's training=True), so the images change.
import json
import numpy as np
import keras
from keras import layers

data_augmentation = keras.Sequential([layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)])
rng = np.random.default_rng(0)
images = (rng.random((4, 32, 32, 3)) * 255).astype("float32")
augmented_images = np.asarray(data_augmentation(images))
explicit = np.asarray(data_augmentation(images, training=True))
print("RESULT " + json.dumps({"shape": list(augmented_images.shape), "changed": bool(not np.allclose(augmented_images, images)),
                              "explicit_changed": bool(not np.allclose(explicit, images))}))
