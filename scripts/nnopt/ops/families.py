"""The family map: where each operator family's four places are, by one name.

A family (``conv``, ``pool`` …) is the module of :mod:`nnopt.ops` holding its
definitions; the same name finds its lowering modules (:mod:`nnopt.lowering`), its C
kernels (``modules/nnrt/kernels/<dir>/``, one public function per file) and public
headers (``modules/nnrt/include/nnrt/kernels/<header>``), and its tests
(``tests/ops/test_<name>.py`` first, then any ``tests/ops/test_<name>_<aspect>.py``).
Paths are relative to the repository root; ``tests/test_ops_registry.py`` checks that
every one exists and that every definition, lowering module and kernel directory
belongs to exactly one family.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One operator family's places."""

    name: str  # the module of nnopt.ops (scripts/nnopt/ops/<name>.py)
    lowerings: tuple[str, ...]  # modules of nnopt.lowering holding its lowerings
    kernels: tuple[str, ...]  # directories under modules/nnrt/kernels/
    headers: tuple[str, ...]  # headers under modules/nnrt/include/nnrt/kernels/
    tests: tuple[str, ...]  # test files under tests/, ops/test_<name>.py first

    def paths(self) -> tuple[str, ...]:
        """Every place, as a path from the repository root."""
        return (f"scripts/nnopt/ops/{self.name}.py",
                *(f"scripts/nnopt/lowering/{m}.py" for m in self.lowerings),
                *(f"modules/nnrt/kernels/{k}" for k in self.kernels),
                *(f"modules/nnrt/include/nnrt/kernels/{h}" for h in self.headers),
                *(f"tests/{t}" for t in self.tests))


def _f(name: str, lowerings: tuple[str, ...], kernels: tuple[str, ...],
       headers: tuple[str, ...], tests: tuple[str, ...]) -> Family:
    return Family(name, lowerings, kernels, headers, tests)


FAMILIES: Mapping[str, Family] = {f.name: f for f in (
    _f("conv", ("conv", "conv_checks", "conv_geometry", "conv_variant", "conv_requant",
                "gemm_pairs", "transpose_conv", "specialize"), ("conv",), ("conv.h",),
       ("ops/test_conv.py", "ops/test_conv_16x8.py", "ops/test_conv_transpose.py",
        "ops/test_conv_fast.py", "ops/test_conv_specialize.py", "ops/test_conv_float.py")),
    _f("pool", ("pool",), ("pool",), ("pool.h",), ("ops/test_pool.py",)),
    _f("fc", ("fc",), ("fc",), ("fc.h", "fc_depth.h"), ("ops/test_fc.py", "ops/test_fc_pairs.py")),
    _f("elementwise", ("elementwise",), ("elementwise",), ("elementwise.h",),
       ("ops/test_elementwise.py", "ops/test_elementwise_squared_difference.py")),
    _f("activation", ("activation", "table_unary", "elu", "prelu"), ("activation",),
       ("activation.h",),
       ("ops/test_activation.py", "ops/test_activation_s16.py",
        "ops/test_activation_prelu_elu.py")),
    _f("math", ("math_f32", "rsqrt", "abs", "add_n"), ("math",), ("math.h",),
       ("ops/test_math.py", "ops/test_math_unary.py")),
    _f("quantize", ("quantize",), ("quantize",), ("quantize.h", "quant.h"),
       ("ops/test_quantize.py",)),
    _f("softmax", ("softmax",), ("softmax",), ("softmax.h",), ("ops/test_softmax.py",)),
    _f("shape", ("shape",), ("shape",), ("shape.h",), ("ops/test_shape.py",)),
    _f("resize", ("resize",), ("resize",), ("resize.h",),
       ("ops/test_resize.py", "ops/test_resize_bilinear.py")),
    _f("layout", ("layout",), (), (), ("ops/test_layout.py",)),
    _f("reduce", ("reduce", "reduce_all"), ("reduce",), ("reduce.h",),
       ("ops/test_reduce.py", "ops/test_reduce_all.py")),
    _f("compare", ("compare",), ("compare",), ("compare.h",), ("ops/test_compare.py",)),
    _f("normalize", ("normalize",), ("normalize",), ("normalize.h",),
       ("ops/test_normalize.py",)),
    _f("structure", ("structure",), (), (), ("ops/test_structure.py",)),
    _f("matmul", ("matmul",), ("matmul",), ("matmul.h",), ("ops/test_matmul.py",)),
    _f("sequence", ("sequence",), ("sequence",), ("sequence.h",), ("ops/test_sequence.py",)),
    _f("variable", ("variable",), (), (), ("ops/test_variable.py",)),
    _f("update_slice", ("update_slice",), ("update_slice",), ("update_slice.h",),
       ("ops/test_update_slice.py",)),
    _f("detection", ("detection",), ("detection",), ("detection.h",),
       ("ops/test_detection.py",)),
)}
"""Family name -> its places. Kernel directories shared by every family
(``internal/`` private bodies, ``cmsis/`` the CMSIS-NN glue, ``tiling/`` the patch
and band drivers, ``nnrt/`` the private ``nnrt/kernels/spec.h`` of generated code)
and the headers of those (``fixedpoint.h``, ``inplace.h``,
``tiling.h``) belong to none."""

SHARED_KERNEL_DIRS = ("internal", "cmsis", "tiling", "nnrt")
SHARED_HEADERS = ("fixedpoint.h", "inplace.h", "tiling.h")
