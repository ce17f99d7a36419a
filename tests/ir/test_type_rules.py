"""The op registry states each type rule once; the front end and the validator use it.

``infer`` and ``type_rule`` are one rule (the validator's answer is what ``infer`` says), the
built-in functions of the source come from the registry, and ``kera.ir`` stands alone: it
never loads the parser, the elaborator or the checker.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kera.check import typeck
from kera.elaborate import build_program
from kera.ir.ops import OPS, OpTypeError, builtins
from kera.ir.types import BOOL, ArrayType, TupleType, sint, uint

TYPES = [BOOL, uint(1), uint(5), uint(8), sint(8), uint(32), sint(32), uint(33), uint(64),
         ArrayType(uint(8), 2), TupleType(()), TupleType((uint(8), BOOL))]
INFERRED = sorted(n for n, d in OPS.items() if d.infer is not None)


def test_kera_ir_does_not_load_the_front_end() -> None:
    code = ("import sys, kera.ir.ops, kera.hls.models\n"
            "assert 'kera.ir.ops' in sys.modules and 'kera.hls.models' in sys.modules\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[:2] in "
            "(['kera', 'syntax'], ['kera', 'elaborate'], ['kera', 'check']))\n"
            "print('loaded:', ','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "loaded:"


def test_every_op_has_one_rule() -> None:
    produced = {n for n, d in OPS.items() if d.infer is None}
    assert produced == {"param", "state", "const", "cast", "slice"}  # their producer picks the type
    assert all(d.check is not None for d in OPS.values())


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(INFERRED), st.lists(st.sampled_from(TYPES), min_size=0, max_size=3),
       st.sampled_from(TYPES), st.integers(-1, 3))
def test_the_validator_rule_is_what_infer_says(op: str, ins: list, other, index: int) -> None:
    opdef = OPS[op]
    if opdef.arity is not None:
        ins = (ins * 3)[: opdef.arity] if ins else [uint(8)] * opdef.arity
    attrs = {key: index for key in opdef.attrs}
    try:
        want = opdef.infer(ins, attrs)
    except OpTypeError as e:
        assert opdef.type_rule(ins, attrs, other) == str(e)
        assert e.problem in ("mismatch", "operand", "width", "attr", "range", "count")
        assert (e.operand is not None) == (e.problem == "operand")
        return
    assert opdef.type_rule(ins, attrs, want) is None
    if other != want:
        assert opdef.type_rule(ins, attrs, other) == f"result type must be {want}, not {other}"


def test_builtins_come_from_the_registry() -> None:
    names = set(builtins())
    assert names == {"rotl", "rotr", "min", "max", "popcount", "clz", "ctz", "concat", "slice",
                     "widening_mul"}
    assert typeck.BUILTINS == builtins()
    for name, opdef in builtins().items():  # the roles of the arguments agree with the rule
        assert len(opdef.arg_roles) == opdef.arity, name
        ins = [uint(32) if role == "amount" else sint(8) for role in opdef.arg_roles]
        if opdef.infer is not None:
            out = opdef.infer(ins, {})
            assert [t == out for t in ins] == [r == "result" for r in opdef.arg_roles], name
        assert set(opdef.arg_roles) <= {"result", "same", "amount", "own"}
    for name, opdef in builtins().items():
        n = opdef.arity
        args = ", ".join(["a"] * (n + 1))
        generics = "::<0, 1>" if name == "slice" else ""
        program = build_program("t.kera", f"fn f(a: u8) -> u8 {{ {name}{generics}({args}) }}",
                                need_top=False)
        want = f"`{name}` takes {n} argument{'s' * (n != 1)}, but {n + 1} were given"
        assert want in [d.message for d in program.diagnostics], name


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("rotl(a, b)", "`rotl` amount must be an unsigned integer, not `i8`"),
        ("rotr(b, a)", None),
        ("popcount(c)", "`popcount` operand must be an integer, not `bool`"),
        ("min(a, b)", "mismatched types: min(`u8`, `i8`)"),
        ("concat(c, a)", "`concat` operand must be an integer, not `bool`"),
        ("widening_mul(a, a)", None),
        ("slice::<4, 4>(c)", "`slice` operand must be an integer, not `bool`"),
    ],
)
def test_builtin_diagnostics_phrase_the_registry_rule(call: str, message: str | None) -> None:
    src = f"fn f(a: u8, b: i8, c: bool) -> u8 {{ let r = {call}; 0 }}"
    errors = [d.message for d in build_program("t.kera", src, need_top=False).diagnostics]
    assert errors == ([message] if message else [])
