"""tf.autograph: Python control flow on tensors inside ``tf.function`` (see ``tapejax._autograph``)."""
import types as _types

from ._staging.autograph import (
    to_graph as to_graph, to_code as to_code, set_verbosity as set_verbosity, trace as trace,
    do_not_convert as _do_not_convert, set_loop_options as _set_loop_options,
)

experimental = _types.SimpleNamespace(do_not_convert=_do_not_convert, set_loop_options=_set_loop_options)
