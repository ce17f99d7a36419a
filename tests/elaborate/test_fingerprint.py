"""The fingerprint ignores formatting, comments and local names, and tracks the computation."""

from __future__ import annotations

import os
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from kera.elaborate import build_program
from tests.conftest import ROOT

BASE = """
const TAPS: [i16; 4] = [3, -1, 4, 1];
#[top]
pub fn fir(x: [i16; 4]) -> i32 {
    let mut acc = 0i32;
    for i in 0..4 {
        acc += (x[i] as i32) * (TAPS[i] as i32);
    }
    acc
}
"""


def fp(src: str, top: str | None = None) -> str:
    program = build_program("t.kera", src, top)
    assert program.ok, [d.message for d in program.diagnostics]
    return program.graph.fingerprint()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from([" ", "\n", "\t  ", " /* c */ ", " // c\n", " /* /* n */ */ "]),
             min_size=1, max_size=6),
    st.sampled_from(["acc", "total", "s_1", "ünï", "x2"]),
)
def test_formatting_comments_and_local_names_do_not_change_it(trivia, local):
    pieces = BASE.split(" ")
    mixed = pieces[0] + "".join(trivia[i % len(trivia)] + p for i, p in enumerate(pieces[1:]))
    assert fp(mixed.replace("acc", local)) == fp(BASE)


def test_every_change_to_the_computation_changes_it():
    base = fp(BASE)
    variants = [
        BASE.replace("[3, -1, 4, 1]", "[3, -1, 4, 2]"),  # constant
        BASE.replace("acc += ", "acc -= "),  # operation
        BASE.replace("-> i32", "-> i32 ").replace("0i32", "1i32"),  # constant
        BASE.replace("pub fn fir", "pub fn fir2"),  # exported name
        BASE.replace("x: [i16; 4]", "y: [i16; 4]").replace("x[i]", "y[i]"),  # port name
        BASE.replace("i16", "i15"),  # type
    ]
    prints = {fp(v) for v in variants}
    assert base not in prints and len(prints) == len(variants)


def test_same_across_processes_and_hash_seeds():
    code = (
        "import sys; from kera.elaborate import build_program;"
        "print(build_program('t.kera', sys.stdin.read()).graph.fingerprint())"
    )
    outs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], input=BASE, capture_output=True,
                             text=True, env=env, cwd=ROOT, check=True)
        outs.add(out.stdout.strip())
    assert outs == {fp(BASE)}
