# The Functional API guide's ticket classifier: three inputs, two outputs.
import json
import numpy as np
import keras
from keras import layers

num_tags, num_words, num_departments = 12, 1000, 4
title_input = keras.Input(shape=(None,), name="title")
body_input = keras.Input(shape=(None,), name="body")
tags_input = keras.Input(shape=(num_tags,), name="tags")
title_features = layers.Embedding(num_words, 64)(title_input)
body_features = layers.Embedding(num_words, 64)(body_input)
title_features = layers.LSTM(128)(title_features)
body_features = layers.LSTM(32)(body_features)
x = layers.concatenate([title_features, body_features, tags_input])
priority_pred = layers.Dense(1, name="priority")(x)
department_pred = layers.Dense(num_departments, name="department")(x)
model = keras.Model(inputs=[title_input, body_input, tags_input], outputs=[priority_pred, department_pred])
model.compile(optimizer=keras.optimizers.RMSprop(1e-3),
              loss={"priority": keras.losses.BinaryCrossentropy(from_logits=True),
                    "department": keras.losses.CategoricalCrossentropy(from_logits=True)},
              loss_weights={"priority": 1.0, "department": 0.2})
rng = np.random.default_rng(0)
title_data = rng.integers(0, num_words, size=(128, 10))
body_data = rng.integers(0, num_words, size=(128, 100))
tags_data = rng.integers(0, 2, size=(128, num_tags)).astype("float32")
priority_targets = rng.random(size=(128, 1))
dept_targets = rng.integers(0, 2, size=(128, num_departments)).astype("float32")
history = model.fit({"title": title_data, "body": body_data, "tags": tags_data},
                    {"priority": priority_targets, "department": dept_targets}, epochs=1, batch_size=32, verbose=0)
print("RESULT " + json.dumps({"keys": sorted(history.history), "params": model.count_params()}))
