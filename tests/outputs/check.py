#!/usr/bin/env python3
"""tests/outputs/check.py -- compares a trace or a stats file with values worked out by hand.

  check.py trace TRACE.json TRACE.csv EXPECTED.trace
  check.py stats STATS.json EXPECTED.stats
  check.py name stats|trace|json FILE NAME

trace: every record of the JSON trace except metadata and the inflight
counters becomes one line (the format is in tests/outputs/README.md), sorted
by start cycle; the lines must equal the non-comment lines of EXPECTED.
Along the way each record's `ts`/`dur` must be its cycles at the trace's
clock, every "b" must meet its "e" (whose ts is the b's end_cycle) and
every flow "s" its "f"; and the CSV trace must hold exactly the JSON's
accesses (cycles, who, where, offset, bytes, spans, line).

stats: the file must be strict JSON (no NaN); each `path = value` line of
EXPECTED (`subcores[1].busy_cycles = 11`) must hold.

name: FILE must be strict JSON that carries NAME (a JSON string) intact: as
"program" (stats), in the process labels "NAME, clock N Hz" (trace) or as
error.file (--json).
"""
import csv
import json
import re
import sys


def strict_json(path):
    def no_constant(name):
        raise ValueError(f"{path}: {name} is not JSON")

    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"), parse_constant=no_constant)


def expected_lines(path):
    out = []
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(" ".join(line.split()))
    return out


class Trace:
    def __init__(self, doc):
        self.events = doc["traceEvents"]
        self.threads, self.procs = {}, {}
        self.hz = 1e9
        for e in self.events:
            if e["ph"] == "M" and e["name"] == "thread_name":
                self.threads[(e["pid"], e["tid"])] = e["args"]["name"]
            if e["ph"] == "M" and e["name"] == "process_name":
                self.procs[e["pid"]] = e["args"]["name"]
            if e["ph"] == "M" and e["name"] == "process_labels":
                m = re.search(r"clock (\d+) Hz", e["args"]["labels"])
                self.hz = int(m.group(1)) if m else self.hz
        self.errors = []

    def cycles(self, us):
        """A ts or dur (microseconds, six decimals) as cycles; it must be whole."""
        ps = round(us * 1e6)
        c, r = divmod(ps * self.hz, 10**12)
        if r:
            self.errors.append(f"time {us} us is not a whole number of cycles")
        return c

    def thread(self, e):
        name = self.threads.get((e["pid"], e["tid"]), f"pid{e['pid']}.tid{e['tid']}")
        cores = [p for p in self.procs if p != 999]
        return f"{self.procs.get(e['pid'], e['pid'])}/{name}" if len(cores) > 1 else name

    def tracks(self):
        """One line per process: its named threads by tid ("tracks SC0: vec0 dma0")."""
        out = []
        for pid in sorted(self.procs):
            names = [n for (p, tid), n in sorted(self.threads.items()) if p == pid]
            if len(set(names)) != len(names):
                self.errors.append(f"process {self.procs[pid]} names a thread twice: {names}")
            out.append(f"tracks {self.procs[pid]}: {' '.join(names)}".rstrip())
        return out

    def stamp(self, e, a):
        """The event's cycles, checked against its ts (and dur)."""
        if self.cycles(e["ts"]) != a["cycle"]:
            self.errors.append(f"{e['name']}: ts {e['ts']} is not cycle {a['cycle']}")
        if "dur" in e and e["ph"] == "X" and e["dur"] and self.cycles(e["dur"]) != a["end_cycle"] - a["cycle"]:
            self.errors.append(f"{e['name']}: dur {e['dur']} is not {a['end_cycle']} - {a['cycle']} cycles")
        end = a.get("end_cycle", a["cycle"])
        return f"{a['cycle']}-{end}" if end != a["cycle"] else f"{a['cycle']}"


def spans_text(spans):
    return "" if spans is None else " spans=" + (",".join(f"{o}+{n}" for o, n in spans) or "none")


def where(a):
    return f"line={a['line']}:{a['col']}"


# Lines sort by start cycle, then by kind in this order, then by track,
# then in the order the records were written.
RANK = {"dma_start": 0, "dma": 1, "flow": 2, "access": 3, "sync": 4, "dma_wait": 5, "counter": 6, "other": 7}


