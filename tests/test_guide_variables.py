"""TensorFlow's guide "Introduction to Variables" (site/en/guide/variable.ipynb), cell by cell.

Every code cell runs unchanged with ``tf`` bound to tapejax, after the cells it depends on, and
what it prints must equal what TensorFlow 2.21 printed on a CPU-only machine (see guide_harness;
recorded with ``scripts/record_guide_tests.py --record``). Cell 10 places an op on 'GPU:0':
without a GPU, TensorFlow's soft placement runs it on the CPU, and so does tapejax.

Cells not run, and why:

- cell 0: license header
- cell 1: `import tensorflow as tf` and a commented-out line (the tests bind tf to tapejax)
"""
import pytest

from guide_harness import assert_same_output, run_cells

# The notebook's code cells, unchanged.
CELLS = {
    2: r'''my_tensor = tf.constant([[1.0, 2.0], [3.0, 4.0]])
my_variable = tf.Variable(my_tensor)

# Variables can be all kinds of types, just like tensors
bool_variable = tf.Variable([False, False, False, True])
complex_variable = tf.Variable([5 + 4j, 6 + 1j])''',
    3: r'''print("Shape: ", my_variable.shape)
print("DType: ", my_variable.dtype)
print("As NumPy: ", my_variable.numpy())''',
    4: r'''print("A variable:", my_variable)
print("\nViewed as a tensor:", tf.convert_to_tensor(my_variable))
print("\nIndex of highest value:", tf.math.argmax(my_variable))

# This creates a new tensor; it does not reshape the variable.
print("\nCopying and reshaping: ", tf.reshape(my_variable, [1,4]))''',
    5: r'''a = tf.Variable([2.0, 3.0])
# This will keep the same dtype, float32
a.assign([1, 2]) 
# Not allowed as it resizes the variable: 
try:
  a.assign([1.0, 2.0, 3.0])
except Exception as e:
  print(f"{type(e).__name__}: {e}")''',
    6: r'''a = tf.Variable([2.0, 3.0])
# Create b based on the value of a
b = tf.Variable(a)
a.assign([5, 6])

# a and b are different
print(a.numpy())
print(b.numpy())

# There are other versions of assign
print(a.assign_add([2,3]).numpy())  # [7. 9.]
print(a.assign_sub([7,9]).numpy())  # [0. 0.]''',
    7: r'''# Create a and b; they will have the same name but will be backed by
# different tensors.
a = tf.Variable(my_tensor, name="Mark")
# A new variable with the same name, but different value
# Note that the scalar add is broadcast
b = tf.Variable(my_tensor + 1, name="Mark")

# These are elementwise-unequal, despite having the same name
print(a == b)''',
    8: r'''step_counter = tf.Variable(1, trainable=False)''',
    9: r'''with tf.device('CPU:0'):

  # Create some tensors
  a = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
  b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
  c = tf.matmul(a, b)

print(c)''',
    10: r'''with tf.device('CPU:0'):
  a = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
  b = tf.Variable([[1.0, 2.0, 3.0]])

with tf.device('GPU:0'):
  # Element-wise multiply
  k = a * b

print(k)''',
}

# What each cell printed with TensorFlow 2.21 (CPU).
TF_OUTPUT = {
    2: r'''''',
    3: r'''Shape:  (2, 2)
DType:  <dtype: 'float32'>
As NumPy:  [[1. 2.]
 [3. 4.]]
''',
    4: r'''A variable: <tf.Variable 'Variable:0' shape=(2, 2) dtype=float32, numpy=
array([[1., 2.],
       [3., 4.]], dtype=float32)>

Viewed as a tensor: tf.Tensor(
[[1. 2.]
 [3. 4.]], shape=(2, 2), dtype=float32)

Index of highest value: tf.Tensor([1 1], shape=(2,), dtype=int64)

Copying and reshaping:  tf.Tensor([[1. 2. 3. 4.]], shape=(1, 4), dtype=float32)
''',
    5: r'''ValueError: Cannot assign value to variable ' Variable:0': Shape mismatch.The variable shape (2,), and the assigned value shape (3,) are incompatible.
''',
    6: r'''[5. 6.]
[2. 3.]
[7. 9.]
[0. 0.]
''',
    7: r'''tf.Tensor(
[[False False]
 [False False]], shape=(2, 2), dtype=bool)
''',
    8: r'''''',
    9: r'''tf.Tensor(
[[22. 28.]
 [49. 64.]], shape=(2, 2), dtype=float32)
''',
    10: r'''tf.Tensor(
[[ 1.  4.  9.]
 [ 4. 10. 18.]], shape=(2, 3), dtype=float32)
''',
}

# cell: cells run before it in the same namespace
PLAN = {2: [], 3: [2], 4: [2], 5: [], 6: [], 7: [2], 8: [], 9: [], 10: []}


@pytest.mark.parametrize("cell", [pytest.param(c, id=f"cell{c:02d}") for c in PLAN])
def test_cell(cell):
    printed = run_cells(CELLS, PLAN[cell] + [cell], cell)
    assert_same_output(printed, TF_OUTPUT[cell])
