"""The ten-line quick start of docs/python.md (and the README) runs."""
from __future__ import annotations

import contextlib
import io
import pathlib
import re

import numpy as np

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_quickstart_runs():
    text = DOC.read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert len(code.strip().splitlines()) == 10
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {})
    numbers = [int(v) for v in re.findall(r"-?\d+", out.getvalue())]
    np.testing.assert_array_equal(numbers, np.arange(256) + 1)


def test_readme_quickstart_is_the_documented_one():
    readme = (DOC.parents[1] / "README.md").read_text()
    pattern = r"```python\n(.*?)```"
    assert re.search(pattern, readme, re.S).group(1) == re.search(pattern, DOC.read_text(), re.S).group(1)