def trace_lines(t, inflight=False):
    lines, begins, flows = [], {}, {}
    for seq, e in enumerate(t.events):
        ph, a = e["ph"], e.get("args", {})

        def add(cycle, kind, track, text, at=seq):
            lines.append(((cycle, RANK[kind], track, at), text))

        if ph == "M":
            continue
        if ph == "X" and e.get("cat") == "access":
            add(a["cycle"], "access", t.thread(e), f"{t.stamp(e, a)} {t.thread(e)} {e['name']} {a['space']}:{a['ref']} "
                f"offset={a['offset']} bytes={a['bytes']} {where(a)}{spans_text(a.get('spans'))}")
        elif ph == "X" and e.get("cat") == "sync":
            add(a["cycle"], "sync", t.thread(e), f"{t.stamp(e, a)} {t.thread(e)} {e['name']} {a['op']} {where(a)}")
        elif ph == "X" and e["name"] == "dma_start":
            add(a["cycle"], "dma_start", t.thread(e), f"{t.stamp(e, a)} {t.thread(e)} dma_start dma={a['dma']} "
                f"{a['src_space']}:{a['src_ref']}->{a['dst_space']}:{a['dst_ref']} bytes={a['bytes']} {where(a)}")
        elif ph == "X" and e["name"] == "dma_wait":
            add(a["cycle"], "dma_wait", t.thread(e), f"{t.stamp(e, a)} {t.thread(e)} dma_wait dma={a['dma']} {where(a)}")
        elif ph == "b":
            begins[e["id"]] = (seq, e)
        elif ph == "e":
            bseq, b = begins.pop(e["id"], (None, None))
            if b is None:
                t.errors.append(f"'e' {e['id']} without its 'b'")
                continue
            ba = b["args"]
            if t.cycles(e["ts"]) != ba["end_cycle"]:
                t.errors.append(f"dma {e['id']}: 'e' at {e['ts']} us, but end_cycle {ba['end_cycle']}")
            add(ba["cycle"], "dma", t.thread(b), f"{t.stamp(b, ba)} {t.thread(b)} dma dma={ba['dma']} "
                f"{ba['src_space']}:{ba['src_ref']}->{ba['dst_space']}:{ba['dst_ref']} bytes={ba['bytes']} "
                f"{where(ba)} {ba['state']}", bseq)
        elif ph == "s":
            flows[e["id"]] = (seq, e)
        elif ph == "f":
            sseq, s = flows.pop(e["id"], (None, None))
            if s is None:
                t.errors.append(f"flow end {e['id']} without its start")
                continue
            c0, c1 = t.cycles(s["ts"]), t.cycles(e["ts"])
            add(c0, "flow", t.thread(s), f"{c0}-{c1} flow {t.thread(s)}->{t.thread(e)}", sseq)
        elif ph == "C" and e.get("cat") == "semaphore":
            add(t.cycles(e["ts"]), "counter", e["name"], f"{t.cycles(e['ts'])} {e['name']} value={a['value']}")
        elif ph == "C" and inflight:
            track = f"{t.procs.get(e['pid'], e['pid'])} {e['name']}"
            add(t.cycles(e["ts"]), "counter", track, f"{t.cycles(e['ts'])} {track} bytes={a['bytes']}")
        elif ph == "C":
            continue  # bytes in flight: only when the expected lines list them (README)
        else:
            add(t.cycles(e["ts"]), "other", "", f"{t.cycles(e['ts'])} {ph} {e['name']} {json.dumps(a, sort_keys=True)}")
    t.errors += [f"'b' {i} without its 'e'" for i in begins]
    t.errors += [f"flow start {i} without its end" for i in flows]
    return t.tracks() + [text for _, text in sorted(lines, key=lambda x: x[0])]


def json_accesses(t):
    out = []
    for e in t.events:
        if e["ph"] == "X" and e.get("cat") == "access":
            a = e["args"]
            spans = None if a.get("spans") is None else " ".join(f"{o}:{n}" for o, n in a["spans"])
            out.append((a["cycle"], a["end_cycle"], e["pid"] - 1, e["tid"] % 10000 - 1, e["name"], a["space"], a["ref"],
                        a["offset"], a["bytes"], a["line"], a["col"], spans or ""))
    return sorted(out)


