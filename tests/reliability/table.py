"""The reliability table's rows (recorded by tests/reliability/conftest.py) and how it is written: to
docs/RELIABILITY.md when the whole tests/reliability folder ran, else to test-artefacts/RELIABILITY.md.
Its session hooks live in tests/conftest.py, because the xdist controller (`make test` runs -n 2) loads
only that conftest: each worker sends what it saw, and the controller writes one table."""
from __future__ import annotations

import datetime as _dt
import platform
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SECTIONS = ("Hostile input", "Fault", "Crash", "Load", "Isolation and access", "Settings", "Limits")


@dataclass
class Row:
    section: str
    case: str
    result: str
    test: str
    passed: bool | None = None


@dataclass
class Table:
    rows: list[Row] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    collected: set[str] = field(default_factory=set)
    ran: set[str] = field(default_factory=set)
    deselected: bool = False      # -k or -m left out a reliability test: a partial run


TABLE = Table()


def _all_reliability_tests_ran() -> bool:
    # Deselection is what makes a run partial, not -m as such: pytest.ini's default `-m "not books"`
    # leaves every reliability test in.
    if not TABLE.collected or TABLE.deselected:
        return False
    every = {p for p in HERE.glob("test_*.py")}
    ran_files = {(ROOT / n.split("::")[0]).resolve() for n in TABLE.ran}
    return every <= ran_files and TABLE.collected <= TABLE.ran


def _markdown() -> str:
    lines = ["# Reliability", "",
             "Written by `pytest tests/reliability` (part of `make test`); do not edit by hand.",
             f"Last full run: {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC on "
             f"{platform.machine()}, {platform.python_version()}.", ""]
    total = len(TABLE.rows)
    ok = sum(1 for r in TABLE.rows if r.passed)
    lines += [f"**{ok} of {total} cases held.**", ""]
    for section in SECTIONS:
        n = sum(1 for r in TABLE.rows if r.section == section)
        if n:
            held = sum(1 for r in TABLE.rows if r.section == section and r.passed)
            lines.append(f"- {section}: {held}/{n}")
    if TABLE.figures:
        lines += ["", "## Figures", "", "| figure | value |", "|---|---|"]
        lines += [f"| {name} | {value} |" for name, value in TABLE.figures]
    for section in SECTIONS:
        rows = sorted((r for r in TABLE.rows if r.section == section), key=lambda r: r.test)
        if not rows:
            continue
        lines += ["", f"## {section}", "", "| case | result | held | test |", "|---|---|---|---|"]
        for r in rows:
            cell = r.result.replace("|", "\\|")
            lines.append(f"| {r.case.replace('|', '/')} | {cell} | {'yes' if r.passed else 'FAILED'} "
                         f"| `{r.test.split('::', 1)[-1]}` |")
    return "\n".join(lines) + "\n"


def write() -> None:
    """The table, where the run it came from belongs (nothing when no reliability test recorded a row)."""
    if not TABLE.rows:
        return
    target = ROOT / ("docs" if _all_reliability_tests_ran() else "test-artefacts") / "RELIABILITY.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_markdown(), encoding="utf-8")


def seen() -> dict:
    """What this process recorded, as an xdist worker sends it to the controller."""
    return {"rows": [asdict(r) for r in TABLE.rows], "figures": TABLE.figures, "collected": sorted(TABLE.collected),
            "ran": sorted(TABLE.ran), "deselected": TABLE.deselected}


def merge(other: dict) -> None:
    """A worker's rows into this (the controller's) table; every worker collects every test."""
    TABLE.rows.extend(Row(**row) for row in other["rows"])
    TABLE.figures.extend(tuple(f) for f in other["figures"])
    TABLE.collected.update(other["collected"])
    TABLE.ran.update(other["ran"])
    TABLE.deselected = TABLE.deselected or other["deselected"]
