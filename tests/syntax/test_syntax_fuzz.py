"""Fuzzing: random and truncated inputs and very deep nesting never raise and finish fast.

Tests never assert on wall time; a hang would show up as the suite not finishing.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kera.syntax import SyntaxKind as K
from kera.syntax import grammar, lex, parse
from kera.syntax.kinds import KEYWORDS
from kera.syntax.lexer import _PUNCT
from kera.syntax.parser import STALL_STEPS, STEPS_PER_TOKEN, Parser

KERNELS = Path(__file__).parents[2].parent / "shared" / "kernels"
SAMPLES = [p.read_bytes() for p in sorted(KERNELS.glob("*.kera"))] if KERNELS.is_dir() else []
SAMPLES.append(b"fn f(a: u8) -> u8 {\n    let mut x = [0u8; 4];\n    x[0] += a;\n    x[0]\n}\n")
WORDS = sorted(_PUNCT) + sorted(KEYWORDS) + ["x", "9", "while", "/*", "*/", "é", "\xff"]


def roundtrip(data: bytes) -> list[str]:
    result = parse(data)
    assert result.tree.text().encode("utf-8", "surrogateescape") == data
    messages = [d.message for d in result.diagnostics]
    assert not any("stopped making progress" in m for m in messages), data
    return messages


def random_input(rng: random.Random) -> bytes:
    choice = rng.random()
    if choice < 0.25:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(120)))
    if choice < 0.5:
        sample = rng.choice(SAMPLES)
        return sample[: rng.randrange(len(sample) + 1)]
    if choice < 0.75:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(60))).encode(
            "utf-8", "surrogateescape"
        )
    data = bytearray(rng.choice(SAMPLES))
    for _ in range(rng.randrange(1, 8)):
        at = rng.randrange(len(data) + 1)
        data[at:at] = rng.choice(WORDS).encode("utf-8", "surrogateescape")
    return bytes(data)


@pytest.mark.parametrize("seed", range(4))
def test_thousands_of_random_inputs(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(600):
        roundtrip(random_input(rng))


def test_every_prefix_of_a_program() -> None:
    for sample in SAMPLES:
        for end in range(len(sample) + 1):
            roundtrip(sample[:end])


N = 10_000
DEEP = {
    "parentheses": b"fn f() { " + b"(" * N + b"x" + b")" * N + b" }",
    "blocks": b"fn f() " + b"{" * N + b"}" * N,
    "arrays": b"fn f() { " + b"[" * N + b"1" + b"]" * N + b" }",
    "prefix operators": b"fn f() { " + b"-" * N + b"x }",
    "calls": b"fn f() { " + b"g(" * N + b"x" + b")" * N + b" }",
    "indexing": b"fn f() { a" + b"[i" * N + b"]" * N + b" }",
    "array types": b"const X: " + b"[" * N + b"u8" + b"; 1]" * N + b" = 0;",
    "tuple patterns": b"fn f() { let " + b"(" * N + b"x" + b")" * N + b" = 1; }",
    "returns": b"fn f() { " + b"return " * N + b"}",
    "if conditions": b"fn f() { " + b"if " * N + b"c" + b" {}" * N + b" }",
    "unclosed parentheses": b"fn f() { " + b"(" * N,
    "unclosed blocks": b"fn f() " + b"{" * N,
    "operator chains": b"fn f() { " + b"a || b && c == d | e ^ f & g << h + i * -(" * 2000 + b"}",
    "generic arguments": b"fn f() { " + b"slice::<" * N + b"}",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_gives_one_diagnostic(name: str) -> None:
    messages = roundtrip(DEEP[name])
    assert messages.count("nesting deeper than 1000 levels") == 1


def test_long_flat_inputs() -> None:
    assert roundtrip(b"fn f() { if a {} " + b"else if a {} " * N + b"}") == []
    assert roundtrip(b"fn f() { x" + b".0" * N + b" }") == []
    assert roundtrip(b"fn f() { 1" + b" + 1" * N + b" }") == []
    assert roundtrip(b"fn f() { " + b"x; " * N + b"}") == []
    roundtrip(b")" * N)
    roundtrip(b"}" * N)
    roundtrip(b"fn " * N)


def test_fuel_stops_a_parser_that_makes_no_progress() -> None:
    p = Parser(lex(b"a b c"))
    steps = 0
    while p.pos != p.end and steps < 2 * STALL_STEPS:
        p.current()
        steps += 1
    assert STALL_STEPS <= steps <= STALL_STEPS + 2 * STEPS_PER_TOKEN
    assert p.pos == p.end  # out of fuel: the rest of the input is given up
    assert [e.message for e in p.errors.values()] == [
        "the parser stopped making progress here; the rest was skipped"
    ]


def test_a_grammar_stuck_forever_still_gives_a_lossless_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def stuck(p: Parser) -> None:
        p.start()
        p.bump()
        while True:
            p.current()

    monkeypatch.setattr(grammar, "source_file", stuck)
    data = b"fn f() { x }\n"
    result = parse(data)
    assert result.tree.text().encode() == data
    assert [d.message for d in result.diagnostics] == [
        "the parser stopped making progress here; the rest was skipped",
        "the parser stopped making progress at end of file",
    ]
    assert [c.kind for c in result.tree.child_nodes()] == [K.ERROR]
