"""The unroll limits are checked before a loop's work starts, and the error names the loop."""

from __future__ import annotations

import time

from kera.elaborate import build_program
from kera.elaborate.stmts import MAX_UNROLL_WORK


def _errors(src: str) -> tuple[list[str], float, object]:
    start = time.process_time()
    program = build_program("loops.kera", src, need_top=False)
    seconds = time.process_time() - start
    return [d.message for d in program.diagnostics], seconds, program


def _fn(body: str, params: str = "x: [u32; 16]") -> str:
    return f"#[top]\npub fn f({params}) -> u32 {{\n    let mut acc = 0u32;\n{body}\n    acc\n}}\n"


def test_a_million_iterations_of_a_few_ops_is_refused_at_once() -> None:
    src = _fn("    for i in 0..1000000 { acc = (acc ^ x[i % 16]) + i; }")
    errors, seconds, program = _errors(src)
    assert errors == [
        "loop `for i in 0..1000000` unrolls to about 12,000,000 operations (1,000,000 "
        f"iterations of 12); a program may unroll to at most {MAX_UNROLL_WORK:,}, all loops "
        "together"
    ]
    assert seconds < 2.0
    assert program.diagnostics[0].span.start == src.index("0..1000000")


def test_nested_loops_are_estimated_as_a_whole_before_any_iteration() -> None:
    src = _fn("    for i in 0..1100 { for j in 0..1000 { acc += x[j % 16]; } }")
    errors, seconds, _ = _errors(src)
    assert errors == ["loop `for i in 0..1100`: loops unroll to more than 1048576 iterations "
                      "in total"]
    assert seconds < 2.0  # refused before the first outer iteration, not after 1048 of them


def test_bounds_from_constants_are_counted_too() -> None:
    src = "const N: u32 = 900000;\n" + _fn("    for i in 0..N { acc += i * 3; }", "x: u32")
    errors, seconds, _ = _errors(src)
    assert len(errors) == 1 and errors[0].startswith("loop `for i in 0..900000` unrolls to about")
    assert seconds < 2.0


def test_a_loop_in_a_function_called_in_a_loop_is_counted() -> None:
    src = ("fn g(v: u32) -> u32 {\n    let mut s = v;\n    for k in 0..400000 { s = s * 5 + k; }"
           "\n    s\n}\n" + _fn("    for i in 0..2 { acc ^= g(x + i); }", "x: u32"))
    errors, seconds, _ = _errors(src)
    assert len(errors) == 1 and errors[0].startswith("loop `for k in 0..400000` unrolls to about")
    assert seconds < 2.0


def test_a_loop_within_the_budget_builds() -> None:
    src = _fn("    for i in 0..2000 { for j in 0..4 { acc = (acc ^ x[j]) + i; } }")
    errors, _, program = _errors(src)
    assert errors == [] and program.graph is not None  # type: ignore[attr-defined]
    assert len(program.graph.nodes) > 2000 * 4  # type: ignore[attr-defined]
