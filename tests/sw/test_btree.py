"""B-tree layout against a real B-tree: SQLite's table pages, counted by its dbstat table."""
import os
import sqlite3

import pytest

from pysim.sw.btree import PageLayout, shape


def _sqlite_pages(tmp_path, page_bytes, rows, payload):
    con = sqlite3.connect(tmp_path / f"t{page_bytes}-{payload}.db")
    con.execute(f"pragma page_size={page_bytes}")
    con.execute("create table t(k integer primary key, v blob)")
    # rowids from 2**14 up all take three bytes as varints
    con.executemany("insert into t values (?, ?)", ((2 ** 14 + i, os.urandom(payload)) for i in range(rows)))
    con.commit()
    try:
        (pages,) = con.execute("select count(*) from dbstat where name = 't'").fetchone()
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table")
    return pages


def _varint(n):
    return 1 if n < 128 else 2 if n < 16384 else 3


@pytest.mark.parametrize("page_bytes, payload", [(4096, 100), (1024, 40), (8192, 300)])
def test_pages_of_a_bulk_loaded_table_match_sqlites(tmp_path, page_bytes, payload):
    rows = 50_000
    # SQLite's file format: a leaf cell is a 2-byte slot, the record's length and the rowid as varints,
    # and the record (a header of its own length, a null for the rowid column and the blob's serial
    # type, then the blob); an 8-byte leaf header; interior cells hold a 4-byte child and the rowid
    header = 1 + 1 + _varint(2 * payload + 12)
    record = header + payload
    layout = PageLayout(page_bytes=page_bytes, header_bytes=8, slot_bytes=2, pointer_bytes=4)
    predicted = shape(layout, rows, key_bytes=_varint(2 ** 14 + rows), value_bytes=_varint(record) + record).pages
    assert predicted == pytest.approx(_sqlite_pages(tmp_path, page_bytes, rows, payload), rel=0.01)


def test_fanout_and_height_follow_the_page_size_and_a_trailer_costs_entries():
    small = PageLayout(page_bytes=512, header_bytes=26)
    large = PageLayout(page_bytes=8192, header_bytes=26)
    assert shape(small, 10 ** 6, key_bytes=8, value_bytes=8).levels > shape(large, 10 ** 6, key_bytes=8,
                                                                             value_bytes=8).levels
    sealed = PageLayout(page_bytes=512, header_bytes=26, trailer_bytes=48)
    assert sealed.fanout(8) < small.fanout(8)


def test_a_value_too_big_for_four_a_page_moves_to_overflow_pages():
    lay = PageLayout(page_bytes=1024, header_bytes=26)
    assert lay.overflow_pages(8, 100) == 0 and lay.overflow_pages(8, 3000) == 4
    assert lay.leaf_capacity(8, 3000) == lay.leaf_capacity(8, lay.pointer_bytes)


def test_impossible_layouts_are_refused():
    with pytest.raises(ValueError, match="no room"):
        PageLayout(page_bytes=64, header_bytes=64)
    with pytest.raises(ValueError, match="fill"):
        PageLayout(page_bytes=4096, header_bytes=26, fill=1.5)
    with pytest.raises(ValueError, match="fewer than two"):
        PageLayout(page_bytes=512, header_bytes=26).fanout(400)
