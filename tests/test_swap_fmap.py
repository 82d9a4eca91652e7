"""Feature maps out of core, the plan (issue 39, nnopt.swap.fmap): which feature maps go
to storage, bytes written and read per inference, and the slowdown, wear and energy
figures from the board's storage data."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from nnopt.boards import load_board
from nnopt.errors import PlanError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.planner import PlanOptions, plan_model
from nnopt.swap.fmap import SECONDS_PER_YEAR, plan_feature_maps, report_lines
from nnopt.testing.big_models import Layer, conv_chain

NUCLEO = load_board("nucleo_f767zi")


def _plan(shape: tuple[int, ...], layers: list[Layer], dtype: str = "int8"):  # type: ignore[no-untyped-def]
    m = conv_chain(shape, layers, dtype=dtype, seed=2, name="fm")
    return plan_model(load_model_bytes(m, name="fm"), PlanOptions(board=NUCLEO, order="file"),
                      source_bytes=m)


def test_fitting_model_has_no_traffic() -> None:
    pm = _plan((1, 32, 32, 8), [Layer(8), Layer(8)])
    fm = plan_feature_maps(pm.graph, pm.plan, NUCLEO)
    assert not fm.enabled and fm.written_bytes == fm.read_bytes == 0
    assert fm.slowdown == 1.0 and math.isinf(fm.life_years)
    assert "all in RAM" in report_lines(fm)[0]


def test_evicted_feature_map_is_written_once_and_read_back() -> None:
    """A skip connection held across layers that do not leave room: evicted (furthest
    next use), written once, read back once at the ADD."""
    layers = [Layer(48), Layer(48), Layer(48, skip_from=1), Layer(48, skip_from=0)]
    pm = _plan((1, 48, 48, 48), layers)
    ram = 2 * 110_592 + 8192  # two feature maps (the ADDs run in place): the outer skip goes out
    fm = plan_feature_maps(pm.graph, pm.plan, NUCLEO, ram_bytes=ram)
    assert fm.enabled
    evicted = [t for t in fm.tensors if t.reason == "evicted"]
    assert len(evicted) == 1  # layer 0's output, held for the outer skip
    t = evicted[0]
    assert (t.written, t.read, t.device) == (110_592, 110_592, "sd_card")
    assert fm.written_bytes == sum(x.written for x in fm.tensors)
    # the same model with the RAM of the board: no traffic (multi-region plan fits it)
    assert not plan_feature_maps(pm.graph, pm.plan, NUCLEO).enabled


def test_banded_layer_streams_inputs_and_output() -> None:
    pm = _plan((1, 128, 128, 16), [Layer(32)])  # 256 KB in, 512 KB out
    fm = plan_feature_maps(pm.graph, pm.plan, NUCLEO)
    assert fm.banded_ops and fm.written_bytes >= 512 * 1024
    # every input byte read at least once, plus the 3x3 halo (2 rows per band boundary)
    inp = next(t for t in fm.tensors if t.bytes == 128 * 128 * 16)
    assert inp.read > inp.bytes
    sd = NUCLEO.storage["sd_card"]
    # wear: written / card capacity erase cycles per block per inference (the card
    # levels wear), life = endurance / that
    assert fm.erase_cycles_per_inference == pytest.approx(fm.written_bytes / sd.size)
    assert fm.life_inferences == pytest.approx(sd.endurance_cycles / fm.erase_cycles_per_inference)
    assert fm.life_years == pytest.approx(fm.life_inferences / SECONDS_PER_YEAR)
    # energy: the datasheet figures per byte (the card has no separate erase energy)
    assert fm.energy_mj_per_inference * 1e6 == pytest.approx(
        fm.read_bytes * sd.read_energy_nj_per_byte + fm.written_bytes * sd.write_energy_nj_per_byte)
    assert fm.predicted_s > fm.compute_s and fm.slowdown > 1.0
    d = json.loads(json.dumps(fm.to_json()))
    assert d["written_bytes"] == fm.written_bytes and d["tensors"][0]["device"] == "sd_card"


def test_nor_wear_counts_erases_and_excludes_the_weight_blob() -> None:
    pm = _plan((1, 128, 128, 16), [Layer(32)])
    blob = 8 * 1024 * 1024
    fm = plan_feature_maps(pm.graph, pm.plan, NUCLEO, device="spi_nor", reserved_on_device=blob)
    nor = NUCLEO.storage["spi_nor"]
    assert fm.erase_cycles_per_inference == pytest.approx(fm.written_bytes / (nor.size - blob))
    sd = plan_feature_maps(pm.graph, pm.plan, NUCLEO)
    # NOR: erase time in the I/O and 100k cycles over 8 MB vs 3k over 8 GB
    assert fm.io_s > 0 and fm.life_inferences < sd.life_inferences
    fast = plan_feature_maps(pm.graph, pm.plan, NUCLEO, device="spi_nor",
                             reserved_on_device=blob, inferences_per_s=10.0)
    assert fast.life_years == pytest.approx(fm.life_years / 10)


def test_board_without_storage_is_a_clear_error() -> None:
    pm = _plan((1, 8, 8, 4), [Layer(4)])
    with pytest.raises(PlanError, match="names no storage") as e:
        plan_feature_maps(pm.graph, pm.plan, load_board("mps2_an386"))
    assert e.value.hint
    ro = replace(NUCLEO.storage["sd_card"], endurance_cycles=0)
    board = replace(NUCLEO, storage={**NUCLEO.storage, "sd_card": ro})
    with pytest.raises(PlanError, match="not writable"):
        plan_feature_maps(pm.graph, pm.plan, board)
