"""tf.nest against TensorFlow 2.21 (values and messages recorded with /tmp/tf/bin/python); the
core distribution guide's repack_local_tensor calls tf.nest.map_structure."""
import collections

import pytest

import tapejax as tf

P = collections.namedtuple("P", ["b", "a"])
Q = collections.namedtuple("Q", ["b", "a"])


def test_flatten_pack_and_map_as_tensorflow():
    s = {"b": [1, (2, None)], "a": P(3, {"z": 4, "y": 5}), "c": "str"}
    assert tf.nest.flatten(s) == [3, 5, 4, 1, 2, None, "str"]
    assert (tf.nest.flatten(None), tf.nest.flatten(3), tf.nest.flatten([]), tf.nest.flatten({})) == ([None], [3], [], [])
    assert repr(tf.nest.pack_sequence_as(s, list(range(7)))) == \
        "{'b': [3, (4, 5)], 'a': P(b=0, a={'z': 2, 'y': 1}), 'c': 6}"
    assert repr(tf.nest.map_structure(lambda x: x * 2 if isinstance(x, int) else x, s)) == \
        "{'b': [2, (4, None)], 'a': P(b=6, a={'z': 8, 'y': 10}), 'c': 'str'}"
    assert tf.nest.map_structure(lambda x, y: (x, y), [1, (2, 3)], [4, (5, 6)]) == [(1, 4), ((2, 5), (3, 6))]
    assert (tf.nest.is_nested([1]), tf.nest.is_nested(1), tf.nest.is_nested("ab"), tf.nest.is_nested({})) == \
        (True, False, False, True)
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert tf.nest.flatten(od) == [2, 1]
    assert repr(tf.nest.pack_sequence_as(od, [7, 8])) == "OrderedDict([('b', 8), ('a', 7)])"
    x = tf.constant([[1., 2.], [3., 4.]])
    out = tf.nest.map_structure(lambda t: tf.split(t, 2, axis=0), [x])
    assert [[p.numpy().tolist() for p in parts] for parts in out] == [[[[1.0, 2.0]], [[3.0, 4.0]]]]
    t = tf.constant([1, 2])
    assert tf.nest.flatten(t)[0] is t and tf.nest.pack_sequence_as(1, [2]) == 2 and tf.nest.pack_sequence_as([], []) == []


def _structures_message(first, second, detail, shape1, shape2):
    return (f"The two structures don't have the same nested structure.\n\nFirst structure: {first}\n\n"
            f"Second structure: {second}\n\nMore specifically: {detail}\nEntire first structure:\n{shape1}\n"
            f"Entire second structure:\n{shape2}")


@pytest.mark.parametrize("a,b,cls,first,second,detail,shape1,shape2", [
    ([1, 2], [1], ValueError, "type=list str=[1, 2]", "type=list str=[1]",
     "The two structures don't have the same number of elements. First structure: type=list str=[1, 2]. "
     "Second structure: type=list str=[1]", "[., .]", "[.]"),
    ([1, 2], (1, 2), TypeError, "type=list str=[1, 2]", "type=tuple str=(1, 2)",
     "The two namedtuples don't have the same sequence type. First structure type=list str=[1, 2] has type list, "
     "while second structure type=tuple str=(1, 2) has type tuple", "[., .]", "(., .)"),
    ({"a": 1}, {"b": 1}, ValueError, "type=dict str={'a': 1}", "type=dict str={'b': 1}",
     "The two dictionaries don't have the same set of keys. First structure has keys type=list str=['a'], while "
     "second structure has keys type=list str=['b']", "{'a': .}", "{'b': .}"),
    ([1, 2], [1, [2]], ValueError, "type=list str=[1, 2]", "type=list str=[1, [2]]",
     'Substructure "type=list str=[2]" is a sequence, while substructure "type=int str=2" is not', "[., .]", "[., [.]]"),
    (1, [1], ValueError, "type=int str=1", "type=list str=[1]",
     'Substructure "type=list str=[1]" is a sequence, while substructure "type=int str=1" is not', ".", "[.]"),
    (P(1, 2), Q(1, 2), TypeError, "type=P str=P(b=1, a=2)", "type=Q str=Q(b=1, a=2)",
     "The two namedtuples don't have the same sequence type. First structure type=P str=P(b=1, a=2) has type P, "
     "while second structure type=Q str=Q(b=1, a=2) has type Q", "P(b=., a=.)", "Q(b=., a=.)"),
    ({"a": [1, (2,)]}, {"a": [1, (2, 3)]}, ValueError, "type=dict str={'a': [1, (2,)]}",
     "type=dict str={'a': [1, (2, 3)]}", "The two structures don't have the same number of elements. First "
     "structure: type=tuple str=(2,). Second structure: type=tuple str=(2, 3)", "{'a': [., (.,)]}",
     "{'a': [., (., .)]}"),
])
def test_assert_same_structure_messages(a, b, cls, first, second, detail, shape1, shape2):
    with pytest.raises(cls) as e:
        tf.nest.assert_same_structure(a, b)
    assert str(e.value) == _structures_message(first, second, detail, shape1, shape2)


