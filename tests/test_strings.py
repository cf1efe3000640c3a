"""String tensors and tf.strings, against TensorFlow 2.21.

The cells named ``tensorNN`` are the string cells of the guide "Introduction to Tensors"
(tensorflow/docs site/en/guide/tensor.ipynb, code cell NN), the ``unicodeNN`` cells the basics of
"Unicode strings" (tensorflow/text docs/guide/unicode.ipynb, code cell NN), unchanged; the other
cells are one call each. Each runs with ``tf`` bound to tapejax and must print what TensorFlow
printed (``TF_OUTPUT``, recorded by scripts/record_text_tests.py; see guide_harness).

Cells not run, and why:

- tensor114: ``tf.io.decode_raw`` (tf.io is not provided)
- unicode cells on ``tf.strings.unicode_script``: ICU script codes are not provided
"""
import logging

import numpy as np
import pytest

import tapejax as tf
from guide_harness import assert_same_output, run_cells

CELLS = {
    # guide: Introduction to Tensors
    "tensor100": '''# Tensors can be strings, too here is a scalar string.
scalar_string_tensor = tf.constant("Gray wolf")
print(scalar_string_tensor)''',
    "tensor103": '''# If you have three string tensors of different lengths, this is OK.
tensor_of_strings = tf.constant(["Gray wolf",
                                 "Quick brown fox",
                                 "Lazy dog"])
# Note that the shape is (3,). The string length is not included.
print(tensor_of_strings)''',
    "tensor106": '''tf.constant("🥳👍")''',
    "tensor108": '''# You can use split to split a string into a set of tensors
print(tf.strings.split(scalar_string_tensor, sep=" "))''',
    "tensor109": '''# ...but it turns into a `RaggedTensor` if you split up a tensor of strings,
# as each string might be split into a different number of parts.
print(tf.strings.split(tensor_of_strings))''',
    "tensor112": '''text = tf.constant("1 10 100")
print(tf.strings.to_number(tf.strings.split(text, " ")))''',
    "tensor115": '''# Or split it up as unicode and then decode it
unicode_bytes = tf.constant("アヒル 🦆")
unicode_char_bytes = tf.strings.unicode_split(unicode_bytes, "UTF-8")
unicode_values = tf.strings.unicode_decode(unicode_bytes, "UTF-8")

print("\\nUnicode bytes:", unicode_bytes)
print("\\nUnicode chars:", unicode_char_bytes)
print("\\nUnicode values:", unicode_values)''',
    # guide: Unicode strings
    "unicode01": '''tf.constant(u"Thanks 😊")''',
    "unicode02": '''tf.constant([u"You're", u"welcome!"]).shape''',
    "unicode03": '''# Unicode string, represented as a UTF-8 encoded string scalar.
text_utf8 = tf.constant(u"语言处理")
text_utf8''',
    "unicode04": '''# Unicode string, represented as a UTF-16-BE encoded string scalar.
text_utf16be = tf.constant(u"语言处理".encode("UTF-16-BE"))
text_utf16be''',
    "unicode05": '''# Unicode string, represented as a vector of Unicode code points.
text_chars = tf.constant([ord(char) for char in u"语言处理"])
text_chars''',
    "unicode06": '''tf.strings.unicode_decode(text_utf8,
                          input_encoding='UTF-8')''',
    "unicode07": '''tf.strings.unicode_encode(text_chars,
                          output_encoding='UTF-8')''',
    "unicode08": '''tf.strings.unicode_transcode(text_utf8,
                             input_encoding='UTF8',
                             output_encoding='UTF-16-BE')''',
    "unicode09": '''# A batch of Unicode strings, each represented as a UTF8-encoded string.
batch_utf8 = [s.encode('UTF-8') for s in
              [u'hÃllo', u'What is the weather tomorrow', u'Göödnight', u'😊']]
batch_chars_ragged = tf.strings.unicode_decode(batch_utf8,
                                               input_encoding='UTF-8')
for sentence_chars in batch_chars_ragged.to_list():
  print(sentence_chars)''',
    "unicode10": '''batch_chars_padded = batch_chars_ragged.to_tensor(default_value=-1)
print(batch_chars_padded.numpy())''',
    "unicode11": '''batch_chars_sparse = batch_chars_ragged.to_sparse()

nrows, ncols = batch_chars_sparse.dense_shape.numpy()
elements = [['_' for i in range(ncols)] for j in range(nrows)]
for (row, col), value in zip(batch_chars_sparse.indices.numpy(), batch_chars_sparse.values.numpy()):
  elements[row][col] = str(value)
# max_width = max(len(value) for row in elements for value in row)
value_lengths = []
for row in elements:
  for value in row:
    value_lengths.append(len(value))
max_width = max(value_lengths)
print('[%s]' % '\\n '.join(
    '[%s]' % ', '.join(value.rjust(max_width) for value in row)
    for row in elements))''',
    "unicode12": '''tf.strings.unicode_encode([[99, 97, 116], [100, 111, 103], [99, 111, 119]],
                          output_encoding='UTF-8')''',
    "unicode13": '''tf.strings.unicode_encode(batch_chars_ragged, output_encoding='UTF-8')''',
    "unicode14": '''tf.strings.unicode_encode(
    tf.RaggedTensor.from_sparse(batch_chars_sparse),
    output_encoding='UTF-8')''',
    "unicode15": '''tf.strings.unicode_encode(
    tf.RaggedTensor.from_tensor(batch_chars_padded, padding=-1),
    output_encoding='UTF-8')''',
    "unicode16": '''# Note that the final character takes up 4 bytes in UTF8.
thanks = u'Thanks 😊'.encode('UTF-8')
num_bytes = tf.strings.length(thanks).numpy()
num_chars = tf.strings.length(thanks, unit='UTF8_CHAR').numpy()
print('{} bytes; {} UTF-8 characters'.format(num_bytes, num_chars))''',
    "unicode17": '''# Here, unit='BYTE' (default). Returns a single byte with len=1
tf.strings.substr(thanks, pos=7, len=1).numpy()''',
    "unicode18": '''# Specifying unit='UTF8_CHAR', returns a single 4 byte character in this case
print(tf.strings.substr(thanks, pos=7, len=1, unit='UTF8_CHAR').numpy())''',
    "unicode19": '''tf.strings.unicode_split(thanks, 'UTF-8').numpy()''',
    "unicode20": '''codepoints, offsets = tf.strings.unicode_decode_with_offsets(u'🎈🎉🎊', 'UTF-8')

for (codepoint, offset) in zip(codepoints.numpy(), offsets.numpy()):
  print('At byte offset {}: codepoint {}'.format(offset, codepoint))''',
    # string tensors
    "bytes_constant": '''tf.constant(b"ab")''',
    "numpy_text": '''import numpy as np
tf.constant(np.array(["a", "bc"]))''',
    "numpy_objects": '''import numpy as np
tf.constant(np.array([b"a"], dtype=object))''',
    "convert": '''tf.convert_to_tensor("x")''',
    "convert_hint": '''tf.convert_to_tensor(["a", "b"], dtype_hint=tf.float32)''',
    "matrix": '''m = tf.constant([["a", "b"], ["c", "d"]])
print(m)
print(repr(m))''',
    "index_row": '''tf.constant([["a", "b"], ["c", "d"]])[0]''',
    "index_col": '''tf.constant([["a", "b"], ["c", "d"]])[:, 1]''',
    "index_elem": '''tf.constant([["a", "b"], ["c", "d"]])[1, 0]''',
    "bool_mask": '''tf.constant(["a", "b"])[tf.constant([True, False])]''',
    "shape_op": '''tf.shape(tf.constant([["a", "b"], ["c", "d"]]))''',
    "size_op": '''tf.size(tf.constant(["a"]))''',
    "reshape": '''tf.reshape(tf.constant([["a", "b"], ["c", "d"]]), [-1])''',
    "transpose": '''tf.transpose(tf.constant([["a", "b"]]))''',
    "expand_dims": '''tf.expand_dims(tf.constant(["a", "b"]), 0)''',
    "tile": '''tf.tile(tf.constant(["a", "b"]), [2])''',
    "stack": '''tf.stack([tf.constant("a"), tf.constant("b")])''',
    "concat": '''tf.concat([tf.constant(["a"]), tf.constant(["b", "c"])], 0)''',
    "unstack": '''tf.unstack(tf.constant(["a", "b"]))''',
    "iterate": '''list(tf.constant(["a", "b"]))''',
    "gather": '''tf.gather(tf.constant(["a", "b", "c"]), [2, 0])''',
    "where": '''tf.where([True, False], ["a", "b"], ["c", "d"])''',
    "identity": '''tf.identity(tf.constant(["a"]))''',
    "equal": '''tf.equal(tf.constant(["a", "b"]), "a")''',
    "eq_op": '''tf.constant(["a", "b"]) == tf.constant(["a", "c"])''',
    "ne_op": '''tf.constant(["a", "b"]) != "a"''',
    "add_op": '''tf.constant(["a", "b"]) + "x"''',
    "numpy_vec": '''tf.constant(["a", "b"]).numpy()''',
    "numpy_scalar": '''tf.constant("a").numpy()''',
    "dtype": '''print(tf.constant(["a", "b"]).dtype, repr(tf.string), tf.string.name)''',
    "as_dtype": '''import numpy as np
print(tf.as_dtype(np.object_), tf.as_dtype(np.str_), tf.as_dtype(np.bytes_))''',
    "zeros": '''tf.zeros([2], tf.string)''',
    "zeros_like": '''tf.zeros_like(tf.constant(["a"]))''',
    "fill": '''tf.fill([2], "#")''',
    "variable": '''v = tf.Variable("abc")
print(v.dtype, v.shape, v.numpy())''',
    "variable_assign": '''v = tf.Variable(["abc", "d"])
v.assign(["x", "y"])
v.numpy()''',
    "truth": '''bool(tf.constant("a"))''',
    # tf.strings
    "split_vec": '''tf.strings.split(tf.constant(["Gray wolf", "Quick brown fox", "Lazy dog"]))''',
    "split_sep": '''tf.strings.split("a,,b", ",")''',
    "split_sep_vec": '''tf.strings.split(["a,,b", ""], ",")''',
    "split_space": '''tf.strings.split(["a  b ", ""])''',
    "split_max": '''tf.strings.split("a b c d", maxsplit=2)''',
    "split_ragged": '''tf.strings.split(tf.ragged.constant([["So", "long"], ["thanks", "for", "all"]]), "o")''',
    "to_number_int": '''tf.strings.to_number(["1", "-7"], out_type=tf.int32)''',
    "to_number_f64": '''tf.strings.to_number("1e3", out_type=tf.float64)''',
    "to_number_space": '''tf.strings.to_number(" 2")''',
    "bytes_split": '''tf.strings.bytes_split(tf.constant("Duck"))''',
    "bytes_split_vec": '''tf.strings.bytes_split(["ab", "", "c"])''',
    "unicode_decode_vec": '''tf.strings.unicode_decode(["hÃllo", "😊"], "UTF-8")''',
    "unicode_decode_replace": '''tf.strings.unicode_decode(b"\\xffab", "UTF-8")''',
    "unicode_decode_ignore": '''tf.strings.unicode_decode(b"\\xffab", "UTF-8", errors="ignore")''',
    "unicode_split_vec": '''tf.strings.unicode_split(["ab", "é"], "UTF-8")''',
    "unicode_encode_vec": '''tf.strings.unicode_encode([35821, 35328], "UTF-8")''',
    "unicode_encode_ragged": '''tf.strings.unicode_encode(tf.ragged.constant([[99, 97], [100]]), output_encoding='UTF-8')''',
    "length_vec": '''tf.strings.length(tf.constant(["Gray wolf", "Quick brown fox", "Lazy dog"]))''',
    "length_matrix": '''tf.strings.length(tf.constant([["a", "bc"], ["", "def"]]))''',
    "length_ragged": '''tf.strings.length(tf.ragged.constant([["So", "long"], ["thanks"]]))''',
    "length_empty": '''tf.strings.length("")''',
    "substr_vec": '''tf.strings.substr(["Hello", "World"], 1, 3)''',
    "substr_negative": '''tf.strings.substr("Hello", -3, 2)''',
    "substr_long": '''tf.strings.substr("Hello", 2, 10)''',
    "substr_per_element": '''tf.strings.substr(["Hello", "World"], [0, 1], [1, 2])''',
    "substr_ragged": '''tf.strings.substr(tf.ragged.constant([["So", "long"], ["thanks", "for", "all", "the", "fish"]]), 0, 2)''',
    "join": '''tf.strings.join(["abc", "def"])''',
    "join_sep": '''tf.strings.join([["abc", "123"], ["def", "456"]], separator=" ")''',
    "join_broadcast": '''tf.strings.join([["a", "b"], "x"], separator="-")''',
    "reduce_join": '''tf.strings.reduce_join(["abc", "def"])''',
    "reduce_join_axis1": '''tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator="-")''',
    "reduce_join_axis0": '''tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=0)''',
    "reduce_join_keepdims": '''tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=-1, keepdims=True)''',
    "reduce_join_ragged": '''tf.strings.reduce_join(tf.ragged.constant([["So", "long"], ["thanks"]]), axis=-1, separator=" ")''',
    "lower": '''tf.strings.lower("CamelCase ÀÉ")''',
    "lower_utf8": '''tf.strings.lower("CamelCase ÀÉ", encoding="utf-8")''',
    "upper": '''tf.strings.upper(["abc", "déf"])''',
    "upper_utf8": '''tf.strings.upper(["abc", "déf"], encoding="utf-8")''',
    "lower_ragged": '''tf.strings.lower(tf.ragged.constant([["So", "LONG"], ["Thanks"]]))''',
    "strip": '''tf.strings.strip(["  hello ", "world\\n", "\\t x y \\r"])''',
    "regex_replace": '''tf.strings.regex_replace("Text with tags.<br /><b>contains html</b>", "<[^>]+>", " ")''',
    "regex_replace_first": '''tf.strings.regex_replace(["aaa", "bab"], "a", "c", replace_global=False)''',
    "regex_replace_groups": '''tf.strings.regex_replace("hello world", r"(\\w+) (\\w+)", r"\\2 \\1")''',
    "regex_replace_whole": '''tf.strings.regex_replace("abc", "b", r"[\\0]")''',
    "regex_full_match": '''tf.strings.regex_full_match(["TF lib", "lib TF"], ".*lib$")''',
    "regex_full_match_partial": '''tf.strings.regex_full_match("abc", "b")''',
    "as_string": '''tf.strings.as_string([3.14159, 2.0])''',
    "as_string_precision": '''tf.strings.as_string([3.14159, 2.0], precision=2)''',
    "as_string_int": '''tf.strings.as_string(tf.constant([1, -20]))''',
    "as_string_width": '''tf.strings.as_string(tf.constant([1, -20]), width=4)''',
    "as_string_fill": '''tf.strings.as_string(tf.constant([1, -20]), width=4, fill="0")''',
    "as_string_scientific": '''tf.strings.as_string(1234.5, scientific=True)''',
    "as_string_shortest": '''tf.strings.as_string(1234.5, shortest=True)''',
    "as_string_bool": '''tf.strings.as_string([True, False])''',
    "as_string_string": '''tf.strings.as_string("a")''',
    "format": '''tf.strings.format("x = {}", [tf.constant([1, 2, 3])])''',
    "format_mixed": '''tf.strings.format("{} and {}", ("a", tf.constant(2.5)))''',
    "format_summarize": '''tf.strings.format("{}", tf.range(10))''',
    "format_strings": '''tf.strings.format("s: {}", tf.constant(["a", "b"]))''',
    "dataset": '''ds = tf.data.Dataset.from_tensor_slices(["a b", "cd"])
print(ds.element_spec)
for e in ds.map(lambda s: tf.strings.length(s)):
  print(repr(e))
for e in ds.batch(2):
  print(repr(e))''',
}