def csv_accesses(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return sorted((int(r["cycle"]), int(r["end_cycle"]), int(r["core"]), int(r["subcore"]), r["op"], r["space"], r["ref"],
                   int(r["offset"]), int(r["bytes"]), int(r["line"]), int(r["col"]), r.get("spans", "")) for r in rows)


def compare(got, want, what):
    if got == want:
        return True
    print(f"{what}: differs from the hand-derived values (- expected, + got):")
    for line in want:
        if line not in got:
            print(f"  - {line}")
    for line in got:
        if line not in want:
            print(f"  + {line}")
    if sorted(got) == sorted(want):
        print("  (same lines, in another order)")
    return False


def check_trace(json_path, csv_path, expected):
    t = Trace(strict_json(json_path))
    want = expected_lines(expected)
    ok = compare(trace_lines(t, any(" inflight " in line for line in want)), want, json_path)
    if json_accesses(t) != csv_accesses(csv_path):
        print(f"{csv_path}: its accesses differ from the JSON trace's")
        ok = False
    for err in t.errors:
        print(f"{json_path}: {err}")
    return ok and not t.errors


def lookup(doc, path):
    for key, index in re.findall(r"([^.\[\]]+)(?:\[(\d+)\])?", path):
        doc = doc[key]
        if index:
            doc = doc[int(index)]
    return doc


CATEGORIES = ("busy_cycles", "stall_load_cycles", "stall_dma_cycles", "stall_semaphore_cycles", "stall_barrier_cycles",
              "finished_cycles")


def adds_up(path, doc):
    """Every cycle of every subcore in one category; the profile's lines
    hold every subcore cycle but the finished ones; each engine's setup,
    queue and transfer cycles are its transfers' time in the queue."""
    ok = True
    for s in doc["subcores"]:
        total = sum(s[k] for k in CATEGORIES)
        if total != doc["cycles"]:
            print(f"{path}: subcore {s['core']}.{s['subcore']}: categories sum to {total}, not {doc['cycles']}")
            ok = False
    busy = sum(doc["cycles"] - s["finished_cycles"] for s in doc["subcores"])
    lines = sum(p["cycles"] for p in doc["profile"])
    parts = sum(p[k] for p in doc["profile"] for k in ("issue_cycles", "stall_load_cycles", "stall_dma_cycles",
                                                        "stall_semaphore_cycles", "stall_barrier_cycles"))
    if lines != busy or parts != lines:
        print(f"{path}: the profile's lines hold {lines} cycles ({parts} by cause), the subcores {busy}")
        ok = False
    for e in doc["dma_engines"]:
        held = e["setup_cycles"] + e["queue_cycles"] + e["transfer_cycles"]
        if doc["cycles"] and abs(held / doc["cycles"] - e["queue_occupancy_avg"]) > 1e-4:
            print(f"{path}: engine {e['core']}.{e['subcore']}: occupancy {e['queue_occupancy_avg']}, held {held} cycles")
            ok = False
    return ok


def check_stats(stats_path, expected):
    doc = strict_json(stats_path)
    ok = adds_up(stats_path, doc)
    for line in expected_lines(expected):
        path, want = (x.strip() for x in line.split("=", 1))
        got = lookup(doc, path)
        if got != json.loads(want):
            print(f"{stats_path}: {path} is {json.dumps(got)}, worked out by hand: {want}")
            ok = False
    return ok


def check_name(kind, path, name):
    doc, want = strict_json(path), json.loads(name)
    if kind == "stats":
        got = [doc["program"]]
    elif kind == "trace":
        got = [e["args"]["labels"].rsplit(", clock ", 1)[0] for e in doc["traceEvents"] if e["name"] == "process_labels"]
    else:
        got = [doc["error"]["file"]]
    if got and all(g == want for g in got):
        return True
    print(f"{path}: the name reads {got!r}, want {want!r}")
    return False


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "name":
        sys.exit(0 if check_name(*sys.argv[2:]) else 1)
    if len(sys.argv) == 5 and sys.argv[1] == "trace":
        sys.exit(0 if check_trace(*sys.argv[2:]) else 1)
    if len(sys.argv) == 4 and sys.argv[1] == "stats":
        sys.exit(0 if check_stats(*sys.argv[2:]) else 1)
    sys.exit(__doc__)
