"""The argument checks the softmax, activation and data-movement kernels export
(``nnrt_*_check()``, their Prepare; the model loader calls them): each accepts good
parameters, rejects a zero/negative extent or an out-of-range value with NNRT_ERR_ARG,
and agrees with the kernel it belongs to (tests/c/family_arg_checks.c)."""

from __future__ import annotations

from support.cbuild import CBuild, c_source, kernel_sources


def test_family_argument_checks(cbuild: CBuild) -> None:
    exe = cbuild.program("family_arg_checks", [c_source("family_arg_checks.c"),
                                               *kernel_sources("softmax", "activation",
                                                               "shape")])
    proc = cbuild.run(exe)
    assert proc.returncode == 0, f"{proc.returncode} checks failed\n{proc.stderr}"