# cell: (cells run before it, ignore numbers)
PLAN = {
    "tensor100": ([], False), "tensor103": ([], False), "tensor106": ([], False),
    "tensor108": (["tensor100"], False), "tensor109": (["tensor103"], False), "tensor112": ([], False),
    "tensor115": ([], False),
    **{f"unicode{i:02d}": ([], False) for i in (1, 2, 3, 4, 5, 9)},
    "unicode06": (["unicode03"], False), "unicode07": (["unicode05"], False), "unicode08": (["unicode03"], False),
    "unicode10": (["unicode09"], False), "unicode11": (["unicode09"], False), "unicode12": ([], False),
    "unicode13": (["unicode09"], False), "unicode14": (["unicode09", "unicode11"], False),
    "unicode15": (["unicode09", "unicode10"], False), "unicode16": ([], False),
    "unicode17": (["unicode16"], False), "unicode18": (["unicode16"], False), "unicode19": (["unicode16"], False),
    "unicode20": ([], False),
}
PLAN.update({name: ([], False) for name in CELLS if name not in PLAN})

# TF_OUTPUT: recorded with TensorFlow 2.21 by scripts/record_text_tests.py (do not edit by hand)
TF_OUTPUT = {'tensor100': "tf.Tensor(b'Gray wolf', shape=(), dtype=string)\n",
 'tensor103': "tf.Tensor([b'Gray wolf' b'Quick brown fox' b'Lazy dog'], shape=(3,), dtype=string)\n",
 'tensor106': "<tf.Tensor: shape=(), dtype=string, numpy=b'\\xf0\\x9f\\xa5\\xb3\\xf0\\x9f\\x91\\x8d'>\n",
 'tensor108': "tf.Tensor([b'Gray' b'wolf'], shape=(2,), dtype=string)\n",
 'tensor109': "<tf.RaggedTensor [[b'Gray', b'wolf'], [b'Quick', b'brown', b'fox'], [b'Lazy', b'dog']]>\n",
 'tensor112': 'tf.Tensor([  1.  10. 100.], shape=(3,), dtype=float32)\n',
 'tensor115': '\n'
              "Unicode bytes: tf.Tensor(b'\\xe3\\x82\\xa2\\xe3\\x83\\x92\\xe3\\x83\\xab "
              "\\xf0\\x9f\\xa6\\x86', shape=(), dtype=string)\n"
              '\n'
              "Unicode chars: tf.Tensor([b'\\xe3\\x82\\xa2' b'\\xe3\\x83\\x92' b'\\xe3\\x83\\xab' b' ' "
              "b'\\xf0\\x9f\\xa6\\x86'], shape=(5,), dtype=string)\n"
              '\n'
              'Unicode values: tf.Tensor([ 12450  12498  12523     32 129414], shape=(5,), dtype=int32)\n',
 'unicode01': "<tf.Tensor: shape=(), dtype=string, numpy=b'Thanks \\xf0\\x9f\\x98\\x8a'>\n",
 'unicode02': 'TensorShape([2])\n',
 'unicode03': '<tf.Tensor: shape=(), dtype=string, '
              "numpy=b'\\xe8\\xaf\\xad\\xe8\\xa8\\x80\\xe5\\xa4\\x84\\xe7\\x90\\x86'>\n",
 'unicode04': "<tf.Tensor: shape=(), dtype=string, numpy=b'\\x8b\\xed\\x8a\\x00Y\\x04t\\x06'>\n",
 'unicode05': '<tf.Tensor: shape=(4,), dtype=int32, numpy=array([35821, 35328, 22788, 29702], '
              'dtype=int32)>\n',
 'unicode09': '[104, 195, 108, 108, 111]\n'
              '[87, 104, 97, 116, 32, 105, 115, 32, 116, 104, 101, 32, 119, 101, 97, 116, 104, 101, 114, 32, '
              '116, 111, 109, 111, 114, 114, 111, 119]\n'
              '[71, 246, 246, 100, 110, 105, 103, 104, 116]\n'
              '[128522]\n',
 'unicode06': '<tf.Tensor: shape=(4,), dtype=int32, numpy=array([35821, 35328, 22788, 29702], '
              'dtype=int32)>\n',
 'unicode07': '<tf.Tensor: shape=(), dtype=string, '
              "numpy=b'\\xe8\\xaf\\xad\\xe8\\xa8\\x80\\xe5\\xa4\\x84\\xe7\\x90\\x86'>\n",
 'unicode08': "<tf.Tensor: shape=(), dtype=string, numpy=b'\\x8b\\xed\\x8a\\x00Y\\x04t\\x06'>\n",
 'unicode10': '[[   104    195    108    108    111     -1     -1     -1     -1     -1\n'
              '      -1     -1     -1     -1     -1     -1     -1     -1     -1     -1\n'
              '      -1     -1     -1     -1     -1     -1     -1     -1]\n'
              ' [    87    104     97    116     32    105    115     32    116    104\n'
              '     101     32    119    101     97    116    104    101    114     32\n'
              '     116    111    109    111    114    114    111    119]\n'
              ' [    71    246    246    100    110    105    103    104    116     -1\n'
              '      -1     -1     -1     -1     -1     -1     -1     -1     -1     -1\n'
              '      -1     -1     -1     -1     -1     -1     -1     -1]\n'
              ' [128522     -1     -1     -1     -1     -1     -1     -1     -1     -1\n'
              '      -1     -1     -1     -1     -1     -1     -1     -1     -1     -1\n'
              '      -1     -1     -1     -1     -1     -1     -1     -1]]\n',
 'unicode11': '[[   104,    195,    108,    108,    111,      _,      _,      _,      _,      _,      '
              '_,      _,      _,      _,      _,      _,      _,      _,      _,      _,      _,      '
              '_,      _,      _,      _,      _,      _,      _]\n'
              ' [    87,    104,     97,    116,     32,    105,    115,     32,    116,    104,    101,     '
              '32,    119,    101,     97,    116,    104,    101,    114,     32,    116,    111,    '
              '109,    111,    114,    114,    111,    119]\n'
              ' [    71,    246,    246,    100,    110,    105,    103,    104,    116,      _,      '
              '_,      _,      _,      _,      _,      _,      _,      _,      _,      _,      _,      '
              '_,      _,      _,      _,      _,      _,      _]\n'
              ' [128522,      _,      _,      _,      _,      _,      _,      _,      _,      _,      '
              '_,      _,      _,      _,      _,      _,      _,      _,      _,      _,      _,      '
              '_,      _,      _,      _,      _,      _,      _]]\n',
 'unicode12': "<tf.Tensor: shape=(3,), dtype=string, numpy=array([b'cat', b'dog', b'cow'], dtype=object)>\n",
 'unicode13': '<tf.Tensor: shape=(4,), dtype=string, numpy=\n'
              "array([b'h\\xc3\\x83llo', b'What is the weather tomorrow',\n"
              "       b'G\\xc3\\xb6\\xc3\\xb6dnight', b'\\xf0\\x9f\\x98\\x8a'], dtype=object)>\n",
 'unicode14': '<tf.Tensor: shape=(4,), dtype=string, numpy=\n'
              "array([b'h\\xc3\\x83llo', b'What is the weather tomorrow',\n"
              "       b'G\\xc3\\xb6\\xc3\\xb6dnight', b'\\xf0\\x9f\\x98\\x8a'], dtype=object)>\n",
 'unicode15': '<tf.Tensor: shape=(4,), dtype=string, numpy=\n'
              "array([b'h\\xc3\\x83llo', b'What is the weather tomorrow',\n"
              "       b'G\\xc3\\xb6\\xc3\\xb6dnight', b'\\xf0\\x9f\\x98\\x8a'], dtype=object)>\n",
 'unicode16': '11 bytes; 8 UTF-8 characters\n',
 'unicode17': "b'\\xf0'\n",
 'unicode18': "b'\\xf0\\x9f\\x98\\x8a'\n",
 'unicode19': "array([b'T', b'h', b'a', b'n', b'k', b's', b' ', b'\\xf0\\x9f\\x98\\x8a'],\n"
              '      dtype=object)\n',
 'unicode20': 'At byte offset 0: codepoint 127880\n'
              'At byte offset 4: codepoint 127881\n'
              'At byte offset 8: codepoint 127882\n',
 'bytes_constant': "<tf.Tensor: shape=(), dtype=string, numpy=b'ab'>\n",
 'numpy_text': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'bc'], dtype=object)>\n",
 'numpy_objects': "<tf.Tensor: shape=(1,), dtype=string, numpy=array([b'a'], dtype=object)>\n",
 'convert': "<tf.Tensor: shape=(), dtype=string, numpy=b'x'>\n",
 'convert_hint': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'b'], dtype=object)>\n",
 'matrix': 'tf.Tensor(\n'
           "[[b'a' b'b']\n"
           " [b'c' b'd']], shape=(2, 2), dtype=string)\n"
           '<tf.Tensor: shape=(2, 2), dtype=string, numpy=\n'
           "array([[b'a', b'b'],\n"
           "       [b'c', b'd']], dtype=object)>\n",
 'index_row': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'b'], dtype=object)>\n",
 'index_col': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'b', b'd'], dtype=object)>\n",
 'index_elem': "<tf.Tensor: shape=(), dtype=string, numpy=b'c'>\n",
 'bool_mask': "<tf.Tensor: shape=(1,), dtype=string, numpy=array([b'a'], dtype=object)>\n",
 'shape_op': '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 2], dtype=int32)>\n',
 'size_op': '<tf.Tensor: shape=(), dtype=int32, numpy=1>\n',
 'reshape': "<tf.Tensor: shape=(4,), dtype=string, numpy=array([b'a', b'b', b'c', b'd'], dtype=object)>\n",
 'transpose': '<tf.Tensor: shape=(2, 1), dtype=string, numpy=\n'
              "array([[b'a'],\n"
              "       [b'b']], dtype=object)>\n",
 'expand_dims': "<tf.Tensor: shape=(1, 2), dtype=string, numpy=array([[b'a', b'b']], dtype=object)>\n",
 'tile': "<tf.Tensor: shape=(4,), dtype=string, numpy=array([b'a', b'b', b'a', b'b'], dtype=object)>\n",
 'stack': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'b'], dtype=object)>\n",
 'concat': "<tf.Tensor: shape=(3,), dtype=string, numpy=array([b'a', b'b', b'c'], dtype=object)>\n",
 'unstack': "[<tf.Tensor: shape=(), dtype=string, numpy=b'a'>, <tf.Tensor: shape=(), dtype=string, "
            "numpy=b'b'>]\n",
 'iterate': "[<tf.Tensor: shape=(), dtype=string, numpy=b'a'>, <tf.Tensor: shape=(), dtype=string, "
            "numpy=b'b'>]\n",
 'gather': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'c', b'a'], dtype=object)>\n",
 'where': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'd'], dtype=object)>\n",
 'identity': "<tf.Tensor: shape=(1,), dtype=string, numpy=array([b'a'], dtype=object)>\n",
 'equal': '<tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>\n',
 'eq_op': '<tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>\n',
 'ne_op': '<tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>\n',
 'add_op': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'ax', b'bx'], dtype=object)>\n",
 'numpy_vec': "array([b'a', b'b'], dtype=object)\n",
 'numpy_scalar': "b'a'\n",
 'dtype': "<dtype: 'string'> tf.string string\n",
 'as_dtype': "<dtype: 'string'> <dtype: 'string'> <dtype: 'string'>\n",
 'zeros': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'', b''], dtype=object)>\n",
 'zeros_like': "<tf.Tensor: shape=(1,), dtype=string, numpy=array([b''], dtype=object)>\n",
 'fill': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'#', b'#'], dtype=object)>\n",
 'variable': "<dtype: 'string'> () b'abc'\n",
 'variable_assign': "array([b'x', b'y'], dtype=object)\n",
 'truth': 'True\n',
 'split_vec': "<tf.RaggedTensor [[b'Gray', b'wolf'], [b'Quick', b'brown', b'fox'], [b'Lazy', b'dog']]>\n",
 'split_sep': "<tf.Tensor: shape=(3,), dtype=string, numpy=array([b'a', b'', b'b'], dtype=object)>\n",
 'split_sep_vec': "<tf.RaggedTensor [[b'a', b'', b'b'], [b'']]>\n",
 'split_space': "<tf.RaggedTensor [[b'a', b'b'], []]>\n",
 'split_max': "<tf.Tensor: shape=(3,), dtype=string, numpy=array([b'a', b'b', b'c d'], dtype=object)>\n",
 'split_ragged': "<tf.RaggedTensor [[[b'S', b''], [b'l', b'ng']], [[b'thanks'], [b'f', b'r'], [b'all']]]>\n",
 'to_number_int': '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 1, -7], dtype=int32)>\n',
 'to_number_f64': '<tf.Tensor: shape=(), dtype=float64, numpy=1000.0>\n',
 'to_number_space': '<tf.Tensor: shape=(), dtype=float32, numpy=2.0>\n',
 'bytes_split': "<tf.Tensor: shape=(4,), dtype=string, numpy=array([b'D', b'u', b'c', b'k'], "
                'dtype=object)>\n',
 'bytes_split_vec': "<tf.RaggedTensor [[b'a', b'b'], [], [b'c']]>\n",
 'unicode_decode_vec': '<tf.RaggedTensor [[104, 195, 108, 108, 111], [128522]]>\n',
 'unicode_decode_replace': '<tf.Tensor: shape=(3,), dtype=int32, numpy=array([65533,    97,    98], '
                           'dtype=int32)>\n',
 'unicode_decode_ignore': '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([97, 98], dtype=int32)>\n',
 'unicode_split_vec': "<tf.RaggedTensor [[b'a', b'b'], [b'\\xc3\\xa9']]>\n",
 'unicode_encode_vec': "<tf.Tensor: shape=(), dtype=string, numpy=b'\\xe8\\xaf\\xad\\xe8\\xa8\\x80'>\n",
 'unicode_encode_ragged': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'ca', b'd'], dtype=object)>\n",
 'length_vec': '<tf.Tensor: shape=(3,), dtype=int32, numpy=array([ 9, 15,  8], dtype=int32)>\n',
 'length_matrix': '<tf.Tensor: shape=(2, 2), dtype=int32, numpy=\n'
                  'array([[1, 2],\n'
                  '       [0, 3]], dtype=int32)>\n',
 'length_ragged': '<tf.RaggedTensor [[2, 4], [6]]>\n',
 'length_empty': '<tf.Tensor: shape=(), dtype=int32, numpy=0>\n',
 'substr_vec': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'ell', b'orl'], dtype=object)>\n",
 'substr_negative': "<tf.Tensor: shape=(), dtype=string, numpy=b'll'>\n",
 'substr_long': "<tf.Tensor: shape=(), dtype=string, numpy=b'llo'>\n",
 'substr_per_element': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'H', b'or'], dtype=object)>\n",
 'substr_ragged': "<tf.RaggedTensor [[b'So', b'lo'], [b'th', b'fo', b'al', b'th', b'fi']]>\n",
 'join': "<tf.Tensor: shape=(), dtype=string, numpy=b'abcdef'>\n",
 'join_sep': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'abc def', b'123 456'], dtype=object)>\n",
 'join_broadcast': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a-x', b'b-x'], dtype=object)>\n",
 'reduce_join': "<tf.Tensor: shape=(), dtype=string, numpy=b'abcdef'>\n",
 'reduce_join_axis1': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a-b', b'c-d'], dtype=object)>\n",
 'reduce_join_axis0': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'ac', b'bd'], dtype=object)>\n",
 'reduce_join_keepdims': '<tf.Tensor: shape=(2, 1), dtype=string, numpy=\n'
                         "array([[b'ab'],\n"
                         "       [b'cd']], dtype=object)>\n",
 'reduce_join_ragged': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'So long', b'thanks'], "
                       'dtype=object)>\n',
 'lower': "<tf.Tensor: shape=(), dtype=string, numpy=b'camelcase \\xc3\\x80\\xc3\\x89'>\n",
 'lower_utf8': "<tf.Tensor: shape=(), dtype=string, numpy=b'camelcase \\xc3\\xa0\\xc3\\xa9'>\n",
 'upper': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'ABC', b'D\\xc3\\xa9F'], dtype=object)>\n",
 'upper_utf8': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'ABC', b'D\\xc3\\x89F'], "
               'dtype=object)>\n',
 'lower_ragged': "<tf.RaggedTensor [[b'so', b'long'], [b'thanks']]>\n",
 'strip': "<tf.Tensor: shape=(3,), dtype=string, numpy=array([b'hello', b'world', b'x y'], dtype=object)>\n",
 'regex_replace': "<tf.Tensor: shape=(), dtype=string, numpy=b'Text with tags.  contains html '>\n",
 'regex_replace_first': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'caa', b'bcb'], "
                        'dtype=object)>\n',
 'regex_replace_groups': "<tf.Tensor: shape=(), dtype=string, numpy=b'world hello'>\n",
 'regex_replace_whole': "<tf.Tensor: shape=(), dtype=string, numpy=b'a[b]c'>\n",
 'regex_full_match': '<tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>\n',
 'regex_full_match_partial': '<tf.Tensor: shape=(), dtype=bool, numpy=False>\n',
 'as_string': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'3.141590', b'2.000000'], "
              'dtype=object)>\n',
 'as_string_precision': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'3.14', b'2.00'], "
                        'dtype=object)>\n',
 'as_string_int': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'1', b'-20'], dtype=object)>\n",
 'as_string_width': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'   1', b' -20'], dtype=object)>\n",
 'as_string_fill': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'0001', b'-020'], dtype=object)>\n",
 'as_string_scientific': "<tf.Tensor: shape=(), dtype=string, numpy=b'1.234500e+03'>\n",
 'as_string_shortest': "<tf.Tensor: shape=(), dtype=string, numpy=b'1234.5'>\n",
 'as_string_bool': "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'true', b'false'], dtype=object)>\n",
 'as_string_string': "<tf.Tensor: shape=(), dtype=string, numpy=b'a'>\n",
 'format': "<tf.Tensor: shape=(), dtype=string, numpy=b'x = [1 2 3]'>\n",
 'format_mixed': '<tf.Tensor: shape=(), dtype=string, numpy=b\'"a" and 2.5\'>\n',
 'format_summarize': "<tf.Tensor: shape=(), dtype=string, numpy=b'[0 1 2 ... 7 8 9]'>\n",
 'format_strings': '<tf.Tensor: shape=(), dtype=string, numpy=b\'s: ["a" "b"]\'>\n',
 'dataset': 'TensorSpec(shape=(), dtype=tf.string, name=None)\n'
            '<tf.Tensor: shape=(), dtype=int32, numpy=3>\n'
            '<tf.Tensor: shape=(), dtype=int32, numpy=2>\n'
            "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a b', b'cd'], dtype=object)>\n"}
