"""TFLite_Detection_PostProcess (the SSD post-processing custom op TFLM ships) against
TFLite Micro, in one multi-op model (one build, one oracle run): fast and regular NMS,
odd anchor counts, with and without a background class, tied scores (across anchors and
within one anchor's classes, below and above the 20 elements where TFLM's merge sort
stops being an insertion sort), boxes overlapping exactly at the IoU threshold, extra
box-encoding columns, fewer candidates than max_detections, none at all; and an
SSD-like head from a graph input (int8 convolutions -> RESHAPE -> DEQUANTIZE ->
LOGISTIC -> the post-process, and its float32 twin with regular NMS).

The selected boxes, classes, scores and num_detections are compared exactly (host, under
AddressSanitizer/UBSan).
TFLM's fast NMS leaves the outputs past num_detections as they were; nnopt zeroes them,
and only the first num_detections are compared there. The refusals (int8 inputs, which
TFLM's kernel fails on; more than one class per detection with fast NMS; option values
TFLM rejects) name the op."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from flatbuffers import flexbuffers  # type: ignore[import-untyped]

from nnopt.boards import load_board
from nnopt.errors import ModelError, NnoptError, UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ConvOptions, DetectionPostProcessOptions
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt, run_tflm
from support.markers import slow_on_qemu
from support.tflite_builder import ModelBuilder, random_int8

CODE = "TFLite_Detection_PostProcess"


def options(**kw: Any) -> bytes:
    """The flexbuffer map of the op's options, as the TFLite converter writes it."""
    fbb = flexbuffers.Builder()
    with fbb.Map():
        for key, v in kw.items():
            if isinstance(v, bool):
                fbb.Bool(key, v)
            elif isinstance(v, int):
                fbb.Int(key, v)
            else:
                fbb.Float(key, v)
    return bytes(fbb.Finish())


def default_options(**kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"max_detections": 5, "max_classes_per_detection": 1,
                         "detections_per_class": 3, "use_regular_nms": False,
                         "nms_score_threshold": 0.3, "nms_iou_threshold": 0.5,
                         "num_classes": 3, "y_scale": 10.0, "x_scale": 10.0,
                         "h_scale": 5.0, "w_scale": 5.0}
    d.update(kw)
    return d


@dataclass(frozen=True)
class Case:
    outputs: tuple[int, int, int, int]  # boxes, classes, scores, num_detections
    regular: bool


def _postprocess(b: ModelBuilder, boxes: int, scores: int, anchors: int,
                 opts: dict[str, Any]) -> Case:
    m = opts["max_detections"]
    outs = (b.tensor((1, m, 4), "float32"), b.tensor((1, m), "float32"),
            b.tensor((1, m), "float32"), b.tensor((1,), "float32"))
    b.custom_op(CODE, [boxes, scores, anchors], list(outs), options(**opts))
    return Case(outs, bool(opts["use_regular_nms"]))


def _anchors(rng: np.random.Generator, n: int) -> np.ndarray:
    yx = rng.uniform(0.1, 0.9, (n, 2))
    hw = rng.uniform(0.1, 0.5, (n, 2))
    return np.concatenate([yx, hw], axis=1).astype(np.float32)


def _direct(b: ModelBuilder, rng: np.random.Generator, n: int, width: int,
            scores: np.ndarray, opts: dict[str, Any], stride: int = 4) -> Case:
    enc = (rng.standard_normal((1, n, stride)) * 2).astype(np.float32)
    box = b.tensor((1, n, stride), "float32", data=enc)
    sc = b.tensor((1, n, width), "float32", data=scores.astype(np.float32))
    anc = b.const(_anchors(rng, n))
    return _postprocess(b, box, sc, anc, opts)


