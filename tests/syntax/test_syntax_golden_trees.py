"""The lossless tree and the diagnostics of every ``.kera`` file in the repository, against
golden digests (``golden/trees.json``).

Each entry is the SHA-256 of ``dump_tree`` (every node and token with its kind and span) and
of the rendered diagnostics. The digests were written by the event-replaying parser of
a4366df, before the parser built its tree itself, so they pin the tree shape and every message
and span across parser rewrites. Run with ``KERA_UPDATE_GOLDEN=1`` to rewrite them (say why in
the commit).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from kera.syntax import SourceFile, dump_tree, parse, render_all

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden" / "trees.json"
UPDATE = os.environ.get("KERA_UPDATE_GOLDEN") == "1"
N = 3_000
# Inputs beyond the files: deep nesting (the recovery paths) and long flat chains.
EXTRA = {
    "deep-parens": b"fn f() { " + b"(" * N + b"x" + b")" * N + b" }",
    "deep-calls": b"fn f() { " + b"g(" * N + b"x" + b")" * N + b" }",
    "deep-index-fields": b"fn f() { a" + b"[i" * N + b"]" * N + b".0 + " + b"x(" * N + b" }",
    "deep-unclosed-blocks": b"fn f() " + b"{" * N,
    "deep-operators": b"fn f() { " + b"a || b && c == d | e ^ f & g << h + i * -(" * 600 + b"}",
    "else-if-chain": b"fn f() { if a {} " + b"else if a {} " * N + b"}",
    "comments": b"// a\n\n// b\n/* c */ pub fn f() {}\n// d\n#[x]\nconst C: u8 = 1;\n// e\n",
}


def inputs() -> dict[str, bytes]:
    files = sorted(ROOT.glob("examples/*.kera")) + sorted(ROOT.glob("tests/**/*.kera"))
    out = {p.relative_to(ROOT).as_posix(): p.read_bytes() for p in files}
    out.update(EXTRA)
    return out


def digest(name: str, data: bytes) -> str:
    result = parse(data)
    rendered = dump_tree(result.tree) + "\n--\n" + render_all(
        SourceFile(name, data), result.diagnostics)
    return hashlib.sha256(rendered.encode("utf-8", "surrogatepass")).hexdigest()


def test_trees_and_diagnostics_match_the_golden_digests() -> None:
    got = {name: digest(name, data) for name, data in inputs().items()}
    if UPDATE:
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert len(expected) >= 80
    missing = sorted(set(expected) - set(got))
    assert not missing, f"golden inputs gone: {missing}"
    differ = sorted(name for name in got if name in expected and got[name] != expected[name])
    assert not differ, f"tree or diagnostics changed: {differ}"


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_extra_inputs_round_trip(name: str) -> None:
    assert parse(EXTRA[name]).tree.text().encode() == EXTRA[name]
