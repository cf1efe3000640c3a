"""What the guides function, intro_to_graphs, intro_to_modules and variable print, as TensorFlow
2.21 prints it: every expected string below was recorded by running the snippet under real
TensorFlow 2.21 (CPU); TensorFlow is not a dependency of these tests."""
import pytest

import tapejax as tf


def _printed(capsys, fn):
    fn()
    import jax
    jax.effects_barrier()
    out = capsys.readouterr()
    return out.out + out.err


# -- tf.print: numbers as TensorFlow's SummarizeValue writes them -------------

def test_print_floats_round_trip_like_tensorflow(capsys):
    # Recorded from TF 2.21: '%.6g' when it reads back as the same float, else '%.9g';
    # float64 '%.15g' / '%.17g'; float16 and bfloat16 print through float.
    assert _printed(capsys, lambda: (
        tf.print(tf.constant([0.1, 1 / 3, 2.0, 1e-8, 123456789.0, 0.0067091])),
        tf.print(tf.constant([0.1, 1 / 3], tf.float64)),
        tf.print(tf.constant([0.1, 1 / 3], tf.float16)),
        tf.print(tf.constant([0.1, 1 / 3], tf.bfloat16)),
        tf.print(tf.range(20.0) / 7),
    )) == ("[0.1 0.333333343 2 1e-08 123456792 0.0067091]\n"
           "[0.1 0.33333333333333331]\n"
           "[0.0999755859 0.333251953]\n"
           "[0.100097656 0.333984375]\n"
           "[0 0.142857149 0.285714298 ... 2.42857146 2.57142854 2.71428561]\n")


def test_print_ints_bools_unpadded_like_tensorflow(capsys):
    # Recorded from TF 2.21.
    assert _printed(capsys, lambda: (
        tf.print(tf.constant([[1, 100], [-3, 4]])),
        tf.print(tf.constant([True, False]), tf.constant(True)),
        tf.print(tf.constant(float('nan')), -tf.constant(float('nan')), tf.constant(-float('inf'))),
        tf.print(tf.constant([1 + 2j], tf.complex64)),
    )) == "[[1 100]\n [-3 4]]\n[1 0] 1\nnan -nan -inf\n[?]\n"


def test_print_inside_function_and_strings_format(capsys):
    @tf.function
    def f(x):
        tf.print(x, x * 3)
        tf.print(x / 3)

    # Recorded from TF 2.21.
    assert _printed(capsys, lambda: f(tf.constant([0.2, 0.7]))) == "[0.2 0.7] [0.6 2.1]\n[0.0666666701 0.233333334]\n"
    assert tf.strings.format("{} and {}", (tf.constant([0.1, 1 / 3, 123456789.0]),
                                           tf.constant([0.1, 1 / 3], tf.float64))).numpy() == (
        b"[0.1 0.333333343 123456792] and [0.1 0.33333333333333331]")
