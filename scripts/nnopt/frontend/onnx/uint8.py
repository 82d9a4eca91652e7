"""uint8 QDQ -> int8: the zero point shifted by 128 (as TFLite's converter maps a uint8
model onto its int8 kernels).

``onnxruntime.quantization.quantize_static`` writes uint8 activations by default in its
older releases (``QuantType.QUInt8``), and many published QDQ models have them. A uint8
value ``q`` with zero point ``z`` stands for ``scale * (q - z)``; the int8 value
``q - 128`` with zero point ``z - 128`` stands for the same real number, and ONNX's
``QuantizeLinear`` (round, add the zero point, saturate to [0, 255]) gives exactly the
shifted value when it saturates to [-128, 127] with the shifted zero point. So every
QuantizeLinear/DequantizeLinear with a uint8 zero point (or none: the uint8 default of
``QuantizeLinear``, and of ``DequantizeLinear`` on a uint8 input) gets the shifted int8
one, and every uint8 constant behind a DequantizeLinear is shifted with it: the graph then
computes the same reals through nnopt's int8 kernels.

At the model boundary a uint8 input or output stays uint8 (:mod:`.importer` converts it
with a QUANTIZE uint8 <-> int8 of the same scale: a shift of 128, exact).
"""

from __future__ import annotations

import numpy as np

from .prepare import Node, Prepared

_QDQ = ("QuantizeLinear", "DequantizeLinear")
_UINT8 = 2  # onnx.TensorProto.UINT8
#: the constant zero point of a QuantizeLinear/DequantizeLinear that had none (uint8 0)
DEFAULT_ZERO_POINT = "nnopt.uint8_default_zero_point"


def _shifted(prep: Prepared, name: str) -> str:
    new = f"{name}.int8"
    if new not in prep.consts:
        value = (prep.consts[name].astype(np.int16) - 128).astype(np.int8)
        prep.consts[new] = value
        prep.shapes[new] = tuple(value.shape)
        prep.dtypes[new] = value.dtype
    return new


def _is_uint8_const(prep: Prepared, name: str) -> bool:
    return bool(name) and name in prep.consts and prep.consts[name].dtype == np.uint8


def _uint8_without_zero_point(prep: Prepared, node: Node) -> bool:
    if node.op_type == "QuantizeLinear":
        return int(node.attrs.get("output_dtype", 0)) in (0, _UINT8)
    return prep.dtypes.get(node.inputs[0]) == np.uint8


def shift_uint8(prep: Prepared) -> None:
    """Rewrite the uint8 quantisation of ``prep`` to int8 (module docstring), in place."""
    for node in prep.nodes:
        if node.op_type not in _QDQ or node.domain not in ("", "ai.onnx") \
                or len(node.inputs) < 2:
            continue
        zp = node.inputs[2] if len(node.inputs) > 2 else ""
        if zp:
            if not _is_uint8_const(prep, zp):
                continue
            node.inputs[2] = _shifted(prep, zp)
        elif _uint8_without_zero_point(prep, node):
            if DEFAULT_ZERO_POINT not in prep.consts:
                prep.consts[DEFAULT_ZERO_POINT] = np.array(0, np.uint8)
                prep.shapes[DEFAULT_ZERO_POINT] = ()
                prep.dtypes[DEFAULT_ZERO_POINT] = np.dtype(np.uint8)
            node.inputs = [*node.inputs[:2], _shifted(prep, DEFAULT_ZERO_POINT)]
        else:
            continue
        if node.op_type == "QuantizeLinear":
            node.attrs.pop("output_dtype", None)
        elif _is_uint8_const(prep, node.inputs[0]):
            node.inputs[0] = _shifted(prep, node.inputs[0])
