"""TensorFlow's guide "Introduction to modules, layers, and models" (site/en/guide/intro_to_modules.ipynb):
its "Saving functions" and "Creating a SavedModel" cells, which save a tf.Module whose tf.function
has been called (traced) without an input_signature, and load it back.

Every code cell runs unchanged with ``tf`` bound to tapejax, after the cells it depends on, and
what it prints must equal what TensorFlow 2.21 printed (see guide_harness). The other cells
(Modules, checkpoints, Keras) belong to other tests; cells 35/37 (TensorBoard graph traces) and
41/42 (``!ls``) are shell or profiler cells.
"""
import pytest

import tapejax as tf
from guide_harness import assert_same_output, run_cells

# The notebook's code cells, unchanged.
CELLS = {
    11: r'''class Dense(tf.Module):
  def __init__(self, in_features, out_features, name=None):
    super().__init__(name=name)
    self.w = tf.Variable(
      tf.random.normal([in_features, out_features]), name='w')
    self.b = tf.Variable(tf.zeros([out_features]), name='b')
  def __call__(self, x):
    y = tf.matmul(x, self.w) + self.b
    return tf.nn.relu(y)''',
    13: r'''class SequentialModule(tf.Module):
  def __init__(self, name=None):
    super().__init__(name=name)

    self.dense_1 = Dense(in_features=3, out_features=3)
    self.dense_2 = Dense(in_features=3, out_features=2)

  def __call__(self, x):
    x = self.dense_1(x)
    return self.dense_2(x)

# You have made a model!
my_model = SequentialModule(name="the_model")

# Call it, with random results
print("Model results:", my_model(tf.constant([[2.0, 2.0, 2.0]])))''',
    31: r'''class MySequentialModule(tf.Module):
  def __init__(self, name=None):
    super().__init__(name=name)

    self.dense_1 = Dense(in_features=3, out_features=3)
    self.dense_2 = Dense(in_features=3, out_features=2)

  @tf.function
  def __call__(self, x):
    x = self.dense_1(x)
    return self.dense_2(x)

# You have made a model with a graph!
my_model = MySequentialModule(name="the_model")''',
    33: r'''print(my_model([[2.0, 2.0, 2.0]]))
print(my_model([[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]))''',
    40: r'''tf.saved_model.save(my_model, "the_saved_model")''',
    44: r'''new_model = tf.saved_model.load("the_saved_model")''',
    46: r'''isinstance(new_model, SequentialModule)''',
    48: r'''print(my_model([[2.0, 2.0, 2.0]]))
print(my_model([[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]))''',
}

# What each cell printed with TensorFlow 2.21 (CPU), recorded with the same harness.
TF_OUTPUT = {
    11: r'''''',
    13: r'''Model results: tf.Tensor([[0. 0.]], shape=(1, 2), dtype=float32)
''',
    31: r'''''',
    33: r'''tf.Tensor([[2.3706713 5.906684 ]], shape=(1, 2), dtype=float32)
tf.Tensor(
[[[2.3706713 5.906684 ]
  [2.3706713 5.906684 ]]], shape=(1, 2, 2), dtype=float32)
''',
    40: r'''''',
    44: r'''''',
    46: r'''False
''',
    48: r'''tf.Tensor([[0. 0.]], shape=(1, 2), dtype=float32)
tf.Tensor(
[[[0. 0.]
  [0. 0.]]], shape=(1, 2, 2), dtype=float32)
''',
}

# Cells of this test (not in the guide): the loaded model's calls, recorded the same way.
EXTRA = {
    # The loaded function runs the traces that were saved (not part of the guide).
    "loaded_calls": r'''print(new_model([[2.0, 2.0, 2.0]]).shape, new_model([[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]).shape)
print(bool(tf.reduce_all(new_model([[2.0, 2.0, 2.0]]) == my_model([[2.0, 2.0, 2.0]]))))
print(bool(tf.reduce_all(new_model([[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]])
                         == my_model([[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]))))''',
    # "This new model works on the already-defined input signatures": another one is an error.
    "unseen_signature": r'''for x in [tf.constant([[2.0, 2.0, 2.0]]), [[1.0, 2.0, 2.0]]]:
  try:
    new_model(x)
  except ValueError as e:
    print(e)''',
    # Traced with tensors (no input_signature): new values of the traced shapes and dtypes run.
    "traced_tensors": r'''class Scale(tf.Module):
  def __init__(self):
    super().__init__()
    self.v = tf.Variable(2.0)

  @tf.function
  def __call__(self, x, scale=1.0):
    return self.v * x * scale

  @tf.function
  def pair(self, p):
    return p[0] + p[1]

m = Scale()
m(tf.constant([1.0, 2.0]))
m(tf.constant([[1.0]]), scale=3.0)
m.pair((tf.constant(1.0), tf.constant([2.0, 3.0])))
tf.saved_model.save(m, "scale_model")
loaded = tf.saved_model.load("scale_model")
print(loaded(tf.constant([5.0, 2.0])))
print(loaded([5.0, 2.0], 1.0))
print(loaded(tf.constant([[5.0]]), scale=3.0))
print(loaded(tf.constant([[5.0]]), 3))
print(loaded.pair((tf.constant(1.0), tf.constant([2.0, 3.0]))))
for call in [lambda: loaded(tf.constant([5.0, 2.0, 1.0])), lambda: loaded(tf.constant([5.0, 2.0]), 2.0),
             lambda: loaded.pair([tf.constant(1.0), tf.constant([2.0, 3.0])])]:
  try:
    call()
  except ValueError as e:
    print(e)''',
}

