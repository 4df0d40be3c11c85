"""results/index.html: the page a reader opens first.

Every paper with its computed verdict and honest counts (predictions within
tolerance over predictions scored, fits, inputs, claims held over claims that
can fail, the claims that cannot fail by name), a thumbnail of every figure
linking to the full one, its then-vs-now highlights (the tables a notebook
saves as ``then_vs_now*.csv``), and links to the executed notebook and the
regenerated tables. One self-contained file: relative links, inline style, no
scripts, so it works offline from the file system.
"""
from __future__ import annotations

import csv
import html
import io
from pathlib import Path

from pysim.scorecard import headline, totals

_STYLE = """
body{font-family:system-ui,-apple-system,"DejaVu Sans",sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#1f3b57;color:#fff;padding:1.2em 2em}
header h1{margin:0 0 .3em 0;font-size:1.6em}
header p{margin:.2em 0;opacity:.9}
main{padding:1em 2em;max-width:1400px}
.paper{background:#fff;border:1px solid #ddd;border-radius:6px;padding:1em 1.2em;margin:1em 0}
.paper h2{margin:0;font-size:1.15em}
.paper .meta{color:#555;font-size:.9em;margin:.2em 0 .6em 0}
.badge{display:inline-block;padding:.15em .6em;border-radius:1em;font-size:.8em;font-weight:600;color:#fff}
.v-replicated{background:#2e7d32}.v-partly{background:#f9a825;color:#222}.v-not{background:#c62828}
.v-na{background:#78909c}.v-error{background:#6a1b9a}
table.counts{border-collapse:collapse;font-size:.85em;margin:.4em 0}
table.counts td,table.counts th{border-bottom:1px solid #eee;padding:.2em .6em;text-align:left}
.thumbs{display:flex;flex-wrap:wrap;gap:.6em;margin:.6em 0}
.thumbs figure{margin:0;width:220px}
.thumbs img{width:220px;height:150px;object-fit:contain;border:1px solid #ddd;background:#fff}
.thumbs figcaption{font-size:.75em;color:#555;word-break:break-all}
.now{background:#f1f8e9;border-left:4px solid #7cb342;padding:.4em .8em;margin:.6em 0;font-size:.85em;overflow-x:auto}
.now table{border-collapse:collapse}.now td,.now th{padding:.1em .5em;text-align:right}
.failed{color:#c62828;font-weight:600}
.links a{margin-right:1em}
.cannot{color:#6d4c41;font-size:.85em}
"""


def _badge(verdict: str) -> str:
    css = {"replicated": "v-replicated", "partly replicated": "v-partly", "not replicated": "v-not",
           "not applicable": "v-na"}.get(verdict, "v-error")
    return f'<span class="badge {css}">{html.escape(verdict)}</span>'


def _counts_row(name, a) -> str:
    return (f"<tr><td>{html.escape(name)}</td><td>{_badge(a['verdict'])}</td>"
            f"<td>{a['predictions_within']} / {a['predictions_scored']}</td><td>{a['fits']}</td>"
            f"<td>{a['inputs']}</td><td>{a['claims_held']} / {a['claims_can_fail']}</td></tr>")


def _then_vs_now(path: Path, rows: int = 6) -> str:
    """A then-vs-now table as a small HTML table (its first rows)."""
    try:
        data = list(csv.reader(io.StringIO(path.read_text())))
    except (OSError, csv.Error):
        return ""
    if not data:
        return ""

    def cell(v):
        try:
            return f"{float(v):.4g}"
        except ValueError:
            return html.escape(v)

    head = "".join(f"<th>{html.escape(h)}</th>" for h in data[0])
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in r) + "</tr>" for r in data[1:rows + 1])
    more = f"<p>{len(data) - 1 - rows} more rows in the CSV</p>" if len(data) - 1 > rows else ""
    return (f'<div class="now"><strong>then vs now</strong> ({html.escape(path.name)})'
            f"<table><tr>{head}</tr>{body}</table>{more}</div>")


