"""The goldens of the Mosaic reader (docs/mosaic.md): every op of the
supported list is read from a module jax 0.10.2 lowered (the fixtures
mosaic/NAME/kernel.mlir, from mosaic/make_fixtures.py, each with sc-sim's
program of the same kernel), and each module runs clean with its values
paired to the program's; the ops jax does not emit for SparseCore are
read from a real module edited to hold them.  `sc-sim diff` works on the
written program, and shows a seeded wrong lowering."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from sc_sim import binary, mosaic

HERE = os.path.join(os.path.dirname(__file__), "mosaic")
DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "mosaic.md")
FIXTURES = sorted(d for d in os.listdir(HERE) if os.path.isfile(os.path.join(HERE, d, "kernel.mlir")))

# Ops of the list jax 0.10.2 emits for no SparseCore kernel the reader can
# read: arith.floordivsi, maxnumf, minnumf (no rule emits them), arith.negf
# (only lax.logistic_p's rule, which also needs math.exp; lax.neg lowers to
# 0 - x).  Each is read from an edit of a real module below.
NOT_EMITTED = {"arith.floordivsi", "arith.maxnumf", "arith.minnumf", "arith.negf"}


def _copy(tmp_path, name, edit=None):
    d = tmp_path / name
    shutil.copytree(os.path.join(HERE, name), d)
    if edit is not None:
        k = d / "kernel.mlir"
        k.write_text(edit(k.read_text()))
    return d


def _ops_of(text: str) -> tuple[set[str], set[str]]:
    """The op names of a module (parsed by jaxlib's MLIR), and the
    comparison predicates it uses as 'arith.cmpi slt'."""
    from jaxlib.mlir import ir
    names, preds = set(), set()
    with mosaic.context():
        module = ir.Module.parse(text)

        def visit(op):
            names.add(op.name)
            if op.name in ("arith.cmpi", "arith.cmpf"):
                preds.add(f"{op.name} {str(op.attributes['predicate']).split(':')[0].strip()}")
            for r in op.regions:
                for b in r.blocks:
                    for o in b.operations:
                        visit(o.operation)
        visit(module.operation)
    return names, preds


def _doc_ops() -> set[str]:
    """The ops docs/mosaic.md's table lists (its first column)."""
    ops = set()
    text = open(DOC).read()
    table = text[text.index("## Supported ops"):text.index("Anything else is an input error")]
    for row in table.splitlines():
        if not row.startswith("| `"):
            continue
        cell = row.split(" | ")[0]
        for name in re.findall(r"`([a-z_]+\.[a-z_0-9/]+)", cell):
            dialect, rest = name.split(".", 1)
            ops.update(f"{dialect}.{o}" for o in rest.split("/"))
    return ops


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_runs_clean_with_its_values_paired(tmp_path, capfd, name):
    d = _copy(tmp_path, name)
    text = mosaic.lowered_text((d / "kernel.mlir").read_text(), str(d / "program.yaml"))
    assert "values unmatched" not in text.splitlines()[0]
    assert mosaic.main([str(d / "kernel.mlir"), str(d / "program.yaml")]) == 0
    assert re.search(r"ok: \d+ operations on \d+ subcore\(s\), \d+ values verified",
                     capfd.readouterr().out)


def test_every_listed_op_is_read_from_a_fixture():
    seen = set()
    for name in FIXTURES + [".."]:
        path = os.path.join(HERE, name, "kernel.mlir") if name != ".." else os.path.join(HERE, "seeded.mlir")
        seen |= _ops_of(open(path).read())[0]
    listed = _doc_ops()
    assert len(listed) >= 60
    assert listed - seen == NOT_EMITTED, sorted(listed - seen)


def test_every_comparison_predicate_is_read_from_a_fixture():
    preds = set()
    for name in FIXTURES:
        preds |= _ops_of(open(os.path.join(HERE, name, "kernel.mlir")).read())[1]
    # cmpi: eq ne slt sle sgt sge ult ule ugt uge; cmpf (jax 0.10.2):
    # oeq one ogt oge olt ole
    want = {f"arith.cmpi {p}" for p in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)} | \
        {f"arith.cmpf {p}" for p in (1, 2, 3, 4, 5, 6)}
    assert want <= preds, sorted(want - preds)


