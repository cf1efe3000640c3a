"""tf.audio (tapejax/audio.py): WAV decode/encode as TF's DecodeWav/EncodeWav kernels; binary strings with trailing NULs through tf.data (tapejax/data.py).

Expected values recorded from TensorFlow 2.21 (the same cases run under ``tensorflow``); values compare
with a float32 tolerance, errors by class and the start of TF's message.
"""
import struct

import numpy as np
import pytest

import tapejax as tf
from recorded_cases import check, grad

EXPECTED = {'mono': [[[0.0], [0.5], [-0.5], [0.999969482421875], [-1.0], [3.0517578125e-05]], 16000], 'mono_t': [[[0.0], [0.5], [-0.5], [0.999969482421875], [-1.0], [3.0517578125e-05]], 16000], 'stereo': [[[0.0030517578125, -0.0030517578125], [0.006103515625, -0.006103515625], [0.0091552734375, -0.0091552734375]], 8000], 'stereo_to_mono': ([[0.0030517578125], [0.006103515625], [0.0091552734375]], "<dtype: 'float32'>"), 'mono_to_stereo': ([[0.0, 0.0], [0.5, 0.5], [-0.5, -0.5], [0.999969482421875, 0.999969482421875], [-1.0, -1.0], [3.0517578125e-05, 3.0517578125e-05]], "<dtype: 'float32'>"), 'stereo_to_3': ([[0.0030517578125, -0.0030517578125, -0.0030517578125], [0.006103515625, -0.006103515625, -0.006103515625], [0.0091552734375, -0.0091552734375, -0.0091552734375]], "<dtype: 'float32'>"), 'samples_pad': ([[0.0], [0.5], [-0.5], [0.999969482421875], [-1.0], [3.0517578125e-05], [0.0], [0.0]], "<dtype: 'float32'>"), 'samples_cut': ([[0.0], [0.5], [-0.5]], "<dtype: 'float32'>"), 'rate': (8000, "<dtype: 'int32'>"), 'bad_header': ('EXC', 'InvalidArgumentError', 'Header mismatch: Expected RIFF but found'), 'short': ('EXC', 'InvalidArgumentError', 'Data too short when trying to read strin'), 'bits8': ('EXC', 'InvalidArgumentError', 'Can only read 16-bit WAV files, but rece'), 'enc': (b'RIFF4\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80>\x00\x00\x00}\x00\x00\x02\x00\x10\x00data\x10\x00\x00\x00\x00\x00\x00@\x00\xc0\xff\x7f\x00\x80\xff\x7f\x01\x00\xff\xff', "<dtype: 'string'>"), 'enc_stereo': (b'RIFF,\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00D\xac\x00\x00\x10\xb1\x02\x00\x04\x00\x10\x00data\x08\x00\x00\x00\x00 \x00\xe0\xcd\x0c3s', "<dtype: 'string'>"), 'roundtrip': ([[0.29998779296875], [-0.70001220703125], [0.123443603515625]], "<dtype: 'float32'>"), 'enc_1d': ('EXC', 'InvalidArgumentError', 'audio must be 2-dimensional[2] [Op:Encod'), 'enc_int': ('EXC', 'InvalidArgumentError', 'cannot compute EncodeWav as input #0(zer'), 'fn': [[[0.0030517578125], [0.006103515625], [0.0091552734375]], 8000], 'fn_enc': (b'RIFF(\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00\x02\x00\x10\x00data\x04\x00\x00\x00\x00 \x00@', "<dtype: 'string'>"), 'map': [[0.0, 0.5, -0.5, 0.999969482421875], [0.0, 0.5, -0.5, 0.999969482421875]], 'shape_fn': ([16000, 1], "<dtype: 'int32'>"), 'slices_nul': [b'ab', b''], 'map_nul': [3, 2]}

CASES = {}


def wav(samples, channels=1, rate=16000, bits=16, fmt=1):
    data = struct.pack("<%dh" % len(samples), *samples)
    hdr = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " + struct.pack("<IHHIIHH", 16, fmt, channels, rate, rate * channels * bits // 8, channels * bits // 8, bits) + b"data" + struct.pack("<I", len(data))
    return hdr + data


def show(name, f):
    CASES[name] = f


mono = wav([0, 16384, -16384, 32767, -32768, 1])
stereo = wav([100, -100, 200, -200, 300, -300], channels=2, rate=8000)
show("mono", lambda: list(tf.audio.decode_wav(mono)))
show("mono_t", lambda: list(tf.audio.decode_wav(tf.constant(mono))))
show("stereo", lambda: list(tf.audio.decode_wav(stereo)))
show("stereo_to_mono", lambda: tf.audio.decode_wav(stereo, desired_channels=1).audio)
show("mono_to_stereo", lambda: tf.audio.decode_wav(mono, desired_channels=2).audio)
show("stereo_to_3", lambda: tf.audio.decode_wav(stereo, desired_channels=3).audio)
show("samples_pad", lambda: tf.audio.decode_wav(mono, desired_samples=8).audio)
show("samples_cut", lambda: tf.audio.decode_wav(mono, desired_samples=3).audio)
show("rate", lambda: tf.audio.decode_wav(stereo).sample_rate)
show("bad_header", lambda: tf.audio.decode_wav(b"RIFX1234WAVEfmt "))
show("short", lambda: tf.audio.decode_wav(b"RIFF"))
show("bits8", lambda: tf.audio.decode_wav(wav([1, 2], bits=8)))
show("enc", lambda: tf.audio.encode_wav(tf.constant([[0.0], [0.5], [-0.5], [1.0], [-1.0], [2.0], [0.00002], [-0.00002]]), 16000))
show("enc_stereo", lambda: tf.audio.encode_wav(tf.constant([[0.25, -0.25], [0.1, 0.9]]), tf.constant(44100)))
show("roundtrip", lambda: tf.audio.decode_wav(tf.audio.encode_wav(tf.constant([[0.3], [-0.7], [0.123456]]), 22050)).audio)
show("enc_1d", lambda: tf.audio.encode_wav(tf.constant([0.0, 0.5]), 16000))
show("enc_int", lambda: tf.audio.encode_wav(tf.constant([[1], [2]]), 16000))
show("fn", lambda: list(tf.function(lambda c: tf.audio.decode_wav(c, desired_channels=1))(tf.constant(stereo))))
show("fn_enc", lambda: tf.function(lambda a: tf.audio.encode_wav(a * 0.5, 8000))(tf.constant([[0.5], [1.0]])))
show("map", lambda: list(tf.data.Dataset.from_tensor_slices([mono, mono]).map(lambda c: tf.squeeze(tf.audio.decode_wav(c, 1, 4).audio, -1)).as_numpy_iterator()))
show("shape_fn", lambda: tf.function(lambda c: tf.shape(tf.audio.decode_wav(c, desired_channels=1, desired_samples=16000).audio))(tf.constant(mono)))
show("slices_nul", lambda: list(tf.data.Dataset.from_tensor_slices([b"ab\x00", b"\x00"]).as_numpy_iterator()))
show("map_nul", lambda: list(tf.data.Dataset.from_tensor_slices([b"ab\x00", b"\x00\x00"]).map(tf.strings.length).as_numpy_iterator()))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_as_tensorflow(name):
    check(CASES[name], EXPECTED[name])
