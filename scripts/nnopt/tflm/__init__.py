"""nnopt for TensorFlow Lite Micro users: a .tflite that stock TFLM runs in less memory.

- :mod:`nnopt.tflm.offline`: the model as TFLM sees it (every non-constant tensor of
  every subgraph, TFLM's lifetimes), planned with nnopt's own passes in a TFLM-compatible
  mode (the order search of :mod:`nnopt.passes.schedule`, the offsets of
  :mod:`nnopt.passes.arena`; no fusion, no in-place writes, no views), and the model
  rewritten with its operators in that order and TFLM's ``OfflineMemoryAllocation``
  metadata holding the offsets.
- :mod:`nnopt.tflm.interpreter`: TFLM's arena and outputs, measured with the stock
  ``tflite-micro`` Python interpreter.
- :mod:`nnopt.tflm.emit`: the candidates measured side by side, the one TFLM runs
  bit-exact in the smallest arena written, never one worse than the original.
"""
