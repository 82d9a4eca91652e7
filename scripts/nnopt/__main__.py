"""``python -m nnopt``: the same command line as the ``nnopt`` script."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