def _threshold_case(b: ModelBuilder, regular: bool) -> Case:
    """Anchors decoded exactly (zero encodings: the box is the anchor): B and C overlap
    A with an IoU of exactly 0.5 (kept at threshold 0.5: TFLM suppresses above it), D
    overlaps A by 0.75 (suppressed), E overlaps nothing."""
    anchors = np.asarray([[0.5, 0.5, 1.0, 1.0],      # A [0, 0, 1, 1]
                          [0.5, 0.25, 1.0, 0.5],     # B [0, 0, 1, 0.5]: IoU(A) 0.5
                          [0.5, 0.75, 1.0, 0.5],     # C [0, 0.5, 1, 1]: IoU(A) 0.5
                          [0.5, 0.5, 1.0, 0.75],     # D IoU(A) 0.75
                          [3.0, 3.0, 0.5, 0.5]], np.float32)  # E, apart
    scores = np.asarray([[0.0, 0.9, 0.1], [0.0, 0.8, 0.8], [0.0, 0.2, 0.7],
                         [0.0, 0.85, 0.3], [0.0, 0.4, 0.4]], np.float32)
    box = b.tensor((1, 5, 4), "float32", data=np.zeros((1, 5, 4), np.float32))
    sc = b.tensor((1, 5, 3), "float32", data=scores.reshape(1, 5, 3))
    return _postprocess(b, box, sc, b.const(anchors),
                        default_options(num_classes=2, max_detections=6,
                                        use_regular_nms=regular, nms_score_threshold=0.1,
                                        detections_per_class=4))


def _head(b: ModelBuilder, rng: np.random.Generator, x: int) -> tuple[Case, Case]:
    """SSD-like heads over x [1, 6, 5, 3] int8: 2 anchors per cell (60), 3 classes plus
    background; int8 convolutions dequantised (fast NMS), and the float32 twin (regular
    NMS) on the dequantised input."""
    h, w, a, c = 6, 5, 2, 3
    n = h * w * a
    grid = [[(r + 0.5) / h, (q + 0.5) / w, 0.25 * (1 + k), 0.2 * (1 + k)]
            for r in range(h) for q in range(w) for k in range(a)]
    anchors = b.const(np.asarray(grid, np.float32))
    conv = ConvOptions("SAME", 1, 1)

    def int8_conv(oc: int, scale: float, zp: int) -> int:
        wt = b.const(random_int8(rng, (oc, 3, 3, 3), -127, 127), scale=[0.02] * oc, axis=0)
        bias = b.const(rng.integers(-500, 500, oc).astype(np.int32), scale=[0.001] * oc)
        y = b.tensor((1, h, w, oc), "int8", scale=scale, zero_point=zp)
        b.op("CONV_2D", [x, wt, bias], [y], conv)
        return y

    def to_float(t: int, last: int, dtype: str, q: dict[str, Any]) -> int:
        r = b.tensor((1, n, last), dtype, **q)
        b.op("RESHAPE", [t, b.const(np.asarray([1, n, last], np.int32))], [r])
        if dtype == "float32":
            return r
        f = b.tensor((1, n, last), "float32")
        b.op("DEQUANTIZE", [r], [f])
        return f

    boxes = to_float(int8_conv(a * 4, 0.04, 0), 4, "int8", {"scale": 0.04, "zero_point": 0})
    logits = to_float(int8_conv(a * (c + 1), 0.1, 5), c + 1, "int8",
                      {"scale": 0.1, "zero_point": 5})
    scores = b.tensor((1, n, c + 1), "float32")
    b.op("LOGISTIC", [logits], [scores])
    fast = _postprocess(b, boxes, scores, anchors,
                        default_options(max_detections=10, nms_score_threshold=0.55,
                                        nms_iou_threshold=0.45))
    xf = b.tensor((1, h, w, 3), "float32")
    b.op("DEQUANTIZE", [x], [xf])

    def float_conv(oc: int) -> int:
        wt = b.const((rng.standard_normal((oc, 3, 3, 3)) * 0.3).astype(np.float32))
        bias = b.const((rng.standard_normal(oc) * 0.1).astype(np.float32))
        y = b.tensor((1, h, w, oc), "float32")
        b.op("CONV_2D", [xf, wt, bias], [y], conv)
        return y

    fboxes = to_float(float_conv(a * 4), 4, "float32", {})
    flogits = to_float(float_conv(a * (c + 1)), c + 1, "float32", {})
    fscores = b.tensor((1, n, c + 1), "float32")
    b.op("LOGISTIC", [flogits], [fscores])
    regular = _postprocess(b, fboxes, fscores, anchors,
                           default_options(max_detections=8, use_regular_nms=True,
                                           detections_per_class=4, nms_score_threshold=0.5,
                                           nms_iou_threshold=0.4))
    return fast, regular


