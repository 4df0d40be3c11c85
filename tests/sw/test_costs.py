"""Cost recipes: counts times unit costs, additive and scalable, with unknown operations refused."""
import pytest

from pysim.hw import CpuCostModel
from pysim.sw import Recipe

CPU = CpuCostModel(1e9, fixed_s={"trap": 1e-6, "copy": 2e-7}, per_byte_s={"copy": 1e-9, "checksum": 2e-9})


def test_a_recipe_prices_fixed_and_per_byte_parts():
    r = Recipe(ops={"trap": 2, "copy": 1}, nbytes={"copy": 4096, "checksum": 1000})
    parts = r.breakdown(CPU)
    assert parts["trap"] == pytest.approx(2e-6)
    assert parts["copy"] == pytest.approx(2e-7 + 4096e-9)
    assert parts["checksum"] == pytest.approx(2e-6)
    assert r.seconds(CPU) == pytest.approx(2e-6 + 2e-7 + 4096e-9 + 2e-6)


def test_recipes_add_and_scale_like_the_work_they_count():
    call = Recipe(ops={"trap": 1})
    copy = Recipe(ops={"copy": 1}, nbytes={"copy": 512})
    n = 7
    assert (n * (call + copy)).seconds(CPU) == pytest.approx(n * call.seconds(CPU) + n * copy.seconds(CPU))
    assert (call + copy).ops == {"trap": 1, "copy": 1}


def test_an_operation_the_cpu_does_not_price_is_named():
    with pytest.raises(KeyError, match="no fixed cost for 'fork'"):
        Recipe(ops={"fork": 1}).seconds(CPU)
    with pytest.raises(KeyError, match="no per-byte cost for 'trap'"):
        Recipe(nbytes={"trap": 10}).seconds(CPU)


def test_negative_counts_are_refused():
    with pytest.raises(ValueError, match=r"ops\['trap'\] must be >= 0"):
        Recipe(ops={"trap": -1})
    with pytest.raises(ValueError, match="scales by a count >= 0"):
        Recipe(ops={"trap": 1}) * -2
