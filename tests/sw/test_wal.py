"""The WAL buffer manager: log volumes of the three policies, the memory each leaves for data,
write-ahead before a steal, no steal under setrange."""
import pytest

from pysim.sw.wal import BufferManager

PAGE, HDR = 8192, 32


def _transaction(bm, pages, nbytes=8):
    bm.begin()
    for p in pages:
        bm.write(p, 100, nbytes)
    bm.commit()


def test_page_logging_writes_twice_the_page_and_diffing_only_what_changed():
    page, diff, setrange = (BufferManager(1000, PAGE, p) for p in ("page", "diff", "setrange"))
    for bm in (page, diff, setrange):
        _transaction(bm, range(10), nbytes=8)
    assert page.counts.log_bytes == 10 * 2 * (PAGE + HDR)
    assert diff.counts.log_bytes == setrange.counts.log_bytes == 10 * (8 + HDR)
    assert diff.counts.compare_bytes == 10 * 2 * PAGE and diff.counts.write_faults == 10
    assert setrange.counts.write_faults == 0 and all(bm.counts.log_forces == 1 for bm in (page, diff, setrange))


def test_overlapping_ranges_are_logged_once():
    bm = BufferManager(100, PAGE, "setrange")
    bm.begin()
    bm.write(1, 0, 100)
    bm.write(1, 50, 100)
    bm.write(1, 1000, 10)
    bm.commit()
    assert bm.counts.redo_bytes == (150 + HDR) + (10 + HDR)


@pytest.mark.parametrize("k", [40, 49, 51, 60])
def test_shadows_halve_the_data_a_diffing_transaction_can_touch_without_paging(k):
    capacity = 100
    diff, page = BufferManager(capacity, PAGE, "diff"), BufferManager(capacity, PAGE, "page")
    for bm in (diff, page):
        _transaction(bm, range(k))
    assert (diff.counts.steals > 0) == (2 * k > capacity)
    assert page.counts.steals == 0  # whole pages fit until k exceeds the capacity itself


def test_a_stolen_page_reaches_the_disk_only_after_its_undo_is_forced():
    bm = BufferManager(10, PAGE, "page")
    _transaction(bm, range(15))
    assert bm.counts.steals == 5 and bm.counts.page_writes == 5
    assert bm.counts.log_forces >= 2  # one before the first steal, one at commit


def test_setrange_never_steals_and_says_when_a_transaction_outgrows_memory():
    bm = BufferManager(10, PAGE, "setrange")
    with pytest.raises(MemoryError, match="too large for memory"):
        _transaction(bm, range(11))


def test_committed_pages_are_written_only_when_evicted():
    bm = BufferManager(10, PAGE, "page")
    _transaction(bm, range(5))
    assert bm.counts.page_writes == 0  # no-force
    for p in range(100, 110):
        bm.read(p)
    assert bm.counts.page_writes == 5


def test_bad_use_is_refused():
    with pytest.raises(ValueError, match="policy"):
        BufferManager(10, PAGE, "shadow")
    bm = BufferManager(10, PAGE, "page")
    with pytest.raises(RuntimeError, match="begin"):
        bm.write(1, 0, 8)
    bm.begin()
    with pytest.raises(ValueError, match="outside"):
        bm.write(1, PAGE - 4, 8)
    with pytest.raises(RuntimeError, match="already running"):
        bm.begin()


def test_a_crash_at_any_point_keeps_every_committed_write_and_none_of_the_rest(seed):
    from pysim.rng import make_rng
    from pysim.sw.wal import RecoverableStore

    gen = make_rng(seed)
    for trial in range(40):
        store = RecoverableStore(capacity_pages=3, page_bytes=16)  # small memory: dirty pages get stolen
        expected = {}            # page -> contents after the committed transactions alone
        crash_at = int(gen.integers(1, 60))
        steps = 0
        crashed = False
        while not crashed:
            store.begin()
            pending = {p: bytearray(v) for p, v in expected.items()}
            for _ in range(int(gen.integers(1, 6))):
                page, off = int(gen.integers(0, 8)), int(gen.integers(0, 12))
                data = bytes(gen.integers(0, 256, int(gen.integers(1, 5)), dtype="uint8"))
                store.write(page, off, data)
                pending.setdefault(page, bytearray(16))[off:off + len(data)] = data
                steps += 1
                if steps == crash_at:
                    crashed = True
                    break
            if crashed:
                break
            if gen.random() < 0.8:
                store.commit()
                expected = {p: bytes(v) for p, v in pending.items()}
            else:  # leave it running; the next begin must refuse, so crash here instead
                crashed = True
        store.crash()
        store.recover()
        for page in range(8):
            assert store.disk.get(page, bytes(16)) == expected.get(page, bytes(16)), (trial, page)


def test_a_stolen_page_is_written_only_after_its_log_records():
    from pysim.sw.wal import RecoverableStore

    store = RecoverableStore(capacity_pages=1, page_bytes=8)
    store.begin()
    store.write(0, 0, b"\x01")
    assert store.forced == 0
    store.write(1, 0, b"\x02")  # page 0 is evicted dirty: its record is forced first
    assert store.forced >= 1 and store.disk[0][0] == 1
    store.crash()
    store.recover()
    assert store.disk[0] == bytes(8)  # the uncommitted write was undone
