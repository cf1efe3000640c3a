"""The cells of notebooks/*.ipynb: ``(kind, source)`` pairs, kind ``"md"`` or ``"code"``.

The code cells are the TensorFlow tutorials' code (../shared/seeds, and the
TensorFlow guides they translate) with ``import tensorflow as tf`` replaced by
``import tapejax as tf``. Where a seed's code was incomplete (a name used but
never defined, a TF1-only call) the markdown says what was filled in.
"""


def md(text):
    return ("md", text)


def code(text):
    return ("code", text)


# ---------------------------------------------------------------------------
# 01: introduction to gradients and automatic differentiation (seed 001)
# ---------------------------------------------------------------------------

AUTODIFF = [
    md("""
# Introduction to gradients and automatic differentiation

This is TensorFlow's guide [*Introduction to gradients and automatic
differentiation*](https://www.tensorflow.org/guide/autodiff) (seed 001, a Chinese
write-up of it), running on **tapejax**: the only change to the TensorFlow code is
the import line. Every printed number below is the one TensorFlow prints.

Automatic differentiation records the operations of a forward pass on a *tape*,
then walks the tape backwards (reverse mode) to compute gradients. Reverse mode
suits the usual deep-learning case: many inputs (weights), one output (the loss).
"""),
    md("## Setup"),
    code("""
import numpy as np
import matplotlib.pyplot as plt

import tapejax as tf
"""),
    md("""
## Gradient tapes

`tf.GradientTape` records the operations run inside its context on the
`tf.Variable`s they read. `tape.gradient(target, sources)` then computes the
gradient of the target with respect to the sources.
"""),
    code("""
x = tf.Variable(3.0)

with tf.GradientTape() as tape:
  y = x**2
"""),
    code("""
# dy = 2x * dx
dy_dx = tape.gradient(y, x)
dy_dx.numpy()
"""),
    md("The same works for tensors of any shape:"),
    code("""
w = tf.Variable(tf.random.normal((3, 2)), name='w')
b = tf.Variable(tf.zeros(2, dtype=tf.float32), name='b')
x = [[1., 2., 3.]]

with tf.GradientTape(persistent=True) as tape:
  y = x @ w + b
  loss = tf.reduce_mean(y**2)
"""),
    md("The sources may be a list or a dictionary; the gradients come back in the same structure:"),
    code("""
[dl_dw, dl_db] = tape.gradient(loss, [w, b])
"""),
    code("""
print(w.shape)
print(dl_dw.shape)
"""),
    code("""
my_vars = {
    'w': w,
    'b': b
}

grad = tape.gradient(loss, my_vars)
grad['b']
"""),
    md("""
## Gradients with respect to a model

Variables are usually collected in a `tf.Module` or one of its subclasses
(`layers.Layer`, `keras.Model`); `Module.trainable_variables` lists them, so the
gradients of a layer take a few lines:
"""),
    code("""
layer = tf.keras.layers.Dense(2, activation='relu')
x = tf.constant([[1., 2., 3.]])

with tf.GradientTape() as tape:
  # Forward pass
  y = layer(x)
  loss = tf.reduce_mean(y**2)

# Calculate gradients with respect to every trainable variable
grad = tape.gradient(loss, layer.trainable_variables)
"""),
    code("""
for var, g in zip(layer.trainable_variables, grad):
  print(f'{var.name}, shape: {g.shape}')
"""),
    md("""
## Controlling what the tape watches

By default the tape records every operation after a *trainable* `tf.Variable` is
read. A non-trainable variable, a tensor made from a variable, and a constant
are not watched, so their gradients are `None`:
"""),
    code("""
# A trainable variable
x0 = tf.Variable(3.0, name='x0')
# Not trainable
x1 = tf.Variable(3.0, name='x1', trainable=False)
# Not a Variable: A variable + tensor returns a tensor.
x2 = tf.Variable(2.0, name='x2') + 1.0
# Not a variable
x3 = tf.constant(3.0, name='x3')

with tf.GradientTape() as tape:
  y = (x0**2) + (x1**2) + (x2**2)

grad = tape.gradient(y, [x0, x1, x2, x3])

for g in grad:
  print(g)
"""),
    md("`GradientTape.watched_variables` lists the variables the tape watched:"),
    code("""
[var.name for var in tape.watched_variables()]
"""),
    md("To record gradients with respect to a `tf.Tensor`, call `GradientTape.watch(x)`:"),
    code("""
x = tf.constant(3.0)
with tf.GradientTape() as tape:
  tape.watch(x)
  y = x**2

# dy = 2x * dx
dy_dx = tape.gradient(y, x)
print(dy_dx.numpy())
"""),
    md("""
Conversely, `watch_accessed_variables=False` turns off watching every variable
read; only what you `watch` is connected. This computation uses two variables
but connects the gradient to only one of them:
"""),
    code("""
x0 = tf.Variable(0.0)
x1 = tf.Variable(10.0)

with tf.GradientTape(watch_accessed_variables=False) as tape:
  tape.watch(x1)
  y0 = tf.math.sin(x0)
  y1 = tf.nn.softplus(x1)
  y = y0 + y1
  ys = tf.reduce_sum(y)
"""),
    code("""
# dys/dx1 = exp(x1) / (1 + exp(x1)) = sigmoid(x1)
grad = tape.gradient(ys, {'x0': x0, 'x1': x1})

print('dy/dx0:', grad['x0'])
print('dy/dx1:', grad['x1'].numpy())
"""),
    md("""
## Intermediate results

You can also ask for the gradient of the output with respect to an intermediate
value computed inside the tape:
"""),
    code("""
x = tf.constant(3.0)

with tf.GradientTape() as tape:
  tape.watch(x)
  y = x * x
  z = y * y

# Use the tape to compute the gradient of z with respect to the
# intermediate value y.
# dz_dy = 2 * y and y = x ** 2 = 9
print(tape.gradient(z, y).numpy())
"""),
    md("""
A tape's resources are released as soon as `gradient` is called. To compute
several gradients over the same computation, make the tape `persistent=True`:
"""),
    code("""
x = tf.constant([1, 3.0])
with tf.GradientTape(persistent=True) as tape:
  tape.watch(x)
  y = x * x
  z = y * y

print(tape.gradient(z, x).numpy())  # [4.0, 108.0] (4 * x**3 at x = [1.0, 3.0])
print(tape.gradient(y, x).numpy())  # [2.0, 6.0] (2 * x at x = [1.0, 3.0])
"""),
    code("""
del tape   # Drop the reference to the tape
"""),
    md("""
## Gradients of non-scalar targets

A gradient is taken of a scalar. Asking for the gradient of several targets
gives the gradient of their sum:
"""),
    code("""
x = tf.Variable(2.0)
with tf.GradientTape(persistent=True) as tape:
  y0 = x**2
  y1 = 1 / x

print(tape.gradient(y0, x).numpy())
print(tape.gradient(y1, x).numpy())
"""),
    code("""
x = tf.Variable(2.0)
with tf.GradientTape() as tape:
  y0 = x**2
  y1 = 1 / x

print(tape.gradient({'y0': y0, 'y1': y1}, x).numpy())
"""),
    code("""
x = tf.Variable(2.)

with tf.GradientTape() as tape:
  y = x * [3., 4.]

print(tape.gradient(y, x).numpy())
"""),
    md("""
For an element-wise computation the gradient of the sum is the derivative of
each element with respect to its input:
"""),
    code("""
x = tf.linspace(-10.0, 10.0, 200+1)

with tf.GradientTape() as tape:
  tape.watch(x)
  y = tf.nn.sigmoid(x)

dy_dx = tape.gradient(y, x)
"""),
    code("""
plt.plot(x, y, label='y')
plt.plot(x, dy_dx, label='dy/dx')
plt.legend()
_ = plt.xlabel('x')
"""),
    md("""
## Control flow

The tape records the operations as they run, so Python control flow is handled
naturally: only the branch taken is on the tape.
"""),
    code("""
x = tf.constant(1.0)

v0 = tf.Variable(2.0)
v1 = tf.Variable(2.0)

with tf.GradientTape(persistent=True) as tape:
  tape.watch(x)
  if x > 0.0:
    result = v0
  else:
    result = v1**2

dv0, dv1 = tape.gradient(result, [v0, v1])

print(dv0)
print(dv1)
"""),
    md("The condition itself is not differentiable, so the gradient with respect to `x` is `None`:"),
    code("""
dx = tape.gradient(result, x)

print(dx)
"""),
    md("""
## Cases where `gradient` returns `None`

When a target is not connected to a source, the gradient is `None`:
"""),
    code("""
x = tf.Variable(2.)
y = tf.Variable(3.)

with tf.GradientTape() as tape:
  z = y * y
print(tape.gradient(z, x))
"""),
    md("""
**1. A variable replaced by a tensor.** `x = x + 1` makes `x` a tensor; the
second epoch is disconnected. (`x.assign_add(1)` is what was meant.) tapejax's
class names are `Variable` and `Tensor` where TensorFlow prints
`ResourceVariable` and `EagerTensor`.
"""),
    code("""
x = tf.Variable(2.0)

for epoch in range(2):
  with tf.GradientTape() as tape:
    y = x+1

  print(type(x).__name__, ":", tape.gradient(y, x))
  x = x + 1   # This should be `x.assign_add(1)`
"""),
    md("""
**2. Calculations done outside the library.** A NumPy computation is not
recorded, so the gradient stops there:
"""),
    code("""
x = tf.Variable([[1.0, 2.0],
                 [3.0, 4.0]], dtype=tf.float32)

with tf.GradientTape() as tape:
  x2 = x**2

  # This step is calculated with NumPy
  y = np.mean(x2, axis=0)

  # Like most ops, reduce_mean will cast the NumPy array to a constant tensor
  # using `tf.convert_to_tensor`.
  y = tf.reduce_mean(y, axis=0)

print(tape.gradient(y, x))
"""),
    md("""
**3. Gradients through an integer.** Integers are not differentiable; watching
one logs a warning and its gradient is `None`:
"""),
    code("""
x = tf.constant(10)

with tf.GradientTape() as g:
  g.watch(x)
  y = x * x

print(g.gradient(y, x))
"""),
    md("""
**4. Gradients through a stateful object.** Assigning to a variable is state,
not a differentiable operation; the tape starts again from the variable's new
value:
"""),
    code("""
x0 = tf.Variable(3.0)
x1 = tf.Variable(0.0)

with tf.GradientTape() as tape:
  # Update x1 = x1 + x0.
  x1.assign_add(x0)
  # The tape starts recording from x1.
  y = x1**2   # y = (x1 + x0)**2

# This doesn't work.
print(tape.gradient(y, x0))   #dy/dx0 = 2*(x1 + x0)
"""),
    md("""
## Zeros instead of `None`

`unconnected_gradients=tf.UnconnectedGradients.ZERO` returns zeros for
unconnected sources:
"""),
    code("""
x = tf.Variable([2., 2.])
y = tf.Variable(3.)

with tf.GradientTape() as tape:
  z = y**2
print(tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO))
"""),
]


