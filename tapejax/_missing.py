"""TensorFlow names tapejax does not provide: an ``AttributeError`` that says so and what to use.

Each namespace's module ``__getattr__`` ends here; the error stays an ``AttributeError``, so
``hasattr`` probing and ``getattr(tf, name, default)`` behave as for any missing attribute.
"""

_NOT_PROVIDED = "is not provided by tapejax"
_TF1 = ("TensorFlow 1's graph API {what}: write TF2 code instead (eager ops, tf.function for a "
        "compiled step, tf.GradientTape for gradients, tf.Variable for state).")

MISSING = {
    "tapejax": {
        "Graph": _TF1.format(what="(tf.Graph) " + _NOT_PROVIDED),
        "Session": _TF1.format(what="(tf.Session) " + _NOT_PROVIDED),
        "placeholder": _TF1.format(what="(tf.placeholder) " + _NOT_PROVIDED)[:-1]
                       + "; give a tf.function an input_signature of tf.TensorSpec for symbolic inputs.",
        "get_variable": _TF1.format(what="(tf.get_variable) " + _NOT_PROVIDED),
        "variable_scope": _TF1.format(what="(tf.variable_scope) " + _NOT_PROVIDED)[:-1]
                          + "; tf.name_scope names Variables.",
        "global_variables_initializer": _TF1.format(what="(tf.global_variables_initializer) " + _NOT_PROVIDED)[:-1]
                                        + "; Variables are initialized when created.",
        "estimator": "tf.estimator " + _NOT_PROVIDED + " (TensorFlow removed it in 2.16): use tf.keras "
                     "Model.compile/fit, or a custom loop with tf.GradientTape.",
        "lite": "tf.lite (TensorFlow Lite conversion) " + _NOT_PROVIDED + ": export with tf.saved_model.save "
                "or jax.export.",
        "feature_column": "tf.feature_column " + _NOT_PROVIDED + " (deprecated in TensorFlow): preprocess "
                          "features with NumPy, or in a tf.data.Dataset.map.",
        "tpu": "tf.tpu " + _NOT_PROVIDED + ": JAX runs on TPUs as they are; shard with tf.distribute or "
               "jax.sharding.",
        "xla": "tf.xla " + _NOT_PROVIDED + ": every tf.function is already compiled by XLA.",
        "profiler": "tf.profiler " + _NOT_PROVIDED + ": use jax.profiler.trace(log_dir) and view it in "
                    "TensorBoard or Perfetto.",
        "saved_model_cli": "saved_model_cli " + _NOT_PROVIDED + ".",
        "Operation": "tf.Operation (graph operations) " + _NOT_PROVIDED + ": there is no graph; inspect a "
                     "compiled step with jax.make_jaxpr.",
    },
    "tapejax.keras": {
        "applications": "tf.keras.applications (pretrained models) " + _NOT_PROVIDED + ": build the model "
                        "with tf.keras.layers, or wrap a flax model as a layer.",
        "wrappers": "tf.keras.wrappers (scikit-learn wrappers) " + _NOT_PROVIDED + ".",
        "estimator": "tf.keras.estimator " + _NOT_PROVIDED + ": use Model.fit.",
        "experimental": "tf.keras.experimental " + _NOT_PROVIDED + ": learning-rate schedules are in "
                        "tf.keras.optimizers.schedules.",
        "export": "tf.keras.export " + _NOT_PROVIDED + ": use tf.saved_model.save(model, path).",
        "dtensor": "tf.keras.dtensor " + _NOT_PROVIDED + ": shard with tf.distribute or jax.sharding.",
    },
    "tapejax.keras.datasets": {
        name: f"tf.keras.datasets.{name} " + _NOT_PROVIDED + ": download the file with "
              "tf.keras.utils.get_file(origin=...) and load the arrays with NumPy (mnist, "
              "fashion_mnist, cifar10 and cifar100 are provided)."
        for name in ("imdb", "reuters", "boston_housing", "california_housing")
    },
    "tapejax.strings": {
        "to_hash_bucket_strong": "tf.strings.to_hash_bucket_strong (keyed SipHash) " + _NOT_PROVIDED + ": map "
                                 "tokens to ids with a vocabulary, or hash them in Python (hashlib.blake2b with a key).",
        "to_hash_bucket": "tf.strings.to_hash_bucket " + _NOT_PROVIDED + ": map tokens to ids with a vocabulary "
                          "(a Python dict), or hash them in Python (hashlib).",
        "unicode_script": "tf.strings.unicode_script (ICU script codes) " + _NOT_PROVIDED + ": use "
                          "unicodedata.name(chr(c)) in Python, or the regex module's \\p{Script=...} classes.",
    },
    "tapejax.image": {
        "extract_patches": "tf.image.extract_patches " + _NOT_PROVIDED + ": use "
                           "jax.lax.conv_general_dilated_patches on jax arrays.",
        "non_max_suppression": "tf.image.non_max_suppression " + _NOT_PROVIDED + ": select boxes with NumPy "
                               "(or a jax while_loop) on the scores and IoUs.",
        "sample_distorted_bounding_box": "tf.image.sample_distorted_bounding_box " + _NOT_PROVIDED + ": use "
                                         "dm-pix (import dm_pix) for augmentations on jax arrays.",
    },
    "tapejax.io": {
        **{name: f"tf.io.{name} (tf.train.Example protocol buffers) " + _NOT_PROVIDED + ": store arrays "
                 "with np.save / np.savez, or decode each record in Python (a protobuf library) inside "
                 "tf.data.Dataset.from_generator." for name in
           ["FixedLenSequenceFeature", "parse_sequence_example", "parse_single_sequence_example"]},
    },
    "tapejax.summary": {
        name: f"tf.summary.{name} (TensorFlow graph traces for TensorBoard's graph dashboard) " + _NOT_PROVIDED
              + ": there is no tf.Graph; profile with jax.profiler.trace(log_dir) (TensorBoard's profile tab "
              "reads it) and inspect a compiled step with jax.make_jaxpr."
        for name in ("trace_on", "trace_export", "trace_off")
    },
    "tapejax.data": {
        "service": "tf.data.service " + _NOT_PROVIDED + ".",
    },
}


def missing(module, name):
    """The ``AttributeError`` for ``module.name``: what is not provided, and what to use instead."""
    hint = MISSING.get(module, {}).get(name)
    if hint is None or name.startswith("_"):
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    return AttributeError(f"module {module!r} has no attribute {name!r}: {hint}")


def module_getattr(module):
    """A module ``__getattr__`` raising :func:`missing`'s error."""
    def __getattr__(name):
        raise missing(module, name)
    return __getattr__