# end TF_OUTPUT


@pytest.mark.parametrize("cell", list(PLAN))
def test_cell(cell):
    before, mask_numbers = PLAN[cell]
    printed = run_cells(CELLS, before + [cell], cell)
    assert_same_output(printed, TF_OUTPUT[cell], mask_numbers=mask_numbers)


# ---------------------------------------------------------------------- errors, as TensorFlow raises them
@pytest.mark.parametrize("fn, error, message", [
    (lambda: tf.cast(tf.constant("1"), tf.float32), tf.errors.UnimplementedError,
     "Cast string to float is not supported"),
    (lambda: tf.cast(tf.constant(1), tf.string), tf.errors.UnimplementedError, "Cast int32 to string is not supported"),
    (lambda: tf.constant("1", tf.float32), TypeError, "Cannot convert '1' to EagerTensor of dtype float"),
    (lambda: tf.constant(1, tf.string), TypeError, "Cannot convert 1 to EagerTensor of dtype string"),
    (lambda: tf.constant(["a", 1]), ValueError, "Can't convert Python sequence with mixed types to Tensor."),
    (lambda: tf.constant(np.array([1, "a"], dtype=object)), ValueError,
     "Failed to convert a NumPy array to a Tensor (Unsupported object type int)."),
    (lambda: tf.constant(["a", "b"]) * 2, TypeError, "Cannot convert 2 to EagerTensor of dtype string"),
    (lambda: tf.constant("a") < tf.constant("b"), tf.errors.InvalidArgumentError,
     "Value for attr 'T' of string is not in the list of allowed values"),
    (lambda: tf.reduce_sum(tf.constant(["a"])), tf.errors.InvalidArgumentError,
     "Value for attr 'T' of string is not in the list of allowed values"),
    (lambda: tf.ones_like(tf.constant(["a"])), tf.errors.InvalidArgumentError,
     "Value for attr 'T' of string is not in the list of allowed values"),
    (lambda: tf.add(tf.constant(["a"]), tf.constant([1])), tf.errors.InvalidArgumentError,
     "as input #1(zero-based) was expected to be a string tensor but is a int32 tensor"),
    (lambda: tf.strings.to_number("abc"), tf.errors.InvalidArgumentError,
     "StringToNumberOp could not correctly convert string: abc"),
    (lambda: tf.strings.to_number("1.5", out_type=tf.int32), tf.errors.InvalidArgumentError,
     "StringToNumberOp could not correctly convert string: 1.5"),
    (lambda: tf.strings.unicode_decode(b"\xffab", "UTF-8", errors="strict"), tf.errors.InvalidArgumentError,
     "Invalid formatting on input string"),
    (lambda: tf.strings.substr("Hello", 10, 2), tf.errors.InvalidArgumentError,
     "pos 10 out of range for string b'Hello' at index 0"),
])
def test_errors_as_tensorflow(fn, error, message):
    with pytest.raises(error) as info:
        fn()
    assert message in str(info.value)


