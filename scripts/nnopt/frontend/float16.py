"""float16 weights -> float32 constants, their DEQUANTIZE folded away at build time.

TF's converter with ``optimizations=[DEFAULT]`` and ``supported_types=[float16]`` (every
MediaPipe model) stores each float weight as a FLOAT16 constant read by one DEQUANTIZE
whose output, FLOAT32, is what the conv or add reads. The full TFLite runtime runs that
DEQUANTIZE once, at allocation (tensorflow/lite/kernels/dequantize.cc: a constant
input makes the output persistent); TFLM's DEQUANTIZE takes no float16 input and refuses
the model. Here the expansion happens at build time: the float16 values, widened exactly
to float32 (every float16 is a float32), become the DEQUANTIZE output's constant data and
the op goes. The file's float16 copy is read by nothing after that and is not emitted;
the ROM cost is the float32 bytes less the float16 bytes (:class:`Expansion`).

An op reading a float16 constant is that conversion when it is element-wise unary
(its definition's trait) and writes one FLOAT32 tensor of as many elements: DEQUANTIZE
(or CAST) in TFLite, whose other float16 readers keep float16 outputs. Refused by name:
a FLOAT16 tensor that is not a constant (float16 activations), and a float16 constant
read by any other op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import Expansion, Op, Tensor
from ..ops import DEFINITIONS

KIND = "float16"  # Expansion.kind


def widen(raw: bytes) -> bytes:
    """float16 little-endian bytes as float32 little-endian bytes (exact)."""
    return np.frombuffer(raw, dtype="<f2").astype("<f4").tobytes()


def refuse_activation(where: str, index: int, name: str) -> UnsupportedError:
    return UnsupportedError(
        f"{where}tensor {index} ({name}) is a FLOAT16 activation",
        hint="nnopt expands float16 weights (constants) to float32 at build time; "
        "export the model with float32 activations (TFLiteConverter without "
        "float16 inference)")


def fold_dequantize(tensors: list[Tensor], ops: Sequence[Op], widened: Sequence[int],
                    where: str, source: str) -> tuple[list[Op], Expansion | None]:
    """``ops`` without the conversion (DEQUANTIZE) of each widened float16 constant
    (``widened``: their tensor indices, already FLOAT32 with widened data), whose output
    becomes that constant; ``tensors`` updated in place. The Expansion says what it cost."""
    if not widened:
        return list(ops), None
    half = set(widened)
    readers: dict[int, list[Op]] = {t: [] for t in half}
    for op in ops:
        for t in dict.fromkeys(op.inputs):
            if t in half:
                readers[t].append(op)
    folded: set[int] = set()
    f16_bytes = f32_bytes = 0
    for t in widened:
        w = tensors[t]
        for op in readers[t]:
            d = DEFINITIONS.get(op.opcode)
            ok = (d is not None and d.elementwise == "unary" and op.inputs == (t,)
                  and len(op.outputs) == 1
                  and tensors[op.outputs[0]].dtype == DType.FLOAT32
                  and tensors[op.outputs[0]].num_elements == w.num_elements)
            if not ok:
                raise UnsupportedError(
                    f"{source}: {where}op {op.index} ({op.opcode}) reads float16 "
                    f"tensor {t} ({w.name})",
                    hint="nnopt expands float16 weights that feed DEQUANTIZE (as TF's "
                    "float16 quantisation writes them); export float32 weights otherwise")
            y = op.outputs[0]
            tensors[y] = replace(tensors[y], data=w.data)
            folded.add(op.index)
            f32_bytes += tensors[y].nbytes
        if readers[t]:
            f16_bytes += w.nbytes // 2
    kept = [op for op in ops if op.index not in folded]
    return kept, Expansion(KIND, len(folded), f16_bytes, f32_bytes)
