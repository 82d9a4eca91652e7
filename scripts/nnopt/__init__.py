"""nnopt: make neural networks fit microcontrollers.

The compiler pipeline (see docs/ARCHITECTURE.md):
``.tflite -> frontend -> Graph IR -> passes -> Plan -> codegen -> C -> ELF -> elfcheck``;
:mod:`nnopt.driver` runs it (load -> plan -> swap -> generate -> write) for the
commands, the west commands, the runner and the benchmarks.
Importable and testable with no west, Zephyr or cross toolchain present.
"""

__version__ = "0.1.0"
