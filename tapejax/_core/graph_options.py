"""``tf.config.optimizer``'s experimental options (TensorFlow's Grappler switches), kept here where
the code that stages ops into a ``tf.function`` reads them.

XLA optimizes every compiled program its own way, so most options are only remembered (and
reported by ``get_experimental_options``, as TensorFlow reports them). ``debug_stripper`` changes
what a program does: on, ``tf.print`` and the ``tf.debugging`` checks are left out of the
``tf.function`` programs run from then on, as Grappler strips Print/Assert/CheckNumerics from
TensorFlow's graphs (eager ops still check). It is part of a trace's key, so a function traced
before runs with its checks again once the option is off, as in TensorFlow.
"""
import threading

# TensorFlow's order (RewriterConfig): on/off switches, and the two plain booleans it always reports.
_ORDER = ("layout_optimizer", "constant_folding", "shape_optimization", "remapping",
          "arithmetic_optimization", "dependency_optimization", "loop_optimization",
          "function_optimization", "debug_stripper", "disable_model_pruning",
          "scoped_allocator_optimization", "pin_to_host_optimization", "implementation_selector",
          "auto_mixed_precision", "use_plugin_optimizers", "disable_meta_optimizer",
          "auto_mixed_precision_onednn_bfloat16", "auto_mixed_precision_mkl")
_BOOLS = ("disable_model_pruning", "disable_meta_optimizer")

_options = {}
_lock = threading.Lock()


def set_options(options):
    """Updates the options (any keys are kept; TensorFlow reports only those it knows)."""
    with _lock:
        _options.update(dict(options))


def get_options():
    """The options as TensorFlow's ``get_experimental_options`` reports them."""
    with _lock:
        out = {}
        for name in _ORDER:
            value = _options.get(name)
            if name in _BOOLS:
                out[name] = bool(value) if value is not None else False
            elif value is not None:
                out[name] = bool(value)
        if _options.get("min_graph_nodes"):
            out["min_graph_nodes"] = _options["min_graph_nodes"]
        return out


def strips_debug_ops():
    """Whether ``tf.print`` and the ``tf.debugging`` checks are left out of traced programs."""
    return bool(_options.get("debug_stripper"))


def trace_key():
    """What a trace depends on of these options."""
    return strips_debug_ops()
