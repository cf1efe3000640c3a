"""tf.experimental."""
from . import numpy as numpy  # noqa: F401
from ..ragged import DynamicRaggedShape as DynamicRaggedShape, RowPartition as RowPartition  # noqa: F401