def test_string_tensor_is_a_tensor_holding_utf8_bytes():
    t = tf.constant("语言")
    assert isinstance(t, tf.Tensor) and tf.is_tensor(t)
    assert t.dtype == tf.string and str(tf.string) == "<dtype: 'string'>" and t.shape == []
    assert t.numpy() == "语言".encode("utf-8")
    v = tf.constant(["a", b"b"]).numpy()
    assert v.dtype == object and v.tolist() == [b"a", b"b"]
    assert v.flags.writeable and v.flags.owndata  # TF 2.21: .numpy() is a writable copy, as for numbers
    assert tf.constant(["a"]).device == tf.constant([1.0]).device


def test_print_quotes_strings_as_tensorflow(capsys):
    tf.print(tf.constant(["a", "b"]), tf.constant("x"))
    assert capsys.readouterr().out == '["a" "b"] "x"\n'  # TF 2.21's output


def test_strings_are_never_differentiated(caplog):
    s = tf.constant("Gray wolf")
    x = tf.constant(2.0)
    with caplog.at_level(logging.WARNING):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(s)  # TensorFlow warns and ignores it
            tape.watch(x)
            n = tf.cast(tf.strings.length(s), tf.float32)
            y = x * n
    assert "must be floating" in caplog.text and "string" in caplog.text
    assert tape.gradient(y, s) is None  # as TensorFlow: no gradient w.r.t. a string
    assert tape.gradient(n, x) is None
    assert float(tape.gradient(y, x)) == 9.0
    why = tape.explain(y, s)
    assert not why.connected and why.reasons == ("string_source",) and "string tensor" in str(why)


