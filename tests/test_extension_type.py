"""tf.experimental.ExtensionType, BatchableExtensionType, their Spec classes and type-based dispatch
(tf.experimental.dispatch_for_api / dispatch_for_unary_elementwise_apis / ..._binary_...).

Expected values and messages were recorded from TensorFlow 2.21 (the guide
site/en/guide/extension_type.ipynb and probes of the same code).
"""
import re
import typing
from typing import List, Mapping, Optional, Tuple, Union

import numpy as np
import pytest

import tapejax as tf


class MaskedTensor(tf.experimental.ExtensionType):
    values: tf.Tensor
    mask: tf.Tensor

    def __validate__(self):
        self.values.shape.assert_is_compatible_with(self.mask.shape)
        assert self.mask.dtype.is_bool, "mask.dtype must be bool"

    def with_values(self, new_values):
        return MaskedTensor(new_values, self.mask)


class BMT(tf.experimental.BatchableExtensionType):
    values: tf.Tensor
    mask: tf.Tensor


class Network(tf.experimental.BatchableExtensionType):
    shape: tf.TensorShape
    work: tf.Tensor
    bandwidth: tf.Tensor

    def __init__(self, work, bandwidth):
        self.work = tf.convert_to_tensor(work)
        self.bandwidth = tf.convert_to_tensor(bandwidth)
        self.shape = self.work.shape[:-1].merge_with(self.bandwidth.shape[:-2])


def _r(x):
    """repr of a value of a class defined in a test (its __qualname__ names the test)."""
    return re.sub(r"\w+\.<locals>\.", "", repr(x))


def _networks():
    return Network(work=[[5., 3, 8], [3., 4, 2]],
                   bandwidth=[[[0., 2, 0], [2, 0, 3], [0, 3, 0]], [[0., 2, 2], [2, 0, 2], [2, 2, 0]]])


# ---------------------------------------------------------------------------
# Fields: conversion, checks, defaults, immutability, repr, equality
# ---------------------------------------------------------------------------

def test_fields_are_converted_and_printed_as_tensorflow():
    mt = MaskedTensor(values=[1, 2, 3], mask=[True, True, False])
    assert repr(mt) == (
        "MaskedTensor(values=<tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 3], dtype=int32)>, "
        "mask=<tf.Tensor: shape=(3,), dtype=bool, numpy=array([ True,  True, False])>)")
    assert type(mt.values) is tf.Tensor


def test_bad_fields_raise_tensorflow_errors():
    with pytest.raises(TypeError, match=r"^mask: expected a Tensor, got 'NoneType'$"):
        MaskedTensor([1, 2, 3], None)
    with pytest.raises(AssertionError, match="mask.dtype must be bool"):
        MaskedTensor([1, 2, 3], [0, 1, 0])
    with pytest.raises(ValueError, match=r"^Shapes \(3,\) and \(2,\) are incompatible$"):
        MaskedTensor([1, 2, 3], [True, False])
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'extra'"):
        MaskedTensor(values=[1], mask=[True], extra=1)
    with pytest.raises(TypeError, match="missing a required argument: 'mask'"):
        MaskedTensor([1])


def test_values_are_immutable():
    mt = MaskedTensor([1, 2, 3], [True, False, True])
    msg = r"^Cannot mutate attribute `mask` outside the custom constructor of ExtensionType\.$"
    with pytest.raises(AttributeError, match=msg):
        mt.mask = [True, True, True]
    with pytest.raises(AttributeError, match=msg):
        del mt.mask


def test_defaults_optional_tuple_union_dtype_fields():
    class Pencil(tf.experimental.ExtensionType):
        color: str = "black"
        has_erasor: bool = True
        length: tf.Tensor = 1.0

    assert _r(Pencil()) == ("Pencil(color='black', has_erasor=True, length=<tf.Tensor: shape=(), dtype=float32, "
                              "numpy=1.0>)")
    assert _r(Pencil(length=0.5, color="blue")) == (
        "Pencil(color='blue', has_erasor=True, length=<tf.Tensor: shape=(), dtype=float32, numpy=0.5>)")

    class Opt(tf.experimental.ExtensionType):
        x: Optional[tf.Tensor]
        t: Tuple[int, ...]
        u: Union[int, str] = 3
        d: tf.DType = tf.float32

    assert _r(Opt(None, [1, 2])) == "Opt(x=None, t=(1, 2), u=3, d=tf.float32)"
    assert _r(Opt(5, (1,), "a", tf.int32)) == (
        "Opt(x=<tf.Tensor: shape=(), dtype=int32, numpy=5>, t=(1,), u='a', d=tf.int32)")
    for bad, msg in [(lambda: Opt(1, ["a"]), "t[0]: expected 'int', got 'str'"),
                     (lambda: Opt(1, (1,), 1.5), "u: expected typing.Union[int, str], got 'float'"),
                     (lambda: Opt(1, (1,), d="x"), "d: expected 'tf.DType', got 'str'")]:
        with pytest.raises(TypeError) as e:
            bad()
        assert str(e.value) == msg