# ---------------------------------------------------------------------------
# 02: advanced automatic differentiation (seed 004, custom gradients of seed 000)
# ---------------------------------------------------------------------------

ADVANCED = [
    md("""
# Advanced automatic differentiation

TensorFlow's guide [*Advanced automatic
differentiation*](https://www.tensorflow.org/guide/advanced_autodiff) (seed 004, a
Hindi translation of it), together with the custom-gradient examples of seed 000,
running on **tapejax**. The only change to the TensorFlow code is the import line.
"""),
    md("## Setup"),
    code("""
import tapejax as tf

import matplotlib as mpl
import matplotlib.pyplot as plt

mpl.rcParams['figure.figsize'] = (8, 6)
"""),
    md("""
## Controlling gradient recording

### Stop recording

`tf.GradientTape.stop_recording` suspends recording, e.g. while computing a
metric in the middle of a model:
"""),
    code("""
x = tf.Variable(2.0)
y = tf.Variable(3.0)

with tf.GradientTape() as t:
  x_sq = x * x
  with t.stop_recording():
    y_sq = y * y
  z = x_sq + y_sq

grad = t.gradient(z, {'x': x, 'y': y})

print('dz/dx:', grad['x'])  # 2*x => 4
print('dz/dy:', grad['y'])
"""),
    md("""
### Reset / start recording from scratch

`tf.GradientTape.reset` throws away everything recorded so far:
"""),
    code("""
x = tf.Variable(2.0)
y = tf.Variable(3.0)
reset = True

with tf.GradientTape() as t:
  y_sq = y * y
  if reset:
    # Throw out all the tape recorded so far.
    t.reset()
  z = x * x + y_sq

grad = t.gradient(z, {'x': x, 'y': y})

print('dz/dx:', grad['x'])  # 2*x => 4
print('dz/dy:', grad['y'])
"""),
    md("""
### Stop gradient flow with precision

`tf.stop_gradient` stops the gradient along one path, without access to the tape:
"""),
    code("""
x = tf.Variable(2.0)
y = tf.Variable(3.0)

with tf.GradientTape() as t:
  y_sq = y**2
  z = x**2 + tf.stop_gradient(y_sq)

grad = t.gradient(z, {'x': x, 'y': y})

print('dz/dx:', grad['x'])  # 2*x => 4
print('dz/dy:', grad['y'])
"""),
    md("""
## Custom gradients

`tf.custom_gradient` replaces the gradient of a function: to stabilise it, to
cache an expensive forward value, or to change a value without changing its
gradient. Here an identity clips the gradient flowing through it with
`tf.clip_by_norm`:
"""),
    code("""
# Establish an identity operation, but clip during the gradient pass.
@tf.custom_gradient
def clip_gradients(y):
  def backward(dy):
    return tf.clip_by_norm(dy, 0.5)
  return y, backward

v = tf.Variable(2.0)
with tf.GradientTape() as t:
  output = clip_gradients(v * v)
print(t.gradient(output, v))  # calls "backward", which clips 4 to 2
"""),
    md("""
### A numerically stable `log1pexp` (seed 000)

`log(1 + exp(x))` overflows for large `x`: `exp(100.)` is `inf` in float32, and
so is its gradient's intermediate, giving `NaN`. (Seed 000 calls the TF1 graph
API `tf.gradients` here, which TensorFlow 2 refuses in eager mode; the tape
below is its TF2 spelling.)
"""),
    code("""
def log1pexp(x):
  return tf.math.log(1 + tf.exp(x))

x = tf.constant(100.)
with tf.GradientTape() as tape:
  tape.watch(x)
  y = log1pexp(x)
dy = tape.gradient(y, x)  # NaN
print(dy)
"""),
    md("A custom gradient written in terms of `e = exp(x)` stays finite: `1 - 1/(1 + e)` is `1.0` at `x = 100`."),
    code("""
@tf.custom_gradient
def log1pexp(x):
  e = tf.exp(x)
  def grad(dy):
    return dy * (1 - 1 / (1 + e))
  return tf.math.log(1 + e), grad

with tf.GradientTape() as tape:
  tape.watch(x)
  y = log1pexp(x)
dy = tape.gradient(y, x)
print(dy)
"""),
    md("""
### Custom gradients in a training loop (seed 000)

The tape in a Keras training loop: a small convolutional model, `train_step`
recording the forward pass, `optimizer.apply_gradients`. Seed 000 trains on
MNIST; random 28x28 images keep this notebook self-contained and fast.
"""),
    code("""
# Build the model
mnist_model = tf.keras.Sequential([
  tf.keras.layers.Conv2D(16,[3,3], activation='relu',
                         input_shape=(None, None, 1)),
  tf.keras.layers.Conv2D(16,[3,3], activation='relu'),
  tf.keras.layers.GlobalAveragePooling2D(),
  tf.keras.layers.Dense(10)
])

optimizer = tf.keras.optimizers.Adam()
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
loss_history = []

images = tf.random.uniform((8 * 32, 28, 28, 1))
labels = tf.random.uniform((8 * 32,), maxval=10, dtype=tf.int32)
dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(32)
"""),
    code("""
def train_step(images, labels):
  with tf.GradientTape() as tape:
    logits = mnist_model(images, training=True)

    # Add asserts to check the shape of the output.
    tf.debugging.assert_equal(logits.shape, (32, 10))

    loss_value = loss_object(labels, logits)

  loss_history.append(loss_value.numpy().mean())
  grads = tape.gradient(loss_value, mnist_model.trainable_variables)
  optimizer.apply_gradients(zip(grads, mnist_model.trainable_variables))

for epoch in range(2):
  for (batch, (images, labels)) in enumerate(dataset):
    train_step(images, labels)
  print ('Epoch {} finished'.format(epoch))
"""),
    code("""
plt.plot(loss_history)
plt.xlabel('Batch #')
_ = plt.ylabel('Loss [entropy]')
"""),
    md("""
### Custom gradients in SavedModel

Custom gradients are saved with `tf.saved_model.SaveOptions(experimental_custom_gradients=True)`.
The loaded function gives the same clipped gradient. (With
`experimental_custom_gradients=False`, the loaded gradient would be JAX's
derivative of the traced forward computation, without the clipping rule.)
"""),
    code("""
class MyModule(tf.Module):

  @tf.function(input_signature=[tf.TensorSpec(None)])
  def call_custom_grad(self, x):
    return clip_gradients(x)

model = MyModule()
"""),
    code("""
tf.saved_model.save(
    model,
    'saved_model',
    options=tf.saved_model.SaveOptions(experimental_custom_gradients=True))

# The loaded gradients will be the same as the above example.
v = tf.Variable(2.0)
loaded = tf.saved_model.load('saved_model')
with tf.GradientTape() as t:
  output = loaded.call_custom_grad(v * v)
print(t.gradient(output, v))
"""),
    md("""
## Multiple tapes

Tapes interact seamlessly; here each one watches a different tensor:
"""),
    code("""
x0 = tf.constant(0.0)
x1 = tf.constant(0.0)

with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
  tape0.watch(x0)
  tape1.watch(x1)

  y0 = tf.math.sin(x0)
  y1 = tf.nn.sigmoid(x1)

  y = y0 + y1

  ys = tf.reduce_sum(y)
"""),
    code("""
tape0.gradient(ys, x0).numpy()   # cos(x) => 1.0
"""),
    code("""
tape1.gradient(ys, x1).numpy()   # sigmoid(x1)*(1-sigmoid(x1)) => 0.25
"""),
    md("""
### Higher-order gradients

A gradient computed inside an outer tape's context is recorded by that tape, so
the same API gives higher-order gradients:
"""),
    code("""
x = tf.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0

with tf.GradientTape() as t2:
  with tf.GradientTape() as t1:
    y = x * x * x

  # Compute the gradient inside the outer `t2` context manager
  # which means the gradient computation is differentiable as well.
  dy_dx = t1.gradient(y, x)
d2y_dx2 = t2.gradient(dy_dx, x)

print('dy_dx:', dy_dx.numpy())  # 3 * x**2 => 3.0
print('d2y_dx2:', d2y_dx2.numpy())  # 6 * x => 6.0
"""),
    md("""
### Example: input gradient regularization

Input gradient regularization (Finlay & Oberman, 2019) makes a model less
sensitive to adversarial examples by shrinking the gradient of its output with
respect to its input: an inner tape computes the input gradient, its magnitude
is taken, and an outer tape differentiates that magnitude with respect to the
model.
"""),
    code("""
x = tf.random.normal([7, 5])

layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
"""),
    code("""
with tf.GradientTape() as t2:
  # The inner tape only takes the gradient with respect to the input,
  # not the variables.
  with tf.GradientTape(watch_accessed_variables=False) as t1:
    t1.watch(x)
    y = layer(x)
    out = tf.reduce_sum(layer(x)**2)
  # 1. Calculate the input gradient.
  g1 = t1.gradient(out, x)
  # 2. Calculate the magnitude of the input gradient.
  g1_mag = tf.norm(g1)

# 3. Calculate the gradient of the magnitude with respect to the model.
dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
"""),
    code("""
[var.shape for var in dg1_mag]
"""),
    md("""
## Jacobians

`tf.GradientTape.jacobian` computes the gradient of every element of a target
with respect to every element of its sources. Like `gradient`, the sources may
be a structure; unlike it, the target is a single tensor.

### Scalar source
"""),
    code("""
x = tf.linspace(-10.0, 10.0, 200+1)
delta = tf.Variable(0.0)

with tf.GradientTape() as tape:
  y = tf.nn.sigmoid(x+delta)

dy_dx = tape.jacobian(y, delta)
"""),
    md("With a scalar source the jacobian has the target's shape:"),
    code("""
print(y.shape)
print(dy_dx.shape)
"""),
    code("""
plt.plot(x.numpy(), y, label='y')
plt.plot(x.numpy(), dy_dx, label='dy/dx')
plt.legend()
_ = plt.xlabel('x')
"""),
    md("""
### Tensor source

The jacobian of a layer's output `(7, 10)` with respect to its kernel `(5, 10)`
has the two shapes concatenated:
"""),
    code("""
x = tf.random.normal([7, 5])
layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)

with tf.GradientTape(persistent=True) as tape:
  y = layer(x)

y.shape
"""),
    code("""
layer.kernel.shape
"""),
    code("""
j = tape.jacobian(y, layer.kernel)
j.shape
"""),
    md("Summing over the target's dimensions gives the gradient of the sum, which `gradient` computes:"),
    code("""
g = tape.gradient(y, layer.kernel)
print('g.shape:', g.shape)

j_sum = tf.reduce_sum(j, axis=[0, 1])
delta = tf.reduce_max(abs(g - j_sum)).numpy()
assert delta < 1e-3
print('delta:', delta)
"""),
    md("""
### Example: Hessian

The Hessian is the jacobian of a gradient: nest a `gradient` inside a tape and
take its `jacobian`.
"""),
    code("""
x = tf.random.normal([7, 5])
layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)

with tf.GradientTape() as t2:
  with tf.GradientTape() as t1:
    x = layer1(x)
    x = layer2(x)
    loss = tf.reduce_mean(x**2)

  g = t1.gradient(loss, layer1.kernel)

h = t2.jacobian(g, layer1.kernel)
"""),
    code("""
print(f'layer.kernel.shape: {layer1.kernel.shape}')
print(f'h.shape: {h.shape}')
"""),
    md("For a Newton step, flatten the Hessian into a matrix and the gradient into a vector:"),
    code("""
n_params = tf.reduce_prod(layer1.kernel.shape)

g_vec = tf.reshape(g, [n_params, 1])
h_mat = tf.reshape(h, [n_params, n_params])
"""),
    md("The Hessian is symmetric:"),
    code("""
def imshow_zero_center(image, **kwargs):
  lim = tf.reduce_max(abs(image))
  plt.imshow(image, vmin=-lim, vmax=lim, cmap='seismic', **kwargs)
  plt.colorbar()
"""),
    code("""
imshow_zero_center(h_mat)
"""),
    md("The Newton's method update step:"),
    code("""
eps = 1e-3
eye_eps = tf.eye(h_mat.shape[0])*eps
"""),
    code("""
# X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
# h_mat = ∇²f(X(k))
# g_vec = ∇f(X(k))
update = tf.linalg.solve(h_mat + eye_eps, g_vec)

# Reshape the update and apply it to the variable.
_ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
"""),
    md("""
### Batch jacobian

When each example's outputs depend only on that example's inputs, the full
jacobian `(batch, outs, batch, ins)` wastes a batch dimension:
"""),
    code("""
x = tf.random.normal([7, 5])

layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)

with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
  tape.watch(x)
  y = layer1(x)
  y = layer2(y)

y.shape
"""),
    code("""
j = tape.jacobian(y, x)
j.shape
"""),
    md("Each `(batch, batch)` slice of it is diagonal:"),
    code("""
imshow_zero_center(j[:, 0, :, 0])
_ = plt.title('A (batch, batch) slice')
"""),
    code("""
def plot_as_patches(j):
  # Reorder axes so the diagonals will each form a contiguous patch.
  j = tf.transpose(j, [1, 0, 3, 2])
  # Pad in between each patch.
  lim = tf.reduce_max(abs(j))
  j = tf.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]],
             constant_values=-lim)
  # Reshape to form a single image.
  s = j.shape
  j = tf.reshape(j, [s[0]*s[1], s[2]*s[3]])
  imshow_zero_center(j, extent=[-0.5, s[2]-0.5, s[0]-0.5, -0.5])

plot_as_patches(j)
_ = plt.title('All (batch, batch) slices are diagonal')
"""),
    md("Summing over the duplicate batch dimension, or selecting the diagonal with `tf.einsum`, gives the per-example jacobians:"),
    code("""
j_sum = tf.reduce_sum(j, axis=2)
print(j_sum.shape)
j_select = tf.einsum('bxby->bxy', j)
print(j_select.shape)
"""),
    md("`tf.GradientTape.batch_jacobian` computes them without the extra dimension:"),
    code("""
jb = tape.batch_jacobian(y, x)
jb.shape
"""),
    code("""
error = tf.reduce_max(abs(jb - j_sum))
assert error < 1e-3
print(error.numpy())
"""),
    md("""
**Caveat:** `batch_jacobian` assumes the examples are independent. Batch
normalization in training mode mixes them, so the slices are no longer diagonal:
"""),
    code("""
x = tf.random.normal([7, 5])

layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
bn = tf.keras.layers.BatchNormalization()
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)

with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
  tape.watch(x)
  y = layer1(x)
  y = bn(y, training=True)
  y = layer2(y)

j = tape.jacobian(y, x)
print(f'j.shape: {j.shape}')
"""),
    code("""
plot_as_patches(j)

_ = plt.title('These slices are not diagonal')
_ = plt.xlabel("Don't use `batch_jacobian`")
"""),
    md("`batch_jacobian` still runs and returns the expected shape, but its contents have an unclear meaning:"),
    code("""
jb = tape.batch_jacobian(y, x)
print(f'jb.shape: {jb.shape}')
"""),
]


