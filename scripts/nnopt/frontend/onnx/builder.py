"""Accumulates IR tensors and ops while an ONNX graph is imported, then makes a Graph.

Only :mod:`nnopt.ir`'s public dataclasses are built; ops are numbered in emission order
and tensors by position, as :meth:`nnopt.ir.Graph.verify` requires.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ...cdefs import DType
from ...ir import Graph, NoOptions, Op, OpOptions, Quant, Tensor

_DTYPE_OF = {np.dtype(np.float32): DType.FLOAT32, np.dtype(np.int8): DType.INT8,
             np.dtype(np.int32): DType.INT32, np.dtype(np.int16): DType.INT16,
             np.dtype(np.uint8): DType.UINT8, np.dtype(np.int64): DType.INT64,
             np.dtype(np.bool_): DType.BOOL}


def dtype_of(arr: np.ndarray) -> DType:
    return _DTYPE_OF[arr.dtype]


@dataclass
class GraphBuilder:
    name: str
    tensors: list[Tensor] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    producer: dict[int, int] = field(default_factory=dict)  # tensor -> position in ops

    def tensor(self, name: str, shape: tuple[int, ...], dtype: DType,
               quant: Quant | None = None) -> int:
        t = Tensor(len(self.tensors), name, tuple(int(d) for d in shape), dtype, quant)
        self.tensors.append(t)
        return t.index

    def const(self, name: str, arr: np.ndarray, quant: Quant | None = None) -> int:
        a = np.ascontiguousarray(arr)
        t = Tensor(len(self.tensors), name, tuple(int(d) for d in a.shape), dtype_of(a),
                   quant, a.tobytes())
        self.tensors.append(t)
        return t.index

    def op(self, opcode: str, inputs: list[int], outputs: list[int],
           options: OpOptions | None = None) -> Op:
        op = Op(len(self.ops), opcode, tuple(inputs), tuple(outputs),
                options if options is not None else NoOptions())
        for t in outputs:
            self.producer[t] = len(self.ops)
        self.ops.append(op)
        return op

    def producing_op(self, tensor: int) -> Op | None:
        k = self.producer.get(tensor)
        return self.ops[k] if k is not None else None

    def set_options(self, op: Op, options: OpOptions) -> None:
        self.ops[op.index] = replace(op, options=options)

    def graph(self, inputs: list[int], outputs: list[int]) -> Graph:
        return Graph(self.name, tuple(self.tensors), tuple(self.ops), tuple(inputs),
                     tuple(outputs))
