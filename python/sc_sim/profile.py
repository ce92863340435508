"""The per-line profile mapped to the kernel's Python lines.

sc-sim profiles a run by program line (the `profile` section of `--stats`,
docs/timing.md "The profile"); the translation of the jaxpr remembers the
Python source of every program line (`program.render`'s line map, from
each equation's source info).  `python_profile` sums the program lines of
each Python line, so a kernel author reads where the cycles went in the
code they wrote; `format_profile` prints it as a table, most cycles first,
as `sc-sim run --profile` does."""
from __future__ import annotations

import dataclasses
import linecache
import os
from typing import Any, Iterable

from .program import Source

# The profile row's figures, summed per Python line (the stats file's keys).
FIGURES = ("cycles", "instructions", "issue_cycles", "stall_load_cycles", "stall_dma_cycles",
           "stall_semaphore_cycles", "stall_barrier_cycles", "bytes")


@dataclasses.dataclass
class ProfileRow:
    """One Python line of the kernel: what its program lines cost on every subcore."""
    file: str | None          # None: program lines with no Python source (the kernel's frame)
    line: int | None
    source: str               # the Python line's text, or the program operations
    cycles: int = 0
    instructions: int = 0
    issue_cycles: int = 0
    stall_load_cycles: int = 0
    stall_dma_cycles: int = 0
    stall_semaphore_cycles: int = 0
    stall_barrier_cycles: int = 0
    bytes: int = 0
    program_lines: list[int] = dataclasses.field(default_factory=list)

    @property
    def location(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}" if self.file else "<no Python line>"


def python_profile(stats: dict[str, Any], line_map: dict[int, Source]) -> list[ProfileRow]:
    """The stats file's per-program-line profile summed per Python line
    (line_map: program line -> (file, line, column)); most cycles first,
    then by file and line."""
    rows: dict[tuple[str | None, int | None], ProfileRow] = {}
    for p in stats.get("profile") or []:
        src = line_map.get(int(p["line"]))
        key = (src[0], src[1]) if src else (None, None)
        row = rows.get(key)
        if row is None:
            text = linecache.getline(src[0], src[1]).strip() if src else ""
            row = rows[key] = ProfileRow(key[0], key[1], text or (p.get("op") or "").strip())
        for k in FIGURES:
            setattr(row, k, getattr(row, k) + int(p.get(k, 0)))
        row.program_lines.append(int(p["line"]))
    for row in rows.values():
        row.program_lines.sort()
    return sorted(rows.values(), key=lambda r: (-r.cycles, r.file or "~", r.line or 0))


def format_profile(rows: Iterable[ProfileRow], width: int = 60) -> str:
    """The profile as a text table: one row per Python line, most cycles
    first, the share of all cycles, stalls by cause and bytes moved."""
    rows = list(rows)
    total = sum(r.cycles for r in rows)
    out = [f"profile: {total} subcore cycles by Python line:",
           f"{'location':>24} {'cycles':>9} {'%':>6} {'instrs':>7} {'issue':>8} {'load':>8} {'dma':>8}"
           f" {'sem':>8} {'barrier':>8} {'bytes':>9}  source"]
    for r in rows:
        share = 100.0 * r.cycles / total if total else 0.0
        loc = r.location if len(r.location) <= 24 else "..." + r.location[-21:]
        src = r.source if len(r.source) <= width else r.source[:width - 3] + "..."
        out.append(f"{loc:>24} {r.cycles:>9} {share:>6.1f} {r.instructions:>7} {r.issue_cycles:>8}"
                   f" {r.stall_load_cycles:>8} {r.stall_dma_cycles:>8} {r.stall_semaphore_cycles:>8}"
                   f" {r.stall_barrier_cycles:>8} {r.bytes:>9}  {src}")
    return "\n".join(out) + "\n"