# ---------------------------------------------------------------------------
# 03: custom training loop (seed 003)
# ---------------------------------------------------------------------------

TRAINING = [
    md("""
# Automatic differentiation and custom training loops

Seed 003 (*TensorFlow 2.0: automatic differentiation and custom model
training*) on **tapejax**: a `tf.keras.Model` subclass trained with
`tf.GradientTape`, Keras losses, optimizers and metrics, and `tf.data`. Then
the same step under `@tf.function`, with its measured speed-up. The only change
to the TensorFlow code is the import line.
"""),
    code("""
import tapejax as tf
"""),
    md("""
## GradientTape

`watch(tensor)` makes the tape track a tensor; `gradient(target, sources)`
differentiates the target with respect to the sources.
"""),
    code("""
x = tf.constant(3.0)

with tf.GradientTape() as g:
    g.watch(x)
    y = x * x
dy_dx = g.gradient(y, x)  # y' = 2*x = 2*3 = 6

dy_dx
"""),
    md("""
`tf.GradientTape(persistent=False, watch_accessed_variables=True)`:
`persistent` allows more than one `gradient` call; `watch_accessed_variables`
watches every trainable variable the computation reads.

## Case 1: one step of a custom model

Model (forward pass) → loss → optimizer → tape → predictions → loss →
gradients → `apply_gradients`.
"""),
    code("""
class MyModel(tf.keras.Model):

    def __init__(self, num_classes=10):
        super(MyModel, self).__init__(name='my_model')
        self.num_classes = num_classes
        # Define the layers
        self.dense_1 = tf.keras.layers.Dense(32, activation='relu')  # hidden layer
        self.dense_2 = tf.keras.layers.Dense(num_classes)  # output layer

    def call(self, inputs):
        # The forward pass, using the layers defined in `__init__`
        x = self.dense_1(inputs)
        return self.dense_2(x)
"""),
    md("A random data set, 10 classes:"),
    code("""
import numpy as np
# 10-class problem
data = np.random.random((1000, 32))
labels = np.random.random((1000, 10))
"""),
    code("""
model = MyModel(num_classes=10)

loss_object = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()

with tf.GradientTape() as tape:
    predictions = model(data)
    loss = loss_object(labels, predictions)

gradients = tape.gradient(loss, model.trainable_variables)  # the gradients

optimizer.apply_gradients(zip(gradients, model.trainable_variables))
# The model's trainable variables
model.trainable_variables
"""),
    md("""
## Case 2: a training loop over `tf.data`

`apply_gradients(grads_and_vars)` applies a list of (gradient, variable) pairs.
With the default settings the tape watches the trainable variables, so no
`watch` call is needed. This loop is what `model.fit()` does, with more freedom.
"""),
    code("""
model = MyModel(num_classes=10)

# Instantiate an optimizer.
optimizer = tf.keras.optimizers.SGD(learning_rate=1e-3)
# Instantiate a loss function.
loss_fn = tf.keras.losses.CategoricalCrossentropy()

# Prepare the training dataset.
batch_size = 64
train_dataset = tf.data.Dataset.from_tensor_slices((data, labels))
train_dataset = train_dataset.shuffle(buffer_size=1024).batch(batch_size)
"""),
    code("""
epochs = 3
for epoch in range(epochs):
    print('Start of epoch %d' % (epoch,))

    # Iterate over the batches of the dataset.
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):

        # Open a GradientTape to record the operations run
        # during the forward pass, which enables auto-differentiation.
        with tf.GradientTape() as tape:

            # Run the forward pass of the layer.
            # The operations that the layer applies
            # to its inputs are going to be recorded
            # on the GradientTape.
            logits = model(x_batch_train, training=True)  # Logits for this minibatch

            # Compute the loss value for this minibatch.
            loss_value = loss_fn(y_batch_train, logits)

        # Use the gradient tape to automatically retrieve
        # the gradients of the trainable variables with respect to the loss.
        grads = tape.gradient(loss_value, model.trainable_weights)

        # Run one step of gradient descent by updating
        # the value of the variables to minimize the loss.
        optimizer.apply_gradients(zip(grads, model.trainable_weights))

        # Log every 200 batches.
        if step % 200 == 0:
            print('Training loss (for one batch) at step %s: %s' % (step, float(loss_value)))
            print('Seen so far: %s samples' % ((step + 1) * 64))
"""),
    md("""
## Case 3: adding metrics

Built-in metrics in a hand-written loop: `update_state()` after each batch
(or call the metric), `result()` to read it, `reset_state()` at the end of
each epoch.
"""),
    code("""
import numpy as np
x_train = np.random.random((1000, 32))
y_train = np.random.random((1000, 10))
x_val = np.random.random((200, 32))
y_val = np.random.random((200, 10))
x_test = np.random.random((200, 32))
y_test = np.random.random((200, 10))

# Optimizer
optimizer = tf.keras.optimizers.SGD(learning_rate=1e-3)
# Loss function
loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)

# Metrics
train_acc_metric = tf.keras.metrics.CategoricalAccuracy()
val_acc_metric = tf.keras.metrics.CategoricalAccuracy()

# The training dataset
batch_size = 64
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
train_dataset = train_dataset.shuffle(buffer_size=1024).batch(batch_size)

# The validation dataset
val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val))
val_dataset = val_dataset.batch(64)
"""),
    code("""
model = MyModel(num_classes=10)
epochs = 3
for epoch in range(epochs):
    print('Start of epoch %d' % (epoch,))

    # Iterate over the batches of the dataset.
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):

        # One batch
        with tf.GradientTape() as tape:
            logits = model(x_batch_train)
            loss_value = loss_fn(y_batch_train, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))

        # Update the training metric.
        train_acc_metric(y_batch_train, logits)

    # Display the metric at the end of each epoch.
    train_acc = train_acc_metric.result()
    print('Training acc over epoch: %s' % (float(train_acc),))
    # Reset the training metric at the end of each epoch.
    train_acc_metric.reset_state()

    # Run a validation loop at the end of each epoch.
    for x_batch_val, y_batch_val in val_dataset:
        val_logits = model(x_batch_val)
        # Update the validation metric.
        val_acc_metric(y_batch_val, val_logits)
    val_acc = val_acc_metric.result()
    print('Validation acc: %s' % (float(val_acc),))
    val_acc_metric.reset_state()
"""),
    md("""
## The same step under `@tf.function`

Wrapping the step in `tf.function` compiles it: forward, tape, gradient,
optimizer and metric update become one XLA program (in tapejax, one
`jax.jit`-compiled call that reads and writes the model's, the optimizer's and
the metric's variables). The first call traces; later calls with the same
shapes reuse the program.
"""),
    code("""
import time

model = MyModel(num_classes=10)
optimizer = tf.keras.optimizers.SGD(learning_rate=1e-3)

def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    train_acc_metric.update_state(y, logits)
    return loss_value

@tf.function
def compiled_train_step(x, y):
    return train_step(x, y)

def run_epoch(step_fn):
    start = time.perf_counter()
    for x_batch_train, y_batch_train in train_dataset:
        loss_value = step_fn(x_batch_train, y_batch_train)
    float(loss_value)  # wait for the result
    return time.perf_counter() - start

run_epoch(train_step)            # warm-up: eager caches
run_epoch(compiled_train_step)   # warm-up: traces (full and last partial batch)
eager_s = min(run_epoch(train_step) for _ in range(3))
compiled_s = min(run_epoch(compiled_train_step) for _ in range(3))
print(f'eager epoch:       {1000 * eager_s:6.1f} ms')
print(f'tf.function epoch: {1000 * compiled_s:6.1f} ms')
print(f'speed-up: {eager_s / compiled_s:.1f}x')
"""),
    md("""
### The loss curve

Training a fresh model for a few epochs with the compiled step (Adam this time),
recording the loss of every batch:
"""),
    code("""
import matplotlib.pyplot as plt

model = MyModel(num_classes=10)
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-2)

@tf.function
def compiled_train_step(x, y):
    return train_step(x, y)

loss_history = []
for epoch in range(20):
    for x_batch_train, y_batch_train in train_dataset:
        loss_history.append(float(compiled_train_step(x_batch_train, y_batch_train)))
print('first loss: %.4f, last loss: %.4f' % (loss_history[0], loss_history[-1]))

steps_per_epoch = len(loss_history) // 20
epoch_means = np.reshape(loss_history, (20, steps_per_epoch)).mean(axis=1)
plt.plot(loss_history, alpha=0.5, label='batch')
plt.plot((np.arange(20) + 0.5) * steps_per_epoch, epoch_means, 'o-', label='epoch mean')
plt.legend()
plt.xlabel('Batch #')
_ = plt.ylabel('Loss [categorical cross-entropy]')
"""),
    md("""
The labels are random numbers, so there is nothing to learn beyond their
average: the loss falls quickly to that floor and then only fluctuates from
batch to batch.
"""),
]


