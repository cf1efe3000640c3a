"""tf.experimental."""
from . import numpy as numpy  # noqa: F401
from . import dtensor as dtensor  # noqa: F401
from ..ragged import DynamicRaggedShape as DynamicRaggedShape, RowPartition as RowPartition  # noqa: F401
from . import extension_type as extension_type  # noqa: F401
from .extension_type import (  # noqa: F401
    ExtensionType as ExtensionType, BatchableExtensionType as BatchableExtensionType,
    ExtensionTypeSpec as ExtensionTypeSpec,
)
from .dispatch import (  # noqa: F401
    dispatch_for_api as dispatch_for_api, unregister_dispatch_for as unregister_dispatch_for,
    dispatch_for_unary_elementwise_apis as dispatch_for_unary_elementwise_apis,
    dispatch_for_binary_elementwise_apis as dispatch_for_binary_elementwise_apis,
)
