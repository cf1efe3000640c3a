"""tf.autodiff: ForwardAccumulator (forward mode) and the tape class."""
from ._forward import ForwardAccumulator as ForwardAccumulator  # noqa: F401
from ._tape import GradientTape as GradientTape  # noqa: F401
