"""Translation of control flow: scan and while (loops, with carries),
cond, parallel_loop."""
from __future__ import annotations

from typing import Any

import numpy as np
from jax._src import core as jax_core

from . import exprs
from .errors import UnsupportedError
from .program import Op
from .translate import RefVal, Translator, format_source, handler


# -- control flow ------------------------------------------------------------

def _counter_pattern(jaxpr: jax_core.Jaxpr, index: int, out_index: int) -> bool:
    """Whether output `out_index` is `invars[index] + 1` (the loop counter
    fori_loop and pl.loop carry)."""
    target = jaxpr.outvars[out_index]
    var = jaxpr.invars[index]
    for e in jaxpr.eqns:
        if e.outvars and e.outvars[0] is target and e.primitive.name == "add":
            a, b = e.invars
            lit = b if isinstance(b, jax_core.Literal) else a
            other = a if lit is b else b
            return other is var and isinstance(lit, jax_core.Literal) \
                and int(lit.val) == 1
    return False


def _carry_fields(t: Translator, names: list[str], inits: list[str]) -> dict:
    return dict(zip(names, inits))


@handler("scan")
def _scan(t: Translator, eqn, out, src) -> None:
    p = eqn.params
    closed = p["jaxpr"]
    jaxpr = closed.jaxpr
    if closed.consts:
        raise UnsupportedError("a scan body with constants")
    nc, ncar, length = p["num_consts"], p["num_carry"], p["length"]
    if p["reverse"]:
        raise UnsupportedError(f"scan(reverse=True) at {format_source(src)}")
    n_xs = len(eqn.invars) - nc - ncar
    ys = eqn.outvars[ncar:]
    if n_xs or any(not isinstance(y, jax_core.DropVar) and y in t.used for y in ys):
        raise UnsupportedError(
            f"scan over xs or stacking ys at {format_source(src)} (only carries "
            "are translated)")
    consts = [t.read(v) for v in eqn.invars[:nc]]
    inits = [t.read(v) for v in eqn.invars[nc:nc + ncar]]
    for var, v in zip(jaxpr.invars[:nc], consts):
        t.env[var] = v
    counter = ncar >= 1 and _counter_pattern(jaxpr, nc, 0)
    if counter:
        var_name = t.fresh()
        start = inits[0]
        t.env[jaxpr.invars[nc]] = var_name
        carry_vars = jaxpr.invars[nc + 1:nc + ncar]
        carry_inits = inits[1:]
        carry_outs = jaxpr.outvars[1:ncar]
        hi: Any = f"{start} + {length}" if not exprs.is_int_literal(start) \
            else int(start) + length
        rng = [exprs.range_item(start), hi, 1]
    else:
        var_name = t.fresh()
        carry_vars = jaxpr.invars[nc:nc + ncar]
        carry_inits = inits
        carry_outs = jaxpr.outvars[:ncar]
        rng = [0, length, 1]
    carry_names = [t.fresh() for _ in carry_vars]
    for var, name in zip(carry_vars, carry_names):
        t.env[var] = name
    body: list[Op] = []
    _use_outs(t, jaxpr)
    t.eqns(jaxpr.eqns, body)
    fields: list[tuple[str, Any]] = [("var", var_name), ("range", rng)]
    if carry_names:
        fields.append(("carry", dict(zip(carry_names,
                                         [exprs.carry_init(v) for v in carry_inits]))))
    fields.append(("body", body))
    if carry_names:
        fields.append(("next", {n: _as_text(t, o) for n, o in
                                zip(carry_names, carry_outs)}))
    out.append(Op("loop", fields, src))
    outs = eqn.outvars[:ncar]
    if counter:
        hi_text = rng[1] if isinstance(rng[1], str) else \
            f"astype({rng[1]}, int32)"
        if not isinstance(outs[0], jax_core.DropVar):
            name = t.fresh()
            out.append(Op("let", [("name", name), ("value", hi_text)], src))
            t.env[outs[0]] = name
        outs = outs[1:]
    for o, name in zip(outs, carry_names):
        t.bind(o, name)


def _use_outs(t: Translator, jaxpr: jax_core.Jaxpr) -> None:
    t.used.update(v for v in jaxpr.outvars if isinstance(v, jax_core.Var))


def _as_text(t: Translator, atom: Any) -> str:
    v = t.read(atom)
    if isinstance(v, RefVal):
        raise UnsupportedError("a loop carrying a ref")
    return v