def test_bad_class_definitions():
    with pytest.raises(TypeError, match=r"^In field 'x': Unsupported type annotation 'list'$"):
        class Bad(tf.experimental.ExtensionType):
            x: list
    with pytest.raises(ValueError, match=r"^The field annotations for Bad2 are invalid\. Field y is missing a "
                                         r"type annotation\.$"):
        class Bad2(tf.experimental.ExtensionType):
            x: tf.Tensor
            y = 3


def test_unresolved_forward_reference_fails_at_construction_as_tensorflow():
    ns = {"tf": tf, "Tuple": Tuple}
    exec("class Node(tf.experimental.ExtensionType):\n  value: tf.Tensor\n  children: Tuple['Node', ...] = ()\n",
         ns)
    with pytest.raises(TypeError, match=r"^children\[0\]: Unsupported type annotation ForwardRef\('Node'\)$"):
        ns["Node"](3, [ns["Node"](5)])


def test_mapping_fields_are_immutable_dicts():
    class Player(tf.experimental.ExtensionType):
        name: tf.Tensor
        attributes: Mapping[str, tf.Tensor]

    p = Player("A", {"b": 1.0, "a": 2.0})
    assert repr(p.attributes) == ("ImmutableDict({'b': <tf.Tensor: shape=(), dtype=float32, numpy=1.0>, "
                                  "'a': <tf.Tensor: shape=(), dtype=float32, numpy=2.0>})")
    spec = tf.type_spec_from_value(p)
    assert _r(spec) == ("Player.Spec(name=TensorSpec(shape=(), dtype=tf.string, name=None), attributes={'b': "
                          "TensorSpec(shape=(), dtype=tf.float32, name=None), 'a': TensorSpec(shape=(), "
                          "dtype=tf.float32, name=None)})")
    assert repr(spec.attributes).startswith("ImmutableDict({'b': TensorSpec(")
    with pytest.raises(TypeError):
        p.attributes["c"] = 1.0


def test_equality_as_tensorflow():
    a = MaskedTensor([1, 2], [True, False])
    b = MaskedTensor([[3, 4], [5, 6]], [[False, True], [True, True]])
    assert f"{a == a}" == "True" and isinstance(a == a, tf.Tensor)
    assert (a == b) is False and (a == a.values) is False
    assert str(a != MaskedTensor([1, 2], [True, True])) == "tf.Tensor(True, shape=(), dtype=bool)"


def test_user_constructor_methods_and_subclasses():
    class Toy(tf.experimental.ExtensionType):
        name: str
        price: tf.Tensor

        def __init__(self, name, price, discount=0):
            self.name = name
            self.price = price * (1 - discount)

    assert _r(Toy("ball", 5.0, discount=0.2)) == (
        "Toy(name='ball', price=<tf.Tensor: shape=(), dtype=float32, numpy=4.0>)")

    class TensorGraph(tf.experimental.ExtensionType):
        num_nodes: tf.Tensor
        edge_src: tf.Tensor
        edge_dst: tf.Tensor

    class WithFeature(TensorGraph):
        node_features: tf.Tensor

    g = WithFeature(num_nodes=5, edge_src=[0, 4, 2, 2], edge_dst=[1, 3, 2, 1], node_features=[10.0, 0.0, 2.0])
    assert [f.name for f in WithFeature._tf_extension_type_fields()] == [
        "num_nodes", "edge_src", "edge_dst", "node_features"]
    assert g.node_features.shape == [3]


# ---------------------------------------------------------------------------
# Specs
# ---------------------------------------------------------------------------