def _sub(pattern, repl, count=1):
    def f(src):
        new, n = re.subn(pattern, repl, src, count=count, flags=re.M)
        assert n == count, pattern
        return new
    return f


# (ops, fixture, meaning-keeping edit): the inputs make both forms equal
EDITS = [
    # floats: no NaN among the inputs, so maxnumf/minnumf are maximumf/minimumf
    ("maxnumf", "floats", _sub(r"arith\.maximumf", "arith.maxnumf")),
    ("minnumf", "floats", _sub(r"arith\.minimumf", "arith.minnumf")),
    # -u of floats is 0 - u (jax 0.10.2); no u is zero, so negf is the same
    ("negf", "floats", _sub(r"(%\d+) = vector\.broadcast %cst_18 : f32 to vector<16xf32>(.*)\n"
                            r"(\s*%\d+) = arith\.subf \1, (%\d+) : vector<16xf32>",
                            r"\1 = vector.broadcast %cst_18 : f32 to vector<16xf32>\2\n"
                            r"\3 = arith.negf \4 : vector<16xf32>")),
]


@pytest.mark.parametrize("what,name,edit", EDITS, ids=[e[0] for e in EDITS])
def test_an_op_jax_does_not_emit_is_read(tmp_path, capfd, what, name, edit):
    d = _copy(tmp_path, name, edit)
    names, _ = _ops_of((d / "kernel.mlir").read_text())
    assert any(what in n for n in names), names
    assert mosaic.main([str(d / "kernel.mlir"), str(d / "program.yaml")]) == 0, capfd.readouterr().err


def test_floordivsi_rounds_down(tmp_path, capfd):
    """lax.div(u, 4) is arith.divsi (toward zero); as arith.floordivsi the
    module rounds down, which the reference's truncating division catches
    at the first negative u not a multiple of 4: u[0] = -211, lax.div
    gives -52, floor division -53 (int_arith: o[3] = lax.div(u, 4))."""
    src = open(os.path.join(HERE, "int_arith", "kernel.mlir")).read()
    m = re.search(r"arith\.divsi (%\d+), (%\w+) : vector<16xi32>", src)
    assert m
    d = _copy(tmp_path, "int_arith", _sub(re.escape(m.group(0)),
                                          f"arith.floordivsi {m.group(1)}, {m.group(2)} : vector<16xi32>"))
    assert mosaic.main([str(d / "kernel.mlir"), str(d / "program.yaml")]) == 3
    assert "reference -52, lowering -53" in capfd.readouterr().err


def test_multi_dimensional_iota(tmp_path, capfd):
    """jax 0.10.2 emits 1-D tpu.iota only on SparseCore; a 2x8 iota along
    dimension 1, shape-cast to 16 lanes, is lane k % 8; along dimension
    0, lane k // 8.  The module with one in place of the 1-D iota of the
    seeded kernel (a where on iota > i) verifies exactly when it is the
    same vector: dimension 1 of 1x16 is."""
    for shape, dim, rc in (("1x16", 1, 0), ("16x1", 0, 0), ("2x8", 1, 3)):
        d = tmp_path / f"s{shape}"
        shutil.copytree(HERE, d, ignore=shutil.ignore_patterns(*FIXTURES, "*.py"))
        src = (d / "seeded.mlir").read_text()
        m = re.search(r"(%\d+) = tpu\.iota \{dimensions = array<i32: 0>\} : vector<16xi32>( loc\([^)]*\))", src)
        assert m
        new = (f"%iota_nd = tpu.iota {{dimensions = array<i32: {dim}>}} : vector<{shape}xi32>{m.group(2)}\n"
               f"      {m.group(1)} = vector.shape_cast %iota_nd : vector<{shape}xi32> to "
               f"vector<16xi32>{m.group(2)}")
        (d / "seeded.mlir").write_text(src.replace(m.group(0), new))
        assert mosaic.main([str(d / "seeded.mlir"), str(d / "seeded.yaml")]) == rc, capfd.readouterr().err
        capfd.readouterr()


