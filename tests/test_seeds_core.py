"""The seed tutorials' snippets that need no Keras, with TensorFlow's printed output.

Snippets are copied from the tutorials (../shared/seeds/000..004) as a
TensorFlow user writes them, with ``tf`` bound to tapejax; the expected
strings are what TensorFlow printed there. Snippets built on Keras layers are
ported to Variables + ``tf.nn`` where the point of the snippet is the tape.
"""
import numpy as np
import pytest

import tapejax as tf


def printed(capsys):
    return capsys.readouterr().out.strip().splitlines()


# ---------------------------------------------------------------- seed 000: custom gradient, log1pexp
def test_000_log1pexp_naive_is_nan():
    def log1pexp(x):
        return tf.math.log(1 + tf.exp(x))
    x = tf.constant(100.)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    dy = tape.gradient(y, x)  # Will be NaN when evaluated.
    assert np.isnan(dy.numpy())


def test_000_log1pexp_custom_gradient():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad
    x = tf.constant(100.)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    dy = tape.gradient(y, x)
    assert dy.numpy() == 1.0
    x = tf.constant(0.)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert tape.gradient(y, x).numpy() == 0.5
    np.testing.assert_allclose(y.numpy(), np.log(2.0), rtol=1e-6)


# ---------------------------------------------------------------- seed 001: the autodiff guide
def test_001_scalar_variable():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x**2
    # dy = 2x * dx
    dy_dx = tape.gradient(y, x)
    assert dy_dx.numpy() == 6.0


def test_001_two_dimensional_list_and_dict():
    tf.random.set_seed(0)
    w = tf.Variable(tf.random.normal((3, 2)), name='w')
    b = tf.Variable(tf.zeros(2, dtype=tf.float32), name='b')
    x = [[1., 2., 3.]]
    with tf.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = tf.reduce_mean(y**2)
    [dl_dw, dl_db] = tape.gradient(loss, [w, b])
    my_vars = {
        'w': w,
        'b': b
    }
    grad = tape.gradient(loss, my_vars)
    assert grad['b'].shape == (2,) and dl_dw.shape == (3, 2)
    np.testing.assert_allclose(grad['b'].numpy(), dl_db.numpy())
    np.testing.assert_allclose(grad['w'].numpy(), dl_dw.numpy())
    yv = np.array([[1., 2., 3.]], np.float32) @ w.numpy()
    np.testing.assert_allclose(dl_db.numpy(), yv[0], rtol=1e-5)  # d mean(y^2)/db = 2y/2
    np.testing.assert_allclose(dl_dw.numpy(), np.outer([1., 2., 3.], yv[0]), rtol=1e-5)


def test_001_what_the_tape_watches(capsys):
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
    print([var.name for var in tape.watched_variables()])
    assert printed(capsys) == ["tf.Tensor(6.0, shape=(), dtype=float32)", "None", "None", "None", "['x0:0']"]


def test_001_watch_constant(capsys):
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**2
    # dy = 2x * dx
    dy_dx = tape.gradient(y, x)
    print(dy_dx.numpy())
    assert printed(capsys) == ["6.0"]


