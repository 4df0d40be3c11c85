"""NFS operations by version: what must be stable before the reply, and LADDIS's mix."""
import pytest

from pysim.hw import CpuCostModel
from pysim.sw.nfs import LADDIS_MIX, mix_average, operations, stable_writes_per_op

CPU = CpuCostModel(1e8, fixed_s={"rpc": 100e-6, "decode_op": 20e-6, "vfs": 50e-6},
                   per_byte_s={"copy": 10e-9})


def test_the_laddis_mix_is_whole_and_every_operation_is_modelled():
    assert sum(LADDIS_MIX.values()) == 100
    for version in (2, 3, 4):
        assert set(LADDIS_MIX) <= set(operations(version))


def test_v2_writes_data_and_inode_before_replying_and_v3_leaves_them_for_commit():
    v2, v3 = operations(2), operations(3)
    assert v2["write"].stable_writes == 2 and v3["write"].stable_writes == 0 and "commit" not in v2
    assert v3["create"].stable_writes == v2["create"].stable_writes == 2  # the namespace stays synchronous
    # per LADDIS operation: 15% writes and 2% creates, 1% removes, 1% setattrs
    assert stable_writes_per_op(2) == pytest.approx((15 * 2 + 2 * 2 + 1 * 2 + 1 * 1) / 100)
    assert stable_writes_per_op(3) == pytest.approx((2 * 2 + 1 * 2 + 1 * 1) / 100)


def test_v4_compounds_cost_more_decoding_per_operation():
    cpu = {v: mix_average(LADDIS_MIX, lambda op, v=v: operations(v)[op].cpu.seconds(CPU)) for v in (2, 3, 4)}
    assert cpu[2] == pytest.approx(cpu[3]) and cpu[4] - cpu[3] == pytest.approx(2 * 20e-6)


def test_bad_versions_and_mixes_are_refused():
    with pytest.raises(ValueError, match="version"):
        operations(5)
    with pytest.raises(KeyError):
        mix_average({"rename": 1}, operations(2))
    with pytest.raises(ValueError, match="no operations"):
        mix_average({}, operations(2))
