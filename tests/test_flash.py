"""EEPROM and flash pages: programming clears bits, erasing sets them, the AND lattice decides when
an erase is needed, wear and time are counted, and endurance ends a unit."""
import numpy as np
import pytest

from pysim.hw.flash import NvPages, NvTiming, WornOut

T = NvTiming(erase_unit_bytes=64, program_s_per_byte=1e-4, erase_s=3e-3, program_setup_s=1e-5)


def test_writes_down_the_and_lattice_never_erase_and_cost_only_programming(seed):
    gen = np.random.default_rng(seed)
    nv = NvPages(T, 512)
    value = np.full(32, 0xFF, dtype=np.uint8)
    for _ in range(50):
        value &= gen.integers(0, 256, 32, dtype=np.uint8) | gen.integers(0, 256, 32, dtype=np.uint8)
        assert not nv.needs_erase(100, value.tobytes())
        assert nv.write(100, value.tobytes()) == pytest.approx(1e-5 + 32 * 1e-4)
    assert nv.erases_total == 0 and nv.read(100, 32) == value.tobytes()


def test_setting_a_bit_erases_every_unit_it_touches_and_keeps_the_rest_of_them(seed):
    gen = np.random.default_rng(seed)
    nv = NvPages(T, 256)
    before = gen.integers(0, 255, 256, dtype=np.uint8).tobytes()  # no byte is 0xff
    nv.write(0, before)
    new = b"\xff" * 10
    seconds = nv.write(60, new)  # bytes 60..69 span units 0 and 1
    assert nv.read(0, 256) == before[:60] + new + before[70:]
    assert list(nv.wear) == [1, 1, 0, 0]
    # two erases, and each unit's 64 bytes programmed again (the 10 written included)
    assert seconds == pytest.approx(1e-5 + 2 * 3e-3 + 128 * 1e-4)


def test_a_unit_past_its_endurance_refuses_to_erase_and_bad_ranges_are_refused():
    nv = NvPages(NvTiming(erase_unit_bytes=16, program_s_per_byte=0.0, erase_s=1e-3, endurance=3), 64)
    for _ in range(3):
        nv.write(0, b"\x00")
        nv.write(0, b"\x01")  # sets bit 0 again: an erase each time
    assert nv.wear[0] == 3
    with pytest.raises(WornOut):
        nv.write(0, b"\x02")
    with pytest.raises(ValueError, match="outside"):
        nv.write(60, b"\x00" * 8)
    with pytest.raises(ValueError, match="multiple"):
        NvPages(T, 100)