def _run(args, cwd):
    return subprocess.run([binary.find_binary()] + args, cwd=cwd, capture_output=True, text=True)


def test_sc_sim_diff_on_the_written_program(tmp_path, capfd):
    """`python -m sc_sim mosaic` writes PROGRAM.jax.yaml; `sc-sim run` and
    `sc-sim diff` of it give its verdict: clean, every value matched."""
    d = tmp_path / "m"
    shutil.copytree(HERE, d, ignore=shutil.ignore_patterns(*FIXTURES, "*.py"))
    assert mosaic.main([str(d / "seeded.mlir"), str(d / "seeded.yaml")]) == 0
    assert (d / "seeded.jax.yaml").is_file()
    r = _run(["diff", "seeded.jax.yaml"], d)
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"diff: \d+ matched, 0 mismatched\n", r.stdout), r.stdout
    assert _run(["run", "seeded.jax.yaml"], d).returncode == 0


def test_sc_sim_diff_shows_a_seeded_wrong_lowering(tmp_path, capfd):
    """The seeded kernel's buf2[0:8] = buf[8:16] * 3 (seeded.yaml line 35)
    with the multiplication made an addition: subcore 0's lane 0 reads
    buf[8] = x[0, 8] - 3 * 5 = (3 * 8 - 20) - 15 = -11 after the loop, so
    the reference stores -33 and the edited module -11 + 3 = -8."""
    d = tmp_path / "m"
    shutil.copytree(HERE, d, ignore=shutil.ignore_patterns(*FIXTURES, "*.py"))
    k = d / "seeded.mlir"
    k.write_text(_sub(r"arith\.muli %10, %11", "arith.addi %10, %11")(k.read_text()))
    assert mosaic.main([str(k), str(d / "seeded.yaml")]) == 3
    r = _run(["diff", "seeded.jax.yaml"], d)
    assert r.returncode == 3
    m = re.match(r"diff: \d+ matched, (\d+) mismatched\n", r.stdout)
    assert m and int(m.group(1)) > 0, r.stdout
    assert re.search(r"^ +35 +set new +0 +lane 0 +-33 +-8 *$", r.stdout, re.M), r.stdout
    assert "seeded.jax.yaml:35:5: error: mismatch: memory after the store of 'set' on subcore " \
           "0.0, lane 0: reference -33, lowering -8" in r.stderr


def test_jax_ne_of_nan_is_false(lanes):
    """jax 0.10.2 lowers lax.ne of floats to arith.cmpf one (ordered and
    unequal, `_cmpf_lowering_types`), so NaN != NaN is false in JAX's
    module, where lax.ne (numpy's not_equal, IEEE 754) gives true."""
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    import sc_sim
    from helpers import sds, vmesh
    x = np.where(np.arange(lanes) % 2 == 0, np.nan, 1.5).astype(np.float32)

    def fn(a):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.float32), pltpu.VMEM((lanes,), jnp.int32)])
        def ne(x_hbm, o_hbm, xv, o):
            pltpu.sync_copy(x_hbm, xv)
            v = xv[...]
            o[...] = jnp.where(v != v, 1, 0)
            pltpu.sync_copy(o, o_hbm)
        return ne(a)
    out, _ = sc_sim.run(fn, jnp.asarray(x), chip="tpu7x", jax_check=False)
    np.testing.assert_array_equal(np.asarray(out), (x != x).astype(np.int32))  # 1 at the NaNs
    with pytest.raises(sc_sim.VerificationError, match=r"lane 0: reference 1, lowering 0"):
        sc_sim.run(fn, jnp.asarray(x), chip="tpu7x", jax_check=False, lowering="jax")


