"""The C dynamic allocator (nnrt/alloc.h) against its Python model
(:class:`nnopt.passes.dynamic.DynArena`): randomised alloc/free/compact sequences run
by tests/alloc/alloc_test_main.c (host, ASan + UBSan), state compared after every
operation (status, every handle's offset, top, live bytes, high-water mark, bytes
moved); the C program checks that compaction preserves every live block's contents.
The model itself is checked for the allocator's invariants (no overlap, alignment,
no gap after a compaction).
"""

from __future__ import annotations

import itertools
import random
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO
from nnopt.cdefs import Status
from nnopt.firmware.toolchain import BuildSpec, Target, build, run
from nnopt.passes.dynamic import DynArena
from nnopt.paths import nnrt_dir
from support.markers import needs_qemu

PROGRAM = REPO / "tests" / "alloc" / "alloc_test_main.c"
ALIGN = 16
MAX_ARENA = 65536
MAX_HANDLES = 1024

Op = tuple[str, int, int]  # ("a", handle, size) | ("f", handle, 0) | ("c", 0, 0)


def program(target: Target = "host", sanitize: bool = True) -> Path:
    return build(BuildSpec(target=target, sanitize=sanitize,
                           sources=(PROGRAM, nnrt_dir() / "src" / "alloc" / "dyn_alloc.c")))


@dataclass(frozen=True)
class State:
    status: int
    top: int
    live_bytes: int
    high_water: int
    n_live: int
    compactions: int
    bytes_moved: int
    offsets: tuple[int | None, ...]


def run_script(tmp: Path, arena: int, n_handles: int, ops: list[Op], *, skew: int = 0,
               target: Target = "host") -> tuple[int, list[State]]:
    script = struct.pack("<III", arena, n_handles, skew) + b"".join(
        struct.pack("<BBHI", ord(o), 0, h, n) for o, h, n in ops)
    sp, out = tmp / "script.bin", tmp / "out.bin"
    sp.write_bytes(script)
    out.unlink(missing_ok=True)
    res = run(program(target, sanitize=target == "host"), target,
              [str(sp), str(len(script)), str(out)], timeout_s=300)
    assert res.exit_code == 0, res.stdout + res.stderr
    data = out.read_bytes()
    (init,) = struct.unpack_from("<i", data)
    states = []
    pos = 4
    rec = 32 + 4 * n_handles
    while pos < len(data):
        s, top, live, hw, nl, nc, lo, hi = struct.unpack_from("<iIIIIIII", data, pos)
        offs = struct.unpack_from(f"<{n_handles}I", data, pos + 32)
        states.append(State(s, top, live, hw, nl, nc, lo | hi << 32,
                            tuple(None if o == 0xFFFFFFFF else o for o in offs)))
        pos += rec
    assert pos == len(data)
    return init, states


def model_states(arena: int, n_handles: int, ops: list[Op]) -> list[State]:
    m = DynArena(n_handles, arena, ALIGN)
    out = []
    for o, h, n in ops:
        if o == "a":
            s = m.alloc(h, n)
        elif o == "f":
            s = m.free(h)
        else:
            m.compact()
            s = 0
        check_invariants(m, compacted=o == "c")
        out.append(State(s, m.top, m.live_bytes, m.high_water, len(m.order), m.compactions,
                         m.bytes_moved, tuple(m.offset)))
    return out


