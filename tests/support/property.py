"""The property programs of the specialised kernels (tests/c/property_report.h): one
generated C program built for several targets, each run reporting ``cases N``,
``fails 0`` and the ``hash`` of every output byte, which must agree across builds."""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from nnopt.boards import load_board
from nnopt.firmware import BuildSpec, build, run
from nnopt.firmware import toolchain as tc
from support.cbuild import c_source, kernel_sources

HAVE_QEMU = shutil.which("qemu-system-arm") is not None and shutil.which(
    "arm-none-eabi-gcc") is not None
#: where the programs' headers are (test_rng.h, property_report.h ...)
C_TESTS = c_source("property_report.h").parent


def program(prelude: str, decls: Sequence[str], calls: Sequence[str]) -> str:
    """The C program: the harness, the cases' declarations, and a main() running the
    cases' calls and reporting."""
    main = ["int main(void)", "{", *calls, '    say("cases", (uint32_t)spec_cases);',
            '    say("fails", (uint32_t)fails);', '    say("hash", hash);',
            "    return fails == 0 ? 0 : 1;", "}", ""]
    return "\n".join([prelude, *decls, *main])


def run_builds(src: Path, builds: Mapping[str, tuple[tc.Target, str]],
               families: Sequence[str], boards: Mapping[str, str] | None = None
               ) -> dict[str, str]:
    """Build ``src`` with the kernel ``families`` for each ``name -> (target,
    optimisation)`` (the host with ASan/UBSan; QEMU targets skipped without QEMU; a
    build's board from ``boards``, else the target's default), run it, and return each
    build's output; a run must exit 0."""
    out: dict[str, str] = {}
    for name, (target, opt) in builds.items():
        if target != "host" and not HAVE_QEMU:
            continue
        board = (load_board((boards or {}).get(name) or tc.DEFAULT_BOARDS[target])
                 if target != "host" else None)
        exe = build(BuildSpec(target=target, sources=(src, *kernel_sources(*families)),
                              include_dirs=(C_TESTS,), board=board, opt=opt,
                              sanitize=target == "host"))
        res = run(exe, target, [], board=board, timeout_s=600)
        assert res.exit_code == 0, f"{name}: exit {res.exit_code}\n{res.stdout[-2000:]}" \
                                   f"{res.stderr[-2000:]}"
        out[name] = res.stdout
    return out


def assert_passed(text: str, cases: int) -> None:
    """One build's output: every case run, none failed."""
    assert re.search(rf"^cases {cases}$", text, re.MULTILINE), text[-2000:]
    assert re.search(r"^fails 0$", text, re.MULTILINE), text[-2000:]


def assert_same_hash(results: Mapping[str, str]) -> None:
    """Every build gave the same bytes."""
    hashes = {n: re.findall(r"^hash (\d+)$", t, re.MULTILINE) for n, t in results.items()}
    assert all(len(h) == 1 for h in hashes.values()), hashes
    assert len({h[0] for h in hashes.values()}) == 1, hashes
