"""The card verifier of Deville & Grimaud: its fixed point is the lab verifier's, Figure 1's codes are
the lattice, AND-encoded maps only clear bits, and the CFG policy drops only maps never used again."""
import dataclasses

import numpy as np
import pytest

from pysim.jvm import corpus, verify
from pysim.models import wiess02_deville as model


@pytest.fixture(scope="module")
def traced():
    try:
        return model._traced(model.Params(), True)
    except corpus.CorpusUnavailable as e:
        pytest.skip(str(e))


def test_the_card_verifier_reaches_the_lab_verifiers_fixed_point(traced):
    # against pysim.jvm.verify on the same class files
    n = 0
    for _, cf in model._class_files(tuple(model.Params().modules), model.Params().quick_every):
        for m in cf.methods:
            code = m.code()
            if code is None:
                continue
            meth = model._method(cf, m, "labels")
            if meth.code_bytes > model.Params().max_code_bytes:
                continue
            ours = model.verify_on_card(meth).frames
            lab = verify(m.code(), (cf.name, m.name, m.descriptor, m.access), model._hierarchy()).frames
            for off, frame in ours.items():
                assert [list(x) for x in lab[off]] == [list(x) for x in frame], f"{cf.name}.{m.name} at {off}"
                n += 1
    assert n > 100 and traced


def test_figure1_codes_are_the_lattice_and_a_dense_numbering_is_not():
    assert (model.figure1()["and_is_lub_pct"] == 100).all()
    dense = model.figure1(dataclasses.replace(model.Params(), encoding="dense"))
    assert dense["and_is_lub_pct"].min() < 50
    # hand check: bytearray AND shortarray is Object; Null AND intarray is intarray; Int AND Object is Top
    c = {t: (k << 6) | r for t, (k, r) in model.and_encoding(model.JAVACARD_KINDS, model.JAVACARD_REFS,
                                                              "Object").items()}
    assert c["Bytearray"] & c["Shortarray"] == c["Object"]
    assert c["Null"] & c["Intarray"] == c["Intarray"] and c["Int"] & c["Object"] == c["Top"]


def test_and_encoded_rewrites_only_clear_code_bits(traced):
    for _, trace in traced:
        last = {}
        for ev in trace.events:
            if ev[0] == "merge" and ev[2]:
                old = last.get(ev[1])
                if old is not None:
                    a = np.frombuffer(ev[3], dtype=np.uint8).copy()
                    b = np.frombuffer(old, dtype=np.uint8)
                    codes = np.ones(len(a), bool)
                    codes[3::3] = False  # the class bytes (offset 1 + 3i + 2)
                    assert not np.any(a[codes] & ~b[codes]), "a unification set a code bit"
                last[ev[1]] = ev[3]


def test_cfg_policy_drops_only_maps_that_are_never_used_again(traced):
    p = model.Params()
    drops = 0
    for meth, trace in traced:
        store = model.MapStore(meth, trace, p, "cfg", 1)
        store.replay()
        for at, label in store.dropped:
            assert all(ev[1] != label for ev in trace.events[at:]), f"{meth.name}: map {label} used after drop"
            drops += 1
    assert drops > 0


def test_all_in_ram_never_writes_and_write_through_writes_every_change(traced):
    p = model.Params()
    for meth, trace in traced[:80]:
        big = model.MapStore(meth, trace, p, "lru", len(meth.labels) + 1).replay()
        assert big["page_writes"] == 0 and big["read_bytes"] == 0
        through = model.MapStore(meth, trace, p, "none", 0).replay()
        changed = sum(1 for ev in trace.events if ev[0] == "merge" and ev[2])
        assert through["page_writes"] >= changed - sum(1 for ev in trace.events if ev[0] == "merge" and ev[2]
                                                       and set(ev[3]) == {255})


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(ValueError, match="encoding"):
        model.Params(encoding="gray")
    with pytest.raises(ValueError, match="ram_sizes"):
        model.Params(ram_sizes=(128, -1))


def test_a_sweep_of_some_policies_gives_their_rows_of_the_whole_sweep():
    import pandas as pd

    whole = model.cache(quick=True)
    some = model.cache(quick=True, policies=("cfg", "none"))
    pd.testing.assert_frame_equal(some, whole.loc[["cfg", "none"]], check_exact=True)
    with pytest.raises(ValueError, match="policies"):
        model.cache(quick=True, policies=("fifo",))