# Seeded wrong edits of the ops the seeded kernel (test_mosaic.py) lacks,
# each caught: exit 3 (verification) or 4 (a fault)
SEEDED_OPS = [
    ("bitcast view of the wrong ref", "views",
     _sub(r"%40 = tpu\.memref_bitcast %arg4 :", "%40 = tpu.memref_bitcast %arg5 :")),
    ("reshape view of the wrong ref", "views",
     _sub(r"%26 = tpu\.memref_reshape %arg5 :", "%26 = tpu.memref_reshape %arg4 :")),
    ("wrong scan kind", "valops", _sub(r"%66 = tpu\.scan <sum>", "%66 = tpu.scan <max>")),
    ("wrong all_reduce kind", "valops", _sub(r"kind = #tpu\.reduction_kind<sum>", "kind = #tpu.reduction_kind<find_first_set>")),
    ("gather by the values", "valops", _sub(r"tpu\.dynamic_gather %1\[%52\]", "tpu.dynamic_gather %1[%1]")),
    ("sort descending", "sort", _sub(r"= tpu\.sort %2, %2 masked %cst :", "= tpu.sort %2, %2 masked %cst {descending = true} :")),
    ("a conversion for a bitcast", "valops",
     _sub(r"%12 = vector\.bitcast %11 : vector<16xf32> to vector<16xi32>",
          "%12 = arith.fptosi %11 : vector<16xf32> to vector<16xi32>")),
]


@pytest.mark.parametrize("name,fixture,edit", SEEDED_OPS, ids=[e[0] for e in SEEDED_OPS])
def test_seeded_wrong_op_is_caught(tmp_path, capfd, name, fixture, edit):
    d = _copy(tmp_path, fixture, edit)
    rc = mosaic.main([str(d / "kernel.mlir"), str(d / "program.yaml")])
    assert rc in (3, 4), (rc, capfd.readouterr().err)


# ---------------------------------------------------------------------------
# Bad input: each error the reader gives (exit 2), on an edit of a real module (or
# of its program), compared whole: FILE:LINE:COL: error: MESSAGE, where
# LINE:COL is that of the op the edit made (found in the edited text, the
# column of its first character) or 0:0 for the module as a whole.

def _after(anchor, line):
    """Insert `line` after the first line matching anchor, at its indent."""
    def f(src):
        m = re.search(r"^( *)" + anchor + r".*$", src, re.M)
        assert m, anchor
        return src[:m.end()] + "\n" + m.group(1) + line + src[m.end():]
    return f


def _yaml_edit(pattern, repl):
    def f(src):
        new, n = re.subn(pattern, repl, src, count=1, flags=re.M)
        assert n == 1, pattern
        return new
    return f


