"""TFLM's arena and outputs for a .tflite, measured with the stock ``tflite-micro`` Python
interpreter (``tflite_micro.python.tflite_micro.runtime.Interpreter``).

The interpreter allocates the model's tensors when it is made (``from_bytes`` runs
TFLM's ``AllocateTensors`` on an arena of ``arena_size`` bytes and raises when they do
not fit), so TFLM's arena is the smallest ``arena_size`` with which it loads and runs:
found by doubling then bisection, every probe in a forked child (TFLM prints its
allocation failures on the process's stdout/stderr, which the child discards, and a
few models crash the interpreter on an arena too small). This is the host's figure
(64-bit pointers in TFLM's persistent section); a 32-bit target needs a little less.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..errors import NnoptError

T = TypeVar("T")
#: The largest arena probed.
MAX_ARENA = 1 << 30
#: Invocations compared (a second one shows state carried wrongly between runs).
INVOCATIONS = 2


def runtime() -> Any:
    try:
        from tflite_micro.python.tflite_micro import runtime as rt
    except ImportError as e:  # pragma: no cover - installed with nnopt[dev]
        raise NnoptError("measuring TFLM's arena needs the tflite-micro Python package",
                         hint="pip install tflite-micro") from e
    return rt


def _in_child(fn: Callable[[], T]) -> T | None:
    """``fn()`` in a forked child with stdout/stderr discarded: its pickled result, or
    None when it raised or crashed."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.close(read_fd)
            faulthandler.disable()  # a crash here is an answer, not a report (pytest's)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            blob = pickle.dumps(fn())
            with os.fdopen(write_fd, "wb") as w:
                w.write(blob)
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as r:
        blob = r.read()
    _, status = os.waitpid(pid, 0)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0) or not blob:
        return None
    result: T = pickle.loads(blob)
    return result


def loads(data: bytes, arena: int) -> bool:
    """Whether TFLM allocates the model in an arena of ``arena`` bytes."""
    rt = runtime()

    def probe() -> bool:
        rt.Interpreter.from_bytes(data, arena_size=arena)
        return True

    return _in_child(probe) is True


def min_arena(data: bytes) -> int:
    """The smallest arena (bytes) in which TFLM allocates the model."""
    hi = 1 << 12
    while not loads(data, hi):
        hi *= 2
        if hi > MAX_ARENA:
            raise NnoptError(f"TFLM does not load the model with a {MAX_ARENA >> 20} MiB "
                             "arena", hint="run it with the tflite-micro interpreter to see "
                             "TFLM's message (an operator TFLM lacks?)")
    lo = hi // 2 if hi > 1 << 12 else 0  # fails (or untried 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if loads(data, mid):
            hi = mid
        else:
            lo = mid
    return hi


def random_inputs(data: bytes, seed: int = 0, invocations: int = INVOCATIONS
                  ) -> list[list[np.ndarray]]:
    """Per invocation, one random array per model input (integers over their whole
    range, floats from N(0, 1)), shaped and typed as TFLM reports the inputs."""
    rt = runtime()

    def details() -> list[tuple[tuple[int, ...], str]]:
        it = rt.Interpreter.from_bytes(data, arena_size=MAX_ARENA >> 4)
        out = []
        for k in range(_io_counts(data)[0]):
            d = it.get_input_details(k)
            out.append((tuple(int(x) for x in d["shape"]), np.dtype(d["dtype"]).str))
        return out

    got = _in_child(details)
    if got is None:
        raise NnoptError("TFLM does not load the model", hint="check it with the "
                         "tflite-micro interpreter (an operator TFLM lacks?)")
    rng = np.random.default_rng(seed)
    steps: list[list[np.ndarray]] = []
    for _ in range(invocations):
        xs: list[np.ndarray] = []
        for shape, dt in got:
            dtype = np.dtype(dt)
            if dtype.kind in "iu":
                info = np.iinfo(dtype)
                xs.append(rng.integers(int(info.min), int(info.max) + 1, size=shape,
                                       dtype=dtype))
            elif dtype.kind == "b":
                xs.append(rng.integers(0, 2, size=shape).astype(dtype))
            else:
                xs.append(rng.standard_normal(shape).astype(dtype))
        steps.append(xs)
    return steps


def outputs(data: bytes, arena: int, steps: Sequence[Sequence[np.ndarray]]
            ) -> list[list[bytes]] | None:
    """The output bytes of each invocation (inputs ``steps[k]``) of one interpreter with
    an arena of ``arena`` bytes; None when TFLM fails (or crashes)."""
    rt = runtime()
    n_out = _io_counts(data)[1]

    def run() -> list[list[bytes]]:
        it = rt.Interpreter.from_bytes(data, arena_size=arena)
        res: list[list[bytes]] = []
        for xs in steps:
            for i, x in enumerate(xs):
                it.set_input(np.ascontiguousarray(x), i)
            it.invoke()
            res.append([np.ascontiguousarray(it.get_output(k)).tobytes()
                        for k in range(n_out)])
        return res

    return _in_child(run)


def _io_counts(data: bytes) -> tuple[int, int]:
    """The numbers of inputs and outputs of subgraph 0 (the model's)."""
    import tflite

    sg = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    return sg.InputsLength(), sg.OutputsLength()
