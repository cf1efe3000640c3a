"""Staging: tf.function, AutoGraph and control flow turn Python into one compiled program built from the op table."""