def test_spec_batch_unbatch_compatibility_and_supertype():
    s = tf.type_spec_from_value(BMT([[1, 2]], [[True, False]]))
    assert repr(s._batch(4)) == ("BMT.Spec(values=TensorSpec(shape=(4, 1, 2), dtype=tf.int32, name=None), "
                                 "mask=TensorSpec(shape=(4, 1, 2), dtype=tf.bool, name=None))")
    assert repr(s._unbatch()) == ("BMT.Spec(values=TensorSpec(shape=(2,), dtype=tf.int32, name=None), "
                                  "mask=TensorSpec(shape=(2,), dtype=tf.bool, name=None))")
    assert s.is_compatible_with(BMT([[3, 4]], [[True, True]])) and not s.is_compatible_with(BMT([1], [True]))
    assert repr(s.most_specific_common_supertype([tf.type_spec_from_value(BMT([[1, 2, 3]], [[True] * 3]))])) == (
        "BMT.Spec(values=TensorSpec(shape=(1, None), dtype=tf.int32, name=None), "
        "mask=TensorSpec(shape=(1, None), dtype=tf.bool, name=None))")
    assert s == tf.type_spec_from_value(BMT([[5, 6]], [[False, False]])) and hash(s) is not None
    assert str(MaskedTensor.Spec(values=tf.TensorSpec([2], tf.int32), mask=tf.TensorSpec([2], tf.bool))) == (
        "MaskedTensor.Spec(values=TensorSpec(shape=(2,), dtype=tf.int32, name=None), "
        "mask=TensorSpec(shape=(2,), dtype=tf.bool, name=None))")


def test_user_spec_class():
    class MT(tf.experimental.ExtensionType):
        values: tf.Tensor
        mask: tf.Tensor

        class Spec:
            def __init__(self, shape, dtype=tf.float32):
                self.values = tf.TensorSpec(shape, dtype)
                self.mask = tf.TensorSpec(shape, tf.bool)

            shape = property(lambda self: self.values.shape)

    spec = MT.Spec([None, 2], tf.int32)
    assert spec.shape == [None, 2] and MT.Spec.__qualname__.endswith("MT.Spec")
    assert spec.is_compatible_with(MT([[1, 2]], [[True, False]]))


# ---------------------------------------------------------------------------
# tf.function, tf.cond, tf.while_loop, tf.map_fn
# ---------------------------------------------------------------------------

def test_function_traces_once_per_spec():
    traces = []

    @tf.function
    def f(x):
        traces.append(1)
        return x.values * 2

    f(BMT([1], [True]))
    f(BMT([2], [False]))
    f(BMT([1, 2], [True, True]))
    assert f.experimental_get_tracing_count() == 2 and len(traces) == 2


def test_function_results_and_mapping_keys_in_the_key():
    class Player(tf.experimental.ExtensionType):
        name: tf.Tensor
        attributes: Mapping[str, tf.Tensor]

    traces = []

    @tf.function
    def anonymize(player):
        traces.append(1)
        return Player("<anonymous>", player.attributes)

    r = anonymize(Player("Anne", {"height": 8.3, "speed": 28.1}))
    anonymize(Player("Bart", {"height": 8.1, "speed": 25.3}))
    assert len(traces) == 1
    anonymize(Player("Chuck", {"height": 11.0, "jump": 5.3}))
    assert len(traces) == 2
    assert _r(r) == (
        "Player(name=<tf.Tensor: shape=(), dtype=string, numpy=b'<anonymous>'>, attributes=ImmutableDict({'height': "
        "<tf.Tensor: shape=(), dtype=float32, numpy=8.300000190734863>, 'speed': <tf.Tensor: shape=(), "
        "dtype=float32, numpy=28.100000381469727>}))")


def test_input_signature_and_concrete_function_of_a_spec():
    class Pastry(tf.experimental.ExtensionType):
        sweetness: tf.Tensor
        chewiness: tf.Tensor

    spec = Pastry.Spec(tf.TensorSpec([2]), tf.TensorSpec(2))

    @tf.function(input_signature=[spec])
    def sweeter(x, delta=1.0):
        return Pastry(x.sweetness + delta, x.chewiness)

    cookie = Pastry(sweetness=[1.2, 0.4], chewiness=[0.8, 0.2])
    assert _r(sweeter(cookie)) == (
        "Pastry(sweetness=<tf.Tensor: shape=(2,), dtype=float32, numpy=array([2.2, 1.4], dtype=float32)>, "
        "chewiness=<tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.8, 0.2], dtype=float32)>)")
    cf = tf.function(lambda x: (x.sweetness + x.chewiness) / 2).get_concrete_function(spec)
    np.testing.assert_allclose(cf(cookie).numpy(), [1.0, 0.3], rtol=1e-6)