def test_compiled_function_takes_and_returns_strings():
    # tf.function with strings: see tests/test_function_strings.py (TensorFlow 2.21's results).
    f = tf.function(lambda s: tf.strings.length(s))
    assert f(tf.constant(["ab"])).numpy().tolist() == [2]
    assert f(tf.constant(["abcd"])).numpy().tolist() == [4]
    g = tf.function(lambda x: (x * 2.0, tf.constant("abc")))
    y, s = g(tf.constant(1.0))
    assert float(y) == 2.0 and s.numpy() == b"abc"
    s = tf.constant("abcd")
    h = tf.function(lambda x: x + tf.strings.length(s))  # a captured string is processed at trace time
    assert int(h(tf.constant(1))) == 5


def test_numeric_ops_keep_their_path():
    # The string fallback runs only where JAX refuses the values: numbers never reach it.
    from tapejax._core import engine as _engine
    calls = []
    _engine.dispatchers.append(lambda op, args, static: calls.append(op) or NotImplemented)
    try:
        assert float(tf.constant(1.0) + 2.0) == 3.0
        with pytest.raises(ValueError, match="unsupported type"):
            tf.add(tf.constant(1.0), object())
    finally:
        _engine.dispatchers.pop()
    assert [op.name for op in calls] == ["add"]