TF_OUTPUT.update({
    'loaded_calls': r'''(1, 2) (1, 2, 2)
True
True
''',
    'unseen_signature': r'''Could not find matching concrete function to call loaded from the SavedModel. Got:
  Positional arguments (1 total):
    * <tf.Tensor 'x:0' shape=(1, 3) dtype=float32>
  Keyword arguments: {}

 Expected these arguments to match one of the following 2 option(s):

Option 1:
  Positional arguments (1 total):
    * [[2.0, 2.0, 2.0]]
  Keyword arguments: {}

Option 2:
  Positional arguments (1 total):
    * [[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]
  Keyword arguments: {}
Could not find matching concrete function to call loaded from the SavedModel. Got:
  Positional arguments (1 total):
    * [[1.0, 2.0, 2.0]]
  Keyword arguments: {}

 Expected these arguments to match one of the following 2 option(s):

Option 1:
  Positional arguments (1 total):
    * [[2.0, 2.0, 2.0]]
  Keyword arguments: {}

Option 2:
  Positional arguments (1 total):
    * [[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]
  Keyword arguments: {}
''',
    'traced_tensors': r'''tf.Tensor([10.  4.], shape=(2,), dtype=float32)
tf.Tensor([10.  4.], shape=(2,), dtype=float32)
tf.Tensor([[30.]], shape=(1, 1), dtype=float32)
tf.Tensor([[30.]], shape=(1, 1), dtype=float32)
tf.Tensor([3. 4.], shape=(2,), dtype=float32)
Could not find matching concrete function to call loaded from the SavedModel. Got:
  Positional arguments (2 total):
    * <tf.Tensor 'x:0' shape=(3,) dtype=float32>
    * 1.0
  Keyword arguments: {}

 Expected these arguments to match one of the following 2 option(s):

Option 1:
  Positional arguments (2 total):
    * TensorSpec(shape=(2,), dtype=tf.float32, name='x')
    * 1.0
  Keyword arguments: {}

Option 2:
  Positional arguments (2 total):
    * TensorSpec(shape=(1, 1), dtype=tf.float32, name='x')
    * 3.0
  Keyword arguments: {}
Could not find matching concrete function to call loaded from the SavedModel. Got:
  Positional arguments (2 total):
    * <tf.Tensor 'x:0' shape=(2,) dtype=float32>
    * 2.0
  Keyword arguments: {}

 Expected these arguments to match one of the following 2 option(s):

Option 1:
  Positional arguments (2 total):
    * TensorSpec(shape=(2,), dtype=tf.float32, name='x')
    * 1.0
  Keyword arguments: {}

Option 2:
  Positional arguments (2 total):
    * TensorSpec(shape=(1, 1), dtype=tf.float32, name='x')
    * 3.0
  Keyword arguments: {}
Could not find matching concrete function to call loaded from the SavedModel. Got:
  Positional arguments (1 total):
    * [<tf.Tensor 'p:0' shape=() dtype=float32>,
 <tf.Tensor 'p_1:0' shape=(2,) dtype=float32>]
  Keyword arguments: {}

 Expected these arguments to match one of the following 1 option(s):

Option 1:
  Positional arguments (1 total):
    * (TensorSpec(shape=(), dtype=tf.float32, name='p_0'),
 TensorSpec(shape=(2,), dtype=tf.float32, name='p_1'))
  Keyword arguments: {}
''',
})

# cell: (cells run before it in the same namespace, ignore numbers (random values))
PLAN = {
    11: ([], False),
    13: ([11], True),
    31: ([11], False),
    33: ([11, 31], True),
    40: ([11, 31, 33], False),
    44: ([11, 31, 33, 40], False),
    46: ([11, 13, 31, 33, 40, 44], False),
    48: ([11, 31, 33, 40, 44], True),
    "loaded_calls": ([11, 31, 33, 40, 44], False),
    "unseen_signature": ([11, 31, 33, 40, 44], False),
    "traced_tensors": ([], False),
}


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # the cells save to relative paths


