"""Model importers: each turns a model file into the :mod:`nnopt.ir` Graph."""
