"""tf.keras.layers: Keras's layers on JAX and flax; each built-in layer call is one tape op.

Example:
    >>> import tapejax as tf
    >>> layer = tf.keras.layers.Dense(3)
    >>> layer(tf.ones([2, 4])).shape
    TensorShape([2, 3])
"""
from ._base import Layer as Layer, InputLayer as InputLayer, Input as Input, KerasTensor as KerasTensor
from ._input_spec import InputSpec as InputSpec
from ._builtin import (
    Dense as Dense, Conv2D as Conv2D, Conv2DTranspose as Conv2DTranspose, MaxPooling2D as MaxPooling2D,
    AveragePooling2D as AveragePooling2D, MaxPool2D as MaxPool2D, AvgPool2D as AvgPool2D,
    GlobalAveragePooling2D as GlobalAveragePooling2D, GlobalMaxPooling2D as GlobalMaxPooling2D,
    GlobalAvgPool2D as GlobalAvgPool2D, GlobalMaxPool2D as GlobalMaxPool2D,
    GlobalAveragePooling1D as GlobalAveragePooling1D, GlobalMaxPooling1D as GlobalMaxPooling1D,
    Flatten as Flatten, Reshape as Reshape, Dropout as Dropout, Activation as Activation, ReLU as ReLU,
    LeakyReLU as LeakyReLU, Softmax as Softmax, BatchNormalization as BatchNormalization,
    LayerNormalization as LayerNormalization, Embedding as Embedding, Concatenate as Concatenate,
    Add as Add, Subtract as Subtract, Multiply as Multiply, Average as Average, Lambda as Lambda,
    Conv1D as Conv1D, MaxPooling1D as MaxPooling1D, AveragePooling1D as AveragePooling1D,
    MaxPool1D as MaxPool1D, AvgPool1D as AvgPool1D, UpSampling2D as UpSampling2D,
    ZeroPadding2D as ZeroPadding2D, SimpleRNN as SimpleRNN, LSTM as LSTM, GRU as GRU,
    concatenate as concatenate, add as add, subtract as subtract, multiply as multiply, average as average,
)
from ._wrappers import Bidirectional as Bidirectional, TimeDistributed as TimeDistributed
from ._flax import FlaxLayer as FlaxLayer
from ._preprocessing import (
    Normalization as Normalization, CategoryEncoding as CategoryEncoding, Rescaling as Rescaling,
)
from ._image_preprocessing import (
    RandomFlip as RandomFlip, RandomRotation as RandomRotation, RandomZoom as RandomZoom,
    RandomTranslation as RandomTranslation, RandomContrast as RandomContrast, RandomCrop as RandomCrop,
    CenterCrop as CenterCrop, Resizing as Resizing, RandomBrightness as RandomBrightness,
)
from ._simple import (
    ELU as ELU, PReLU as PReLU, ThresholdedReLU as ThresholdedReLU, Identity as Identity, RepeatVector as RepeatVector, Permute as Permute,
    UpSampling1D as UpSampling1D, ZeroPadding1D as ZeroPadding1D, Cropping1D as Cropping1D,
    Cropping2D as Cropping2D, GaussianNoise as GaussianNoise, GaussianDropout as GaussianDropout,
    SpatialDropout1D as SpatialDropout1D, SpatialDropout2D as SpatialDropout2D, Masking as Masking,
    SpatialDropout3D as SpatialDropout3D, AlphaDropout as AlphaDropout,
    UnitNormalization as UnitNormalization, GroupNormalization as GroupNormalization,
    RMSNormalization as RMSNormalization,
    Maximum as Maximum, Minimum as Minimum, Dot as Dot,
    maximum as maximum, minimum as minimum, dot as dot, MaxPooling3D as MaxPooling3D,
    AveragePooling3D as AveragePooling3D, MaxPooling3D as MaxPool3D, AveragePooling3D as AvgPool3D,
    GlobalAveragePooling3D as GlobalAveragePooling3D, GlobalMaxPooling3D as GlobalMaxPooling3D,
    GlobalAveragePooling3D as GlobalAvgPool3D, GlobalMaxPooling3D as GlobalMaxPool3D, UpSampling3D as UpSampling3D,
    ZeroPadding3D as ZeroPadding3D, Cropping3D as Cropping3D,
)
from ._builtin import GlobalAveragePooling1D as GlobalAvgPool1D, GlobalMaxPooling1D as GlobalMaxPool1D
from ._conv_more import (
    DepthwiseConv2D as DepthwiseConv2D, SeparableConv2D as SeparableConv2D, Conv3D as Conv3D,
    SeparableConv2D as SeparableConvolution2D, Conv3D as Convolution3D, Conv1DTranspose as Conv1DTranspose,
    Conv1DTranspose as Convolution1DTranspose,
)
from ._builtin import Conv1D as Convolution1D, Conv2D as Convolution2D, Conv2DTranspose as Convolution2DTranspose
from ._attention import (
    MultiHeadAttention as MultiHeadAttention, Attention as Attention, AdditiveAttention as AdditiveAttention,
)
from ._lookup import IntegerLookup as IntegerLookup, StringLookup as StringLookup
from ._discretization import Discretization as Discretization
from ._hashing import Hashing as Hashing
from ._text_vectorization import TextVectorization as TextVectorization
from ._rnn import (
    RNN as RNN, SimpleRNNCell as SimpleRNNCell, LSTMCell as LSTMCell, GRUCell as GRUCell,
    StackedRNNCells as StackedRNNCells,
)
