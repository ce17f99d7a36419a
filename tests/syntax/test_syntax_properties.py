"""Property tests: the tree always gives back its input (LibCST's ``parse(x).code == x``)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kera.syntax import RESERVED_WORDS, parse
from kera.syntax.kinds import KEYWORDS
from kera.syntax.lexer import _PUNCT, _lex_general, lex

KERNELS = Path(__file__).parents[2].parent / "shared" / "kernels"
SAMPLES = [p.read_bytes() for p in sorted(KERNELS.glob("*.kera"))] if KERNELS.is_dir() else []
SAMPLES += [p.read_bytes() for p in sorted((Path(__file__).parent / "broken").glob("*.kera"))]

ATOMS = sorted(_PUNCT) + sorted(KEYWORDS) + sorted(RESERVED_WORDS)
ATOMS += ["x", "acc", "u8", "i32", "_", "0", "255u8", "0x7f", "0b102", "1u65", "0x"]
ATOMS += [" ", "\n", "\t", "// c\n", "/* c */", "/*", "*/", "é", "€", "$", "#[top]"]
ATOMS += ["slice::<0, 4>(x)", "if c {", "} else {", "for i in 0..8 {", "let mut v = "]

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_lossless(data: bytes) -> None:
    result = parse(data)
    assert result.tree.text().encode("utf-8", "surrogateescape") == data
    assert result.tree.span.end == len(data)
    for diag in result.diagnostics:
        assert 0 <= diag.span.start <= diag.span.end <= len(data)
        assert diag.message and "\n" not in diag.message
    offset = 0
    for token in result.tree.tokens():
        assert token.span.start == offset
        offset = token.span.end
    assert offset == len(data)


token_soup = st.lists(st.sampled_from(ATOMS), max_size=80).map(
    lambda parts: "".join(parts).encode()
)
spaced_soup = st.lists(st.sampled_from(ATOMS), max_size=60).map(
    lambda parts: " ".join(parts).encode()
)


@SETTINGS
@given(token_soup)
def test_token_soup_round_trips(data: bytes) -> None:
    check_lossless(data)


@SETTINGS
@given(spaced_soup)
def test_spaced_token_soup_round_trips(data: bytes) -> None:
    check_lossless(data)


@SETTINGS
@given(st.binary(max_size=300))
def test_random_bytes_round_trip(data: bytes) -> None:
    check_lossless(data)


@SETTINGS
@given(st.text(max_size=200))
def test_random_text_round_trips(text: str) -> None:
    check_lossless(text.encode("utf-8", "surrogatepass"))


@st.composite
def mutated_sample(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SAMPLES)))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["delete", "insert", "byte", "truncate"]))
        if action == "delete":
            del data[at : at + draw(st.integers(1, 12))]
        elif action == "insert":
            data[at:at] = draw(st.sampled_from(ATOMS)).encode()
        elif action == "byte":
            data[at:at] = bytes([draw(st.integers(0, 255))])
        else:
            del data[at:]
    return bytes(data)


@SETTINGS
@given(mutated_sample())
def test_mutated_programs_round_trip(data: bytes) -> None:
    check_lossless(data)


@SETTINGS
@given(st.one_of(token_soup, mutated_sample(), st.binary(max_size=100)))
def test_fast_and_general_lexers_agree(data: bytes) -> None:
    fast = lex(data)
    general = _lex_general(data, data.decode("utf-8", "surrogateescape"))
    assert (fast.kinds, fast.texts, fast.starts) == (general.kinds, general.texts, general.starts)
    assert fast.diagnostics == general.diagnostics