# ---------------------------------------------------------------------------
# 04: gradients across split models (seed 002)
# ---------------------------------------------------------------------------

SPLIT = [
    md("""
# Computing gradients across two models

Seed 002, a question and its answer: a network split into two models
(`model_0` feeds `model_1`), each with its own `GradientTape`. How are they
trained as one? The trick is to pass the gradient of the loss with respect to
`model_0`'s output from `model_1`'s tape to `model_0`'s. This notebook runs the
TensorFlow code on **tapejax** (only the import line changes): first the
`output_gradients` answer, then the seed's jacobian-based chain rule, checked
against a single tape.
"""),
    code("""
import tapejax as tf
from tapejax.keras.models import Sequential
from tapejax.keras.layers import Activation, Dense, Layer, Flatten, Conv2D, MaxPooling2D, Dropout
import numpy as np

tf.random.set_seed(0)
"""),
    md("""
## Training two models as one: chain the tapes with `output_gradients`

The question's models, shrunk to small random "cat or dog" images so that the
notebook runs in seconds:
"""),
    code("""
model_0 = Sequential([
    Conv2D(8, (3,3), input_shape=(16, 16, 3)),
    Activation('relu'),
    MaxPooling2D(pool_size=(2,2)),
    Conv2D(8, (3,3)),
    Activation('relu'),
    MaxPooling2D(pool_size=(2,2)),
])

model_1 = Sequential([
    Flatten(),
    Dense(16),
    Activation('relu'),
    Dropout(0.5),
    Dense(1),
    Activation('sigmoid')
])

# label 1: a brighter image
y_train = tf.cast(tf.random.uniform((64, 1)) > 0.5, tf.float32)
x_train = tf.random.uniform((64, 16, 16, 3)) + 0.5 * y_train[:, :, tf.newaxis, tf.newaxis]
train_generator = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(16)

loss_fn = tf.keras.losses.BinaryCrossentropy()
optimizer = tf.keras.optimizers.Adam(1e-2)
"""),
    md("""
The question's attempt differentiates each model's *output* separately, which
trains them as two unrelated models. The fix: `tape_1` differentiates the loss
with respect to `model_1`'s weights **and** its input `y_pred_0`; that input
gradient is the upstream gradient for `model_0`, passed to `tape_0.gradient` as
`output_gradients` (a vector-Jacobian product, the chain rule).
"""),
    code("""
epoch_loss = tf.keras.metrics.Mean()
for epoch in range(8):
    for step, (x_batch, y_batch) in enumerate(train_generator):
        # model 0
        with tf.GradientTape() as tape_0:
            y_pred_0 = model_0(x_batch, training=True)

        # model 1
        with tf.GradientTape() as tape_1:
            tape_1.watch(y_pred_0)
            y_pred_1 = model_1(y_pred_0, training=True)
            loss_value = loss_fn(y_batch, y_pred_1)

        grads_1, dloss_dy0 = tape_1.gradient(loss_value, [model_1.trainable_weights, y_pred_0])
        grads_0 = tape_0.gradient(y_pred_0, model_0.trainable_weights, output_gradients=dloss_dy0)

        optimizer.apply_gradients(zip(grads_1 + grads_0,
                                      model_1.trainable_weights + model_0.trainable_weights))
        epoch_loss.update_state(loss_value)
    print(f'epoch {epoch}: loss {float(epoch_loss.result()):.4f}')
    epoch_loss.reset_state()
"""),
    md("The chained gradients equal those of one tape over both models (dropout off, so both passes compute the same function):"),
    code("""
x_batch, y_batch = x_train[:16], y_train[:16]

with tf.GradientTape() as tape:
    loss_ref = loss_fn(y_batch, model_1(model_0(x_batch)))
ref_grads = tape.gradient(loss_ref, model_1.trainable_weights + model_0.trainable_weights)

with tf.GradientTape() as tape_0:
    y_pred_0 = model_0(x_batch)
with tf.GradientTape() as tape_1:
    tape_1.watch(y_pred_0)
    loss_value = loss_fn(y_batch, model_1(y_pred_0))
grads_1, dloss_dy0 = tape_1.gradient(loss_value, [model_1.trainable_weights, y_pred_0])
grads_0 = tape_0.gradient(y_pred_0, model_0.trainable_weights, output_gradients=dloss_dy0)

for ref, g in zip(ref_grads, grads_1 + grads_0):
    print(g.shape, tf.experimental.numpy.allclose(ref, g).numpy())
"""),
    md("""
## The answer's reference model

The answer simplifies the model to three parts and first computes every
gradient with one persistent tape. (The answer's code refers to a flat `model`
whose `layers[0..3]` are these parts' layers without defining it; it is
defined here as `Sequential` of the layers, and the three parts share them.
`Dense(1, activation="sigmoid")` keeps the sigmoid in `model.layers[3]`.)
"""),
    code("""
tf.random.set_seed(0)

# 3 batches, 10x10 images, 1 channel
x = tf.random.uniform((3, 10, 10, 1))
y = tf.cast(tf.random.uniform((3, 1)) > 0.5, tf.float32)

model = Sequential([Conv2D(filters=6, kernel_size=2, activation="relu"),
                    Conv2D(filters=6, kernel_size=2, activation="relu"),
                    Flatten(),
                    Dense(1, activation="sigmoid")])
_ = model(x)  # build

layer_0 = Sequential([model.layers[0]])
layer_1 = Sequential([model.layers[1]])
layer_2 = Sequential([model.layers[2], model.layers[3]])

loss_fn = tf.keras.losses.MeanSquaredError()
"""),
    code("""
with tf.GradientTape(persistent=True) as tape:
    out_layer_0 = layer_0(x)
    out_layer_1 = layer_1(out_layer_0)
    out_layer_2 = layer_2(out_layer_1)
    loss = loss_fn(y, out_layer_2)
"""),
    code("""
ref_conv_dLoss_dWeights2 = tape.gradient(loss, layer_2.trainable_weights)
ref_conv_dLoss_dWeights1 = tape.gradient(loss, layer_1.trainable_weights)
ref_conv_dLoss_dWeights0 = tape.gradient(loss, layer_0.trainable_weights)
ref_conv_dLoss_dY = tape.gradient(loss, out_layer_2)
ref_conv_dLoss_dOut1 = tape.gradient(loss, out_layer_1)
ref_conv_dOut2_dOut1 = tape.gradient(out_layer_2, out_layer_1)
ref_conv_dLoss_dOut0 = tape.gradient(loss, out_layer_0)
ref_conv_dOut1_dOut0 = tape.gradient(out_layer_1, out_layer_0)
ref_conv_dOut0_dWeights0 = tape.gradient(out_layer_0, layer_0.trainable_weights)
ref_conv_dOut1_dWeights1 = tape.gradient(out_layer_1, layer_1.trainable_weights)
ref_conv_dOut2_dWeights2 = tape.gradient(out_layer_2, layer_2.trainable_weights)
"""),
    md("""
## Split with one tape per part: the chain rule with jacobians

Each part gets its own tape. `gradient` of an intermediate output loses
information (it sums over the output), so the answer keeps full jacobians:
`jacobian` with respect to the weights and `batch_jacobian` with respect to the
previous output.
"""),
    code("""
with tf.GradientTape(persistent=True) as tape_0:
    out_layer_0 = model.layers[0](x)

with tf.GradientTape(persistent=True) as tape_1:
    tape_1.watch(out_layer_0)
    out_layer_1 = model.layers[1](out_layer_0)

with tf.GradientTape(persistent=True) as tape_2:
    tape_2.watch(out_layer_1)
    out_flatten = model.layers[2](out_layer_1)
    out_layer_2 = model.layers[3](out_flatten)
    loss = loss_fn(y, out_layer_2)
"""),
    code("""
dOut0_dWeights0 = tape_0.jacobian(out_layer_0, model.layers[0].trainable_weights)

dOut1_dOut0 = tape_1.batch_jacobian(out_layer_1, out_layer_0)
dOut1_dWeights1 = tape_1.jacobian(out_layer_1, model.layers[1].trainable_weights)

dOut2_dOut1 = tape_2.batch_jacobian(out_layer_2, out_layer_1)
dOut2_dWeights2 = tape_2.jacobian(out_layer_2, model.layers[3].trainable_weights)

dLoss_dOut2 = tape_2.gradient(loss, out_layer_2) # or dL/dY
"""),
    code("""
print('dOut0_dWeights0:', [j.shape for j in dOut0_dWeights0])
print('dOut1_dOut0:', dOut1_dOut0.shape)
print('dOut2_dOut1:', dOut2_dOut1.shape)
"""),
    md("Two helpers contract an upstream gradient with a local jacobian:"),
    code("""
def add_missing_axes(source_tensor, target_tensor):
    len_missing_axes = len(target_tensor.shape) - len(source_tensor.shape)
    # note: the number of tf.newaxis is determined by the number of axis missing to reach
    # the same dimension of the target tensor
    assert len_missing_axes >= 0

    # convenience renaming
    source_tensor_extended = source_tensor
    # add every missing axis
    for _ in range(len_missing_axes):
        source_tensor_extended = source_tensor_extended[..., tf.newaxis]

    return source_tensor_extended

def upstream_gradient_loss_weights(dOutUpstream_dWeightsLocal, dLoss_dOutUpstream):
    dLoss_dOutUpstream_extended = add_missing_axes(dLoss_dOutUpstream, dOutUpstream_dWeightsLocal)
    # reduce over the first axes
    len_reduce = range(len(dLoss_dOutUpstream.shape))
    return tf.reduce_sum(dOutUpstream_dWeightsLocal * dLoss_dOutUpstream_extended, axis=len_reduce)

def upstream_gradient_loss_out(dOutUpstream_dOutLocal, dLoss_dOutUpstream):
    dLoss_dOutUpstream_extended = add_missing_axes(dLoss_dOutUpstream, dOutUpstream_dOutLocal)
    len_reduce = range(len(dLoss_dOutUpstream.shape))[1:]
    return tf.reduce_sum(dOutUpstream_dOutLocal * dLoss_dOutUpstream_extended, axis=len_reduce)
"""),
    md("Finally, the chain rule, checked against the single tape:"),
    code("""
dLoss_dWeights2 = upstream_gradient_loss_weights(dOut2_dWeights2[0], dLoss_dOut2)
dLoss_dBias2 = upstream_gradient_loss_weights(dOut2_dWeights2[1], dLoss_dOut2)

dLoss_dOut1 = upstream_gradient_loss_out(dOut2_dOut1, dLoss_dOut2)
dLoss_dWeights1 = upstream_gradient_loss_weights(dOut1_dWeights1[0], dLoss_dOut1)
dLoss_dBias1 = upstream_gradient_loss_weights(dOut1_dWeights1[1], dLoss_dOut1)

dLoss_dOut0 = upstream_gradient_loss_out(dOut1_dOut0, dLoss_dOut1)
dLoss_dWeights0 = upstream_gradient_loss_weights(dOut0_dWeights0[0], dLoss_dOut0)
dLoss_dBias0 = upstream_gradient_loss_weights(dOut0_dWeights0[1], dLoss_dOut0)

print("dLoss_dWeights2 valid:", tf.experimental.numpy.allclose(ref_conv_dLoss_dWeights2[0], dLoss_dWeights2).numpy())
print("dLoss_dBias2 valid:", tf.experimental.numpy.allclose(ref_conv_dLoss_dWeights2[1], dLoss_dBias2).numpy())
print("dLoss_dWeights1 valid:", tf.experimental.numpy.allclose(ref_conv_dLoss_dWeights1[0], dLoss_dWeights1).numpy())
print("dLoss_dBias1 valid:", tf.experimental.numpy.allclose(ref_conv_dLoss_dWeights1[1], dLoss_dBias1).numpy())
print("dLoss_dWeights0 valid:", tf.experimental.numpy.allclose(ref_conv_dLoss_dWeights0[0], dLoss_dWeights0).numpy())
print("dLoss_dBias0 valid:", tf.experimental.numpy.allclose(ref_conv_dLoss_dWeights0[1], dLoss_dBias0).numpy())
"""),
    md("""
The same chain without jacobians: `output_gradients` passes each upstream
gradient into the next tape down, which is what the first part of this notebook
does, at the cost of one backward pass per tape instead of a jacobian per part:
"""),
    code("""
dLoss_dOut1_vjp, dLoss_dW2 = tape_2.gradient(loss, [out_layer_1, model.layers[3].trainable_weights])
dLoss_dOut0_vjp, dLoss_dW1 = tape_1.gradient(out_layer_1, [out_layer_0, model.layers[1].trainable_weights],
                                             output_gradients=dLoss_dOut1_vjp)
dLoss_dW0 = tape_0.gradient(out_layer_0, model.layers[0].trainable_weights, output_gradients=dLoss_dOut0_vjp)

for name, ref, g in [("weights2", ref_conv_dLoss_dWeights2, dLoss_dW2),
                     ("weights1", ref_conv_dLoss_dWeights1, dLoss_dW1),
                     ("weights0", ref_conv_dLoss_dWeights0, dLoss_dW0)]:
    print(name, "valid:", all(tf.experimental.numpy.allclose(r, v).numpy() for r, v in zip(ref, g)))
"""),
    md("""
**Gotchas.** Jacobians grow with the product of output and parameter sizes, so
the jacobian approach is for small models and for understanding; the
`output_gradients` chain costs about one ordinary backward pass.
"""),
]


