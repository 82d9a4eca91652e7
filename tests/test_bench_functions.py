"""benchmarks/fw_functions.py (issue 42: instructions per function): its reading of a
QEMU ``-d exec,nochain,in_asm`` log, on a log written here (no QEMU run)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import fw_functions  # noqa: E402

#: Two blocks of f (3 and 1 instructions: the second a rewound re-translation at the same
#: guest address, another host block), one of g (2), executed 2 + 1 + 3 times.
LOG = """----------------
IN: f
0x00000100:  6801       ldr      r1, [r0]
0x00000102:  6001       str      r1, [r0]
0x00000104:  4770       bx       lr

Trace 0: 0x7f0000000100 [00800408/00000100/00000110/ff020200] f
Trace 0: 0x7f0000000100 [00800408/00000100/00000110/ff020200] f
cpu_io_recompile: rewound execution of TB to 00000100
----------------
IN: f
0x00000100:  6801       ldr      r1, [r0]

Trace 0: 0x7f0000000300 [00800408/00000100/00000110/ff038201] f
----------------
IN: g
0x00000200:  3001       adds     r0, #1
0x00000202:  d1fd       bne.n    0x200

Trace 0: 0x7f0000000500 [00800408/00000200/00000110/ff020200] g
Trace 0: 0x7f0000000500 [00800408/00000200/00000110/ff020200] g
Trace 0: 0x7f0000000500 [00800408/00000200/00000110/ff020200] g
"""


def test_instructions_per_function_from_the_executions() -> None:
    counts = fw_functions.per_function(LOG.splitlines(keepends=True))
    assert counts == {"f": 2 * 3 + 1, "g": 3 * 2}


def test_the_script_refuses_a_missing_model(tmp_path: Path) -> None:
    assert fw_functions.main([str(tmp_path / "none.tflite")]) == 2