def _build() -> tuple[bytes, dict[str, Case]]:
    b = ModelBuilder("detection post-process cases")
    rng = np.random.default_rng(1414)
    cases: dict[str, Case] = {}
    for regular in (False, True):
        tag = "regular" if regular else "fast"
        r = {"use_regular_nms": regular}
        cases[f"{tag}-n7-bg"] = _direct(b, rng, 7, 4, rng.uniform(0, 1, (1, 7, 4)),
                                        default_options(**r))
        cases[f"{tag}-n9-nobg"] = _direct(
            b, rng, 9, 4, rng.uniform(0, 1, (1, 9, 4)),
            default_options(num_classes=4, max_detections=4, **r))
        # few distinct scores: ties across anchors and within an anchor's classes
        ties = rng.choice(np.asarray([0.2, 0.5, 0.7, 0.9]), (1, 11, 4))
        cases[f"{tag}-n11-ties"] = _direct(b, rng, 11, 4, ties,
                                           default_options(max_detections=7, **r))
        ties45 = rng.choice(np.asarray([0.35, 0.6, 0.8]), (1, 45, 3))
        cases[f"{tag}-n45-ties"] = _direct(
            b, rng, 45, 3, ties45,
            default_options(num_classes=2, max_detections=9, nms_iou_threshold=0.3,
                            detections_per_class=6, **r))
        cases[f"{tag}-stride6"] = _direct(b, rng, 5, 2, rng.uniform(0, 1, (1, 5, 2)),
                                          default_options(num_classes=1, **r), stride=6)
        cases[f"{tag}-few"] = _direct(
            b, rng, 13, 3, rng.uniform(0, 1, (1, 13, 3)),
            default_options(num_classes=2, max_detections=9, nms_score_threshold=0.85,
                            **r))
        cases[f"{tag}-none"] = _direct(
            b, rng, 3, 3, rng.uniform(0, 1, (1, 3, 3)),
            default_options(num_classes=2, nms_score_threshold=1.5, **r))
        cases[f"{tag}-iou-at-threshold"] = _threshold_case(b, regular)
        cases[f"{tag}-max-classes-4"] = _direct(  # 4 > num_classes 1: one per detection
            b, rng, 6, 2, rng.uniform(0, 1, (1, 6, 2)),
            default_options(num_classes=1, max_classes_per_detection=4, **r))
    x = b.tensor((1, 6, 5, 3), "int8", name="image", scale=0.05, zero_point=-3)
    cases["head-int8-fast"], cases["head-float32-regular"] = _head(b, rng, x)
    # the graph's outputs: the heads' (every other tensor is traced)
    outs = [*cases["head-int8-fast"].outputs, *cases["head-float32-regular"].outputs]
    return b.build([x], outs), cases


MODEL, CASES = _build()
INPUTS = [np.random.default_rng(7).integers(-128, 128, (1, 6, 5, 3)).astype(np.int8)]
OUT_OF = {f"{cid}-{k}": t for cid, c in CASES.items() for k, t in enumerate(c.outputs)}


def compare(case: Case, ref: dict[int, np.ndarray], got: dict[int, np.ndarray],
            rtol: float = 0.0) -> None:
    """The case's outputs: num_detections and the selected classes exact, boxes and
    scores within rtol (0: identical); past num_detections nnopt's outputs are zero, and
    TFLM's too with regular NMS (its fast NMS leaves them unwritten)."""
    boxes, classes, scores, num = case.outputs
    assert got[num].shape == ref[num].shape == (1,)
    np.testing.assert_array_equal(got[num], ref[num])
    n = int(ref[num][0])
    assert float(n) == float(ref[num][0])
    np.testing.assert_array_equal(got[classes][0, :n], ref[classes][0, :n])
    for t in (boxes, scores):
        assert got[t].shape == ref[t].shape and got[t].dtype == np.float32
        np.testing.assert_allclose(got[t][0, :n], ref[t][0, :n], rtol=rtol,
                                   atol=1e-6 if rtol else 0.0)
    for t in (boxes, classes, scores):
        assert not got[t][0, n:].any()
        if case.regular:
            assert not ref[t][0, n:].any()