@handler("while")
def _while(t: Translator, eqn, out, src) -> None:
    p = eqn.params
    cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
    if cj.consts or bj.consts:
        raise UnsupportedError("a while_loop with closed-over constants")
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cconsts = [t.read(v) for v in eqn.invars[:cn]]
    bconsts = [t.read(v) for v in eqn.invars[cn:cn + bn]]
    inits = [t.read(v) for v in eqn.invars[cn + bn:]]
    for var, v in zip(bj.jaxpr.invars[:bn], bconsts):
        t.env[var] = v
    # fori_loop with dynamic bounds: carries (i, upper, *rest), cond i < upper.
    cjx = cj.jaxpr
    if (len(inits) >= 2 and len(cjx.eqns) == 1 and cjx.eqns[0].primitive.name == "lt"
            and cjx.eqns[0].invars[0] is cjx.invars[cn]
            and cjx.eqns[0].invars[1] is cjx.invars[cn + 1]
            and _counter_pattern(bj.jaxpr, bn, 0)
            and bj.jaxpr.outvars[1] is bj.jaxpr.invars[bn + 1]):
        var_name = t.fresh()
        t.env[bj.jaxpr.invars[bn]] = var_name
        t.env[bj.jaxpr.invars[bn + 1]] = inits[1]
        carry_vars = bj.jaxpr.invars[bn + 2:]
        carry_names = [t.fresh() for _ in carry_vars]
        for var, name in zip(carry_vars, carry_names):
            t.env[var] = name
        body: list[Op] = []
        _use_outs(t, bj.jaxpr)
        t.eqns(bj.jaxpr.eqns, body)
        fields: list[tuple[str, Any]] = [
            ("var", var_name),
            ("range", [exprs.range_item(inits[0]), exprs.range_item(inits[1]), 1])]
        if carry_names:
            fields.append(("carry", dict(zip(carry_names, [exprs.carry_init(v)
                                                            for v in inits[2:]]))))
        fields.append(("body", body))
        if carry_names:
            fields.append(("next", {n: _as_text(t, o) for n, o in
                                    zip(carry_names, bj.jaxpr.outvars[2:])}))
        out.append(Op("loop", fields, src))
        outs = eqn.outvars
        for k, o in enumerate(outs[:2]):
            if not isinstance(o, jax_core.DropVar):
                name = t.fresh()
                out.append(Op("let", [("name", name), ("value",
                                     f"max({inits[0]}, {inits[1]})" if k == 0
                                     else inits[1])], src))
                t.env[o] = name
        for o, name in zip(outs[2:], carry_names):
            t.bind(o, name)
        return
    carry_names = [t.fresh() for _ in inits]
    for var, v in zip(cjx.invars[:cn], cconsts):
        t.env[var] = v
    for var, name in zip(cjx.invars[cn:], carry_names):
        t.env[var] = name
    cond = exprs.inline_expression(t, cjx, src)
    for var, name in zip(bj.jaxpr.invars[bn:], carry_names):
        t.env[var] = name
    body = []
    _use_outs(t, bj.jaxpr)
    t.eqns(bj.jaxpr.eqns, body)
    fields = [("carry", dict(zip(carry_names, [exprs.carry_init(v) for v in inits]))),
              ("cond", cond), ("body", body),
              ("next", {n: _as_text(t, o) for n, o in
                        zip(carry_names, bj.jaxpr.outvars)})]
    out.append(Op("while", fields, src))
    for o, name in zip(eqn.outvars, carry_names):
        t.bind(o, name)


@handler("cond")
def _cond(t: Translator, eqn, out, src) -> None:
    branches = eqn.params["branches"]
    index, *ops = eqn.invars
    idx = t.val(index)
    args = [t.read(v) for v in ops]
    results = [t.fresh() for _ in eqn.outvars]

    def branch(k: int) -> list[Op]:
        closed = branches[k]
        if closed.consts:
            raise UnsupportedError("a cond branch with constants")
        body: list[Op] = []
        res = t.sub(closed.jaxpr, [], args, body)
        for name, r in zip(results, res):
            if isinstance(r, RefVal):
                raise UnsupportedError("a cond returning a ref")
            body.append(Op("let", [("name", name), ("value", exprs.carry_init(r))],
                           src))
        return body

    if len(branches) == 1:
        out.extend(branch(0))
    elif len(branches) == 2:
        cond = idx if index.aval.dtype == np.bool_ else f"{idx} != 0"
        then_body = branch(1)
        else_body = branch(0)
        fields: list[tuple[str, Any]] = [("cond", cond), ("body", then_body)]
        if else_body:
            fields.append(("else", else_body))
        out.append(Op("when", fields, src))
    else:
        raise UnsupportedError(f"lax.switch with {len(branches)} branches")
    for o, name in zip(eqn.outvars, results):
        t.bind(o, name)


@handler("parallel_loop")
def _parallel_loop(t: Translator, eqn, out, src) -> None:
    """plsc.parallel_loop: iterations may overlap; running them in order is
    one of the schedules it allows, so it becomes a `loop`."""
    lower, upper, step, consts, carry = eqn.params["tree"].unflatten(eqn.invars)
    jaxpr = eqn.params["jaxpr"]
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    for var, c in zip(jaxpr.constvars, consts):
        t.env[var] = t.read(c)
    ivar, *cvars = jaxpr.invars
    var_name = t.fresh()
    t.env[ivar] = var_name
    names = [t.fresh() for _ in cvars]
    for v, n in zip(cvars, names):
        t.env[v] = n
    inits = [t.read(c) for c in carry]
    body: list[Op] = []
    _use_outs(t, jaxpr)
    t.eqns(jaxpr.eqns, body)
    rng = [exprs.range_item(t.read(lower)), exprs.range_item(t.read(upper)),
           exprs.range_item(t.read(step))]
    fields: list[tuple[str, Any]] = [("var", var_name), ("range", rng), ("parallel", True)]
    if names:
        fields.append(("carry", {n: exprs.carry_init(v) for n, v in zip(names, inits)}))
    fields.append(("body", body))
    if names:
        fields.append(("next", {n: _as_text(t, o) for n, o in zip(names, jaxpr.outvars)}))
    out.append(Op("loop", fields, src))
    for o, n in zip(eqn.outvars, names):
        t.bind(o, n)
