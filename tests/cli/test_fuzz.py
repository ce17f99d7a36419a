"""A fuzz test of the command line: any options, values and paths give exit 0-4, never 70.

Only fast commands (no place and route, no simulation) so a bounded run stays well under 60 s.
"""

from __future__ import annotations

import contextlib
import io
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kera.cli import main
from tests.conftest import EXAMPLES

MAX_EXAMPLES = 120
BUDGET_S = 60.0


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("fuzz")
    files = {
        "empty.jsonl": "",
        "blank.jsonl": "\n \n",
        "gray.jsonl": '{"x": 1}\n{"x": 255}\n',
        "range.jsonl": '{"x": 256}\n',
        "bad.jsonl": '{"x": \n',
        "list.jsonl": "[1, 2]\n",
        "extra.jsonl": '{"x": 1, "y": 2}\n',
        "deep.jsonl": "[" * 5000 + "]" * 5000 + "\n",
        "bad.kera": "fn f( -> u8 { 1 }\n",
        "notop.kera": "fn f(a: u8) -> u8 { a }\nfn g(a: u8) -> u8 { a }\n",
        "utf.kera": "fn \u00e9(a: u8) -> u8 { a }\n",
        "binary.kera": "\x00\xff\x80KEG",
        "fake.keg": "KEG\0garbage",
        "board.toml": "name = 1\n",
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8", errors="surrogateescape")
    (root / "adir").mkdir()
    (root / "afile").write_text("")
    assert main(["compile", str(EXAMPLES / "gray.kera"), "-o", str(root / "gray.keg")]) == 0
    return {"root": str(root), **{n: str(root / n) for n in [*files, "adir", "afile", "gray.keg"]}}


def _path(paths: dict[str, str]) -> st.SearchStrategy[str]:
    fixed = [str(EXAMPLES / n) for n in ("gray.kera", "fir8.kera", "saturate.kera")]
    made = [v for k, v in paths.items() if k != "root"]
    odd = ["/nonexistent/x.kera", "/proc/x", "/", "", "-", f"{paths['afile']}/x",
           "/proc/self/mem", "x" * 300, "\u00e9.kera"]
    fresh = st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}(\.keg|\.json|\.vcd)?", fullmatch=True)
    return st.one_of(st.sampled_from(fixed + made + odd),
                     fresh.map(lambda p: f"{paths['root']}/out/{p}"))


NUMBERS = st.one_of(
    st.sampled_from(["0", "-1", "1", "12", "1e-300", "1e300", "nan", "inf", "-inf", "0x10", "",
                     "abc", "228.05", "0.001", "99999999999999999999", "1_000", " 5"]),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)
SMALL = st.one_of(st.integers(-10, 40).map(str), st.sampled_from(["", "x", "1e3", "-0"]))
WORDS = st.one_of(st.sampled_from(["gray", "fir8", "nope", "", "dce", "fold", "main", "--x"]),
                  st.text(max_size=8))


def _options(paths: dict[str, str]) -> st.SearchStrategy[list[str]]:
    program = [
        st.tuples(st.just("--top"), WORDS),
        st.tuples(st.just("-O"), SMALL),
        st.tuples(st.just("--stats")),
        st.tuples(st.just("--dump-after"), WORDS),
    ]
    board = [
        st.tuples(st.just("--board"), st.sampled_from(
            ["icebreaker", "ulx3s", "tangnano9k", "arty_a7_35", "nope", paths["board.toml"],
             "/nonexistent/b.toml", ""])),
        st.tuples(st.just("--clock-mhz"), NUMBERS),
    ]
    commands = {
        "check": [st.tuples(st.just("--format"), st.sampled_from(["text", "json", "xml"]))],
        "tree": [],
        "fingerprint": program,
        "compile": [*program, st.tuples(st.just("-o"), _path(paths))],
        "run": [*program, *board, st.tuples(st.just("--target"), st.just("interp")),
                st.tuples(st.just("--inputs"), _path(paths))],
        "synthesize": [*program, *board, st.tuples(st.just("-o"), _path(paths))],
        "parity": [*program, *board, st.tuples(st.just("--targets"),
                                               st.sampled_from(["interp", "interp,", "nope", ""])),
                   st.tuples(st.just("--vectors"), SMALL), st.tuples(st.just("--seed"), NUMBERS),
                   st.tuples(st.just("--json"), _path(paths))],
        "boards": [],
    }

    @st.composite
    def argv(draw) -> list[str]:  # noqa: ANN001
        name = draw(st.sampled_from(sorted(commands)))
        out = [name]
        if name != "boards" and draw(st.integers(0, 9)) > 0:
            out.append(draw(_path(paths)))
        if commands[name]:
            for option in draw(st.lists(st.sampled_from(commands[name]), max_size=5)):
                out.extend(draw(option))
        if name == "parity" and "--targets" not in out:
            out += ["--targets", "interp"]  # no simulation: the RTL only when asked for
        if name == "parity" and "--vectors" not in out:
            out += ["--vectors", "20"]
        if name == "run" and "--target" not in out:
            out += ["--target", "interp"]
        return out

    return argv()


def test_any_command_line_exits_0_to_4_and_never_with_a_traceback(paths) -> None:
    start = time.monotonic()
    seen: list[tuple[list[str], int]] = []

    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(argv=_options(paths))
    def check(argv: list[str]) -> None:
        if time.monotonic() - start > BUDGET_S:
            return
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:  # argparse's usage errors
                code = e.code if isinstance(e.code, int) else 2
        text = err.getvalue()
        assert code in (0, 1, 2, 3, 4), (argv, code, text)
        assert "Traceback" not in text and "internal compiler error" not in text, (argv, text)
        if code != 0:
            assert text.strip(), (argv, code)  # a failure always says why
        seen.append((argv, code))


    check()
    assert time.monotonic() - start < BUDGET_S + 30
    codes = {code for _, code in seen}
    assert len(seen) >= 20 and {0, 1, 2} <= codes, sorted(codes)
