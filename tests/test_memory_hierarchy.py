"""The memory hierarchy as board data (issue 39): RAM regions with bandwidth and
latency, storage devices with capacity, rates, erase blocks, endurance and energy."""

from __future__ import annotations

from typing import Any

import pytest

from nnopt.boards import STORAGE_KINDS, Board, load_board
from nnopt.errors import BoardError


def _minimal(**extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": "b", "cpu": "cortex-m7",
        "regions": {"flash": {"kind": "rom", "origin": 0, "size": 1 << 20},
                    "sram": {"kind": "ram", "origin": 0x20000000, "size": 1 << 16},
                    "dtcm": {"kind": "ram", "origin": 0x30000000, "size": 1 << 15}},
    }
    d.update(extra)
    return d


def test_nucleo_f767zi_hierarchy() -> None:
    b = load_board("nucleo_f767zi")
    # RAM: DTCM first (fastest), then SRAM; their sizes are the part's (RM0410)
    assert [r.name for r in b.activation_region_list] == ["dtcm", "sram"]
    assert sum(r.size for r in b.activation_region_list) == 384 * 1024 + 128 * 1024
    dtcm, sram = b.regions["dtcm"], b.regions["sram"]
    assert dtcm.bandwidth_bytes_per_s > sram.bandwidth_bytes_per_s > 0
    assert dtcm.latency_cycles < sram.latency_cycles
    assert dtcm.source and sram.source
    # storage: internal flash, SPI NOR, SD card on SPI (SwapNN's medium)
    assert set(b.storage) == {"internal_flash", "spi_nor", "sd_card"}
    flash, nor, sd = b.storage["internal_flash"], b.storage["spi_nor"], b.storage["sd_card"]
    assert flash.memory_mapped and flash.region == "flash"
    assert flash.size == b.regions["flash"].size == 2 * 1024 * 1024
    assert nor.size == 16 * 1024 * 1024 == int(b.external_flash["size"])
    assert nor.read_bytes_per_s == float(b.external_flash["bandwidth_bytes_per_s"])
    assert nor.erase_block == 4096 and nor.endurance_cycles == 100_000
    assert sd.kind == "sd_spi" and sd.wear_leveled and sd.program_unit == 512
    assert b.feature_map_storage == "sd_card"
    # a weight blob beyond the NOR goes to the SD card (the NOR first)
    assert b.weight_storage == ("spi_nor", "sd_card")
    for d in b.storage.values():
        assert d.kind in STORAGE_KINDS and d.source, d.name
        assert d.writable and d.erase_block > 0 and d.read_bytes_per_s > 0
    # the external devices carry energy figures (the internal ones are not published)
    assert nor.read_energy_nj_per_byte > 0 and nor.write_energy_nj_per_byte > 0
    assert sd.read_energy_nj_per_byte > 0


def test_boards_without_hierarchy_keep_defaults() -> None:
    b = load_board("mps2_an386")
    assert b.storage == {} and b.activation_regions == () and b.feature_map_storage == ""
    assert [r.name for r in b.activation_region_list] == [b.arena_region]
    assert all(r.bandwidth_bytes_per_s == 0.0 for r in b.regions.values())


@pytest.mark.parametrize("name", ["mps2_an385", "mps2_an500"])
def test_qemu_boards_write_feature_maps_to_the_flash_simulator(name: str) -> None:
    """mps2/an385 and mps2/an500 (QEMU) put feature maps on a partition of the flash
    simulator (samples/swapnn/fm_partition.overlay), writable, with the NOR figures it is
    modelled on and no RAM region besides the arena's."""
    b = load_board(name)
    d = b.storage[b.feature_map_storage]
    assert d.kind == "flash_simulator" and d.writable and d.source
    assert d.erase_block > 0 and d.program_unit > 0 and d.erase_s > 0
    assert d.size % d.erase_block == 0 and d.size <= int(b.external_flash["size"])
    assert [r.name for r in b.activation_region_list] == [b.arena_region]


@pytest.mark.parametrize("extra, words", [
    ({"activation_regions": ["flash", "sram"]}, "activation region 'flash'"),
    ({"activation_regions": ["dtcm"]}, "must include arena_region"),
    ({"feature_map_storage": "sd"}, "feature_map_storage 'sd'"),
    ({"weight_storage": ["sd"]}, "weight_storage 'sd' is not an external storage device"),
    ({"storage": {"x": {"kind": "tape", "size": 1, "read_bytes_per_s": 1}}}, "kind 'tape'"),
    ({"storage": {"x": {"kind": "sd_spi", "size": 1}}}, "malformed board data"),
    ({"storage": {"x": {"kind": "sd_spi", "size": 1, "read_bytes_per_s": 1,
                        "region": "nope"}}}, "names region 'nope'"),
])
def test_bad_hierarchy_is_a_clear_error(extra: dict[str, Any], words: str) -> None:
    with pytest.raises(BoardError, match=words):
        Board.from_data(_minimal(**extra), source="t.yaml")
