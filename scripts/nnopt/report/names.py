"""Short layer names from a model's tensor names, for the report's table and picture."""

from __future__ import annotations

#: Characters of a layer name at most (longer ones end in ``~``).
NAME_MAX = 22
#: Scopes that name a fused activation or batch norm rather than the layer.
NOT_LAYERS = ("activation", "batch_normalization", "re_lu", "relu", "Relu", "bn")


def layer_name(tensor_name: str) -> str:
    """A short layer name from a TFLite tensor name, or "" when the model has none:
    ``model/activation/Relu;model/conv2d/BiasAdd;...`` -> ``conv2d`` (the first of the
    fused names that is not an activation or a batch norm, the scope below the model's),
    ``functional_1/max_pooling2d_1/MaxPool2d`` -> ``max_pooling2d_1``."""
    layers: list[str] = []
    for part in tensor_name.split(";"):
        bits = [b for b in part.split("/") if b]
        if not bits:
            continue
        layers.append(bits[1] if len(bits) >= 3 else bits[-1])
    if not layers:
        return ""
    chosen = next((x for x in layers if not x.startswith(NOT_LAYERS)), layers[0])
    if chosen.isdigit() or (chosen.startswith("t") and chosen[1:].isdigit()):
        return ""
    return chosen if len(chosen) <= NAME_MAX else chosen[:NAME_MAX - 1] + "~"

