"""C code generation from a planned model (one emitter module: :mod:`.c_model`)."""