def test_cond_and_while_loop():
    r = tf.cond(tf.constant(False), lambda: BMT([1.], [True]), lambda: BMT([2., 3.], [False, True]))
    assert repr(r) == ("BMT(values=<tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 3.], dtype=float32)>, "
                       "mask=<tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>)")
    b = MaskedTensor([22., 33, 108, 55], [True, True, True, False])
    out = tf.while_loop(lambda i, _: i < 10, lambda i, mt: (i + 1, mt.with_values(mt.values + 3 / 7)), [0, b])[1]
    # the guide prints [26.285717, 37.285698, 112.285736, _]
    np.testing.assert_array_equal(out.values.numpy()[:3], np.float32([26.285717, 37.285698, 112.285736]))

    @tf.function
    def fn(x, b):
        if b:
            x = MaskedTensor(x, tf.less(x, 0))
        else:
            x = MaskedTensor(x, tf.greater(x, 0))
        for i in tf.range(5 if b else 7):
            x = x.with_values(x.values + 1 / 2)
        return x

    assert fn(tf.constant([1., -2, 3]), tf.constant(True)).values.numpy().tolist() == [3.5, 0.5, 5.5]
    assert fn(tf.constant([1., -2, 3]), tf.constant(False)).values.numpy().tolist() == [4.5, 1.5, 6.5]


def test_map_fn_batches_the_tensorshape_fields():
    def balance(network):
        delta = (tf.expand_dims(network.work, -1) - tf.expand_dims(network.work, -2))
        delta /= 4
        delta = tf.maximum(tf.minimum(delta, network.bandwidth), -network.bandwidth)
        return Network(network.work + tf.reduce_sum(delta, -1), network.bandwidth)

    out = tf.map_fn(balance, _networks())
    assert out.shape == [2]
    assert out.work.numpy().tolist() == [[5.5, 1.25, 9.25], [3.0, 4.75, 1.25]]
    v = BMT([120, 150, 80], [True, True, False])
    assert tf.map_fn(lambda x: x.values * 2, v, fn_output_signature=tf.int32).numpy().tolist() == [240, 300, 160]


# ---------------------------------------------------------------------------
# tf.data
# ---------------------------------------------------------------------------

def test_dataset_slices_batches_and_unbatches():
    ds = tf.data.Dataset.from_tensor_slices(_networks())
    assert repr(ds.element_spec) == (
        "Network.Spec(shape=TensorShape([]), work=TensorSpec(shape=(3,), dtype=tf.float32, name=None), "
        "bandwidth=TensorSpec(shape=(3, 3), dtype=tf.float32, name=None))")
    elems = list(ds)
    assert [e.shape for e in elems] == [[], []] and elems[1].work.numpy().tolist() == [3.0, 4.0, 2.0]
    assert repr(ds.batch(2).element_spec) == (
        "Network.Spec(shape=TensorShape([None]), work=TensorSpec(shape=(None, 3), dtype=tf.float32, name=None), "
        "bandwidth=TensorSpec(shape=(None, 3, 3), dtype=tf.float32, name=None))")

    def gen():
        for i in range(2, 7):
            yield BMT(tf.range(10), [j % i != 0 for j in range(10)])

    ds = tf.data.Dataset.from_generator(gen, output_signature=BMT.Spec(tf.TensorSpec([10], tf.int32),
                                                                       tf.TensorSpec([10], tf.bool)))
    batches = list(ds.batch(2))
    assert [b.values.shape for b in batches] == [[2, 10], [2, 10], [1, 10]]
    assert batches[0].mask.numpy()[1].tolist() == [False, True, True, False, True, True, False, True, True, False]
    rows = list(ds.batch(2).unbatch())
    assert len(rows) == 5 and rows[4].mask.numpy()[6] == False  # noqa: E712
    one = iter(tf.data.Dataset.from_tensors(BMT(5, True))).next()
    assert repr(one) == ("BMT(values=<tf.Tensor: shape=(), dtype=int32, numpy=5>, mask=<tf.Tensor: shape=(), "
                         "dtype=bool, numpy=True>)")


# ---------------------------------------------------------------------------
# Dispatch
# ---------------------------------------------------------------------------

_ATTEMPT = (r"^Attempt to convert a value \(MaskedTensor\(.*\) with an unsupported type "
            r"\(<class '.*MaskedTensor'>\) to a Tensor\.$")


def test_apis_without_a_dispatcher_raise_tensorflows_error():
    x = MaskedTensor([1, -2, 3], [True, False, True])
    for call in (lambda: tf.abs(x), lambda: tf.ones_like(x), lambda: tf.stack([x, x]), lambda: tf.constant([x])):
        with pytest.raises(ValueError, match=_ATTEMPT):
            call()


