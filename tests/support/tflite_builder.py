"""The TFLite model builder moved into the library (:mod:`nnopt.tflite_builder`, used by
`nnopt convert`); tests keep importing it from here."""

from nnopt.tflite_builder import (
    CombinedModel,
    ModelBuilder,
    binary_model,
    combine_models,
    conv2d_model,
    depthwise_conv2d_model,
    fully_connected_model,
    pool2d_model,
    random_int8,
    unary_model,
)

__all__ = [
    "CombinedModel",
    "ModelBuilder",
    "binary_model",
    "combine_models",
    "conv2d_model",
    "depthwise_conv2d_model",
    "fully_connected_model",
    "pool2d_model",
    "random_int8",
    "unary_model",
]
