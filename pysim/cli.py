"""The `pysim` command: list, run, reproduce, check, bench, measure.

Every command echoes its resolved arguments and seed first, so any output
can be regenerated from what it printed.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import typing
from pathlib import Path

from pysim import ledger
from pysim.errors import LedgerError, PysimError


def _echo(**kw):
    print(" | ".join(f"{k} {v}" for k, v in kw.items()), flush=True)


def _fail(message: str) -> int:
    print(f"pysim: error: {message}", file=sys.stderr)
    return 2


def cmd_list(args) -> int:
    _echo(command="list", results=args.results)
    card_path = Path(args.results) / "scorecard.json"
    card = json.loads(card_path.read_text()) if card_path.exists() else {"papers": {}}
    print(f"{'paper':22s} {'artifacts':>9s}  {'verdict (' + card.get('profile', 'not run') + ')':28s} title")
    for pid in ledger.paper_ids():
        p = ledger.load(pid)
        verdict = card["papers"].get(pid, {}).get("verdict", "not run")
        print(f"{pid:22s} {len(p.artifacts):9d}  {verdict:28s} {p.title}")
    return 0


def _convert(value: str, annotation):
    kind = annotation if isinstance(annotation, type) else {"float": float, "int": int, "bool": bool,
                                                            "str": str}.get(str(annotation), float)
    if kind is bool:
        if value.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"expected true or false, got {value!r}")
        return value.lower() in ("true", "1")
    return kind(value)


def resolve_params(model, settings):
    """The model's Params with ``name=value`` overrides applied; ValueError lists valid names."""
    params = model.Params()
    if not settings:
        return params
    fields = {f.name: f for f in dataclasses.fields(params)}
    hints = typing.get_type_hints(type(params))
    changes = {}
    for s in settings:
        name, sep, value = s.partition("=")
        if not sep:
            raise ValueError(f"--set expects name=value, got {s!r}")
        if name not in fields:
            raise ValueError(f"unknown parameter {name!r}; valid: {', '.join(fields)}")
        try:
            changes[name] = _convert(value, hints.get(name, float))
        except ValueError as e:
            raise ValueError(f"parameter {name}: {e}") from None
    return dataclasses.replace(params, **changes)


def cmd_run(args) -> int:
    import pandas as pd

    try:
        paper = ledger.load(args.paper)
    except LedgerError as e:
        return _fail(str(e))
    arts = [a for a in paper.artifacts.values() if a.kind != "diagram-only"]
    if args.artifact:
        if args.artifact not in paper.artifacts:
            return _fail(f"unknown artifact {args.artifact!r} for {paper.id}; valid: {', '.join(paper.artifacts)}")
        arts = [paper.artifacts[args.artifact]]
        if arts[0].kind == "diagram-only":
            return _fail(f"{args.artifact} is a diagram: nothing to compute")
    model = paper.model()
    try:
        params = resolve_params(model, args.set)
    except ValueError as e:
        return _fail(str(e))
    shown = ", ".join(f"{f.name}={getattr(params, f.name)!r}" for f in dataclasses.fields(params))
    _echo(command=f"run {paper.id} {args.artifact or '(all)'}", seed=args.seed, quick=args.quick, params=shown)
    with pd.option_context("display.width", 160, "display.max_columns", 30, "display.max_rows", 200):
        for a in arts:
            try:
                df = getattr(model, a.function)(params, rng=args.seed, quick=args.quick)
            except ValueError as e:
                return _fail(str(e))
            print(f"\n{a.id}: {a.caption}")
            print(df.to_string(float_format=lambda v: f"{v:.6g}"))
    return 0


def cmd_check(args) -> int:
    from pysim.scorecard import headline, totals
    from pysim.scoring import score_paper

    ids = args.papers or ledger.paper_ids()
    _echo(command="check", papers=" ".join(ids), seed=args.seed, quick=args.quick)
    status, entries = 0, {}
    for pid in ids:
        try:
            entry = entries[pid] = score_paper(ledger.check_id(pid), seed=args.seed, quick=args.quick)
        except LedgerError as e:
            print(f"{pid}: MALFORMED: {e}")
            status = 1
            continue
        print(f"\n{pid}: {entry['verdict']} | predictions {entry['predictions_within']}/{entry['predictions_scored']} "
              f"| fits {entry['fits']} | inputs {entry['inputs']} | claims {entry['claims_held']}/"
              f"{entry['claims_can_fail']} can fail")
        for aid, a in entry["artifacts"].items():
            print(f"  {aid:14s} {a['verdict']:18s} predictions {a['predictions_within']}/{a['predictions_scored']}"
                  f"  fits {a['fits']}  inputs {a['inputs']}  claims {a['claims_held']}/{a['claims_can_fail']}"
                  + (f"  ERROR {a['error']}" if a.get("error") else ""))
            if a["verdict"] == "error":
                status = 1
        if entry["claims_cannot_fail"]:
            print(f"  cannot fail (hold under their counterfactual too): {', '.join(entry['claims_cannot_fail'])}")
        for s in entry["deviations"]["stale"]:
            print(f"  STALE explanation: {s}")
            status = 1
        if entry["deviations"]["unexplained"]:
            print(f"  unexplained misses: {', '.join(entry['deviations']['unexplained'])}")
    if len(entries) > 1:
        print(f"\nall: {headline(totals({'papers': entries}))}")
    return status


