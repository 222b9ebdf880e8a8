# Callbacks outside fit and over HTTP, as Keras's guides and API docs use them: a
# CallbackList driving a user's callbacks from a hand-written loop (with add_history and
# add_progbar), the logs it passes on, and RemoteMonitor posting each epoch's logs to a
# local server during fit (form field and JSON body), and ProgbarLogger given to fit.
import http.server
import json
import threading
import urllib.parse
import numpy as np
import keras
from keras import layers

received = []


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8")
        if self.headers.get("Content-Type", "").startswith("application/json"):
            received.append({"path": self.path, "json": json.loads(body)})
        else:
            form = urllib.parse.parse_qs(body)
            received.append({"path": self.path, "fields": sorted(form), "data": json.loads(form["data"][0])})
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
root = f"http://127.0.0.1:{server.server_address[1]}"


class Recorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_begin(self, logs=None):
        self.calls.append(["train_begin", sorted(self.params)])

    def on_epoch_begin(self, epoch, logs=None):
        self.calls.append(["epoch_begin", epoch])

    def on_train_batch_end(self, batch, logs=None):
        self.calls.append(["batch_end", batch, {k: type(v).__name__ for k, v in sorted(logs.items())}])

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(["epoch_end", epoch, {k: float(v) for k, v in sorted(logs.items())}])

    def on_train_end(self, logs=None):
        self.calls.append(["train_end", self.model is not None])


recorder = Recorder()
model = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(1)])
model.set_weights([np.array([[0.5], [-0.25], [0.1]], "float32"), np.zeros(1, "float32")])
callbacks = keras.callbacks.CallbackList([recorder], add_history=True, add_progbar=True, model=model, verbose=1,
                                         epochs=2, steps=2)
logs = {}
callbacks.on_train_begin()
for epoch in range(2):
    callbacks.on_epoch_begin(epoch)
    for step in range(2):
        callbacks.on_train_batch_begin(step)
        logs = {"loss": np.float32(1.0 / (epoch * 2 + step + 1)), "mae": np.array(0.5 - 0.1 * step, "float32")}
        callbacks.on_train_batch_end(step, logs)
    callbacks.on_epoch_end(epoch, logs)
callbacks.on_train_end(logs)

rng = np.random.default_rng(0)
x = rng.normal(size=(32, 3)).astype("float32")
y = (x @ np.array([[1.0], [2.0], [-1.0]], "float32")).astype("float32")
model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, callbacks=[
    keras.callbacks.RemoteMonitor(root=root), keras.callbacks.RemoteMonitor(root=root, path="/json", send_as_json=True),
    keras.callbacks.ProgbarLogger()])
server.shutdown()
print("RESULT " + json.dumps({
    "rtol": 1e-4, "calls": recorder.calls, "history": {k: [float(v) for v in vals] for k, vals in
                                                       sorted(callbacks._history.history.items())},
    "kinds": [type(c).__name__ for c in callbacks.callbacks],
    "received": received, "fit": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())}}))
