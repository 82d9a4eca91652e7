"""Test support shipped with the package: the oracle and the nnopt harness."""