def test_dispatch_for_api():
    x = MaskedTensor([1, 2, 3], [True, True, False])
    y = MaskedTensor([4, 5, 6], [False, True, True])

    @tf.experimental.dispatch_for_api(tf.stack)
    def masked_stack(values: List[MaskedTensor], axis=0):
        return MaskedTensor(tf.stack([v.values for v in values], axis), tf.stack([v.mask for v in values], axis))

    try:
        r = tf.stack([x, y])
        assert r.mask.numpy().tolist() == [[True, True, False], [False, True, True]]
        assert tf.stack([x, y], axis=1, name="s").values.shape == [3, 2]
        assert tf.stack([tf.constant(1), tf.constant(2)]).numpy().tolist() == [1, 2]
        with pytest.raises(ValueError, match=_ATTEMPT):   # a Tensor among them: no List[MaskedTensor]
            tf.stack([x, tf.constant([4, 5, 6])])
    finally:
        tf.experimental.unregister_dispatch_for(masked_stack)
    with pytest.raises(ValueError, match=_ATTEMPT):
        tf.stack([x, y])
    with pytest.raises(ValueError, match=r"^Function <function .*masked_stack at 0x.*> was not registered using a "
                                         r"`@dispatch_for_\*` decorator\.$"):
        tf.experimental.unregister_dispatch_for(masked_stack)


def test_dispatch_for_api_checks_signatures_as_tensorflow():
    with pytest.raises(ValueError) as e:
        @tf.experimental.dispatch_for_api(tf.stack)
        def a(vals: List[MaskedTensor], axis=0):
            pass
    assert str(e.value) == ("Dispatch function's signature (vals: List[test_extension_type.MaskedTensor], axis=0, "
                            "name='stack') does not match API's signature (values, axis=0, name='stack').")
    with pytest.raises(ValueError, match=r"^signature includes annotation for unknown parameter 'foo'\.$"):
        tf.experimental.dispatch_for_api(tf.stack, {"foo": MaskedTensor})
    with pytest.raises(ValueError, match="must be called with at least one signature"):
        @tf.experimental.dispatch_for_api(tf.stack)
        def b(values, axis=0):
            pass
    with pytest.raises(ValueError, match=r"^<built-in function print> does not support dispatch\.$"):
        tf.experimental.dispatch_for_api(print)

    @tf.experimental.dispatch_for_api(tf.math.add, {"x": MaskedTensor})
    def madd(x, y, name=None):
        return "madd"

    @tf.experimental.dispatch_for_api(tf.where, {"condition": MaskedTensor})
    def mwhere(condition, x=None, y=None, name=None):
        return "mwhere"

    try:
        m = MaskedTensor([1], [True])
        assert tf.math.add(m, 1) == "madd" and tf.add(m, 1) == "madd" and tf.where(m) == "mwhere"
    finally:
        tf.experimental.unregister_dispatch_for(madd)
        tf.experimental.unregister_dispatch_for(mwhere)


def test_elementwise_dispatch():
    x = MaskedTensor([1, -2, 3], [True, False, True])

    @tf.experimental.dispatch_for_unary_elementwise_apis(MaskedTensor)
    def unary(api_func, x):
        return MaskedTensor(api_func(x.values), x.mask)

    @tf.experimental.dispatch_for_binary_elementwise_apis(Union[MaskedTensor, tf.Tensor],
                                                          Union[MaskedTensor, tf.Tensor])
    def binary(api_func, x, y):
        x = x if isinstance(x, MaskedTensor) else MaskedTensor(x, tf.ones_like(x, tf.bool))
        y = y if isinstance(y, MaskedTensor) else MaskedTensor(y, tf.ones_like(y, tf.bool))
        return MaskedTensor(api_func(x.values, y.values), x.mask & y.mask)

    try:
        assert tf.abs(x).values.numpy().tolist() == [1, 2, 3]
        assert tf.math.negative(x, name="neg").values.numpy().tolist() == [-1, 2, -3]
        assert tf.ones_like(x, dtype=tf.float32).values.numpy().tolist() == [1.0, 1.0, 1.0]
        assert tf.cast(x, tf.float32).values.dtype == tf.float32
        assert tf.nn.relu(x).values.numpy().tolist() == [1, 0, 3]
        assert tf.clip_by_value(x, 0, 2).values.numpy().tolist() == [1, 0, 2]
        with pytest.raises(ValueError, match="A unary elementwise dispatch handler .* has already been registered"):
            tf.experimental.dispatch_for_unary_elementwise_apis(MaskedTensor)(lambda f, x: x)
        assert tf.math.add(x, x).values.numpy().tolist() == [2, -4, 6]
        assert tf.math.multiply(tf.constant([2, 2, 2]), x).values.numpy().tolist() == [2, -4, 6]
        assert str(tf.math.add(tf.constant(1), tf.constant(2))) == "tf.Tensor(3, shape=(), dtype=int32)"
        assert tf.math.less(x, tf.constant([0, 0, 0])).values.numpy().tolist() == [False, True, False]
        y = MaskedTensor([[4], [5]], [[True], [False]])
        r = tf.math.add(x, y)  # the guide's cell: <MaskedTensor [[5, _, 1], [_, _, _]]>
        assert r.values.numpy().tolist() == [[5, 2, 7], [6, 3, 8]]
        assert r.mask.numpy().tolist() == [[True, False, True], [False, False, False]]
    finally:
        tf.experimental.unregister_dispatch_for(unary)
        tf.experimental.unregister_dispatch_for(binary)
    with pytest.raises(ValueError, match=_ATTEMPT):
        tf.math.add(x, x)