def test_001_watch_accessed_variables_false(capsys):
    x0 = tf.Variable(0.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.softplus(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    # dys/dx1 = exp(x1) / (1 + exp(x1)) = sigmoid(x1)
    grad = tape.gradient(ys, {'x0': x0, 'x1': x1})
    print('dy/dx0:', grad['x0'])
    print('dy/dx1:', grad['x1'].numpy())
    assert printed(capsys) == ["dy/dx0: None", "dy/dx1: 0.9999546"]


def test_001_intermediate_results(capsys):
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    # Use the tape to compute the gradient of z with respect to the
    # intermediate value y.
    # dz_dy = 2 * y and y = x ** 2 = 9
    print(tape.gradient(z, y).numpy())
    assert printed(capsys) == ["18.0"]


def test_001_persistent(capsys):
    x = tf.constant([1, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    print(tape.gradient(z, x).numpy())  # 108.0 (4 * x**3 at x = 3)
    print(tape.gradient(y, x).numpy())  # 6.0 (2 * x)
    del tape
    # numpy's own formatting (the tutorial page collapsed the double space)
    assert printed(capsys) == ["[  4. 108.]", "[2. 6.]"]


# ---------------------------------------------------------------- seed 002: chain rule across tapes
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


def test_002_split_model_chain_rule(capsys):
    """The answer's jacobian / batch_jacobian chain rule, with tf.nn.conv2d in place of Keras layers."""
    tf.random.set_seed(0)
    # 3 batches, 10x10 images, 1 channel
    x = tf.random.uniform((3, 10, 10, 1))
    y = tf.cast(tf.random.uniform((3, 1)) > 0.5, tf.float32)
    k0, b0 = tf.Variable(tf.random.normal((2, 2, 1, 6)) * 0.5), tf.Variable(tf.zeros(6))
    k1, b1 = tf.Variable(tf.random.normal((2, 2, 6, 6)) * 0.5), tf.Variable(tf.zeros(6))
    k2, b2 = tf.Variable(tf.random.normal((8 * 8 * 6, 1)) * 0.1), tf.Variable(tf.zeros(1))

    def layer_0(a):
        return tf.nn.relu(tf.nn.conv2d(a, k0, 1, "VALID") + b0)

    def layer_1(a):
        return tf.nn.relu(tf.nn.conv2d(a, k1, 1, "VALID") + b1)

    def flatten(a):
        return tf.reshape(a, [a.shape[0], -1])

    def layer_2(a):
        return tf.sigmoid(a @ k2 + b2)

    def loss_fn(labels, pred):
        return tf.reduce_mean(tf.square(labels - pred))

    with tf.GradientTape(persistent=True) as tape:
        out_layer_0 = layer_0(x)
        out_layer_1 = layer_1(out_layer_0)
        out_layer_2 = layer_2(flatten(out_layer_1))
        loss = loss_fn(y, out_layer_2)
    ref_conv_dLoss_dWeights2 = tape.gradient(loss, [k2, b2])
    ref_conv_dLoss_dWeights1 = tape.gradient(loss, [k1, b1])
    ref_conv_dLoss_dWeights0 = tape.gradient(loss, [k0, b0])

    with tf.GradientTape(persistent=True) as tape_0:
        out_layer_0 = layer_0(x)
    with tf.GradientTape(persistent=True) as tape_1:
        tape_1.watch(out_layer_0)
        out_layer_1 = layer_1(out_layer_0)
    with tf.GradientTape(persistent=True) as tape_2:
        tape_2.watch(out_layer_1)
        out_flatten = flatten(out_layer_1)
        out_layer_2 = layer_2(out_flatten)
        loss = loss_fn(y, out_layer_2)

    dOut0_dWeights0 = tape_0.jacobian(out_layer_0, [k0, b0])
    dOut1_dOut0 = tape_1.batch_jacobian(out_layer_1, out_layer_0)
    dOut1_dWeights1 = tape_1.jacobian(out_layer_1, [k1, b1])
    dOut2_dOut1 = tape_2.batch_jacobian(out_layer_2, out_layer_1)
    dOut2_dWeights2 = tape_2.jacobian(out_layer_2, [k2, b2])
    dLoss_dOut2 = tape_2.gradient(loss, out_layer_2)  # or dL/dY

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
    assert printed(capsys) == [
        "dLoss_dWeights2 valid: True", "dLoss_dBias2 valid: True",
        "dLoss_dWeights1 valid: True", "dLoss_dBias1 valid: True",
        "dLoss_dWeights0 valid: True", "dLoss_dBias0 valid: True",
    ]
    assert dOut1_dOut0.shape == (3, 8, 8, 6, 9, 9, 6)
    assert float(tf.reduce_max(abs(dLoss_dWeights0))) > 0  # not trivially equal


# ---------------------------------------------------------------- seed 003: watch / gradient
def test_003_watch_and_repr():
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    dy_dx = g.gradient(y, x)  # y' = 2*x = 2*3 = 6
    assert repr(dy_dx) == "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>"


# ---------------------------------------------------------------- seed 004: the advanced guide
def test_004_stop_recording(capsys):
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
    assert printed(capsys) == ["dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)", "dz/dy: None"]


def test_004_reset(capsys):
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
    assert printed(capsys) == ["dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)", "dz/dy: None"]


def test_004_stop_gradient(capsys):
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y**2
        z = x**2 + tf.stop_gradient(y_sq)
    grad = t.gradient(z, {'x': x, 'y': y})
    print('dz/dx:', grad['x'])  # 2*x => 4
    print('dz/dy:', grad['y'])
    assert printed(capsys) == ["dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)", "dz/dy: None"]


def test_004_clip_gradients(capsys):
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
    assert printed(capsys) == ["tf.Tensor(2.0, shape=(), dtype=float32)"]


def test_004_multiple_tapes():
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    assert tape0.gradient(ys, x0).numpy() == 1.0   # cos(x) => 1.0
    assert tape1.gradient(ys, x1).numpy() == 0.25  # sigmoid(x1)*(1-sigmoid(x1)) => 0.25


def test_004_higher_order(capsys):
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
    assert printed(capsys) == ["dy_dx: 3.0", "d2y_dx2: 6.0"]


def test_004_input_gradient_regularization_shapes(capsys):
    """The guide's snippet with a Dense(10, relu) layer written as Variables."""
    x = tf.random.normal([7, 5])
    kernel = tf.Variable(tf.random.normal([5, 10]))
    bias = tf.Variable(tf.zeros([10]))

    def layer(a):
        return tf.nn.relu(a @ kernel + bias)
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
    dg1_mag = t2.gradient(g1_mag, [kernel, bias])
    print([var.shape for var in dg1_mag])
    assert printed(capsys) == ["[TensorShape([5, 10]), TensorShape([10])]"]
    assert y.shape == (7, 10)


def test_004_jacobian_scalar_source(capsys):
    x = tf.linspace(-10.0, 10.0, 200+1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x+delta)
    dy_dx = tape.jacobian(y, delta)
    print(y.shape)
    print(dy_dx.shape)
    assert printed(capsys) == ["(201,)", "(201,)"]
    s = 1 / (1 + np.exp(-x.numpy()))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), atol=1e-6)


def test_004_jacobian_tensor_source(capsys):
    """``layer.kernel`` of a Dense(10, relu) as a Variable: shapes and delta as printed."""
    x = tf.random.normal([7, 5])
    kernel = tf.Variable(tf.random.normal([5, 10]))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.nn.relu(x @ kernel)
    print(y.shape)
    print(kernel.shape)
    j = tape.jacobian(y, kernel)
    print(j.shape)
    g = tape.gradient(y, kernel)
    print('g.shape:', g.shape)
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    assert printed(capsys) == ["(7, 10)", "(5, 10)", "(7, 10, 5, 10)", "g.shape: (5, 10)"]


def test_004_hessian_and_newton_step(capsys):
    x = tf.random.normal([7, 5])
    kernel1 = tf.Variable(tf.random.normal([5, 8]) * 0.5)
    kernel2 = tf.Variable(tf.random.normal([8, 6]) * 0.5)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = tf.nn.relu(x @ kernel1)
            x = tf.nn.relu(x @ kernel2)
            loss = tf.reduce_mean(x**2)
        g = t1.gradient(loss, kernel1)
    h = t2.jacobian(g, kernel1)
    print(f'layer.kernel.shape: {kernel1.shape}')
    print(f'h.shape: {h.shape}')
    assert printed(capsys) == ["layer.kernel.shape: (5, 8)", "h.shape: (5, 8, 5, 8)"]

    n_params = tf.reduce_prod(kernel1.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    assert float(tf.reduce_max(abs(h_mat - tf.transpose(h_mat)))) < 1e-5  # symmetric

    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0])*eps
    # X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    before = kernel1.numpy()
    # Reshape the update and apply it to the variable.
    _ = kernel1.assign_sub(tf.reshape(update, kernel1.shape))
    np.testing.assert_allclose(kernel1.numpy(), before - update.numpy().reshape(5, 8), rtol=1e-6)
    np.testing.assert_allclose(((h_mat + eye_eps) @ update).numpy(), g_vec.numpy(), rtol=1e-2, atol=1e-4)


def test_004_batch_jacobian(capsys):
    x = tf.random.normal([7, 5])
    w1, b1 = tf.Variable(tf.random.normal([5, 8])), tf.Variable(tf.zeros([8]))
    w2, b2 = tf.Variable(tf.random.normal([8, 6])), tf.Variable(tf.zeros([6]))
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = tf.nn.elu(x @ w1 + b1)
        y = tf.nn.elu(y @ w2 + b2)
    print(y.shape)
    j = tape.jacobian(y, x)
    print(j.shape)
    j_sum = tf.reduce_sum(j, axis=2)
    print(j_sum.shape)
    j_select = tf.einsum('bxby->bxy', j)
    print(j_select.shape)
    jb = tape.batch_jacobian(y, x)
    print(jb.shape)
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    assert printed(capsys) == ["(7, 6)", "(7, 6, 7, 5)", "(7, 6, 5)", "(7, 6, 5)", "(7, 6, 5)"]
    assert float(error) < 1e-5
    assert float(tf.reduce_max(abs(jb - j_select))) < 1e-6


def test_004_batch_jacobian_of_non_independent_examples():
    """With batch statistics the examples mix: batch_jacobian still runs and has the shape."""
    x = tf.random.normal([7, 5])
    w1 = tf.Variable(tf.random.normal([5, 8]))
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = tf.nn.elu(x @ w1)
        mean, var = tf.nn.moments(y, axes=[0])
        y = (y - mean) / tf.sqrt(var + 1e-3)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 8, 7, 5)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 8, 5)
    off_diagonal = float(tf.reduce_max(abs(j[:, 0, 1:, 0])))
    assert off_diagonal > 1e-4  # the slices are not diagonal here