# ---------------------------------------------------------------------------
# 05: from TensorFlow to JAX
# ---------------------------------------------------------------------------

TO_JAX = [
    md("""
# From TensorFlow to JAX

tapejax runs TensorFlow's tape code on JAX. This notebook shows what that adds
and how to step down to JAX when you want to:

1. Tensors in `jax.numpy` code, and jax arrays back as Tensors;
2. any JAX function as a tape op (`tapejax.extend.defop`);
3. any flax module as a Keras layer (`tf.keras.layers.FlaxLayer`);
4. any optax transformation as an optimizer;
5. `tf.function` against the hand-written `jax.jit(value_and_grad)` + optax step.
"""),
    code("""
import functools
import time

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

import tapejax as tf
from tapejax.extend import defop
"""),
    md("""
## 1. Tensors and jax arrays

A `tf.Tensor` holds a jax array. `jnp.asarray(t)` returns it (no copy), and any
`jnp` function accepts a Tensor directly. `tf.constant` (or any tapejax op)
takes a jax array back.

TensorFlow has 64-bit tensors (int64 indices, float64 NumPy data), so tapejax turns on
JAX's 64-bit mode at import. tapejax's own defaults stay TensorFlow's float32/int32, but
`jnp.array([0.5])` in your own JAX code is now float64, as in NumPy: give `jnp.float32`
where you want single precision (or set `TAPEJAX_ENABLE_X64=0` before importing tapejax).
"""),
    code("""
t = tf.constant([[1., 2.], [3., 4.]])
a = jnp.asarray(t)
print(type(a).__name__, a.dtype, a.shape)
print('det:', jnp.linalg.det(t))
back = tf.constant(a * 2)
back
"""),
    md("""
`jnp` code is not recorded on a tape, like NumPy code in TensorFlow: the result
is a plain jax array and the gradient is `None`. To differentiate through JAX
code, lift it into a tape op (next section).
"""),
    code("""
x = tf.Variable(1.0)
with tf.GradientTape() as tape:
    y = jnp.sin(x)            # a jax array: not on the tape
    z = tf.reduce_sum(y)
print(type(y).__name__, tape.gradient(z, x))
"""),
    md("""
`tapejax.numpy` has every `jax.numpy` function as a recorded op: the same code,
on the tape.
"""),
    code("""
import tapejax.numpy as tnp

with tf.GradientTape() as tape:
    y = tnp.sin(x)            # a Tensor, recorded
    z = tf.reduce_sum(y)
print(type(y).__name__, tape.gradient(z, x))   # cos(1)
"""),
    md("""
Going the other way, tapejax ops are pure JAX underneath, so tapejax code runs
inside JAX transformations (`jax.grad`, `jax.jit`, `jax.vmap`) with jax arrays
in and out:
"""),
    code("""
def f(a):
    return jnp.asarray(tf.reduce_sum(tf.sin(tf.constant(a)) ** 2))

print(jax.grad(f)(jnp.array([0.5, 1.0], jnp.float32)))
print(jax.vmap(jax.grad(f))(jnp.ones((3, 2), jnp.float32)).shape)
"""),
    md("""
## 2. Any JAX function as a tape op: `tapejax.extend.defop`

`defop(fn)` turns a pure JAX function into an op: it takes Tensors, returns
Tensors, and records itself on the tapes watching its inputs. Without a rule,
JAX derives its gradient; the forward is `jax.jit`-compiled.
"""),
    code("""
smooth_abs = defop(lambda x: jnp.sqrt(x * x + 1e-2), name="smooth_abs")

x = tf.Variable([-2.0, 0.0, 0.5])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(smooth_abs(x))
print(tape.gradient(y, x))
print(jax.grad(lambda v: jnp.sum(jnp.sqrt(v * v + 1e-2)))(jnp.array([-2.0, 0.0, 0.5], jnp.float32)))
"""),
    md("Configuration arguments (axes, shapes) are declared `static`:"),
    code("""
@defop(static=("axis",))
def logsumexp(x, axis):
    return jax.scipy.special.logsumexp(x, axis=axis)

x = tf.Variable([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(logsumexp(x, axis=1))
tape.gradient(y, x)   # softmax of each row
"""),
    md("""
A hand-written VJP rule `vjp(ans, *inputs) -> (g -> grads)` is for numerics or
speed. Here the forward is an iterative solver (`lax.fori_loop`, Newton's
method for the cube root) and the rule uses the implicit function theorem
instead of differentiating through the iterations:
"""),
    code("""
def cbrt_newton(x):
    def body(_, r):
        return r - (r ** 3 - x) / (3 * r ** 2)
    return jax.lax.fori_loop(0, 30, body, jnp.ones_like(x))

cbrt = defop(cbrt_newton, name="cbrt", vjp=lambda ans, x: lambda g: g / (3 * ans ** 2))

x = tf.Variable([8.0, 27.0])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(cbrt(x))
print(cbrt(x))
print(tape.gradient(y, x))   # 1 / (3 x^(2/3)) = [1/12, 1/27]
"""),
    md("""
Ops made with `defop` compose with everything else on the tape: higher-order
gradients, `jacobian`, `tf.function`:
"""),
    code("""
x = tf.Variable(8.0)
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        y = smooth_abs(x) ** 2
    dy = t1.gradient(y, x)
print('dy/dx:', dy.numpy(), ' d2y/dx2:', t2.gradient(dy, x).numpy())   # 2x, 2
"""),
    md("""
## 3. Any flax module as a layer: `tf.keras.layers.FlaxLayer`

A `flax.linen` module is initialised on the first call; its `params` become
trainable `tf.Variable`s (and `batch_stats` non-trainable ones). The whole
module call is one tape op. It mixes freely with Keras layers:
"""),
    code("""
class MLPBlock(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(self.features)(x)
        x = nn.LayerNorm()(x)
        return nn.gelu(x)

model = tf.keras.Sequential([
    tf.keras.layers.FlaxLayer(MLPBlock(32)),
    tf.keras.layers.Dense(1),
])

x = tf.random.normal([256, 8])
y = tf.reduce_sum(x[:, :4] ** 2, axis=1, keepdims=True)
_ = model(x)
[(v.path, tuple(v.shape)) for v in model.trainable_variables]
"""),
    md("A `flax.nnx` module works the same way; its `nnx.Param`s become the trainable Variables:"),
    code("""
from flax import nnx

linear = tf.keras.layers.FlaxLayer(nnx.Linear(8, 4, rngs=nnx.Rngs(0)))
with tf.GradientTape() as tape:
    out = tf.reduce_sum(linear(tf.ones([2, 8])) ** 2)
grads = tape.gradient(out, linear.trainable_variables)
[(v.path, tuple(g.shape)) for v, g in zip(linear.trainable_variables, grads)]
"""),
    md("""
## 4. Any optax transformation as an optimizer

Keras optimizers are optax transformations underneath;
`tf.keras.optimizers.Optax` takes any of them: a chain with gradient clipping,
a schedule, optimizers Keras doesn't have.
"""),
    code("""
optimizer = tf.keras.optimizers.Optax(optax.chain(
    optax.clip_by_global_norm(1.0),
    optax.lion(learning_rate=optax.cosine_decay_schedule(1e-2, 300)),
))
loss_fn = tf.keras.losses.MeanSquaredError()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for step in range(300):
    loss = train_step(x, y)
    if step % 50 == 0 or step == 299:
        print(f'step {step:3d}: loss {float(loss):.4f}')
"""),
    md("""
## 5. `tf.function` against hand-written JAX

The same MLP training step three ways on the same data: eager tape,
`tf.function`, and the hand-written `jax.jit(jax.value_and_grad(...))` + optax
step a JAX user would write. `tf.function` is one XLA program, so it should
match the hand-written step.
"""),
    code("""
rng = np.random.RandomState(0)
xb = rng.rand(128, 784).astype(np.float32)
yb = rng.randint(0, 10, size=(128,)).astype(np.int32)

def make_model():
    return tf.keras.Sequential([
        tf.keras.layers.Dense(256, activation='relu', input_shape=(784,)),
        tf.keras.layers.Dense(256, activation='relu'),
        tf.keras.layers.Dense(10),
    ])

def make_step(model):
    opt = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step

# plain JAX: the same layers as a pure function of a params pytree
def apply(params, x):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i < len(params) - 1:
            x = jax.nn.relu(x)
    return x

tx = optax.adam(1e-3, eps=1e-7)

def loss_of(params, x, y):
    return optax.softmax_cross_entropy_with_integer_labels(apply(params, x), y).mean()

@functools.partial(jax.jit, donate_argnums=(0, 1))
def jax_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_of)(params, x, y)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss
"""),
    code("""
def per_step(run, steps=20, repeats=3):
    run(); run()                                       # warm-up (tracing, compiling)
    best = float('inf')
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            out = run()
        jax.block_until_ready(jnp.asarray(out))
        best = min(best, (time.perf_counter() - start) / steps)
    return best

x_t, y_t = tf.constant(xb), tf.constant(yb)
eager_step = make_step(make_model())
compiled_step = tf.function(make_step(make_model()))

m = make_model(); _ = m(x_t)
state = {'params': [(jnp.asarray(m.layers[i].kernel), jnp.asarray(m.layers[i].bias)) for i in range(3)]}
state['opt'] = tx.init(state['params'])
x_j, y_j = jnp.asarray(xb), jnp.asarray(yb)   # on the device once, like x_t, y_t
def run_jax():
    state['params'], state['opt'], loss = jax_step(state['params'], state['opt'], x_j, y_j)
    return loss

times = {
    'tapejax eager': per_step(lambda: eager_step(x_t, y_t)),
    'tapejax tf.function': per_step(lambda: compiled_step(x_t, y_t)),
    'jax.jit + optax': per_step(run_jax),
}
for name, s in times.items():
    print(f'{name:20s} {1e3 * s:7.2f} ms/step   ({s / times["jax.jit + optax"]:.2f}x hand-written JAX)')
"""),
    md("""
Both compiled steps are one XLA program each; what remains between them is
per-call overhead (reading and writing the Variables). Eager mode pays one
dispatch per op and a cached, compiled backward pass per step.

## Where to go from here

* A Tensor is a pytree holding a jax array: `jax.tree_util` and
  `jax.block_until_ready` accept Tensors and Variables.
* `tapejax.extend.defop` is how tapejax's own ops are written: `tapejax/_ops.py`
  is a table of one-line `defop`s.
* `tf.function` is `jax.jit` with implicit Variable capture: JAX's
  tracing rules (static shapes, Python control flow at trace time) apply.
"""),
]


NOTEBOOKS = {
    "01_autodiff.ipynb": AUTODIFF,
    "02_advanced_autodiff.ipynb": ADVANCED,
    "03_custom_training_loop.ipynb": TRAINING,
    "04_split_model_gradients.ipynb": SPLIT,
    "05_from_tensorflow_to_jax.ipynb": TO_JAX,
}
