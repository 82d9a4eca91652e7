"""The operator table: what nnopt knows, and the properties passes rely on.

Kept as data so the frontend, the planner and the error messages agree on one list.
"""

from __future__ import annotations

# Every TFLite builtin nnopt can plan and run.
SUPPORTED_OPS: frozenset[str] = frozenset({
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D",
    "DEQUANTIZE", "EXPAND_DIMS", "FULLY_CONNECTED", "HARD_SWISH", "LEAKY_RELU", "LOGISTIC",
    "MAX_POOL_2D", "MAXIMUM", "MEAN", "MINIMUM", "MUL", "PAD", "PADV2", "QUANTIZE", "RELU",
    "RELU6", "RESHAPE", "SLICE", "SOFTMAX", "SQUEEZE", "STRIDED_SLICE", "SUB", "TANH",
    "TRANSPOSE",
    "ABS", "DIV", "EXP", "LOG", "NEG", "RSQRT", "SQRT",  # float32 math (lowering.math_f32)
})

# Ops whose output is the input's bytes under another shape: planned as an alias of
# their input (no copy, no extra memory), when dtype and quantisation are unchanged.
ALIAS_OPS: frozenset[str] = frozenset({"RESHAPE", "SQUEEZE", "EXPAND_DIMS"})

# Element-wise ops: output element i depends only on input element i, so the output may
# overwrite an input that dies at this op (in-place, Unlu 2020 generalised).
ELEMENTWISE_UNARY: frozenset[str] = frozenset({
    "RELU", "RELU6", "LEAKY_RELU", "LOGISTIC", "TANH", "HARD_SWISH", "QUANTIZE", "DEQUANTIZE",
    "ABS", "EXP", "LOG", "NEG", "RSQRT", "SQRT",
})
ELEMENTWISE_BINARY: frozenset[str] = frozenset({"ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM",
                                                "DIV"})


def supported_list() -> str:
    return ", ".join(sorted(SUPPORTED_OPS))