IOTA = r"%23 = tpu\.iota"
VEC = "vector<16xi32>"
SEM = "memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>"
# (name, fixture, .mlir edit, program edit, the edited op's text (None: 0:0), message)
BAD_INPUT = [
    ("not MLIR", "seeded", _sub(r"arith\.muli %10, %11 :", "arith.muli %10, :"), None,
     ("arith.muli %10, :", " :"), "not a valid MLIR module: Unable to parse module assembly:"),
    ("two functions", "seeded", _after(r"module attributes", "func.func private @other()"), None,
     None, "the module holds 2 func.func ops, not one"),
    ("core type", "seeded", _sub("sc_vector_subcore", "sc_scalar_subcore"), None, "func.func @seeded",
     "attribute tpu.core_type is #tpu.core_type<sc_scalar_subcore>, the program's kernel "
     "vector_subcore wants #tpu.core_type<sc_vector_subcore>"),
    ("no iteration bounds", "seeded", _sub(r"iteration_bounds = array<i64: 1, 4>, ", ""), None,
     "func.func @seeded", "attribute iteration_bounds is missing"),
    ("function attribute", "seeded", _sub(r"scalar_prefetch = 0 : i64, ", "foo = 1 : i64, scalar_prefetch = 0 : i64, "),
     None, "func.func @seeded", "attribute foo of func.func is outside the subset"),
    ("scalar prefetch", "seeded", _sub(r"scalar_prefetch = 0 : i64", "scalar_prefetch = 1 : i64"), None,
     "func.func @seeded", "attribute scalar_prefetch = 1 : i64 is outside the subset (0 only)"),
    ("no ref left", "seeded", _after(r"%\w+ = tpu\.sem_alloc", f"%extra = tpu.sem_alloc : {SEM}"), None,
     "%extra = tpu.sem_alloc", f"tpu.sem_alloc result of type {SEM} has no ref of the program left to bind to"),
    ("argument mismatch", "seeded", None, _yaml_edit(r"^(  buf2:.*\n)(  sem:.*\n)", r"\2\1"), "func.func @seeded",
     "argument %arg5 of type memref<16xi32, #tpu.memory_space<vmem>> does not match the program's ref "
     "'sem' (semaphore, shape [], int32)"),
    ("refs left unbound", "seeded", None,
     _yaml_edit(r"^(  scoped5:.*\n)", r'\1  extra: {space: "vmem", shape: [16], dtype: "int32"}\n'), None,
     "the program's refs extra are bound to no argument or allocation of the module"),
    ("type", "seeded", _after(IOTA, "%c3_i4 = arith.constant 3 : i4"), None, "%c3_i4 = arith.constant",
     "arith.constant: type i4 is outside the subset"),
    ("non-splat constant", "seeded", _after(IOTA, f"%cv = arith.constant dense<[0, 1]> : vector<2xi32>"), None,
     "%cv = arith.constant", "arith.constant: a non-splat vector dense<[0, 1]> : vector<2xi32> is outside the subset"),
    ("cmpf predicate", "floats", _sub(r"arith\.cmpf olt,", "arith.cmpf ord,"), None, "arith.cmpf ord",
     "arith.cmpf: predicate 7 is outside the subset"),
    ("broadcast of a vector", "int_arith", _after(r"%102 = vector\.extract", f"%bv = vector.broadcast %101 : vector<1xi32> to {VEC}"),
     None, "%bv = vector.broadcast", "vector.broadcast: a vector source of another shape is outside the subset"),
    ("unknown op", "seeded", _sub(r"arith\.muli %10, %11 : vector<8xi32>", "arith.ceildivsi %10, %11 : vector<8xi32>"),
     None, "%12 = arith.ceildivsi", "operation arith.ceildivsi is outside the subset sc-sim reads"),
    ("unknown attribute", "seeded", _sub(r"(%26 = tpu\.vector_load %arg4\[%c0_10\]) \{strides = array<i32>\}",
                                         r"\1 {strides = array<i32>, foo = 1 : i32}"), None, "%26 = tpu.vector_load",
     "tpu.vector_load: attribute foo is outside the subset"),
    ("iota of two dimensions", "seeded", _after(IOTA, "%q = tpu.iota {dimensions = array<i32: 0, 1>} : vector<2x8xi32>"),
     None, "%q = tpu.iota", "tpu.iota: dimensions [0, 1] of vector<2x8xi32> are outside the subset (one dimension "
     "of an integer vector)"),
    ("sparse constant", "seeded", _after(IOTA, "%q = arith.constant sparse<[[0]], [1]> : vector<8xi32>"), None,
     "%q = arith.constant sparse", "arith.constant: value sparse<0, 1> : vector<8xi32> is outside the subset"),
    ("dynamic extract", "seeded", _after(IOTA, "%cq = arith.constant 0 : index\n      %q = vector.extract %23[%cq] : i32 from vector<16xi32>"), None,
     "%q = vector.extract", "vector.extract: a dynamic position is outside the subset"),
    ("2-D gather", "seeded", _after(IOTA, "%q2 = vector.shape_cast %23 : vector<16xi32> to vector<2x8xi32>\n"
                                          "      %q = tpu.dynamic_gather %q2[%q2] in [0] : vector<2x8xi32>, "
                                          "vector<2x8xi32> -> vector<2x8xi32>"), None,
     "%q = tpu.dynamic_gather", "tpu.dynamic_gather: only dimension 0 of a 1-D vector is inside the subset"),
    ("2-D concatenate", "seeded", _after(IOTA, "%q2 = vector.shape_cast %23 : vector<16xi32> to vector<2x8xi32>\n"
                                               "      %q = tpu.concatenate %q2, %q2 in 0 : vector<2x8xi32>, "
                                               "vector<2x8xi32> -> vector<4x8xi32>"), None,
     "%q = tpu.concatenate", "tpu.concatenate: only dimension 0 of 1-D vectors is inside the subset"),
    ("vector above the memref's rank", "seeded",
     _after(IOTA, "%cq = arith.constant 0 : index\n      %q = tpu.vector_load %arg4[%cq] {strides = array<i32>} : memref<16xi32, "
                  "#tpu.memory_space<vmem>>, vector<2x8xi32>,"), None,
     "%q = tpu.vector_load", "tpu.vector_load: a vector of rank above the memref's is outside the subset"),
    ("dynamic slice size", "seeded",
     _after(IOTA, "%q = tpu.memref_slice %arg4[%22] <%22> : memref<16xi32, #tpu.memory_space<vmem>> -> "
                  "memref<?xi32, #tpu.memory_space<vmem>>"), None,
     "%q = tpu.memref_slice", "tpu.memref_slice: dynamic sizes are outside the subset"),
]
# Not reachable from a module jaxlib's parser accepts (its verifiers reject
# the input first, as "not a valid MLIR module"): a cmpi predicate beyond
# the ten, non-unit load strides, a strided extract_strided_slice, a scan
# kind other than sum/max/min, an all_reduce kind other than
# sum/find_first_set, a tpu.log of two inputs, a squeeze that changes the
# element count, an scf.while without scf.condition, an operand or memref
# defined by no op the reader translated.


