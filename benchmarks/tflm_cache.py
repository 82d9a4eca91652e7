"""A cache of TFLM firmware measurements, for bench_firmware.py.

TFLM's side of the comparison costs minutes per model (a probe build, the arena search,
the measured run) and changes only when what determines it changes; nnopt's side changes
with every kernel. :class:`ResultCache` keeps one TFLM variant's figures of one model
(instructions, ROM, RAM, arena, code, stack, the bit-exact verdict and its reason, the
outputs' digests) under a key (:func:`measurement_key`) over everything they depend on:

- the model file's bytes, the inputs fed (every invocation) and the tflite-micro Python
  interpreter's outputs for them (the oracle of the bit-exact verdict);
- the core the firmware is built for and runs on (``m7``, ``m4``, ``rv32`` ...: the
  same model measured on two cores is two entries), the kernel variant and TFLM's
  Makefile variables (:func:`tflm_firmware.make_args`);
- the TFLM, CMSIS-NN and CMSIS_6 Core source trees, by content (:func:`tree_digest`:
  the Zephyr workspace's modules are snapshots without ``.git``);
- the harness: ``tflm_harness.cc.in``, ``tflm_main.c``, ``tflm_firmware.py``, nnrt's
  bare-metal port (sources and ``nnrt/port.h``), the board's linker script, the target's
  flags and defines (:func:`harness_identity`);
- the tools: the C and C++ compilers and QEMU of the core's ISA, by path and
  ``--version`` (:func:`tool_identity`, :data:`ISA_TOOLS`);
- :data:`FORMAT`, bumped when the measuring procedure or an entry's meaning changes.

nnopt's own kernels and generated code are not part of the key: the TFLM firmware does
not link them. Entries are JSON files under ``<cache>/tflm/results/`` holding the key's
parts (to see why two runs differ) and the UTC time of the measurement.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nnopt.firmware.toolchain import Target

FORMAT = 2  # 2: the core is part of the key
MODES = ("use", "refresh", "off")  # read and write / write only / neither
TOOLS = ("arm-none-eabi-gcc", "arm-none-eabi-g++", "qemu-system-arm")
#: The tools of a firmware, by the ISA of its core (tflm_targets.Variant.isa).
ISA_TOOLS = {"arm": TOOLS,
             "riscv": ("riscv64-unknown-elf-gcc", "riscv64-unknown-elf-g++",
                       "qemu-system-riscv32")}
HERE = Path(__file__).resolve().parent
HARNESS_FILES = ("tflm_harness.cc.in", "tflm_main.c", "tflm_firmware.py")


@dataclass(frozen=True)
class Measurement:
    """One TFLM variant's figures for one model (bench_firmware's ``tflm_<v>_*``)."""

    instructions: int | None
    rom_bytes: int | None
    ram_bytes: int | None
    arena_bytes: int | None
    code_bytes: int | None
    stack_bytes: int | None
    bit_exact: bool | None
    error: str | None
    measured_at: str  # UTC, "YYYY-MM-DD HH:MM UTC"
    # SHA-256 of each output (every invocation back to back), to compare with another
    # firmware's outputs on the same core (None: an entry from before they were kept)
    outputs_sha256: list[str] | None = None


MEASURED_FIELDS = tuple(f.name for f in fields(Measurement) if f.name != "measured_at")


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@functools.cache
def tree_digest(root: Path, skip: tuple[str, ...] = (".git",)) -> str:
    """SHA-256 over every file of ``root`` (relative path and content, sorted), folders
    named in ``skip`` left out; modification times do not count."""
    h = hashlib.sha256()
    paths: list[tuple[str, Path]] = []
    for base, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for f in files:
            p = Path(base) / f
            paths.append((p.relative_to(root).as_posix(), p))
    for rel, p in sorted(paths):
        h.update(rel.encode() + b"\0")
        if p.is_file():
            h.update(sha256_hex(p.read_bytes()).encode())
        h.update(b"\n")
    return h.hexdigest()


def source_identity(tflm: Path, cmsis_nn: Path, cmsis: Path) -> dict[str, str]:
    """Digests of the three source trees TFLM's library is built from (CMSIS_6: its
    Core headers, all TFLM uses of it)."""
    return {"tflm": tree_digest(tflm), "cmsis_nn": tree_digest(cmsis_nn),
            "cmsis_core": tree_digest(cmsis / "CMSIS" / "Core")}


@functools.cache
def tool_identity(tools: tuple[str, ...] = TOOLS) -> dict[str, str]:
    """Each tool's path and the first line of its ``--version`` ("missing" if absent)."""
    out = {}
    for t in tools:
        path = shutil.which(t)
        if path is None:
            out[t] = "missing"
            continue
        proc = subprocess.run([path, "--version"], capture_output=True, text=True,
                              check=False)
        first = (proc.stdout.strip().splitlines() or [""])[0]
        out[t] = f"{os.path.realpath(path)}: {first}"
    return out