def _paper_section(pid: str, entry: dict, status: dict | None, folder: Path) -> str:
    parts = [f'<section class="paper" id="{html.escape(pid)}">',
             f"<h2>{html.escape(entry.get('title', pid))} {_badge(entry['verdict'])}</h2>",
             f'<div class="meta"><code>{html.escape(pid)}</code> · predictions within tolerance '
             f"<strong>{entry['predictions_within']} / {entry['predictions_scored']}</strong> · fits {entry['fits']}"
             f" · inputs {entry['inputs']} · claims held <strong>{entry['claims_held']} / "
             f"{entry['claims_can_fail']}</strong> that can fail</div>"]
    if status is None:
        parts.append("<p>notebook not run</p>")
    elif not status.get("ok"):
        parts.append(f'<p class="failed">notebook FAILED: {html.escape(status.get("error") or "")}</p>')
    else:
        parts.append(f"<p>notebook ran in {status.get('seconds', 0):.0f} s</p>")
    if folder.is_dir():
        links = [f'<a href="{pid}/{pid}.html">executed notebook (HTML)</a>',
                 f'<a href="{pid}/{pid}.ipynb">notebook (.ipynb)</a>']
        tables = sorted(f.name for f in folder.glob("*.csv") if not f.name.startswith("then_vs_now"))
        links += [f'<a href="{pid}/{html.escape(t)}">{html.escape(t)}</a>' for t in tables]
        parts.append('<div class="links">' + " ".join(links) + "</div>")
        for f in sorted(folder.glob("then_vs_now*.csv")):
            parts.append(_then_vs_now(f))
        pngs = sorted(folder.glob("*.png"), key=lambda p: (not p.stem.startswith("then_vs_now"), p.name))
        if pngs:
            figs = []
            for png in pngs:
                svg = png.with_suffix(".svg")
                target = f"{pid}/{svg.name}" if svg.exists() else f"{pid}/{png.name}"
                figs.append(f'<figure><a href="{html.escape(target)}"><img loading="lazy" src="{pid}/'
                            f'{html.escape(png.name)}" alt="{html.escape(png.stem)}"></a>'
                            f"<figcaption>{html.escape(png.stem)}</figcaption></figure>")
            parts.append('<div class="thumbs">' + "".join(figs) + "</div>")
    arts = entry.get("artifacts", {})
    if arts:
        parts.append("<table class='counts'><tr><th>artifact</th><th>verdict</th><th>predictions within / "
                     "scored</th><th>fits</th><th>inputs</th><th>claims held / can fail</th></tr>"
                     + "".join(_counts_row(a, v) for a, v in arts.items()) + "</table>")
    if entry.get("claims_cannot_fail"):
        parts.append('<p class="cannot">claims that cannot fail (not counted): '
                     + ", ".join(html.escape(c) for c in entry["claims_cannot_fail"]) + "</p>")
    for nm in entry.get("not_modelled", []):
        parts.append(f"<p class='meta'>not modelled: {html.escape(nm['id'])}: {html.escape(nm['why'])}</p>")
    if entry.get("error"):
        parts.append(f'<p class="failed">{html.escape(entry["error"])}</p>')
    parts.append("</section>")
    return "\n".join(parts)


def index_html(card: dict, statuses: dict, out: Path) -> str:
    """The whole page for a scorecard, the notebook runs and the files under ``out``."""
    t = totals(card)
    verdicts = ", ".join(f"{n} {v}" for v, n in sorted(t["verdicts"].items()))
    sections = [_paper_section(pid, entry, statuses.get(pid), Path(out) / pid)
                for pid, entry in card["papers"].items()]
    return ("<!doctype html><html lang=en><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width,initial-scale=1'>"
            f"<title>pysim results</title><style>{_STYLE}</style>"
            "<header><h1>Classic systems papers, replicated by simulation</h1>"
            f"<p>{t['papers']} papers ({html.escape(verdicts)}); {html.escape(headline(t))}.</p>"
            f"<p>profile {html.escape(card['profile'])}, seed {card.get('seed', 0)}, generated "
            f"{html.escape(card['generated'])} · <a style='color:#fff' href='scorecard.md'>scorecard.md</a> · "
            "<a style='color:#fff' href='scorecard.json'>scorecard.json</a></p></header>"
            "<main>" + "\n".join(sections) + "</main></html>")