# ---------------------------------------------------------------- decode_raw
# tf.io.decode_raw as TensorFlow 2.21 printed it (repr, or the error's class and first line).
_DECODE_RAW_CASES = [
 'tf.io.decode_raw(tf.constant("Duck"), tf.uint8)',
 'tf.io.decode_raw(tf.constant(["abcd", "efgh"]), tf.int32)',
 'tf.io.decode_raw(tf.constant(["abcd", "efgh"]), tf.int16, little_endian=False)',
 'tf.io.decode_raw(tf.constant([["ab"], ["cd"]]), tf.uint8)',
 'tf.io.decode_raw(b"\\x00\\x00\\x80\\x3f", tf.float32)',
 'tf.io.decode_raw(tf.constant(["abc", "abcdef"]), tf.uint8, fixed_length=4)',
 'tf.io.decode_raw(tf.constant(["abc", "abcdef"]), tf.int16, fixed_length=4)',
 'tf.io.decode_raw(tf.constant("abc"), tf.int32)',
 'tf.io.decode_raw(tf.constant(["ab", "abc"]), tf.uint8)',
 'tf.io.decode_raw(tf.constant(""), tf.uint8)',
 'tf.io.decode_raw(tf.constant([], tf.string), tf.uint8)',
 'tf.io.decode_raw(tf.constant(["abc", "abcdef"]), tf.int16, fixed_length=3)',
 'tf.io.decode_raw(tf.constant("abcd"), tf.string)',
 'tf.io.decode_raw(tf.constant([1, 2]), tf.uint8)',
 'tf.io.decode_raw(tf.constant("abcdefgh"), tf.float64, little_endian=False)',
 'tf.io.decode_raw(tf.constant("ab"), tf.bool)',
]
_DECODE_RAW_TF = """tf.io.decode_raw(tf.constant("Duck"), tf.uint8) -> <tf.Tensor: shape=(4,), dtype=uint8, numpy=array([ 68, 117,  99, 107], dtype=uint8)>
tf.io.decode_raw(tf.constant(["abcd", "efgh"]), tf.int32) -> <tf.Tensor: shape=(2, 1), dtype=int32, numpy=
array([[1684234849],
       [1751606885]], dtype=int32)>
tf.io.decode_raw(tf.constant(["abcd", "efgh"]), tf.int16, little_endian=False) -> <tf.Tensor: shape=(2, 2), dtype=int16, numpy=
array([[24930, 25444],
       [25958, 26472]], dtype=int16)>
tf.io.decode_raw(tf.constant([["ab"], ["cd"]]), tf.uint8) -> <tf.Tensor: shape=(2, 1, 2), dtype=uint8, numpy=
array([[[ 97,  98]],

       [[ 99, 100]]], dtype=uint8)>
tf.io.decode_raw(b"\\x00\\x00\\x80\\x3f", tf.float32) -> <tf.Tensor: shape=(1,), dtype=float32, numpy=array([1.], dtype=float32)>
tf.io.decode_raw(tf.constant(["abc", "abcdef"]), tf.uint8, fixed_length=4) -> <tf.Tensor: shape=(2, 4), dtype=uint8, numpy=
array([[ 97,  98,  99,   0],
       [ 97,  98,  99, 100]], dtype=uint8)>
tf.io.decode_raw(tf.constant(["abc", "abcdef"]), tf.int16, fixed_length=4) -> <tf.Tensor: shape=(2, 2), dtype=int16, numpy=
array([[25185,    99],
       [25185, 25699]], dtype=int16)>
tf.io.decode_raw(tf.constant("abc"), tf.int32) !! InvalidArgumentError {{function_node __wrapped__DecodeRaw_device_/job:localhost/replica:0/task:0/device:CPU:0}} Input to DecodeRaw has length 3 that is not a multiple of 4, the size of int32 [Op:DecodeRaw] name: 
tf.io.decode_raw(tf.constant(["ab", "abc"]), tf.uint8) !! InvalidArgumentError {{function_node __wrapped__DecodeRaw_device_/job:localhost/replica:0/task:0/device:CPU:0}} DecodeRaw requires input strings to all be the same size, but element 1 has size 2 != 3 [Op:DecodeRaw] name: 
tf.io.decode_raw(tf.constant(""), tf.uint8) -> <tf.Tensor: shape=(0,), dtype=uint8, numpy=array([], dtype=uint8)>
tf.io.decode_raw(tf.constant([], tf.string), tf.uint8) -> <tf.Tensor: shape=(0, 0), dtype=uint8, numpy=array([], shape=(0, 0), dtype=uint8)>
tf.io.decode_raw(tf.constant(["abc", "abcdef"]), tf.int16, fixed_length=3) !! InvalidArgumentError {{function_node __wrapped__DecodePaddedRaw_device_/job:localhost/replica:0/task:0/device:CPU:0}} fixed_length (3) must be a multiple of the size of out_type (2) [Op:DecodePaddedRaw] name: 
tf.io.decode_raw(tf.constant("abcd"), tf.string) !! InvalidArgumentError Value for attr 'out_type' of string is not in the list of allowed values: half, float, double, int32, uint16, uint8, int16, int8, int64, complex64, complex128, bool, bfloat16
tf.io.decode_raw(tf.constant([1, 2]), tf.uint8) !! InvalidArgumentError cannot compute DecodeRaw as input #0(zero-based) was expected to be a string tensor but is a int32 tensor [Op:DecodeRaw] name: 
tf.io.decode_raw(tf.constant("abcdefgh"), tf.float64, little_endian=False) -> <tf.Tensor: shape=(1,), dtype=float64, numpy=array([1.29261179e+161])>
tf.io.decode_raw(tf.constant("ab"), tf.bool) -> <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True,  True])>
"""


