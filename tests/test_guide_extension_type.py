"""TensorFlow's guide "Extension types" (site/en/guide/extension_type.ipynb): its "Immutability"
cells, which mutate an ExtensionType's field and an item of its tensor, and the messages TF 2.21
gives for other misuse of a tensor (recorded with /tmp/tf, TensorFlow 2.21).

The cells run unchanged with ``tf`` bound to tapejax (see guide_harness).
"""
import pytest

import tapejax as tf
from guide_harness import assert_same_output, error_text, run_cells

# The notebook's code cells 10 and 13-15, unchanged.
CELLS = {
    10: r'''class MaskedTensor(tf.experimental.ExtensionType):
  """A tensor paired with a boolean mask, indicating which values are valid."""
  values: tf.Tensor
  mask: tf.Tensor
  def __validate__(self):
    self.values.shape.assert_is_compatible_with(self.mask.shape)
    assert self.mask.dtype.is_bool, 'mask.dtype must be bool'
''',
    13: r'''mt = MaskedTensor([1, 2, 3], [True, False, True])''',
    14: r'''try:
  mt.mask = [True, True, True]
except AttributeError as e:
  print(f"Got expected AttributeError: {e}")''',
    15: r'''try:
  mt.mask[0] = False
except TypeError as e:
  print(f"Got expected TypeError: {e}")''',
}

TF_OUTPUT = {
    14: "Got expected AttributeError: Cannot mutate attribute `mask` outside the custom constructor of ExtensionType.\n",
    15: "Got expected TypeError: 'tensorflow.python.framework.ops.EagerTensor' object does not support item assignment\n",
}


@pytest.mark.parametrize("cell", [14, 15])
def test_cell(cell):
    assert_same_output(run_cells(CELLS, [10, 13, cell], cell), TF_OUTPUT[cell])


_NUMPY_HINT = ("object has no attribute 'T'. \n        If you are looking for numpy-related methods, please "
               "run the following:\n        tf.experimental.numpy.experimental_enable_numpy_behavior()\n      ")


def test_tensor_misuse_messages_name_tensorflows_classes():
    # Recorded from TF 2.21: an eager tensor is the C type tensorflow.python.framework.ops.EagerTensor
    # (Python's own messages give that full name), a traced one a SymbolicTensor.
    t = tf.constant([1, 2])

    def assign():
        t[0] = 5

    def delete():
        del t[0]

    assert error_text(assign) == (
        "TypeError: 'tensorflow.python.framework.ops.EagerTensor' object does not support item assignment")
    assert error_text(delete) == (
        "TypeError: 'tensorflow.python.framework.ops.EagerTensor' object doesn't support item deletion")
    assert error_text(lambda: t.assign(3)) == (
        "AttributeError: 'tensorflow.python.framework.ops.EagerTensor' object has no attribute 'assign'")
    assert error_text(lambda: t.T) == "AttributeError: EagerTensor " + _NUMPY_HINT
    assert t.numpy().tolist() == [1, 2]
    seen = []

    @tf.function
    def f(x):
        def assign_traced():
            x[0] = 1
        seen.append(error_text(assign_traced))
        seen.append(error_text(lambda: x.nope))
        seen.append(error_text(lambda: x.T))
        return x

    f(tf.constant([1.0]))
    assert seen == ["TypeError: 'SymbolicTensor' object does not support item assignment",
                    "AttributeError: 'SymbolicTensor' object has no attribute 'nope'",
                    "AttributeError: SymbolicTensor " + _NUMPY_HINT]
    v = tf.Variable([1, 2])

    def assign_variable():
        v[0] = 1

    assert error_text(assign_variable) == "TypeError: 'ResourceVariable' object does not support item assignment"