def _position(text, what):
    if what is None:
        return 0, 0
    if isinstance(what, tuple):  # a parse error: MLIR's column of the token
        for i, line in enumerate(text.splitlines(), 1):
            k = line.find(what[0])
            if k >= 0:
                return i, k + what[0].index(what[1]) + 1
    for i, line in enumerate(text.splitlines(), 1):
        k = line.find(what)
        if k >= 0:
            return i, len(line) - len(line.lstrip()) + 1
    raise AssertionError(what)


@pytest.mark.parametrize("name,fixture,edit,yedit,what,msg", BAD_INPUT, ids=[b[0] for b in BAD_INPUT])
def test_bad_input_error_line(tmp_path, capfd, name, fixture, edit, yedit, what, msg):
    if fixture == "seeded":
        d = tmp_path / "seeded"
        shutil.copytree(HERE, d, ignore=shutil.ignore_patterns(*FIXTURES, "*.py"))
        k, y = d / "seeded.mlir", d / "seeded.yaml"
    else:
        d = _copy(tmp_path, fixture)
        k, y = d / "kernel.mlir", d / "program.yaml"
    if edit is not None:
        k.write_text(edit(k.read_text()))
    if yedit is not None:
        y.write_text(yedit(y.read_text()))
    assert mosaic.main([str(k), str(y)]) == 2
    err = capfd.readouterr().err.splitlines()
    line, col = _position(k.read_text(), what)
    assert err[0] == f"{k}:{line}:{col}: error: {msg}", err