def test_decode_raw_matches_tensorflow():
    printed = []
    for c in _DECODE_RAW_CASES:
        try:
            printed.append(f"{c} -> {eval(c, {'tf': tf})!r}")
        except Exception as e:
            printed.append(f"{c} !! {type(e).__name__} {str(e).splitlines()[0][:200]}")
    assert "\n".join(printed) + "\n" == _DECODE_RAW_TF


def test_decode_raw_in_a_function():
    f = tf.function(lambda s: tf.io.decode_raw(s, tf.uint8) + 1)
    assert f(tf.constant(["ab", "cd"])).numpy().tolist() == [[98, 99], [100, 101]]


def test_to_hash_bucket_fast_is_tensorflows_farmhash():
    """FarmHash Fingerprint64 of every length class (0-16, 17-32, 33-64, the 64-byte loop);
    numbers recorded from TF 2.21 (``to_hash_bucket_fast(strs, 2**63 - 1)``)."""
    rng = np.random.RandomState(0)
    lengths = [0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 1000]
    strs = [bytes(rng.randint(0, 256, size=n).astype(np.uint8)) for n in lengths]
    expected = [1936946117179621456, 8054779267362739308, 8581881436611054322, 5549721401594639477,
                4179687863814219941, 3008770186037569986, 2908710703943920269, 265413455263875370,
                121485299463318005, 2393244744882947095, 7718122842305302167, 1899055362430274275,
                1212520714254615086, 4488981713520177669, 6839296398378386152, 3157353212533470754,
                4338590423137012470, 3087237633198635119, 6210691893918696156, 4809498863746780112]
    out = tf.strings.to_hash_bucket_fast(tf.constant(strs), 2 ** 63 - 1)
    assert out.dtype == tf.int64
    assert out.numpy().tolist() == expected


