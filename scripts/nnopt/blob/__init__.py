"""Model blobs: a planned model serialised for nnrt's run-time loader.

``nnopt optimize --emit blob`` writes ``<name>.nnmb``: tensors, the schedule with each
kernel's parameters in binary, the dynamic allocator's events and the weights, with a
versioned header and a CRC-32 (:mod:`.schema` defines the layout and generates the C
tables; :mod:`.writer` encodes the kernel calls the lowerings return and
writes and parses blobs). The C side is ``modules/nnrt/src/loader`` (``nnrt/loader.h``).
"""