def harness_identity(board_name: str, target: Target = "qemu-m7") -> dict[str, Any]:
    """What the firmware around TFLM's library is made of, for ``board_name`` and
    nnopt's firmware ``target``: the harness files, nnrt's bare-metal port, the linker
    script, flags and defines."""
    from nnopt.boards import load_board
    from nnopt.firmware.linker import linker_script
    from nnopt.firmware.toolchain import base_defines, port_sources, target_flags
    from nnopt.paths import nnrt_dir

    board = load_board(board_name)
    files = [HERE / f for f in HARNESS_FILES]
    port = nnrt_dir() / "port" / "baremetal"
    files += [*port_sources(target, board), *sorted(port.glob("*.h")),
              nnrt_dir() / "include" / "nnrt" / "port.h"]
    return {
        "files": {p.name: sha256_hex(p.read_bytes()) for p in files},
        "linker_script": sha256_hex(linker_script(board).encode()),
        "flags": target_flags(target, board, False),
        "defines": base_defines(target, board),
    }


def measurement_key(*, variant: str, make_args: Sequence[str], model: bytes,
                    inputs: Sequence[bytes], invocations: int, expected: Sequence[bytes],
                    sources: dict[str, str], harness: dict[str, Any],
                    tools: dict[str, str], core: str = "m7") -> tuple[str, dict[str, Any]]:
    """The cache key of one measurement on ``core`` and the parts it hashes."""
    # the toolchain's own absolute path is in make_args (TARGET_TOOLCHAIN_ROOT): keep it
    parts: dict[str, Any] = {
        "format": FORMAT,
        "core": core,
        "variant": variant,
        "make_args": list(make_args),
        "model": sha256_hex(model),
        "inputs": [sha256_hex(b) for b in inputs],
        "invocations": invocations,
        "expected": [sha256_hex(b) for b in expected],
        "sources": sources,
        "harness": harness,
        "tools": tools,
    }
    return sha256_hex(json.dumps(parts, sort_keys=True).encode()), parts


class ResultCache:
    """TFLM measurements on disk; ``mode``: 'use' (read, and write what was measured),
    'refresh' (measure again and overwrite), 'off' (neither)."""

    def __init__(self, root: Path, mode: str = "use") -> None:
        if mode not in MODES:
            raise ValueError(f"unknown TFLM cache mode {mode!r} (one of {', '.join(MODES)})")
        self.root = root
        self.mode = mode

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Measurement | None:
        """The stored measurement (None: not stored, unreadable, or mode not 'use')."""
        if self.mode != "use":
            return None
        try:
            doc = json.loads(self._path(key).read_text())
            return Measurement(**doc["measurement"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, parts: dict[str, Any], m: Measurement) -> None:
        if self.mode == "off":
            return
        dest = self._path(key)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"key": key, "parts": parts,
                                   "measurement": asdict(m)}, indent=1) + "\n")
        os.replace(tmp, dest)