def test_matmul_takes_tensorflows_arguments():
    import inspect
    assert list(inspect.signature(tf.matmul).parameters)[-3:] == ["grad_a", "grad_b", "name"]


# ---------------------------------------------------------------------------
# Pieces of TensorFlow the guide leans on
# ---------------------------------------------------------------------------

def test_tensorshape_merge_concatenate_and_checks():
    assert tf.TensorShape([None, 2]).merge_with([3, None]) == [3, 2]
    with pytest.raises(ValueError, match=r"^Shapes \(3,\) and \(2,\) are not compatible$"):
        tf.TensorShape([3]).merge_with([2])
    assert [2] + tf.TensorShape([3]) == [2, 3] and tf.TensorShape([3]) + [1] == [3, 1]
    assert repr(tf.TensorShape(2)) == "TensorShape([2])"
    assert tf.TensorShape([2, 1]).most_specific_compatible_shape([5, 1]) == [None, 1]


def test_convert_none_raises_tensorflows_error():
    with pytest.raises(ValueError, match=r"^Attempt to convert a value \(None\) with an unsupported type "
                                         r"\(<class 'NoneType'>\) to a Tensor\.$"):
        tf.convert_to_tensor(None)


def test_keras_input_has_no_type_spec_argument():
    with pytest.raises(TypeError, match=r"^Input\(\) got an unexpected keyword argument 'type_spec'$"):
        tf.keras.layers.Input(type_spec=MaskedTensor.Spec(tf.TensorSpec(None), tf.TensorSpec(None, tf.bool)))


def test_extension_types_are_jax_pytrees():
    import jax
    mt = BMT([1.0, 2.0], [True, False])
    leaves, tree = jax.tree_util.tree_flatten(mt)
    assert len(leaves) == 2
    doubled = jax.jit(lambda m: BMT(m.values * 2, m.mask))(mt)
    assert isinstance(doubled, BMT) and doubled.values.numpy().tolist() == [2.0, 4.0]
    assert typing.get_type_hints(BMT) == {"values": tf.Tensor, "mask": tf.Tensor}


# ---------------------------------------------------------------------------
# SavedModel
# ---------------------------------------------------------------------------

class SavedMT(tf.experimental.BatchableExtensionType):
    __name__ = "tapejax_tests.SavedMT"
    values: tf.Tensor
    mask: tf.Tensor
    shape = property(lambda self: self.values.shape)
    dtype = property(lambda self: self.values.dtype)

    class Spec:
        def __init__(self, shape, dtype=tf.float32):
            self.values = tf.TensorSpec(shape, dtype)
            self.mask = tf.TensorSpec(shape, tf.bool)

        shape = property(lambda self: self.values.shape)
        dtype = property(lambda self: self.values.dtype)


