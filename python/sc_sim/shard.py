"""Campaign shards: --shard K/N and the JSON lines sc-sim merge combines.

A campaign of `count` items (seeds, programs, grid points) numbered from 0
is split into N shards by index: shard K (0 <= K < N) does the items i with
i % N == K, so the N shards together do exactly the work of one unsharded
run.  Each item's result is one JSON line carrying its index; merging sorts
the lines back into campaign order and checks that every index is there
once (docs/cluster.md).
"""
from __future__ import annotations

import json
import os
from typing import Iterable


def parse_shard(text: str | None) -> tuple[int, int]:
    """'K/N' -> (K, N); None -> (0, 1).  ValueError when malformed."""
    if text is None:
        return 0, 1
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard takes K/N with 0 <= K < N, got '{text}'") from None
    if n < 1 or not 0 <= k < n:
        raise ValueError(f"--shard takes K/N with 0 <= K < N, got '{text}'")
    return k, n


def mine(index: int, shard: tuple[int, int]) -> bool:
    """Whether item `index` belongs to shard (K, N)."""
    return index % shard[1] == shard[0]


def read_lines(paths: Iterable[str]) -> list[dict]:
    """The JSON lines of files and of the *.jsonl files of folders, sorted by index."""
    out: list[dict] = []
    for p in paths:
        files = [os.path.join(p, f) for f in sorted(os.listdir(p)) if f.endswith(".jsonl")] if os.path.isdir(p) else [p]
        for f in files:
            with open(f, encoding="utf-8") as fh:
                out.extend(json.loads(line) for line in fh if line.startswith("{"))
    out.sort(key=lambda r: r["index"])
    return out


def check_cover(records: list[dict], total: int, what: str = "item") -> None:
    """ValueError unless the records' indexes are 0 .. total-1, each once."""
    got = [r["index"] for r in records]
    if got != list(range(total)):
        missing = sorted(set(range(total)) - set(got))
        twice = sorted({i for i in got if got.count(i) > 1})
        raise ValueError(f"the shards do not cover the campaign: {len(missing)} {what}(s) missing"
                         f"{' (first ' + str(missing[0]) + ')' if missing else ''}"
                         f"{', ' + str(len(twice)) + ' twice' if twice else ''}")
