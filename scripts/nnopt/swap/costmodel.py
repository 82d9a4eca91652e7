"""Cost model of out-of-core execution: compute, flash transfers and AEAD per chunk.

Predicts one inference's latency three ways:

- **baseline**: every weight in internal memory (the "all in SRAM/flash" reference);
- **serial**: streamed chunks read and decrypted with no overlap (read, decrypt,
  compute, one after the other);
- **overlap**: what the runtime does: double-buffered staging with one DMA channel;
  the read of chunk k+1 is issued as soon as chunk k's read completed (``wait(k)``),
  before chunk k is decrypted and computed, so it runs behind decrypt + compute of
  chunk k (and behind any non-streamed operators in between). The CPU stalls only
  when a read is still in flight at ``wait``.

AEAD decryption runs on the CPU (no crypto hardware on the F767), so its time is
never hidden; the flash transfer is (DMA).

An operator is **I/O-bound** when streamed if delivering its weights takes longer than
computing with them: the flash read (DMA) or their decryption (CPU), whichever is
slower (``max(read_s, decrypt_s) > compute_s``); the layer then runs at the speed of
its weight stream, not of its MACs. A read **stall** (the CPU waiting at ``wait``) is
the narrower case ``read_s > compute_s + decrypt_s``. Int8 fully connected layers do
one MAC per weight byte and are always I/O-bound; convolutions reuse every weight
OH*OW times and hide both.

Every assumption is a named constant below with its source (``docs/ANCHORS.md``
"Out-of-core" unless said otherwise) and can be overridden through
:class:`CostParams`. Instruction counts measured on QEMU (mps2-an500, Cortex-M7,
mbedTLS 2.28 built by :mod:`nnopt.swap.mbedtls_build`, -O2) are quoted as a check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..boards import Board
from ..ir import ConvOptions, Graph, Op
from ..ops import conv
from ..passes import regions

# ----- compute -----
#: Int8 CNN throughput of a Cortex-M7 at 216 MHz: "0.6-0.9 MAC/cycle (MLPerf Tiny
#: logs)", ANCHORS.md. Midpoint. (nnrt's reference C kernels are slower, which only
#: hides I/O better; set CostParams.macs_per_cycle to model them.)
MACS_PER_CYCLE = 0.75
#: Cycles per output element of operators without MACs (add, pad, pool, copy...).
#: Assumption: a load, an op and a store per element with requantisation.
CYCLES_PER_ELEMENT = 4.0

# ----- external flash (bytes per second) -----
#: "QSPI NOR: ~54 MB/s at 108 MHz (quad, 0.5 B/clock)", ANCHORS.md.
QSPI_NOR_BYTES_PER_S = 54_000_000.0
#: "SPI NOR ~ clock/8 B/s", ANCHORS.md: SPI at 54 MHz (APB2 108 MHz / 2 on the F767).
SPI_NOR_BYTES_PER_S = 54_000_000.0 / 8
#: "SD 4-bit: <=12.5/25 MB/s", ANCHORS.md (default speed).
SD_4BIT_BYTES_PER_S = 12_500_000.0
#: "SD over SPI: <=3 MB/s bus", ANCHORS.md.
SD_SPI_BYTES_PER_S = 3_000_000.0
#: Flash simulator / RAM-backed emulation: modelled as QSPI NOR.
DEFAULT_BYTES_PER_S: Mapping[str, float] = {
    "qspi_nor": QSPI_NOR_BYTES_PER_S, "spi_nor": SPI_NOR_BYTES_PER_S,
    "sd": SD_4BIT_BYTES_PER_S, "sd_spi": SD_SPI_BYTES_PER_S,
    "flash_simulator": QSPI_NOR_BYTES_PER_S,
}
#: Fixed time per transfer: the NOR read command, 3-4 address bytes and dummy cycles
#: (about 40 bus clocks, < 1 us at 54 MHz) plus DMA set-up and the completion
#: interrupt through the driver. Assumption (Zephyr spi_nor + dma_stm32 path): 5 us.
FLASH_TRANSFER_SETUP_S = 5e-6

# ----- AEAD on the CPU (cycles per byte, cycles per chunk) -----
#: "ChaCha20-Poly1305 is markedly cheaper in software" than AES, ANCHORS.md. Measured:
#: mbedTLS 2.28 psa_aead_decrypt (-O2, Cortex-M7) on QEMU mps2-an500: 36.8 instructions
#: per byte (tests/test_swap_driver.py::test_qemu_aead_cost_matches_cost_model). One
#: cycle per instruction assumed (M7 dual issue offsets load latency).
CHACHA20_POLY1305_CYCLES_PER_BYTE = 37.0
#: Software AES-128-GCM: "AES-128-CTR 34-150 cycles/B", ANCHORS.md, plus GHASH.
#: Measured the same way (table AES, 4-bit-table GHASH): 108.5 instructions per byte.
AES_128_GCM_SOFTWARE_CYCLES_PER_BYTE = 109.0
#: AES-128-GCM on a crypto accelerator (e.g. STM32F777 CRYP): DMA-fed AES + GHASH at
#: a few cycles per byte. Assumption, not measured here.
AES_128_GCM_HARDWARE_CYCLES_PER_BYTE = 4.0
#: Per psa_aead_decrypt call: key schedule (AES) or ChaCha set-up, GHASH table or
#: Poly1305 key, 96 bytes of AAD, tag check, driver bookkeeping. Measured (the constant
#: part of the instruction count, same test): ChaCha20-Poly1305 5,900, AES-128-GCM
#: 10,800 instructions.
AEAD_CYCLES_PER_CHUNK: Mapping[str, float] = {"chacha20-poly1305": 6_000.0,
                                             "aes-128-gcm": 11_000.0}
AEAD_CYCLES_PER_BYTE: Mapping[str, float] = {
    "chacha20-poly1305": CHACHA20_POLY1305_CYCLES_PER_BYTE,
    "aes-128-gcm": AES_128_GCM_SOFTWARE_CYCLES_PER_BYTE,
}

#: Default processor clock when the board data has none (Cortex-M7 of the F767).
DEFAULT_CLOCK_HZ = 216_000_000.0


@dataclass(frozen=True)
class CostParams:
    """Every number the model uses; :meth:`for_board` fills them from board data."""

    clock_hz: float = DEFAULT_CLOCK_HZ
    macs_per_cycle: float = MACS_PER_CYCLE
    cycles_per_element: float = CYCLES_PER_ELEMENT
    flash_bytes_per_s: float = QSPI_NOR_BYTES_PER_S
    flash_setup_s: float = FLASH_TRANSFER_SETUP_S
    aead_cycles_per_byte: float = CHACHA20_POLY1305_CYCLES_PER_BYTE
    aead_cycles_per_chunk: float = AEAD_CYCLES_PER_CHUNK["chacha20-poly1305"]
    algorithm: str = "chacha20-poly1305"
    sources: Mapping[str, str] = field(default_factory=dict)  # field -> where it came from

    @classmethod
    def for_board(cls, board: Board | None, algorithm: str | None = None,
                  crypto_hardware: bool = False, **overrides: Any) -> CostParams:
        """Parameters of a board: clock, external flash kind/bandwidth, AEAD.

        ``algorithm``: None takes ``external_flash.crypto`` (default ChaCha20-Poly1305).
        ``overrides``: any field of this class.
        """
        src: dict[str, str] = {}
        clock = float(board.clock_hz) if board and board.clock_hz else DEFAULT_CLOCK_HZ
        src["clock_hz"] = f"board {board.name}" if board and board.clock_hz else "default"
        ext = dict(board.external_flash) if board else {}
        alg = (algorithm or str(ext.get("crypto") or "chacha20-poly1305")).lower()
        if alg not in AEAD_CYCLES_PER_BYTE:
            raise ValueError(f"unknown AEAD algorithm {alg!r}")
        kind = str(ext.get("kind", "qspi_nor"))
        if ext.get("bandwidth_bytes_per_s"):
            bw = float(ext["bandwidth_bytes_per_s"])
            src["flash_bytes_per_s"] = f"board {board.name if board else '?'} external_flash"
        else:
            bw = DEFAULT_BYTES_PER_S.get(kind, QSPI_NOR_BYTES_PER_S)
            src["flash_bytes_per_s"] = f"ANCHORS.md ({kind})"
        cpb = (AES_128_GCM_HARDWARE_CYCLES_PER_BYTE if crypto_hardware and alg == "aes-128-gcm"
               else AEAD_CYCLES_PER_BYTE[alg])
        src["aead_cycles_per_byte"] = f"{alg}, {'hardware' if crypto_hardware else 'software'}"
        params = cls(clock_hz=clock, flash_bytes_per_s=bw, aead_cycles_per_byte=cpb,
                     aead_cycles_per_chunk=AEAD_CYCLES_PER_CHUNK[alg], algorithm=alg,
                     sources=src)
        for k in overrides:
            if k not in cls.__dataclass_fields__:
                raise ValueError(f"unknown cost parameter {k!r}")
        return replace(params, **overrides) if overrides else params

    @classmethod
    def for_storage(cls, board: Board, device: str, algorithm: str | None = None,
                    **overrides: Any) -> CostParams:
        """Parameters of a board with its weights on storage device ``device`` (one of
        ``board.storage``) instead of ``external_flash``: that device's read rate and
        its fixed cost per transfer (``latency_s``), from its datasheet figures."""
        d = board.storage[device]
        base = cls.for_board(board, algorithm)
        src = {**base.sources, "flash_bytes_per_s": f"board {board.name} storage {device}",
               "flash_setup_s": f"board {board.name} storage {device} latency_s"}
        return cls.for_board(board, algorithm, flash_bytes_per_s=d.read_bytes_per_s,
                             flash_setup_s=max(d.latency_s, FLASH_TRANSFER_SETUP_S),
                             sources=src, **overrides)

    # ----- per-unit costs in seconds -----
    def read_s(self, nbytes: int) -> float:
        """One transfer of nbytes (sealed bytes: plaintext + tag)."""
        return self.flash_setup_s + nbytes / self.flash_bytes_per_s

    def decrypt_s(self, nbytes: int) -> float:
        return (self.aead_cycles_per_chunk + nbytes * self.aead_cycles_per_byte) / self.clock_hz

    def cycles_s(self, cycles: float) -> float:
        return cycles / self.clock_hz


# ----- operator work -----

def op_macs(graph: Graph, op: Op) -> int:
    """Multiply-accumulates of one operator (its definition's count; 0 without weights).
    A convolution counts its output extent from its declared padding over its input
    (a padding PAD folding made explicit not included), as the placements were
    calibrated."""
    o = op.options
    if isinstance(o, ConvOptions):
        return conv.macs(graph, op, declared_padding=True)
    return regions.op_macs(graph, op)


def op_cycles(graph: Graph, op: Op, params: CostParams) -> float:
    macs = op_macs(graph, op)
    if macs:
        return macs / params.macs_per_cycle
    elems = sum(graph.tensors[t].num_elements for t in op.outputs)
    return elems * params.cycles_per_element


# ----- the schedule simulation -----

@dataclass(frozen=True)
class ChunkCost:
    """What the simulation needs of one chunk, in streaming order."""

    op: int  # op index that consumes it
    plain_bytes: int
    share: float  # fraction of the op's compute done with this chunk (channels / OC)


@dataclass(frozen=True)
class OpTiming:
    op: int
    opcode: str
    macs: int
    compute_s: float
    weight_bytes: int  # bytes of the op's streamed weights (0 if none)
    chunks: int
    read_s: float
    decrypt_s: float
    stall_s: float  # CPU waiting for the flash at this op (overlap schedule)
    io_bound: bool  # max(read_s, decrypt_s) > compute_s

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "opcode": self.opcode, "macs": self.macs,
                "compute_us": round(self.compute_s * 1e6, 1), "weight_bytes": self.weight_bytes,
                "chunks": self.chunks, "read_us": round(self.read_s * 1e6, 1),
                "decrypt_us": round(self.decrypt_s * 1e6, 1),
                "stall_us": round(self.stall_s * 1e6, 1), "io_bound": self.io_bound}


@dataclass(frozen=True)
class Timeline:
    baseline_s: float  # all weights internal
    serial_s: float  # streamed, no overlap
    overlap_s: float  # streamed, double-buffered prefetch
    decrypt_s: float
    read_s: float
    stall_s: float
    ops: tuple[OpTiming, ...]

    @property
    def slowdown(self) -> float:
        """Predicted latency / baseline (1.0 = no overhead)."""
        return self.overlap_s / self.baseline_s if self.baseline_s else 1.0

    @property
    def serial_slowdown(self) -> float:
        return self.serial_s / self.baseline_s if self.baseline_s else 1.0

    @property
    def io_bound_ops(self) -> tuple[int, ...]:
        return tuple(t.op for t in self.ops if t.io_bound and t.chunks)

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline_ms": round(self.baseline_s * 1e3, 3),
            "serial_ms": round(self.serial_s * 1e3, 3),
            "overlap_ms": round(self.overlap_s * 1e3, 3),
            "decrypt_ms": round(self.decrypt_s * 1e3, 3),
            "read_ms": round(self.read_s * 1e3, 3),
            "stall_ms": round(self.stall_s * 1e3, 3),
            "slowdown": round(self.slowdown, 4),
            "serial_slowdown": round(self.serial_slowdown, 4),
            "io_bound_ops": list(self.io_bound_ops),
            "ops": [t.to_json() for t in self.ops if t.chunks],
        }


def simulate(graph: Graph, schedule: Sequence[int], chunks: Sequence[ChunkCost],
             params: CostParams) -> Timeline:
    """Latency of one inference with ``chunks`` streamed (in this order).

    Chunks must appear in schedule order of their ops (the streaming order); chunk 0's
    read is issued when the inference starts.
    """
    ops = graph.op_by_index
    by_op: dict[int, list[int]] = {}
    for j, c in enumerate(chunks):
        by_op.setdefault(c.op, []).append(j)
    order_pos = {idx: i for i, idx in enumerate(schedule)}
    last = -1
    for c in chunks:
        if c.op not in order_pos:
            raise ValueError(f"chunk of op {c.op} which is not in the schedule")
        if order_pos[c.op] < last:
            raise ValueError("chunks are not in schedule order")
        last = order_pos[c.op]

    sealed = [c.plain_bytes + 16 for c in chunks]
    done: list[float] = [0.0] * len(chunks)
    dma_free = 0.0

    def issue(j: int, at: float) -> None:
        nonlocal dma_free
        start = max(at, dma_free)
        done[j] = start + params.read_s(sealed[j])
        dma_free = done[j]

    t = 0.0
    if chunks:
        issue(0, 0.0)
    timings: list[OpTiming] = []
    baseline = 0.0
    for idx in schedule:
        op = ops[idx]
        compute = params.cycles_s(op_cycles(graph, op, params))
        baseline += compute
        js = by_op.get(idx, [])
        stall = read = dec = 0.0
        for j in js:
            if done[j] > t:
                stall += done[j] - t
                t = done[j]
            if j + 1 < len(chunks):
                issue(j + 1, t)
            d = params.decrypt_s(sealed[j])
            dec += d
            read += params.read_s(sealed[j])
            t += d + compute * chunks[j].share
        if not js:
            t += compute
        wbytes = sum(chunks[j].plain_bytes for j in js)
        timings.append(OpTiming(idx, op.opcode, op_macs(graph, op), compute, wbytes, len(js),
                                read, dec, stall, bool(js) and max(read, dec) > compute))
    total_read = sum(x.read_s for x in timings)
    total_dec = sum(x.decrypt_s for x in timings)
    serial = baseline + total_read + total_dec
    return Timeline(baseline, serial, t, total_dec, total_read,
                    sum(x.stall_s for x in timings), tuple(timings))


def stream_penalty_s(graph: Graph, op: Op, weight_bytes: int, params: CostParams) -> float:
    """Extra time if this op's weights (``weight_bytes``) were streamed, chunk-size
    independent: decryption (never hidden) plus the part of the read that compute and
    decryption cannot cover."""
    compute = params.cycles_s(op_cycles(graph, op, params))
    dec = params.decrypt_s(weight_bytes + 16) - params.cycles_s(params.aead_cycles_per_chunk)
    read = weight_bytes / params.flash_bytes_per_s
    return dec + max(0.0, read - compute - dec)


def io_bound_if_streamed(graph: Graph, op: Op, weight_bytes: int, params: CostParams) -> bool:
    """Delivering the weights (read or decrypt) would be slower than the compute."""
    compute = params.cycles_s(op_cycles(graph, op, params))
    dec = weight_bytes * params.aead_cycles_per_byte / params.clock_hz
    return max(weight_bytes / params.flash_bytes_per_s, dec) > compute


def macs_per_weight_byte(graph: Graph, op: Op, weight_bytes: int) -> float:
    return op_macs(graph, op) / weight_bytes if weight_bytes else math.inf
