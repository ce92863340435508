#!/usr/bin/env python3
"""tests/verdicts.py -- check, lower, run and diff give one verdict per file.

For every golden program (tests/golden/**/NAME.yaml and examples/NAME.yaml
with a NAME.expected), runs `sc-sim check`, `sc-sim lower`, `sc-sim run` and
`sc-sim diff` from the program's folder, with the options of NAME.args less
its subcommand, and compares the exit statuses:

* check and lower stop after lowering, so they agree with each other always,
  and with run whenever run stops before running: a rule (1) or invalid
  input (2), including a user's `lowered:` text that the Mosaic verifier or
  the lowering parser refuses;
* when run gets past checking and lowering, check and lower exit 0 (or 3, for
  an `expect: error` program that was accepted: that verdict needs no run);
* diff runs what run runs: the same exit status.

RUN_TIME_INPUT lists the programs whose invalid input only a run can find:
hand-written lowerings whose operands do not fit (a register's lanes are
known when the engine computes it); check and lower accept them, run and
diff exit 2.

Usage: tests/verdicts.py path/to/sc-sim
"""
import concurrent.futures
import os
import subprocess
import sys

COMMANDS = ("check", "lower", "run", "diff")
RUN_TIME_INPUT = {
    "tests/golden/lowered/asm_index_count.yaml",
    "tests/golden/lowered/asm_value_lanes_mismatch.yaml",
    "tests/golden/robust/asm_mask_wider_than_view.yaml",
}
TIMEOUT = int(os.environ.get("GOLDEN_TIMEOUT", "60"))


def programs(root: str) -> list[str]:
    out = []
    for top in ("tests/golden", "examples"):
        for d, _, files in os.walk(os.path.join(root, top)):
            out += [os.path.join(d, f[:-9] + ".yaml") for f in files if f.endswith(".expected")]
    return sorted(out)


def options(yaml: str) -> list[str]:
    args_file = yaml[:-5] + ".args"
    args = open(args_file).read().split() if os.path.exists(args_file) else []
    return args[1:] if args and args[0] in COMMANDS else args


def exits(sim: str, yaml: str) -> dict[str, int]:
    got = {}
    for cmd in COMMANDS:
        argv = [sim, cmd, *options(yaml), os.path.basename(yaml)]
        try:
            got[cmd] = subprocess.run(argv, cwd=os.path.dirname(yaml), capture_output=True, timeout=TIMEOUT).returncode
        except subprocess.TimeoutExpired:
            got[cmd] = -1
    return got


def disagreement(rel: str, e: dict[str, int]) -> str | None:
    c, l, r, d = e["check"], e["lower"], e["run"], e["diff"]
    if rel in RUN_TIME_INPUT:
        return None if (c, l, r, d) == (0, 0, 2, 2) else "a run-time input error changed"
    if c != l:
        return "check and lower disagree"
    if r in (0, 1, 2) and c != r:
        return "check/lower and run disagree"
    if r in (3, 4) and c not in (0, r):
        return "check/lower stop where run gets past checking"
    if d != r:
        return "diff and run disagree"
    return None


def main() -> int:
    sim = os.path.realpath(sys.argv[1])
    root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    progs = programs(root)
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for yaml, e in zip(progs, pool.map(lambda y: exits(sim, y), progs)):
            why = disagreement(os.path.relpath(yaml, root), e)
            if why:
                bad += 1
                shown = " ".join(f"{k} {v}" for k, v in e.items())
                print(f"verdicts: {os.path.relpath(yaml, root)}: {why} ({shown})")
    print(f"verdicts: {len(progs) - bad} programs agree, {bad} disagree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
