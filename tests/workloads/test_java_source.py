"""The Java source mutator: each kind of edit lands where it should and the mutants compile."""
import re
import shutil
import subprocess

import pytest

from pysim.workloads.java_source import KINDS, mutate, tokens

SOURCE = """
import java.util.*;

public class Inventory {
    private final Map<String, Integer> stock = new HashMap<>();
    private int size() { return stock.size(); }

    /* "a comment with 42 in it" */
    public void add(String item, int count) {
        int current = stock.getOrDefault(item, 0);
        stock.put(item, current + count);
    }

    public int total() {
        int sum = 0;
        for (int v : stock.values()) { sum += v; }
        return sum + size() * 0;
    }

    public String report(int limit) {
        StringBuilder out = new StringBuilder("stock: 7");
        int shown = 0;
        for (Map.Entry<String, Integer> e : stock.entrySet()) {
            if (shown++ >= limit) break;
            out.append(e.getKey()).append('=').append(e.getValue()).append(' ');
        }
        Runnable r = new Runnable() { public void run() { System.out.println(3); } };
        r.run();
        return out.toString();
    }

    public static void main(String[] args) {
        Inventory inv = new Inventory();
        inv.add("apples", 12);
        inv.add("pears", 5);
        System.out.println(inv.total() + " " + inv.report(10));
    }
}
"""


def test_each_edit_changes_only_what_it_names():
    base = [t[1] for t in tokens(SOURCE)]
    constant = [t[1] for t in tokens(mutate(SOURCE, "constant", rng=1))]
    changed = [(a, b) for a, b in zip(base, constant, strict=True) if a != b]
    assert len(changed) == 1 and changed[0][0].isdigit() and int(changed[0][1]) > int(changed[0][0])
    inserted = mutate(SOURCE, "insert", rng=2)
    assert len(tokens(inserted)) == len(base) + 5 and re.search(r"\{ int extra\d+ = \d+;", inserted)
    renamed = mutate(SOURCE, "rename", rng=3)
    old = sorted(set(base) - {t[1] for t in tokens(renamed)})
    assert len(old) == 1 and old[0] in ("current", "sum", "out", "shown", "inv", "r")
    assert "size()" in renamed and "stock: 7" in renamed and '42 in it' in renamed
    swapped = mutate(SOURCE, "swap", rng=4)
    assert sorted(swapped.split("\n")) == sorted(SOURCE.split("\n")) and swapped != SOURCE


def test_a_source_without_a_place_for_an_edit_gives_none_and_a_bad_kind_is_refused():
    assert mutate("class A { }", "constant") is None
    assert mutate("class A { }", "swap") is None
    with pytest.raises(ValueError, match="kind must be one of"):
        mutate(SOURCE, "delete")


@pytest.mark.skipif(shutil.which("javac") is None, reason="javac is not installed")
def test_mutants_of_every_kind_compile(tmp_path):
    files = []
    for kind in KINDS:
        for seed in range(5):
            text = mutate(SOURCE, kind, rng=seed)
            folder = tmp_path / f"{kind}{seed}"
            folder.mkdir()
            (folder / "Inventory.java").write_text(f"package {kind}{seed};\n{text}")
            files.append(str(folder / "Inventory.java"))
    run = subprocess.run(["javac", "-nowarn", "-d", str(tmp_path / "out"), *files], capture_output=True, text=True,
                         check=False)
    failed = {f for f in files if f in run.stderr}
    assert not failed, run.stderr[:2000]
    assert len(list((tmp_path / "out").rglob("Inventory.class"))) == len(files)


def test_an_insert_keeps_a_constructors_super_call_first_and_constants_spare_case_labels():
    src = ("class A extends B { A(int x) { super(x, (1)); int y = 2; } "
           "int f(int k) { switch (k) { case 1, 2 -> { return 7; } case 3: return 4; default: return 5; } } }")
    for seed in range(20):
        out = mutate(src, "insert", rng=seed)
        assert "{ super(x, (1));" in out  # nothing lands between the body's brace and super(...)
        changed = mutate(src, "constant", rng=seed)
        assert "case 1, 2 ->" in changed and "case 3:" in changed