def check_invariants(m: DynArena, *, compacted: bool) -> None:
    spans = []
    for h in m.order:
        off = m.offset[h]
        assert off is not None and off % ALIGN == 0
        spans.append((off, off + -(-m.size[h] // ALIGN) * ALIGN))
    assert spans == sorted(spans)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start  # no overlap
    assert m.top == (spans[-1][1] if spans else 0)
    assert m.live_bytes == sum(e - s for s, e in spans) <= m.top
    assert m.capacity is None or m.top <= m.capacity
    if compacted:
        assert m.top == m.live_bytes
    assert sum(o is not None for o in m.offset) == len(m.order)


def random_ops(rng: random.Random, n_handles: int, arena: int, length: int) -> list[Op]:
    ops: list[Op] = []
    live: set[int] = set()
    for _ in range(length):
        r = rng.random()
        if r < 0.5:
            h = rng.randrange(n_handles)  # sometimes already live: ERR_ARG expected
            size = rng.choice([0, 1, 15, 16, 17, rng.randrange(1, arena // 4 + 2),
                               rng.randrange(1, 200)])
            ops.append(("a", h, size))
            live.add(h)
        elif r < 0.85:
            if live and rng.random() < 0.9:
                h = rng.choice(sorted(live))
                live.discard(h)
            else:
                h = rng.randrange(n_handles + 2)  # free or out of range: ERR_ARG expected
            ops.append(("f", h, 0))
        else:
            ops.append(("c", 0, 0))
    return ops


def test_random_sequences_match_the_model(tmp_path: Path) -> None:
    rng = random.Random(1234)
    for case in range(12):
        n_handles = rng.choice([1, 3, 8, 40, 200])
        arena = rng.choice([0, 16, 256, 1000, 4096, 65536])
        ops = random_ops(rng, n_handles, max(arena, 64), rng.choice([20, 300, 2000]))
        init, got = run_script(tmp_path, arena, n_handles, ops)
        assert init == Status.OK
        want = model_states(arena, n_handles, ops)
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            assert g == w, f"case {case}, op {k} {ops[k]}: C {g} != model {w}"


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_hypothesis_sequences(tmp_path_factory: pytest.TempPathFactory,
                              data: st.DataObject) -> None:
    n_handles = data.draw(st.integers(1, 12))
    arena = data.draw(st.sampled_from([0, 32, 160, 1024]))
    op = st.one_of(
        st.tuples(st.just("a"), st.integers(0, n_handles), st.integers(0, 300)),
        st.tuples(st.just("f"), st.integers(0, n_handles), st.just(0)),
        st.tuples(st.just("c"), st.just(0), st.just(0)))
    ops = data.draw(st.lists(op, max_size=60))
    tmp = tmp_path_factory.mktemp("hyp")
    init, got = run_script(tmp, arena, n_handles, ops)
    assert init == Status.OK
    assert got == model_states(arena, n_handles, ops)


def test_operator_pattern_keeps_the_live_sum(tmp_path: Path) -> None:
    """The generated code's pattern (outputs at the end, free the dead, compact after
    each op) in an arena of exactly the padded live peak: never NOMEM, no gap."""
    rng = random.Random(7)
    sizes = [rng.randrange(1, 3000) for _ in range(60)]
    ops: list[Op] = [("a", 0, sizes[0])]
    live = [0]
    peak = -(-sizes[0] // ALIGN) * ALIGN
    for t in range(1, 60):
        ops.append(("a", t, sizes[t]))
        live.append(t)
        peak = max(peak, sum(-(-sizes[h] // ALIGN) * ALIGN for h in live))
        dead = [h for h in live[:-1] if rng.random() < 0.6]
        for h in dead:
            ops.append(("f", h, 0))
            live.remove(h)
        ops.append(("c", 0, 0))
    init, got = run_script(tmp_path, peak, 60, ops)
    assert init == Status.OK
    assert all(s.status == Status.OK for s in got)
    assert max(s.high_water for s in got) == peak
    assert got == model_states(peak, 60, ops)


def test_nomem_changes_nothing(tmp_path: Path) -> None:
    ops: list[Op] = [("a", 0, 100), ("a", 1, 200), ("a", 2, 1), ("f", 0, 0), ("a", 3, 100),
                     ("a", 4, 1)]
    _, got = run_script(tmp_path, 320, 5, ops)
    assert [s.status for s in got] == [0, 0, Status.ERR_NOMEM, 0, 0, Status.ERR_NOMEM]
    # the alloc of handle 3 had to compact (the gap of handle 0 made the room)
    assert got[4].offsets == (None, 0, None, 208, None) and got[4].bytes_moved == 200
    assert got[5].offsets == got[4].offsets


def test_argument_errors(tmp_path: Path) -> None:
    ops: list[Op] = [("a", 2, 10), ("a", 2, 10), ("f", 1, 0), ("f", 3, 0), ("a", 9, 1),
                     ("f", 2, 0), ("f", 2, 0)]
    _, got = run_script(tmp_path, 64, 3, ops)
    assert [s.status for s in got] == [0, Status.ERR_ARG, Status.ERR_ARG, Status.ERR_ARG,
                                       Status.ERR_ARG, 0, Status.ERR_ARG]


def test_misaligned_arena_is_refused(tmp_path: Path) -> None:
    init, got = run_script(tmp_path, 64, 2, [("a", 0, 1)], skew=4)
    assert init == Status.ERR_ARG and got == []


def test_unaligned_capacity_is_rounded_down(tmp_path: Path) -> None:
    _, got = run_script(tmp_path, 40, 2, [("a", 0, 32), ("a", 1, 1)])
    assert [s.status for s in got] == [0, Status.ERR_NOMEM]


@pytest.mark.qemu
@needs_qemu
def test_random_sequence_on_cortex_m3(tmp_path: Path) -> None:
    """Same results on a 32-bit target without unaligned-access tricks."""
    rng = random.Random(99)
    ops = random_ops(rng, 16, 2048, 300)
    init, got = run_script(tmp_path, 2048, 16, ops, target="qemu-m3")
    assert init == Status.OK
    assert got == model_states(2048, 16, ops)