@pytest.fixture(scope="module")
def results() -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    _, ref = run_tflm(MODEL, INPUTS)
    _, got = run_nnopt(MODEL, INPUTS, sanitize=True, options=PlanOptions(order="file"))
    return ref, got


@pytest.mark.parametrize("cid", sorted(CASES))
def test_bit_exact(results: tuple[dict[int, np.ndarray], dict[int, np.ndarray]],
                   cid: str) -> None:
    compare(CASES[cid], *results)


def test_cases_select_what_they_are_meant_to(
        results: tuple[dict[int, np.ndarray], dict[int, np.ndarray]]) -> None:
    """The cases exercise what they name (on TFLM's outputs): detections below
    max_detections, none at all, the exact-IoU boxes kept and the 0.75 one
    suppressed, and the heads detect something."""
    ref, _ = results

    def num(cid: str) -> int:
        return int(ref[CASES[cid].outputs[3]][0])

    assert num("fast-none") == num("regular-none") == 0
    assert 0 < num("fast-few") < 9 and 0 < num("regular-few") < 9
    assert num("head-int8-fast") > 0 and num("head-float32-regular") > 0
    # fast NMS: A (0.9), D (0.85) is suppressed by A, B (0.8) and C (0.7) stay
    # (IoU exactly 0.5), E (0.4)
    boxes = ref[CASES["fast-iou-at-threshold"].outputs[0]][0, :num("fast-iou-at-threshold")]
    assert num("fast-iou-at-threshold") == 4
    np.testing.assert_array_equal(boxes[:3], [[0, 0, 1, 1], [0, 0, 1, 0.5], [0, 0.5, 1, 1]])


def test_options_are_read_from_the_flexbuffer() -> None:
    graph = load_model_bytes(MODEL)
    op = next(o for o in graph.ops if o.opcode == CODE)
    assert op.options == DetectionPostProcessOptions(
        max_detections=5, max_classes_per_detection=1, detections_per_class=3,
        use_regular_nms=False, nms_score_threshold=float(np.float32(0.3)),
        nms_iou_threshold=0.5, num_classes=3, y_scale=10.0, x_scale=10.0, h_scale=5.0,
        w_scale=5.0)


def test_convert_writes_the_op_back_with_its_options() -> None:
    """nnopt convert (IR -> .tflite) writes the custom op and its flexbuffer options: the
    file reads back to the same graph options and TFLM computes the same outputs."""
    from nnopt.convert import graph_to_tflite

    graph = load_model_bytes(MODEL)
    again = graph_to_tflite(graph)
    ops = [o.options for o in load_model_bytes(again).ops if o.opcode == CODE]
    assert ops == [o.options for o in graph.ops if o.opcode == CODE] and len(ops) == 20
    ref, _ = run_tflm(MODEL, INPUTS)
    got, _ = run_tflm(again, INPUTS)
    for r, g in zip(ref, got, strict=True):
        np.testing.assert_array_equal(g, r)


def _single(opts: dict[str, Any], dtype: str = "float32", n: int = 4,
            raw: bytes | None = None) -> bytes:
    b = ModelBuilder()
    q: dict[str, Any] = {"scale": 0.1, "zero_point": 0} if dtype != "float32" else {}
    box = b.tensor((1, n, 4), dtype, **q)
    sc = b.tensor((1, n, opts["num_classes"] + 1), dtype, **q)
    anc = b.const(np.full((n, 4), 0.5, np.float32))
    m = opts["max_detections"]
    outs = [b.tensor((1, m, 4), "float32"), b.tensor((1, m), "float32"),
            b.tensor((1, m), "float32"), b.tensor((1,), "float32")]
    b.custom_op(CODE, [box, sc, anc], outs, options(**opts) if raw is None else raw)
    return b.build([box, sc], outs)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_quantised_inputs_are_refused_as_tflm_fails_on_them(dtype: str) -> None:
    with pytest.raises(UnsupportedError, match=rf"op 0 \({CODE}\).*not float32.*dequantize"):
        check_graph(load_model_bytes(_single(default_options(), dtype)))


