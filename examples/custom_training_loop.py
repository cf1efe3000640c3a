"""The custom training loop of the seed tutorial (a Keras model subclass, a
GradientTape, an optimizer and metrics), run under ``import tapejax as tf``.

Only the import line differs from the TensorFlow original. Run:
    python examples/custom_training_loop.py
"""
import time

import numpy as np

import tapejax as tf


class MyModel(tf.keras.Model):
    def __init__(self, num_classes=10):
        super(MyModel, self).__init__(name='my_model')
        self.num_classes = num_classes
        self.dense_1 = tf.keras.layers.Dense(32, activation='relu')
        self.dense_2 = tf.keras.layers.Dense(num_classes)

    def call(self, inputs):
        x = self.dense_1(inputs)
        return self.dense_2(x)


np.random.seed(0)
tf.random.set_seed(0)
# A learnable synthetic 10-class problem (the tutorial uses pure noise).
w_true = np.random.normal(size=(32, 10))
x_train = np.random.random((1000, 32)).astype(np.float32)
y_train = np.eye(10, dtype=np.float32)[np.argmax(x_train @ w_true, axis=1)]
x_val = np.random.random((200, 32)).astype(np.float32)
y_val = np.eye(10, dtype=np.float32)[np.argmax(x_val @ w_true, axis=1)]

optimizer = tf.keras.optimizers.Adam(learning_rate=1e-2)
loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
train_acc_metric = tf.keras.metrics.CategoricalAccuracy()
val_acc_metric = tf.keras.metrics.CategoricalAccuracy()

batch_size = 64
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
train_dataset = train_dataset.shuffle(buffer_size=1024, seed=0).batch(batch_size)
val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(64)

model = MyModel(num_classes=10)


def train_step(x_batch_train, y_batch_train):
    with tf.GradientTape() as tape:
        logits = model(x_batch_train, training=True)
        loss_value = loss_fn(y_batch_train, logits)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    train_acc_metric.update_state(y_batch_train, logits)
    return loss_value


def run(step_fn, epochs, label):
    start = time.perf_counter()
    for epoch in range(epochs):
        for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
            loss_value = step_fn(x_batch_train, y_batch_train)
            if step % 5 == 0:
                print(f"[{label}] epoch {epoch} step {step:2d}: loss {float(loss_value):.4f}")
        train_acc = train_acc_metric.result()
        train_acc_metric.reset_state()
        for x_batch_val, y_batch_val in val_dataset:
            val_acc_metric.update_state(y_batch_val, model(x_batch_val))
        val_acc = val_acc_metric.result()
        val_acc_metric.reset_state()
        print(f"[{label}] epoch {epoch}: train acc {float(train_acc):.4f}, val acc {float(val_acc):.4f}")
    return time.perf_counter() - start


eager_s = run(train_step, 3, "eager")
compiled_s = run(tf.function(train_step), 3, "tf.function")
print(f"3 epochs: eager {eager_s:.2f} s, tf.function {compiled_s:.2f} s (first call compiles)")