def cmd_reproduce(args) -> int:
    from pysim.reproduce import reproduce
    from pysim.scorecard import headline, totals

    ids = args.papers or ledger.paper_ids()
    try:
        for pid in ids:
            ledger.check_id(pid)
    except LedgerError as e:
        return _fail(str(e))
    _echo(command="reproduce", papers=" ".join(ids), seed=args.seed, quick=args.quick, jobs=args.jobs,
          scheduler=args.scheduler or "local processes", timeout=f"{args.timeout:g}s", out=args.out)
    statuses, card = reproduce(ids, quick=args.quick, jobs=args.jobs, timeout=args.timeout, seed=args.seed,
                               out=args.out, scheduler=args.scheduler)
    t = totals(card)
    print(f"\nscorecard: {args.out}/scorecard.md | {headline(t)}")
    held = {k: sum(st.get(k, 0.0) for st in statuses.values())
            for k in ("exclusive_s", "one_core_s", "lock_wait_s", "slot_wait_s")}
    if any(held.values()):
        print(f"real measurements held the machine alone {held['exclusive_s']:.0f}s and one core "
              f"{held['one_core_s']:.0f}s; notebooks waited {held['lock_wait_s']:.0f}s for the lock and "
              f"{held['slot_wait_s']:.0f}s for a CPU slot (per notebook in {args.out}/runs.json)")
    for pid in ids:
        st = statuses[pid]
        print(f"  {pid:22s} {'ok' if st['ok'] else 'FAILED'} {st['seconds']:6.1f}s  {card['papers'][pid]['verdict']}"
              + ("" if st["ok"] else f"\n      {st['error']}"))
    return 0 if all(s["ok"] for s in statuses.values()) else 1


def cmd_contract(args) -> int:
    from pysim import contract

    ids = args.papers or ledger.paper_ids()
    golden = Path(args.golden) if args.golden else ledger.root() / "tests" / "golden"
    _echo(command="contract", papers=" ".join(ids), golden=golden, write_golden=args.write_golden, seed=0,
          quick=True)
    status = 0
    for pid in ids:
        ledger.check_id(pid)
        if args.write_golden:
            paths = contract.write_golden(contract.Subject(pid, golden_dir=golden))
            print(f"{pid}: wrote {len(paths)} golden file(s) under {golden / pid}")
            continue
        results = contract.run(pid, golden_dir=golden)
        bad = [(n, e) for n, e in results if e]
        print(f"{pid}: {len(results) - len(bad)}/{len(results)} checks pass")
        for name, err in bad:
            print(f"  FAIL {name}: {err}")
        status |= bool(bad)
    return status


def cmd_gaps(args) -> int:
    import pandas as pd

    from pysim.gaps import gaps

    _echo(command=f"gaps {args.paper}", text=args.text)
    found = gaps(args.paper, Path(args.text))
    if found.empty:
        print("every number near a mention of a modelled artifact is in the ledger")
    else:
        with pd.option_context("display.width", 200, "display.max_rows", 500,
                                                  "display.max_colwidth", 90):
            print(found.to_string(index=False))
    return 0


def cmd_student(args) -> int:
    from pysim.student import write_student_notebooks

    _echo(command="student", out=args.out)
    for path in write_student_notebooks(Path(args.out)):
        print(f"  {path}")
    return 0


def _values(text: str) -> list:
    out = []
    for v in text.split(","):
        v = v.strip()
        try:
            out.append(int(v))
        except ValueError:
            try:
                out.append(float(v))
            except ValueError:
                out.append({"true": True, "false": False}.get(v.lower(), v))
    return out


