"""Which models bench_firmware.py measures: the groups of ``--groups`` (the ANCHORS.md
anchors, the stateful models, the folders of the shared models), in order, and the
anchors' TFLM figures of ANCHORS.md."""

from __future__ import annotations

from pathlib import Path

from nnopt.paths import find_model

#: TFLM as Cortex-M7 release firmware under QEMU mps2-an500 as ANCHORS.md ("TFLM as
#: Cortex-M7 firmware") measured it elsewhere: (code bytes = ROM - .tflite, RAM = data +
#: bss, instructions per inference), reference kernels and CMSIS-NN kernels; written
#: into the JSON beside this run's own TFLM figures, for comparison.
ANCHORS: dict[str, dict[str, tuple[int, int, int]]] = {
    "person_detect": {"ref": (35_312, 82_424, 96_633_912),
                      "cmsis": (69_496, 82_444, 22_714_693)},
    "vww_96_int8": {"ref": (41_664, 100_788, 101_223_782),
                    "cmsis": (85_384, 100_840, 24_024_385)},
    "kws_ref_model": {"ref": (39_488, 22_900, 43_611_415),
                      "cmsis": (83_144, 22_952, 7_641_008)},
    "pretrainedResnet_quant": {"ref": (45_888, 54_468, 108_686_394),
                               "cmsis": (80_248, 55_128, 30_024_548)},
    "ad01_int8": {"ref": (18_276, 2_728, 1_948_661),
                  "cmsis": (29_924, 3_040, 582_506)},
}
ANCHOR_FILES = {
    "person_detect": "tflm/person_detect.tflite",
    "vww_96_int8": "mlperf_tiny/vww_96_int8.tflite",
    "kws_ref_model": "mlperf_tiny/kws_ref_model.tflite",
    "pretrainedResnet_quant": "mlperf_tiny/pretrainedResnet_quant.tflite",
    "ad01_int8": "mlperf_tiny/ad01_int8.tflite",
}

#: Stateful models (SVDF with int16 and int8 activation state, a float32 LSTM;
#: models/SOURCES.md).
STATEFUL_FILES = ("keyword_scrambled.tflite", "keyword_scrambled_8bit.tflite",
                  "trained_lstm.tflite", "trained_lstm_int8.tflite")


def model_groups(root: Path, groups: list[str]) -> list[tuple[str, Path]]:
    """(group, model file) of every model of ``groups``, in that order: the ANCHORS.md
    models, the stateful ones, or MODELS_DIR/<group>/'s .tflite and .onnx files
    (families, keras, realworld, onnx, tflm: an anchor is listed once, as an anchor)."""
    out: list[tuple[str, Path]] = []
    anchors = {Path(rel) for rel in ANCHOR_FILES.values()}
    for g in groups:
        if g == "anchors":
            out += [(g, root / rel if (root / rel).is_file() else find_model(rel) or root / rel)
                    for rel in ANCHOR_FILES.values()]
        elif g == "stateful":
            out += [(g, find_model(rel) or root / rel) for rel in STATEFUL_FILES]
        else:
            out += [(g, p) for p in sorted([*(root / g).glob("*.tflite"),
                                            *(root / g).glob("*.onnx")])
                    if Path(g, p.name) not in anchors]
    return out


GROUPS = ("anchors", "families", "keras", "realworld", "stateful", "onnx", "tflm")