def test_saved_model_takes_and_returns_registered_extension_types(tmp_path):
    class Grow(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(100.0)

        @tf.function
        def grow(self, x):
            return SavedMT(x.values * self.v, x.mask)

    module = Grow()
    module.grow.get_concrete_function(SavedMT.Spec(shape=None, dtype=tf.float32))
    tf.saved_model.save(module, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    out = loaded.grow(SavedMT([1., 2, 3], [False, True, False]))   # TF: <MaskedTensor [_, 200.0, _]>
    assert isinstance(out, SavedMT)
    assert out.values.numpy().tolist() == [100.0, 200.0, 300.0] and out.mask.numpy().tolist() == [False, True, False]


def test_saved_model_of_an_unregistered_extension_type_says_what_to_write(tmp_path):
    class Plain(tf.Module):
        @tf.function
        def f(self, x):
            return BMT(x.values * 2, x.mask)

    m = Plain()
    m.f.get_concrete_function(BMT.Spec(tf.TensorSpec([2]), tf.TensorSpec([2], tf.bool)))
    with pytest.raises(ValueError, match="needs a registered name"):
        tf.saved_model.save(m, str(tmp_path))


def test_saved_model_unknown_rank_broadcast_against_a_variable(tmp_path):
    # The guide's var_weighted_mean_wrapper: x of unknown rank times a [4] Variable. TF 2.21: 51.0 for both.
    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable([3., 2., 8., 5.])

        @tf.function
        def f(self, x):
            return tf.reduce_sum(x * self.v)

    m = M()
    m.f.get_concrete_function(tf.TensorSpec(None, tf.float32))
    tf.saved_model.save(m, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    assert float(loaded.f(tf.constant([1., 2., 3., 4.]))) == 51.0
    assert float(loaded.f(tf.constant([[1., 2., 3., 4.]]))) == 51.0


def test_input_signature_binding_errors_as_tensorflow():
    @tf.function(input_signature=[BMT.Spec(tf.TensorSpec([2], tf.int32), tf.TensorSpec([2], tf.bool))])
    def g(v):
        return v.values

    with pytest.raises(TypeError) as e:
        g(BMT([1, 2, 3], [True, True, True]))
    assert str(e.value).startswith("Binding inputs to tf.function failed due to `Can not cast TensorSpec(shape=(3,), "
                                   "dtype=tf.int32, name=None) to TensorSpec(shape=(2,), dtype=tf.int32, name=None)`.")
    with pytest.raises(TypeError) as e:
        g(tf.constant([1, 2]))
    assert str(e.value).startswith("Binding inputs to tf.function failed due to `'values'`.")


def test_slicing_a_value_that_is_not_batchable_raises_tensorflows_error():
    with pytest.raises(AttributeError,
                       match=r"^'MaskedTensor\.Spec' object has no attribute '_to_batched_tensor_list'$"):
        tf.data.Dataset.from_tensor_slices(MaskedTensor([1, 2], [True, False]))
    assert len(list(tf.data.Dataset.from_tensors(MaskedTensor([1, 2], [True, False])))) == 1


def test_map_fn_output_signature_of_a_spec_and_non_batchable_elems():
    r = tf.map_fn(lambda v: BMT(v, v > 1), tf.constant([1, 2, 3]),
                  fn_output_signature=BMT.Spec(tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.bool)))
    assert repr(r) == ("BMT(values=<tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 3], dtype=int32)>, "
                       "mask=<tf.Tensor: shape=(3,), dtype=bool, numpy=array([False,  True,  True])>)")
    with pytest.raises(AttributeError, match=r"^'MaskedTensor\.Spec' object has no attribute '_unbatch'$"):
        tf.map_fn(lambda v: v.values, MaskedTensor([1, 2], [True, False]))


def test_traced_arguments_are_named_and_described_by_their_spec(capsys):
    @tf.function
    def f(m, p):
        print(m)
        print(p)
        return m

    x = BMT([1, 2], [True, False])
    f(x, (tf.constant(1), tf.constant(2)))
    out = capsys.readouterr().out.splitlines()
    assert out == ["BMT(values=<tf.Tensor 'm:0' shape=(2,) dtype=int32>, "
                   "mask=<tf.Tensor 'm_1:0' shape=(2,) dtype=bool>)",
                   "(<tf.Tensor 'p:0' shape=() dtype=int32>, <tf.Tensor 'p_1:0' shape=() dtype=int32>)"]
    sig = f.get_concrete_function(x, (tf.constant(1), tf.constant(2))).structured_input_signature
    assert repr(sig[0][0]) == ("BMT.Spec(values=TensorSpec(shape=(2,), dtype=tf.int32, name=None), "
                               "mask=TensorSpec(shape=(2,), dtype=tf.bool, name=None))")


def test_dataset_map_filter_and_numpy_iterator():
    mt = BMT(tf.reshape(tf.range(6), [3, 2]), tf.ones([3, 2], tf.bool))
    ds = tf.data.Dataset.from_tensor_slices(mt)
    assert [a.tolist() for a in ds.map(lambda m: m.values * 2).as_numpy_iterator()] == [[0, 2], [4, 6], [8, 10]]
    d2 = ds.map(lambda m: BMT(m.values + 1, m.mask))
    assert repr(d2.element_spec) == ("BMT.Spec(values=TensorSpec(shape=(2,), dtype=tf.int32, name=None), "
                                     "mask=TensorSpec(shape=(2,), dtype=tf.bool, name=None))")
    assert [m.values.numpy().tolist() for m in ds.filter(lambda m: m.values[0] > 0)] == [[2, 3], [4, 5]]
    pairs = tf.data.Dataset.from_tensor_slices((mt, tf.constant([1, 2, 3]))).batch(2)
    assert [(a.values.shape, b.numpy().tolist()) for a, b in pairs] == [([2, 2], [1, 2]), ([1, 2], [3])]
    with pytest.raises(TypeError, match=r"^`tf\.data\.Dataset\.as_numpy_iterator\(\)` is not supported for datasets "
                                        r"that produce values of type <class '.*BMT'>$"):
        list(ds.as_numpy_iterator())


def test_nest_expand_composites():
    x = BMT([1, 2], [True, False])
    assert tf.nest.flatten(x) == [x] and len(tf.nest.flatten([x, {"a": x}])) == 2
    flat = tf.nest.flatten(x, expand_composites=True)
    assert [f.numpy().tolist() for f in flat] == [[1, 2], [True, False]]
    r = tf.nest.map_structure(lambda v: tf.concat([v, v], 0), x, expand_composites=True)
    assert type(r) is BMT and r.values.numpy().tolist() == [1, 2, 1, 2]
    assert tf.nest.map_structure(lambda v: type(v).__name__, {"a": x, "b": 1}) == {"a": "BMT", "b": "int"}
    back = tf.nest.pack_sequence_as(x, [tf.constant([5]), tf.constant([True])], expand_composites=True)
    assert type(back) is BMT and back.values.numpy().tolist() == [5]


def test_structured_outputs_are_named_symbolic_tensors():
    @tf.function
    def f(x):
        return {"b": x * 2, "a": (x, x + 1)}

    outs = f.get_concrete_function(tf.constant([1, 2])).structured_outputs
    assert repr(outs) == ("{'b': <tf.Tensor 'Identity_2:0' shape=(2,) dtype=int32>, 'a': (<tf.Tensor 'Identity:0' "
                          "shape=(2,) dtype=int32>, <tf.Tensor 'Identity_1:0' shape=(2,) dtype=int32>)}")
    one = tf.function(lambda x: x).get_concrete_function(tf.constant(1.0)).structured_outputs
    assert str(one) == 'Tensor("Identity:0", shape=(), dtype=float32)'
    with pytest.raises(AttributeError):
        one.numpy()
    mt = tf.function(lambda m: m).get_concrete_function(BMT([1, 2], [True, False])).structured_outputs
    assert repr(mt) == ("BMT(values=<tf.Tensor 'Identity:0' shape=(2,) dtype=int32>, "
                        "mask=<tf.Tensor 'Identity_1:0' shape=(2,) dtype=bool>)")


def test_traced_tensor_names_as_tensorflow(capsys):
    @tf.function
    def f(x, b):
        for t in [x > 1, tf.not_equal(x, 1), tf.logical_and(b, b), tf.where(b, x, x), tf.expand_dims(x, 0),
                  tf.gather(x, [0]), tf.reduce_all(b), tf.argmax(x), tf.math.floormod(x, 2)]:
            print(t.name)
        return 0

    f(tf.constant([1, 2]), tf.constant([True, False]))
    assert capsys.readouterr().out.split() == ["Greater:0", "NotEqual:0", "LogicalAnd:0", "SelectV2:0",
                                               "ExpandDims:0", "GatherV2:0", "All:0", "ArgMax:0", "FloorMod:0"]
    with pytest.raises(AttributeError, match=r"^Tensor\.name is undefined when eager execution is enabled\.$"):
        tf.constant(1).name
    assert not hasattr(tf.constant(1), "name")


def test_an_extension_type_is_not_a_gradient_source_or_target():
    """TF 2.21: ValueError 'Type MT is not supported as a gradient source or gradient target.'
    (a composite without __composite_gradient__); its tensors are."""
    class MT(tf.experimental.ExtensionType):
        x: tf.Tensor

    mt = MT(tf.constant([1.0, 2.0]))
    for source, target in [(lambda: mt, lambda y: y), (lambda: mt.x, lambda y: mt)]:
        with tf.GradientTape() as tape:
            tape.watch(mt.x)
            y = tf.reduce_sum(mt.x * 2)
        with pytest.raises(ValueError, match="^Type MT is not supported as a gradient source or gradient target.$"):
            tape.gradient(target(y), source())
    with tf.GradientTape() as tape:
        tape.watch(mt.x)
        y = tf.reduce_sum(mt.x * 2)
    assert tape.gradient(y, [mt.x])[0].numpy().tolist() == [2.0, 2.0]
