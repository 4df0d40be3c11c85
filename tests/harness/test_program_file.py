"""Programs written into the harness's cache folder, and the values they print."""
import os

from pysim.harness import parse_value, program_file


def test_a_program_is_written_once_and_rewritten_only_when_its_text_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSIM_CACHE_DIR", str(tmp_path))
    path = program_file("probe.py", "print(1)\n")
    assert path.parent == tmp_path and path.read_text() == "print(1)\n"
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp - 10**9, stamp - 10**9))
    assert program_file("probe.py", "print(1)\n").stat().st_mtime_ns == stamp - 10**9  # same text: untouched
    assert program_file("probe.py", "print(2)\n").read_text() == "print(2)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["probe.py"]  # no temporary file left behind


def test_printed_values_come_back_as_int_float_or_text():
    assert [parse_value(t) for t in ("12", "-3", "1.5e-3")] == [12, -3, 1.5e-3]
    assert isinstance(parse_value("12"), int) and isinstance(parse_value("1.0"), float)
    assert parse_value("hash") == "hash" and parse_value("") == ""