def test_other_errors():
    tf.nest.assert_same_structure([1, 2], (1, 2), check_types=False)
    with pytest.raises(ValueError) as e:
        tf.nest.pack_sequence_as([1, 2], [1])
    assert str(e.value) == ("Could not pack sequence. Structure had 2 atoms, but flat_sequence had 1 items.  "
                            "Structure: [1, 2], flat_sequence: [1].")
    with pytest.raises(TypeError) as e:
        tf.nest.pack_sequence_as([1, 2], 5)
    assert str(e.value) == "Attempted to pack value:\n  5\ninto a structure, but found incompatible type `<class 'int'>` instead."
    with pytest.raises(ValueError) as e:
        tf.nest.pack_sequence_as(1, [2, 3])
    assert str(e.value) == ("The target structure is of type `<class 'int'>`\n  1\nHowever the input is a sequence "
                            "(<class 'list'>) of length 2.\n  [2, 3]\nnest cannot guarantee that it is safe to map "
                            "one to the other.")
    with pytest.raises(ValueError, match="^Must provide at least one structure$"):
        tf.nest.map_structure(lambda a: a)
    with pytest.raises(ValueError) as e:
        tf.nest.map_structure(lambda a: a, (1,), check_types=False, foo=1)
    assert str(e.value) == "Only valid keyword arguments are `check_types` and `expand_composites`, not: `foo`"


def test_expand_composites_of_ragged_and_sparse_tensors():
    # tf.nest.flatten / pack_sequence_as docstrings, TF 2.21: a RaggedTensor's components are its
    # flat_values and nested_row_splits, a SparseTensor's its indices, values and dense_shape.
    got = tf.nest.flatten(tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2]]), expand_composites=True)
    assert repr(got) == ("[<tf.Tensor: shape=(7,), dtype=int32, numpy=array([3, 1, 4, 1, 5, 9, 2], dtype=int32)>, "
                         "<tf.Tensor: shape=(4,), dtype=int64, numpy=array([0, 4, 4, 7])>]")
    structure = {"foo": tf.ragged.constant([[1., 2.], [3.]]), "bar": tf.constant([[5.]])}
    tensors = tf.nest.flatten(structure, expand_composites=True)
    assert repr(tensors) == (
        "[<tf.Tensor: shape=(1, 1), dtype=float32, numpy=array([[5.]], dtype=float32)>, <tf.Tensor: shape=(3,), "
        "dtype=float32, numpy=array([1., 2., 3.], dtype=float32)>, <tf.Tensor: shape=(3,), dtype=int64, "
        "numpy=array([0, 2, 3])>]")
    assert repr(tf.nest.pack_sequence_as(structure, tensors, expand_composites=True)) == (
        "{'foo': <tf.RaggedTensor [[1.0, 2.0], [3.0]]>, 'bar': <tf.Tensor: shape=(1, 1), dtype=float32, "
        "numpy=array([[5.]], dtype=float32)>}")
    r = tf.ragged.constant([[[1], [2, 3]], [[4]]])
    assert [t.numpy().tolist() for t in tf.nest.flatten(r, expand_composites=True)] == [[1, 2, 3, 4], [0, 2, 3],
                                                                                         [0, 1, 3, 4]]
    doubled = tf.nest.map_structure(lambda x: x * 2 if x.dtype == tf.int32 else x, r, expand_composites=True)
    assert doubled.to_list() == [[[2], [4, 6]], [[8]]]
    sp = tf.sparse.SparseTensor([[0, 1]], [2.0], [2, 3])
    parts = tf.nest.flatten(sp, expand_composites=True)
    assert [p.numpy().tolist() for p in parts] == [[[0, 1]], [2.0], [2, 3]]
    assert tf.sparse.to_dense(tf.nest.pack_sequence_as(sp, parts, expand_composites=True)).numpy().tolist() == [
        [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]
    assert tf.nest.flatten(r) == [r]
