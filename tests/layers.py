#!/usr/bin/env python3
"""tests/layers.py -- the folders are the pipeline, in layers.

Fails when an #include or a call runs up a layer or closes a cycle:

  memory <- isa <- lowering <- traces <- sim/front <- sim/run <- sim/fuzz <- sim/cli

* includes: every `#include "..."` of a layered file must name a file of its
  own layer or a lower one;
* calls: for each object file (nm), every undefined symbol that another
  object of the build defines must be defined in the same layer or a lower
  one, and the graph of modules (object files) these references make must
  be acyclic;
* independence: the reference interpreter (sim/run/reference) uses neither
  the lowering (lowering/lower, lowering/asm) nor the engine, so that
  verification compares two independent computations.

Usage: tests/layers.py BUILD_DIR   (the objects of a finished build)
"""
import os
import re
import subprocess
import sys

LAYERS = ["memory", "isa", "lowering", "traces", "sim/front", "sim/run", "sim/fuzz", "sim/cli"]
FORBIDDEN = {"sim/run/reference": {"lowering/lower", "lowering/asm", "sim/run/engine"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path: str) -> int | None:
    best = None
    for rank, folder in enumerate(LAYERS):
        if path == folder or path.startswith(folder + "/"):
            best = rank  # the longest matching folder wins (sim/run over sim)
    return best


def sources(root: str) -> list[str]:
    out = []
    for folder in LAYERS:
        d = os.path.join(root, folder)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if name.endswith((".c", ".h")):
                out.append(os.path.join(folder, name))
    return out


def check_includes(root: str) -> list[str]:
    errors = []
    for src in sources(root):
        if src == "traces/viewer_sdl.c":
            continue  # a program of its own beside the core (make viewer)
        text = open(os.path.join(root, src), encoding="utf-8").read()
        for m in INCLUDE.finditer(text):
            target = os.path.normpath(os.path.join(os.path.dirname(src), m.group(1)))
            lt, ls = layer_of(target), layer_of(src)
            line = text.count("\n", 0, m.start()) + 1
            if lt is None:
                errors.append(f"{src}:{line}: includes {m.group(1)}, outside the layered folders")
            elif lt > ls:
                errors.append(f"{src}:{line}: includes {target} ({LAYERS[lt]}), a layer above {LAYERS[ls]}")
    return errors


def symbols(obj: str) -> tuple[set[str], set[str]]:
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, undefined


def module_graph(root: str, build: str) -> dict[str, set[str]]:
    objs = {}
    for src in sources(root):
        if src.endswith(".c") and src != "traces/viewer_sdl.c":
            obj = os.path.join(build, src[:-2] + ".o")
            if not os.path.exists(obj):
                raise SystemExit(f"layers: {obj} is missing: build first")
            objs[src[:-2]] = symbols(obj)
    owner = {sym: mod for mod, (defs, _) in objs.items() for sym in defs}
    return {mod: {owner[s] for s in und if s in owner and owner[s] != mod} for mod, (_, und) in objs.items()}


def check_calls(graph: dict[str, set[str]]) -> list[str]:
    errors = []
    for mod, uses in sorted(graph.items()):
        for used in sorted(uses):
            if layer_of(used) > layer_of(mod):
                errors.append(f"{mod}.c calls into {used}.c ({LAYERS[layer_of(used)]}), a layer above {LAYERS[layer_of(mod)]}")
            if used in FORBIDDEN.get(mod, ()):
                errors.append(f"{mod}.c calls into {used}.c: the reference must stay independent of it")
    return errors


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state and (c := visit(n)):
                return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (c := visit(m)):
            return c
    return None


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
    errors = check_includes(root)
    graph = module_graph(root, build)
    errors += check_calls(graph)
    cycle = find_cycle(graph)
    if cycle:
        errors.append("modules call each other in a cycle: " + " -> ".join(cycle))
    for e in errors:
        print(f"layers: {e}", file=sys.stderr)
    print(f"layers: {len(graph)} modules in {len(LAYERS)} layers: {'no violation' if not errors else f'{len(errors)} violations'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
