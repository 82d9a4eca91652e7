"""LOG_SOFTMAX and L2_NORMALIZATION -> ``nnrt/kernels/normalize.h``.

Supported (bit-exact with TFLM's ``log_softmax.cc`` / ``l2norm.cc`` reference paths on
a host whose libm TFLM uses): float32 of any rank, over the last axis; L2_NORMALIZATION
without a fused activation (TFLM refuses one) and with TFLM's epsilon 1e-6, and int8
(TFLM's integer kernel: a fixed-point inverse square root per row, outputs in 1/128
units with zero point 0 whatever the output tensor says, as TFLM). int8 LOG_SOFTMAX:
TFLM's LogSoftmaxQuantized (``nnrt_log_softmax_s8``: fixed-point exp and log, beta 1),
whose Prepare requires the output scale 16/256 and zero point 127 (refused otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..cdefs import DType
from ..ir import ActivationOptions, Graph, Op, Tensor
from ..multiplier import quantize_multiplier
from .activation import check_io
from .base import EmitContext, LoweringBase
from .call import Body
from .common import c_call, c_params, cast, io_args, per_tensor_quant, refuse, tensor_desc
from .softmax import softmax_params


class RowNormLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/normalize.h",)
    dtypes_by_opcode: Mapping[str, Sequence[str]] = {"LOG_SOFTMAX": ("int8", "float32"),
                                                     "L2_NORMALIZATION": ("int8", "float32")}

    def _io(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
        combos = [(DType.FLOAT32, DType.FLOAT32), (DType.INT8, DType.INT8)]
        x, y = check_io(graph, op, combos, f"{op.opcode} of "
                        f"{' or '.join(self.dtypes_by_opcode[op.opcode])} over the last axis")
        if tuple(x.shape) != tuple(y.shape) or not x.shape or x.shape[-1] < 1:
            raise refuse(op, f"shapes {list(x.shape)} -> {list(y.shape)}",
                         "equal input and output shapes with a non-empty last axis")
        act = op.options.activation if isinstance(op.options, ActivationOptions) else "NONE"
        if act != "NONE":
            raise refuse(op, f"fused activation {act}", "no fused activation (as TFLM)")
        return x, y

    def _log_softmax_s8(self, op: Op, x: Tensor, y: Tensor) -> dict[str, int]:
        """TFLM's PreprocessLogSoftmaxScalingExp (beta 1, 5 integer bits) and input
        radius, after its Prepare's check of the output quantisation."""
        sy, zy = per_tensor_quant(op, y)
        if np.float32(sy) != np.float32(16.0 / 256) or zy != 127:
            raise refuse(op, f"output {tensor_desc(y)} has scale {sy!r} and zero point "
                         f"{zy}", "int8 LOG_SOFTMAX outputs with scale 16/256 and zero "
                         "point 127 (TFLM's Prepare requires them)")
        p = softmax_params(op, per_tensor_quant(op, x)[0], 1.0)
        real_reverse = (1 << (31 - p["input_left_shift"])) / p["input_multiplier"]
        rmult, rshift = quantize_multiplier(real_reverse)
        if not -31 <= rshift <= 0:
            raise refuse(op, f"input {tensor_desc(x)}: reverse scaling {real_reverse!r}",
                         "int8 LOG_SOFTMAX input scales whose reverse scaling is below 1")
        depth = x.shape[-1]
        return {"outer": x.num_elements // depth, "depth": depth,
                "input_multiplier": p["input_multiplier"],
                "input_left_shift": p["input_left_shift"],
                "reverse_scaling_divisor": rmult, "reverse_scaling_shift": rshift,
                "diff_min": p["diff_min"]}

    def check(self, graph: Graph, op: Op) -> None:
        x, y = self._io(graph, op)
        if x.dtype == DType.INT8 and op.opcode == "LOG_SOFTMAX":
            self._log_softmax_s8(op, x, y)
        elif x.dtype == DType.INT8:
            per_tensor_quant(op, x)

    def emit(self, ctx: EmitContext) -> Body:
        x, y = self._io(ctx.graph, ctx.op)
        depth = x.shape[-1]
        if x.dtype == DType.INT8 and ctx.op.opcode == "LOG_SOFTMAX":
            return [*c_params("nnrt_log_softmax_s8_params_t",
                              self._log_softmax_s8(ctx.op, x, y)),
                    *c_call("nnrt_log_softmax_s8", ["&params",
                                                    cast(ctx, x.index, "int8_t", True),
                                                    cast(ctx, y.index, "int8_t", False)])]
        if x.dtype == DType.INT8:
            _, zp = per_tensor_quant(ctx.op, x)
            return c_call("nnrt_l2_normalization_s8",
                          [*io_args(ctx, x.index, y.index, "int8_t"),
                           str(x.num_elements // depth), str(depth), str(zp)])
        return c_call(f"nnrt_{ctx.op.opcode.lower()}_f32",
                      [*io_args(ctx, x.index, y.index, "float"),
                       str(x.num_elements // depth), str(depth)])


ROW_NORM = RowNormLowering()
