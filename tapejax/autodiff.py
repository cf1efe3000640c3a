"""tf.autodiff: ForwardAccumulator (forward mode) and the tape class."""
from ._core.forward import ForwardAccumulator as ForwardAccumulator  # noqa: F401
from ._core.tape import GradientTape as GradientTape  # noqa: F401