@pytest.mark.parametrize(("opts", "what"), [
    (default_options(max_classes_per_detection=2), r"fast NMS with 2 classes per detection"),
    (default_options(nms_iou_threshold=0.0), r"nms_iou_threshold is 0.0"),
    (default_options(nms_iou_threshold=1.5), r"nms_iou_threshold is 1.5"),
    (default_options(use_regular_nms=True, detections_per_class=0),
     r"detections_per_class is 0"),
    (default_options(max_classes_per_detection=0), r"max_classes_per_detection is 0"),
    (default_options(num_classes=0), r"num_classes is 0"),
])
def test_options_tflm_rejects_are_refused_by_name(opts: dict[str, Any], what: str) -> None:
    with pytest.raises(UnsupportedError, match=rf"op 0 \({CODE}\): {what}"):
        check_graph(load_model_bytes(_single(opts)))


def test_outputs_of_another_size_are_refused() -> None:
    b = ModelBuilder()
    box = b.tensor((1, 4, 4), "float32")
    sc = b.tensor((1, 4, 4), "float32")
    anc = b.const(np.full((4, 4), 0.5, np.float32))
    outs = [b.tensor((1, 3, 4), "float32"), b.tensor((1, 5), "float32"),
            b.tensor((1, 5), "float32"), b.tensor((1,), "float32")]
    b.custom_op(CODE, [box, sc, anc], outs, options(**default_options()))
    with pytest.raises(UnsupportedError, match=r"does not hold 20 values"):
        check_graph(load_model_bytes(b.build([box, sc], outs)))


def test_corrupt_options_are_a_model_error() -> None:
    with pytest.raises(ModelError, match=rf"{CODE}: its custom options"):
        load_model_bytes(_single(default_options(), raw=b"\x01\x02\x03"))


def test_an_unknown_custom_op_is_refused_by_its_code() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 4), "float32")
    y = b.tensor((1, 4), "float32")
    b.custom_op("MyCustomThing", [x], [y])
    with pytest.raises(UnsupportedError, match=r"CUSTOM\(MyCustomThing\) \(op 0\)"):
        load_model_bytes(b.build([x], [y]))


def test_invalid_boxes_fail_the_run_as_in_tflm() -> None:
    """A box decoded with ymin >= ymax (exp underflows to 0) fails TFLM's invocation
    (ValidateBoxes); nnopt's kernel returns an error the run reports."""
    opts = default_options(max_detections=2)
    model = _single(opts)
    boxes = np.zeros((1, 4, 4), np.float32)
    boxes[0, 2, 2] = -5000.0  # h: exp(-1000) = 0
    inputs = [boxes, np.full((1, 4, 4), 0.6, np.float32)]
    with pytest.raises(RuntimeError):
        run_tflm(model, inputs)
    with pytest.raises(NnoptError):
        run_nnopt(model, inputs)


@slow_on_qemu
def test_detection_postprocess_on_cortex_m7() -> None:
    """Every case (one firmware build): num_detections and the selected classes exact,
    boxes and scores within 1e-5 relative (the decoding's exp is newlib's double exp on
    the target, glibc's in TFLM's host build)."""
    _, ref = run_tflm(MODEL, INPUTS)
    _, got = run_nnopt(MODEL, INPUTS, target="qemu-m7",
                       board=load_board("nucleo_f767zi"), options=PlanOptions(order="file"))
    for cid, case in CASES.items():
        try:
            compare(case, ref, got, rtol=1e-5)
        except AssertionError as err:
            raise AssertionError(f"{cid}: {err}") from err
