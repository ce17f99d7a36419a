"""Mutants of real programs: one to three tokens of an example replaced, dropped or doubled.

Each is refused with diagnostics (``KeraError``), or it builds and ``-O2`` (validated after
every pass) computes the bits ``-O0`` does on edge inputs. Any other exception is a compiler
bug that a user would have met as exit 70. Longer runs of the same idea (tens of thousands of
mutants, through the schedule, the Verilog and the software targets too; docs/performance.md)
found what is now refused with a located error: `#[pipeline(ii = 4294967295u32)]` and
`[[0i32; 4]; 4294967295u32]` ran out of memory, `fx<16, 127> + fx<16, 127>` raised.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kera
from kera.diagnostics import KeraError
from kera.elaborate.items import scalar_count
from kera.interp import evaluate
from kera.ir import values
from kera.opt import optimize
from kera.sim.parity import edge_vectors
from tests.conftest import EXAMPLES

SOURCES = {p.name: p.read_text() for p in sorted(EXAMPLES.glob("*.kera"))
           if p.stem not in ("aes128", "sha256")}  # their -O0 interpretation alone is seconds
TOKEN = re.compile(r"\d\w*|[A-Za-z_]\w*|<<|>>|<=|>=|==|!=|&&|\|\||->|\.\.|::|\S")
INTS = ["0", "1", "2", "7", "8", "15", "16", "31", "32", "63", "64", "255", "256", "65535",
        "1u8", "127i8", "-1", "4294967295u32", "0xffffffffffffffff", "1048577"]
TYPES = ["u1", "u7", "u8", "i8", "u16", "i16", "u17", "u32", "i32", "u64", "i64", "bool"]
BINARY = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "<", "<=", "==", "!=", ">", ">="]
MAX_NODES = 3_000  # a mutant grown past this (a loop bound of 65535) is skipped


@st.composite
def mutants(draw: st.DrawFn) -> str:
    src = SOURCES[draw(st.sampled_from(sorted(SOURCES)))]
    for _ in range(draw(st.integers(1, 3))):
        tokens = list(TOKEN.finditer(src))
        tok = tokens[draw(st.integers(0, len(tokens) - 1))]
        text = tok.group()
        if re.fullmatch(r"\d\w*", text):
            new = draw(st.sampled_from(INTS))
        elif re.fullmatch(r"[ui]\d+|bool", text):
            new = draw(st.sampled_from(TYPES))
        elif text in BINARY:
            new = draw(st.sampled_from(BINARY))
        else:
            new = draw(st.sampled_from(["", f"{text} {text}", *BINARY[:4]]))
        src = src[: tok.start()] + new + src[tok.end() :]
    return src


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=mutants())
def test_a_mutant_is_refused_or_optimised_to_the_same_bits(source: str) -> None:
    try:
        plain = kera.load(text=source, name="mutant.kera", opt_level=0)
    except KeraError:
        return
    params, result = plain.graph.signature(plain.top)
    if len(plain.graph.nodes) > MAX_NODES or sum(scalar_count(t) for _, t in params) > 256:
        return  # edge vectors give each input scalar each of its edge values: rows grow with it
    optimised = optimize(plain.graph, 2, validate="full")
    rows = edge_vectors(params, 64)
    seen = []
    for graph in (plain.graph, optimised):
        try:
            out = evaluate(graph, plain.top, rows.inputs, rows=rows.rows)
        except KeraError as e:  # e.g. a stream too long to hold: the same for both graphs
            seen.append(e.message)
            continue
        seen.append(values.to_json_rows(out, result, rows.rows))
    assert seen[0] == seen[1], source