@pytest.mark.parametrize("cell", [pytest.param(c, id=f"cell{c:02d}" if isinstance(c, int) else c) for c in PLAN])
def test_cell(cell):
    before, mask_numbers = PLAN[cell]
    printed = run_cells({**CELLS, **EXTRA}, before + [cell], cell)
    assert_same_output(printed, TF_OUTPUT[cell], mask_numbers=mask_numbers)


def test_loaded_object_is_not_the_saved_class():
    # Cell 46's point, with the class the cells saved: the loaded object has no class knowledge.
    printed = run_cells({**CELLS, 99: "print(isinstance(new_model, MySequentialModule))"},
                        [11, 31, 33, 40, 44, 99], 99)
    assert printed == "False\n"   # TensorFlow 2.21 prints the same


# The guide's first Keras layer ("Keras layers" section), unchanged: it is called on a nested
# list, which Keras 3 refuses (TF 2.21's ValueError, recorded).
KERAS_LAYER_CELLS = {
    1: r'''class MyDense(tf.keras.layers.Layer):
  # Adding **kwargs to support base Keras layer arguments
  def __init__(self, in_features, out_features, **kwargs):
    super().__init__(**kwargs)

    # This will soon move to the build step; see below
    self.w = tf.Variable(
      tf.random.normal([in_features, out_features]), name='w')
    self.b = tf.Variable(tf.zeros([out_features]), name='b')
  def call(self, x):
    y = tf.matmul(x, self.w) + self.b
    return tf.nn.relu(y)

simple_layer = MyDense(name="simple", in_features=3, out_features=3)''',
    2: r'''simple_layer([[2.0, 2.0, 2.0]])''',
}

_POSITIONAL = ("Only input tensors may be passed as positional arguments. The following argument value should "
               "be passed as a keyword argument: {} (of type <class '{}'>)")


def test_keras_layer_called_on_a_list_raises_as_keras_3():
    with pytest.raises(ValueError) as e:
        run_cells(KERAS_LAYER_CELLS, [1, 2], 2)
    assert str(e.value) == _POSITIONAL.format(2.0, "float")


def test_keras_takes_only_tensors_positionally():
    # Recorded from TF 2.21 (Keras 3): arrays are converted, tensors, Variables and None pass; a
    # Python number, list, string or a positional `training` flag raises; keyword arguments are free.
    import numpy as np

    class M(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(2, kernel_initializer="ones")

        def call(self, x, training=None):
            return self.d(x)

    class Pass(tf.keras.layers.Layer):
        def call(self, x, y=None):
            return x

    dense = tf.keras.layers.Dense(2, kernel_initializer="ones")
    seq = tf.keras.Sequential([tf.keras.layers.Dense(2, kernel_initializer="ones")])
    refused = {
        "dense_list": (lambda: dense([[1.0, 2.0, 3.0]]), (1.0, "float")),
        "dense_float": (lambda: dense(1.0), (1.0, "float")),
        "dense_tuple": (lambda: dense(((1.0, 2.0, 3.0),)), (1.0, "float")),
        "subclass_list": (lambda: M()([[1.0, 2.0, 3.0]]), (1.0, "float")),
        "training_positional": (lambda: M()(tf.ones((1, 3)), True), (True, "bool")),
        "sequential_list": (lambda: seq([[1.0, 2.0, 3.0]]), (1.0, "float")),
        "string": (lambda: Pass()(tf.ones((1,)), "a"), ("a", "str")),
        "list_mixed": (lambda: Pass()([tf.ones(1), 2.0]), (2.0, "float")),
        "dict_mixed": (lambda: Pass()({"a": tf.ones(1), "b": 3}), (3, "int")),
    }
    for case, (fn, (value, typ)) in refused.items():
        with pytest.raises(ValueError) as e:
            fn()
        assert str(e.value) == _POSITIONAL.format(value, typ), case
    assert dense(np.ones((1, 3))).numpy().tolist() == [[3.0, 3.0]]
    assert M()(tf.ones((1, 3)), None).shape == (1, 2)
    assert Pass()(tf.ones((1,)), y=2).shape == (1,)
    assert dense(tf.Variable(tf.ones((1, 3)))).shape == (1, 2)
    assert len(Pass()([tf.ones(1), tf.ones(1)])) == 2


def test_load_model_of_a_missing_keras_file(tmp_path):
    # Keras 3 / TF 2.21 (recorded): a `.keras` path where nothing was saved is a ValueError.
    path = str(tmp_path / "exname_of_file.keras")
    with pytest.raises(ValueError) as e:
        tf.keras.models.load_model(path)
    assert str(e.value) == (f"File not found: filepath={path}. Please ensure the file is an accessible `.keras` "
                            "zip file.")
