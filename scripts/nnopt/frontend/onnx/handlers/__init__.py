"""One handler per ONNX op type: the IR ops it becomes.

Handlers read their inputs with :meth:`..importer.Importer.act` (an IR tensor in a
chosen axis order) and :meth:`..importer.Importer.const`, create outputs with
:meth:`..importer.Importer.out_tensor` and name them with
:meth:`..importer.Importer.bind`. Those handling int8 ops in QDQ graphs are listed
in :data:`QUANT_INPUTS` with the positions of their data inputs. Each module of this
package registers the op types of one family.
"""

from . import activation, conv, elementwise, fc, math, pool, qdq, recurrent, shape  # noqa: F401
from .registry import HANDLERS, QUANT_INPUTS

__all__ = ["HANDLERS", "QUANT_INPUTS"]
