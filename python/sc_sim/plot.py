"""Plot sweep results: `python -m sc_sim.plot results.jsonl... -o sweep.png`.

One panel per swept parameter: predicted time (us) against the parameter,
one line per kernel (and per value of the other parameters), each point
marked by what bounds it (the bound key of the statistics: hbm,
dma_engine, dma_latency, issue, ...).  Needs matplotlib, an optional
dependency of the package (`pip install sc_sim[plot]`).
"""
from __future__ import annotations

import argparse
import collections
import json
import sys

MARKERS = {"hbm": "s", "vmem_shared": "D", "dma_engine": "^", "dma_latency": "o", "issue": "x",
           "load_latency": "v", "semaphore": "P", "barrier": "*", "idle": "."}


def load(paths: list[str]) -> list[dict]:
    rows = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            rows += [json.loads(line) for line in f if line.startswith("{")]
    return [r for r in rows if r.get("kind") == "sweep" and "us" in r]


def _num(v):
    return v if isinstance(v, (int, float)) else None


def plot(rows: list[dict], out: str, title: str | None = None) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    params = list(dict.fromkeys(k for r in rows for k in r["params"]))
    if not params:
        raise ValueError("no swept parameter in the results")
    fig, axes = plt.subplots(1, len(params), figsize=(5.5 * len(params), 4), squeeze=False)
    used = set()
    for ax, p in zip(axes[0], params):
        lines = collections.defaultdict(list)
        for r in rows:
            if p not in r["params"]:
                continue
            rest = ", ".join(f"{k}={v}" for k, v in r["params"].items() if k != p)
            name = r.get("program", "?") + (f" #{r['kernel']}" if "kernel" in r else "")
            lines[name + (f" ({rest})" if rest else "")].append(r)
        numeric = all(_num(r["params"][p]) is not None for rs in lines.values() for r in rs)
        for label, rs in sorted(lines.items()):
            if numeric:
                rs = sorted(rs, key=lambda r: r["params"][p])
            xs = [r["params"][p] if numeric else str(r["params"][p]) for r in rs]
            ys = [r["us"] for r in rs]
            (ln,) = ax.plot(xs, ys, "-", label=label)
            for x, y, r in zip(xs, ys, rs):
                b = r.get("bound", "idle")
                used.add(b)
                ax.plot([x], [y], MARKERS.get(b, "."), color=ln.get_color(), markersize=7)
        if numeric and all(r["params"][p] > 0 for rs in lines.values() for r in rs):
            ax.set_xscale("log", base=2 if "bytes_per_cycle" in p or p in ("cores", "subcores", "num_lanes") else 10)
        ax.set_xlabel(p)
        ax.set_ylabel("predicted time (us)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    handles = [plt.Line2D([], [], linestyle="", marker=MARKERS.get(b, "."), color="k", label=f"{b}-bound")
               for b in sorted(used)]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(out, dpi=80)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sc_sim.plot", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", help="JSON lines of sc-sim sweep or sc-sim merge --out")
    ap.add_argument("-o", "--out", default="sweep.png")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("python -m sc_sim.plot needs matplotlib: pip install 'sc_sim[plot]'", file=sys.stderr)
        return 2
    rows = load(args.results)
    if not rows:
        print("python -m sc_sim.plot: no sweep points that ran in the results", file=sys.stderr)
        return 2
    plot(rows, args.out, args.title)
    print(f"{args.out}: {len(rows)} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
