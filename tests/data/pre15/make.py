"""Writes the files of tests/test_saving_compat.py with the code before the checkpoint package
(commit c6a87f5): run `PYTHONPATH=<checkout of c6a87f5> python tests/data/pre15/make.py`."""
import pathlib
import shutil

import numpy as np

import tapejax as tf

OUT = pathlib.Path(__file__).resolve().parent


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
        self.layers = [tf.Variable(5.0, name="a"), {"b": tf.Variable([6, 7], name="b")}]

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def __call__(self, x):
        return tf.matmul(x, self.w)


def sequential():
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="relu", input_shape=(2,)),
                                 tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.1), loss="mse", metrics=["mae"])
    x = np.arange(8, dtype=np.float32).reshape(4, 2) / 8
    model.fit(x, x[:, :1], epochs=1, verbose=0)
    return model, x


if __name__ == "__main__":
    for name in ("ckpt", "weights", "model", "functional", "module"):
        shutil.rmtree(OUT / name, ignore_errors=True)
    net = Net()
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(net.w ** 2)
    opt.apply_gradients(zip(tape.gradient(loss, [net.w]), [net.w]))
    tf.train.Checkpoint(net=net, optimizer=opt).write(str(OUT / "ckpt"))
    model, x = sequential()
    model.save_weights(str(OUT / "weights"))
    model.save(str(OUT / "model"))
    np.save(OUT / "model_out.npy", model.predict(x, verbose=0))
    inputs = tf.keras.Input((2,), name="features")
    func = tf.keras.Model(inputs, tf.keras.layers.Dense(2, name="head")(inputs))
    func.save(str(OUT / "functional"))
    np.save(OUT / "functional_out.npy", func.predict(x, verbose=0))
    tf.saved_model.save(Net(), str(OUT / "module"))