def test_to_hash_bucket_fast_ragged_guide_cell():
    """ragged_tensor guide: hashing the words of ragged sentences keeps the rows."""
    sentences = tf.constant(['What makes you think she is a witch?', 'She turned me into a newt.', 'A newt?',
                             'Well, I got better.'])
    hashed = tf.strings.to_hash_bucket_fast(tf.strings.split(sentences, ' '), 1000)
    assert hashed.to_list() == [[940, 203, 668, 387, 790, 320, 939, 185], [315, 515, 791, 181, 939, 787],
                                [564, 205], [820, 180, 993, 739]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="was expected to be a string tensor but is a int32"):
        tf.strings.to_hash_bucket_fast(tf.constant([1]), 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="'num_buckets' of 0 must be at least minimum 1"):
        tf.strings.to_hash_bucket_fast(tf.constant(['a']), 0)


def test_unsorted_segment_join_as_tf():
    # The tf.strings.unsorted_segment_join docstring and TF 2.21 (recorded).
    out = tf.strings.unsorted_segment_join(["this", "a", "test", "is"], [0, 1, 1, 0], 2, " ").numpy()
    assert repr(out) == "array([b'this is', b'a test'], dtype=object)"
    out = tf.strings.unsorted_segment_join([["Y", "q", "c"], ["Y", "6", "6"], ["p", "G", "a"]], [1, 0, 1], 2,
                                           separator=":").numpy()
    assert out.tolist() == [[b"Y", b"6", b"6"], [b"Y:p", b"q:G", b"c:a"]]
    assert tf.strings.unsorted_segment_join(["a", "b", "c"], [0, 0, 0], 3).numpy().tolist() == [b"abc", b"", b""]
    assert tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"]], [[0, 1], [1, 1]], 2).numpy().tolist() == \
        [b"a", b"bcd"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment_ids are not allowed to exceed num_segments or "
                                                             "to have negative values."):
        tf.strings.unsorted_segment_join(["a", "b", "c"], [0, 5, 0], 3)


def test_ngrams_as_tf():
    # The tf.strings.ngrams docstring and TF 2.21's outputs (recorded).
    assert repr(tf.strings.ngrams(["A", "B", "C", "D"], 2).numpy()) == "array([b'A B', b'B C', b'C D'], dtype=object)"
    assert repr(tf.strings.ngrams(["TF", "and", "keras"], 1).numpy()) == \
        "array([b'TF', b'and', b'keras'], dtype=object)"
    assert tf.strings.ngrams(["A", "B", "C"], (1, 2)).numpy().tolist() == [b"A", b"B", b"C", b"A B", b"B C"]
    assert tf.strings.ngrams([["a", "b", "c"], ["d", "e", "f"]], 2, separator="_").numpy().tolist() == \
        [[b"a_b", b"b_c"], [b"d_e", b"e_f"]]
    assert repr(tf.strings.ngrams(tf.ragged.constant([["a", "b", "c"], ["d"]]), 2)) == \
        "<tf.RaggedTensor [[b'a b', b'b c'], []]>"
    assert tf.strings.ngrams(["A", "B"], 3).numpy().tolist() == []
    assert tf.strings.ngrams(["A", "B"], 3, pad_values=("<", ">")).numpy().tolist() == \
        [b"< < A", b"< A B", b"A B >", b"B > >"]
    assert tf.strings.ngrams(["A", "B"], 2, pad_values="#", padding_width=1).numpy().tolist() == \
        [b"# A", b"A B", b"B #"]
    assert tf.strings.ngrams(["A"], 3, preserve_short_sequences=True).numpy().tolist() == [b"A"]
    assert tf.strings.ngrams(tf.ragged.constant([["a", "b", "c"], ["d"]]), (1, 3), pad_values="#").to_list() == [
        [b"a", b"b", b"c", b"# # a", b"# a b", b"a b c", b"b c #", b"c # #"], [b"d", b"# # d", b"# d #", b"d # #"]]
    with pytest.raises(ValueError, match="Data must have rank>0"):
        tf.strings.ngrams("a", 2)
