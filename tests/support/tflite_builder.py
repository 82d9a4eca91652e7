"""The TFLite model builder moved into the library (:mod:`nnopt.tflite_builder`, used by
`nnopt convert`); tests keep importing it from here (the same names)."""

from nnopt.tflite_builder import *  # noqa: F403
from nnopt.tflite_builder import __all__ as __all__
