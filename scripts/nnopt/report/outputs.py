"""What ``nnopt run`` prints for a model's outputs: each output's name, shape and
element type, its quantisation, the raw values and (quantised outputs) the real values
``scale * (q - zero_point)``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir import NUMPY_DTYPE, Graph, Tensor

#: Values shown per output before the line is cut (``-o DIR`` writes them all).
SHOWN = 16


def dequantised(tensor: Tensor, raw: np.ndarray) -> np.ndarray | None:
    """The real values of ``raw`` (the tensor's elements, possibly k invocations back to
    back), None for a tensor without quantisation. Per-channel: along the quantised
    axis."""
    q = tensor.quant
    if q is None or not q.scale or not np.issubdtype(raw.dtype, np.integer):
        return None
    values = raw.astype(np.float64)
    if len(q.scale) == 1:
        return (values - q.zero_point[0]) * q.scale[0]
    shaped = values.reshape(-1, *tensor.shape)
    axis = q.axis + 1
    bshape = [1] * shaped.ndim
    bshape[axis] = len(q.scale)
    scale = np.asarray(q.scale).reshape(bshape)
    zp = np.asarray(q.zero_point).reshape(bshape)
    real: np.ndarray = ((shaped - zp) * scale).reshape(-1)
    return real


def _values(arr: np.ndarray, fmt: str) -> str:
    shown = ", ".join(format(v, fmt) for v in arr[:SHOWN].tolist())
    more = f", ... ({arr.size:,} values)" if arr.size > SHOWN else ""
    return f"[{shown}{more}]"


def output_lines(graph: Graph, outputs: Sequence[bytes], invocations: int = 1) -> list[str]:
    """One block per output: ``output 0 "name": int8 [1, 2], scale 0.0039 zero point
    -128``, then the raw values and, quantised, the dequantised ones."""
    lines: list[str] = []
    for i, (t, data) in enumerate(zip(graph.outputs, outputs, strict=True)):
        tensor = graph.tensors[t]
        raw = np.frombuffer(data, dtype=NUMPY_DTYPE[tensor.dtype])
        shape = list(tensor.shape)
        shape_txt = f"{invocations} x {shape}" if invocations > 1 else f"{shape}"
        head = f'output {i} "{tensor.name}": {tensor.dtype.name.lower()} {shape_txt}'
        q = tensor.quant
        if q is not None and len(q.scale) == 1:
            head += f", scale {q.scale[0]:.6g} zero point {q.zero_point[0]}"
        elif q is not None and q.scale:
            head += f", per-channel scales ({len(q.scale)}) along axis {q.axis}"
        lines.append(head)
        real = dequantised(tensor, raw)
        if real is None:
            lines.append(f"  values:      {_values(raw, 'g' if raw.dtype.kind == 'f' else 'd')}")
            continue
        lines.append(f"  raw:         {_values(raw, 'd')}")
        lines.append(f"  dequantised: {_values(real, '.4g')}")
    return lines
