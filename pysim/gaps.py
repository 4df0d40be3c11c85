"""A developer's aid, not a gate: numbers in a paper's text near its modelled
artifacts that are not in the ledger.

Every legible number of a modelled artifact belongs in the ledger, whether
or not the model gets it right. This lists candidates: the numbers in each
paragraph that mentions an artifact ("Table 2", "Figure 3") or its caption,
which no ledger cell of the paper holds. Many are not results (section
numbers, years, sizes of the setup); a person decides.

    pysim gaps atc98_banga --text path/to/atc98_banga.txt
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from pysim import ledger

_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
_LABEL = re.compile(r"^(table|figure|fig)[_ ]?(\d+)", re.I)


def artifact_labels(artifact: ledger.Artifact) -> list:
    """How the text names an artifact: "Table 2" for table2, else the caption's first words."""
    m = _LABEL.match(artifact.id)
    if m:
        kind = "Table" if m.group(1).lower() == "table" else "Figure"
        return [f"{kind} {m.group(2)}", f"{kind[:3]}. {m.group(2)}"]
    words = re.findall(r"\w+", artifact.caption)[:3]
    return [" ".join(words)] if words else []


def _paragraphs(text: str) -> list:
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]


def _near(value: float, known: list) -> bool:
    return any(abs(value - k) <= 1e-3 * max(abs(k), 1e-9) for k in known)


def gaps(paper_id: str, text_path: Path, *, context: int = 50) -> pd.DataFrame:
    """Numbers in paragraphs mentioning a modelled artifact that no ledger cell holds."""
    paper = ledger.load(paper_id)
    text = Path(text_path).read_text(errors="replace")
    known = [c.value for c in paper.cells]
    rows = []
    for a in paper.artifacts.values():
        if a.kind == "diagram-only":
            continue
        labels = artifact_labels(a)
        for para in _paragraphs(text):
            if not any(lbl.lower() in para.lower() for lbl in labels):
                continue
            for m in _NUMBER.finditer(para):
                value = float(m.group(1).replace(",", ""))
                if _near(value, known) or 1950 <= value <= 2010 and "." not in m.group(1):
                    continue
                lo, hi = max(0, m.start() - context), min(len(para), m.end() + context)
                rows.append({"artifact": a.id, "number": m.group(1),
                             "context": " ".join(para[lo:hi].split())})
    return pd.DataFrame(rows, columns=["artifact", "number", "context"]).drop_duplicates()
