#!/usr/bin/env python3
"""Every golden's --json output against docs/schema/outcome.schema.json.

Runs each tests/golden/**/NAME.yaml and examples/NAME.yaml that has a
NAME.expected, as tests/golden.sh does (from a copy of its folder, with
NAME.args: none writes a file), plus `--json --stats FILE`; standard output must be exactly one
JSON object that the schema accepts (jsonschema, Draft 2020-12), its `exit`
the golden's expected exit status and the process's; a stats file, when the
run wrote one, must satisfy docs/schema/stats.schema.json.

usage: build/venv/bin/python tests/json_schema.py build/sc-sim
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import jsonschema
import referencing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_schemas():
    def read(name):
        with open(os.path.join(ROOT, "docs", "schema", name)) as f:
            return json.load(f)

    outcome, stats = read("outcome.schema.json"), read("stats.schema.json")
    for s in (outcome, stats):
        jsonschema.Draft202012Validator.check_schema(s)
    registry = referencing.Registry().with_resources(
        [(s["$id"], referencing.Resource.from_contents(s)) for s in (outcome, stats)])
    return (jsonschema.Draft202012Validator(outcome, registry=registry),
            jsonschema.Draft202012Validator(stats, registry=registry))


def goldens():
    for top in ("tests/golden", "examples"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith(".expected") and os.path.exists(os.path.join(d, f[:-9] + ".yaml")):
                    yield os.path.join(d, f[:-9])


# Fields worked out by hand (see each program's comment): golden -> {path: value}.
FIELDS = {
    "examples/race": {"status": "fault", "fault/kind": "race", "fault/subcore": "0.0", "fault/line": 15},
    "tests/golden/outputs/expect_index_2d": {"expect/check": "expect", "expect/index": [1, 1], "expect/got": 17,
                                             "expect/wanted": 18, "expect/subcore": "0.0"},
    "tests/golden/outputs/expect_refs_2d": {"expect/check": "refs", "expect/index": [1, 1], "expect/got": 5,
                                            "expect/wanted": 0, "expect/instance": "y"},
    "tests/golden/outputs/uninit_index_lane": {"fault/kind": "uninit", "fault/index": [5], "fault/line": 15},
    "tests/golden/outputs/no_races_mismatch": {"mismatch/index": [1], "mismatch/engine": 1, "mismatch/reference": 0,
                                               "mismatch/subcore": "0.0", "mismatch/where": "loaded value of 'get'"},
    "tests/golden/outputs/expect_error_other": {"status": "rejected", "error/id": "S4", "expect/check": "error",
                                                "expect/wanted": "ValueError: not this one"},
    "tests/golden/exec/expect_error_accepted": {"expect/check": "error", "expect/got": None},
}


def field(doc, path):
    for k in path.split("/"):
        doc = doc.get(k, KeyError) if isinstance(doc, dict) else KeyError
    return doc


def errors_of(validator, doc):
    return ["%s: %s" % ("/".join(map(str, e.absolute_path)) or "(top)", e.message)
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.path)))]


def check(sim, outcome, stats, base):
    """The problems of one golden (an empty list: none)."""
    name = os.path.basename(base)
    with open(base + ".expected") as f:
        want_exit = int(f.readline().split(":", 1)[1])
    args = []
    if os.path.exists(base + ".args"):
        with open(base + ".args") as f:
            args = f.readline().split()
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.dirname(base)
        stats_path = os.path.join(tmp, "stats.json")
        p = subprocess.run([sim] + args + [name + ".yaml", "--json", "--stats", stats_path], cwd=work,
                           capture_output=True, text=True, timeout=120)
        problems = []
        try:
            doc = json.loads(p.stdout)
        except ValueError as e:
            return ["standard output is not one JSON object (%s): %r" % (e, p.stdout[:200])]
        if p.stdout.count("\n") != 1:
            problems.append("standard output is not one line")
        problems += errors_of(outcome, doc)
        if p.returncode != want_exit:
            problems.append("exit %d, the golden expects %d" % (p.returncode, want_exit))
        if doc.get("exit") != p.returncode:
            problems.append("\"exit\": %r but the process exited %d" % (doc.get("exit"), p.returncode))
        for path, want in FIELDS.get(os.path.relpath(base, ROOT), {}).items():
            if field(doc, path) != want:
                problems.append("%s is %r, by hand %r" % (path, field(doc, path), want))
        if os.path.exists(stats_path):
            with open(stats_path) as f:
                problems += ["stats: " + e for e in errors_of(stats, json.load(f))]
        return problems


def main():
    sim = os.path.abspath(sys.argv[1])
    outcome, stats = load_schemas()
    bases = list(goldens())
    missing = set(FIELDS) - {os.path.relpath(b, ROOT) for b in bases}
    if missing:
        print("json schema: no golden %s" % ", ".join(sorted(missing)))
        return 1
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for base, problems in zip(bases, pool.map(lambda b: check(sim, outcome, stats, b), bases)):
            if problems:
                failed += 1
                print("json schema: %s ... FAILED" % os.path.relpath(base, ROOT), flush=True)
                for line in problems[:5]:
                    print("  " + line)
    print("json schema: %d goldens, %d failed" % (len(bases), failed))
    return 1 if failed or not bases else 0


if __name__ == "__main__":
    sys.exit(main())