def _seeds(text: str) -> list:
    if "-" in text:
        lo, hi = text.split("-", 1)
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def cmd_sweep(args) -> int:
    import pandas as pd

    from pysim.sweep import sweep

    grid = {}
    for spec in args.vary:
        name, sep, values = spec.partition("=")
        if not sep or not values:
            return _fail(f"--vary expects name=v1,v2,..., got {spec!r}")
        grid[name] = _values(values)
    seeds = _seeds(args.seeds)
    _echo(command=f"sweep {args.paper} {args.artifact}", grid=grid, seeds=seeds, quick=args.quick, jobs=args.jobs,
          scheduler=args.scheduler or "local processes", out=args.out or "(stdout)")
    df = sweep(args.paper, args.artifact, grid, seeds=seeds, quick=args.quick, jobs=args.jobs,
               scheduler=args.scheduler)
    if args.out:
        from pysim.results import write_text_atomic

        write_text_atomic(Path(args.out), df.to_csv(index=False))
        print(f"{len(df)} rows written to {args.out}")
    else:
        with pd.option_context("display.width", 200, "display.max_rows", 200):
            print(df.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    return 0


def cmd_bench(args) -> int:
    from pysim import bench

    _echo(command="bench", quick=args.quick, out=args.out, seed=0)
    report = bench.run(args.out, quick=args.quick, progress=lambda m: print(f"  ... {m}", flush=True))
    print(bench.format_report(report))
    return 0


def cmd_measure(args) -> int:
    from pysim import measure

    _echo(command="measure", quick=args.quick)
    df = measure.run_all(quick=args.quick)
    print(df.to_string(index=False))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pysim", description="Classic systems papers replicated by simulation.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("list", help="papers and their verdicts")
    s.add_argument("--results", default="results", help="folder holding scorecard.json (default: results)")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("run", help="compute one paper's artifacts and print them as tables")
    s.add_argument("paper")
    s.add_argument("artifact", nargs="?")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--quick", action="store_true")
    s.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a model parameter")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("reproduce", help="execute notebooks headlessly; write results/ and the scorecard")
    s.add_argument("papers", nargs="*")
    s.add_argument("--quick", action="store_true")
    s.add_argument("--jobs", type=int, default=1)
    s.add_argument("--timeout", type=float, default=600.0, help="per-cell timeout, seconds (default 600)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--out", default="results")
    s.add_argument("--scheduler", default=None,
                   help="a dask.distributed scheduler address (tcp://host:8786) to run the notebooks on")
    s.set_defaults(func=cmd_reproduce)

    s = sub.add_parser("sweep", help="one artifact over a grid of parameters and seeds (local or on dask)")
    s.add_argument("paper")
    s.add_argument("artifact")
    s.add_argument("--vary", action="append", default=[], metavar="NAME=V1,V2,...", help="a parameter's values")
    s.add_argument("--seeds", default="0", help="seeds: 0-9 or 0,3,7 (default 0)")
    s.add_argument("--quick", action="store_true")
    s.add_argument("--jobs", type=int, default=1)
    s.add_argument("--scheduler", default=None, help="a dask.distributed scheduler address")
    s.add_argument("--out", default=None, help="write the table as CSV here")
    s.set_defaults(func=cmd_sweep)

    s = sub.add_parser("check", help="score ledgers and claims against the models (no notebooks)")
    s.add_argument("papers", nargs="*")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--quick", action="store_true")
    s.set_defaults(func=cmd_check)

    s = sub.add_parser("contract", help="check papers against the lab's contract (quick mode)")
    s.add_argument("papers", nargs="*")
    s.add_argument("--golden", default=None, help="folder of golden outputs (default: tests/golden)")
    s.add_argument("--write-golden", action="store_true",
                   help="write the current quick-mode outputs as the golden files (on purpose only)")
    s.set_defaults(func=cmd_contract)

    s = sub.add_parser("gaps", help="numbers in a paper's text near its modelled artifacts that the ledger lacks")
    s.add_argument("paper")
    s.add_argument("--text", required=True, help="the paper's text (OCR), e.g. papers' <id>.txt")
    s.set_defaults(func=cmd_gaps)

    s = sub.add_parser("student", help="write the notebooks with the exercise solutions removed")
    s.add_argument("--out", default="build/student")
    s.set_defaults(func=cmd_student)

    s = sub.add_parser("bench", help="speed of the core as ratios; writes results/bench.json")
    s.add_argument("--quick", action="store_true")
    s.add_argument("--out", default="results/bench.json")
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("measure", help="then-vs-now microbenchmarks on this machine")
    s.add_argument("--quick", action="store_true")
    s.set_defaults(func=cmd_measure)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "jobs", 1) < 1:
        return _fail(f"--jobs must be >= 1, got {args.jobs}")
    if getattr(args, "paper", None) is not None and args.paper not in ledger.paper_ids():
        return _fail(f"unknown paper {args.paper!r}; valid: {', '.join(ledger.paper_ids()) or '(none)'}")
    try:
        return args.func(args)
    except (PysimError, ValueError) as e:
        return _fail(str(e))


if __name__ == "__main__":
    sys.exit(main())
