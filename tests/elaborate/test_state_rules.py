"""STATE.md's declarations in the language: every rule's diagnostic (location and note), one
instance per call site, path-guarded updates, and what `check` says of stateful functions."""

from __future__ import annotations

import json

import pytest

from kera.cli import main
from kera.diagnostics import Diagnostic, SourceFile
from kera.elaborate import build_program
from kera.interp import run_jsonl
from kera.opt import optimize


def diags(src: str, severity: str = "error") -> list[Diagnostic]:
    program = build_program("t.kera", src, need_top=False)
    return [d for d in program.diagnostics if d.severity.value == severity]


def where(src: str, d: Diagnostic) -> tuple[int, int, str]:
    """Return (line, column, the text under the span) of a diagnostic."""
    line, col = SourceFile("t.kera", src.encode()).line_col(d.span.start)
    return line, col, src.encode()[d.span.start:d.span.end].decode()


def stream(src: str, rows: list[dict]) -> list[object]:
    """Run the top function of ``src`` on ``rows`` as one stream."""
    program = build_program("t.kera", src)
    assert program.ok, [d.message for d in program.diagnostics]
    return run_jsonl(program.graph, program.top, [json.dumps(r) for r in rows])


# ----------------------------------------------------------------------------- diagnostics

MEM = "    mem m: [u8; 4] = [0; 4];\n"
WHOLE = "memory `m` cannot be used as a whole value"
MEM_CASES = {  # name -> (body lines after the declaration, the text the error points at)
    "read": ("    let a = m;\n    a[i]\n", "m"),
    "passed": ("    g(m)\n", "m"),
    "returned": ("    m\n", "m"),
    "compared": ("    if m == [0u8; 4] { 1 } else { 0 }\n", "m"),
    "copied into a reg": ("    reg r: [u8; 4] = [0; 4];\n    r = m;\n    r[i]\n", "m"),
    "field of": ("    let t = (m, 1u8);\n    t.1\n", "m"),
}


@pytest.mark.parametrize("case", sorted(MEM_CASES))
def test_a_mem_used_as_a_whole_value_is_an_error_naming_it(case: str) -> None:
    body, text = MEM_CASES[case]
    ret = "u8"
    if case == "returned":
        ret = "[u8; 4]"
    src = ("fn g(a: [u8; 4]) -> u8 { a[0] }\n"
           f"#[top]\nfn f(i: u2) -> {ret} {{\n{MEM}    m[i] = m[i] + 1;\n{body}}}\n")
    errs = diags(src)
    assert [d.message for d in errs] == [WHOLE]
    (d,) = errs
    line, _, under = where(src, d)
    assert under == text and line >= 5
    (note,) = d.notes
    assert "element by element" in note.message and note.span is not None
    assert where(src, Diagnostic.error("", note.span))[:2] == (4, 9)  # the declaration's name


def test_a_mem_assigned_as_a_whole_is_an_error() -> None:
    src = f"#[top]\nfn f(i: u2) -> u8 {{\n{MEM}    m = [1; 4];\n    m[i]\n}}\n"
    (d,) = diags(src)
    assert d.message == "memory `m` cannot be assigned as a whole"
    assert where(src, d) == (4, 5, "m")
    assert d.notes[0].span is not None and "m[i] = v" in d.notes[0].message


def test_a_mem_compared_on_both_sides_reports_each_memory() -> None:
    src = ("#[top]\nfn f(i: u2) -> bool {\n" + MEM + "    mem n: [u8; 4] = [0; 4];\n"
           "    m[i] = 1;\n    n[i] = m[i];\n    m == n\n}\n")
    assert [(d.message, where(src, d)[:2]) for d in diags(src)] == [
        (WHOLE, (7, 5)), ("memory `n` cannot be used as a whole value", (7, 10))]


def test_a_reg_array_is_a_value() -> None:
    """What a `mem` may not do, a `reg` array may: copy, pass, return (no diagnostics)."""
    src = ("fn g(a: [u8; 4]) -> u8 { a[0] }\n#[top]\nfn f(i: u2) -> [u8; 4] {\n"
           "    reg r: [u8; 4] = [1, 2, 3, 4];\n    let copy = r;\n    r[i] = g(copy) + r[i];\n"
           "    r\n}\n")
    assert diags(src) == [] and diags(src, "warning") == []
    assert stream(src, [{"i": 1}, {"i": 1}, {"i": 0}]) == [
        [1, 3, 3, 4], [1, 4, 3, 4], [2, 4, 3, 4]]


def test_a_mem_must_be_an_array() -> None:
    src = "#[top]\nfn f(x: u8) -> u8 {\n    mem s: u8 = 0;\n    x\n}\n"
    (d,) = diags(src)
    assert d.message == "`mem s` must be an array `[T; N]`, not `u8`"
    assert where(src, d) == (3, 12, "u8") and "`reg`" in d.notes[0].message


@pytest.mark.parametrize("init", ["x", "x + 1", "[x; 2][0]", "if x > 1 { 1 } else { 0 }"])
def test_a_non_constant_initial_value_is_one_error(init: str) -> None:
    src = f"#[top]\nfn f(x: u8) -> u8 {{\n    reg s: u8 = {init};\n    s = s + x;\n    s\n}}\n"
    errs = diags(src)
    assert [d.message for d in errs] == [
        "the initial value of `reg s` must be a constant expression"]
    assert where(src, errs[0]) == (3, 17, init)  # no "cannot find `s`" for its uses
    assert "consts and operators" in errs[0].notes[0].message


@pytest.mark.parametrize("init", ["3", "C + 1", "C * 2 - 1", "[C; 4][2]", "(C as u16) as u8",
                                  "if C > 1 { 5 } else { 6 }"])
def test_constant_expressions_are_initial_values(init: str) -> None:
    src = (f"const C: u8 = 7;\n#[top]\nfn f(x: u8) -> u8 {{\n    reg s: u8 = {init};\n"
           "    s = s + x;\n    s\n}\n")
    program = build_program("t.kera", src)
    assert program.ok
    value = eval(init.replace("C", "7").replace("as u16", "").replace("as u8", "")
                 .replace("[7; 4][2]", "7").replace("if 7 > 1 { 5 } else { 6 }", "5"))
    assert stream(src, [{"x": 0}, {"x": 1}]) == [value, value + 1]


@pytest.mark.parametrize(("block", "kind"), [
    ("if c {{ {decl} y = s; }}", "reg"),
    ("if c {{ }} else {{ {decl} y = s; }}", "reg"),
    ("for i in 0..2 {{ {decl} y = y + s; }}", "reg"),
    ("{{ {decl} y = s; }}", "reg"),
    ("let z = {{ {decl} s }}; y = z;", "reg"),
])
def test_state_below_the_top_level_is_an_error(block: str, kind: str) -> None:
    decl = "reg s: u8 = 0; s = s + x;"
    src = ("#[top]\nfn f(x: u8, c: bool) -> u8 {\n    let mut y = x;\n    "
           + block.format(decl=decl) + "\n    y\n}\n")
    errs = diags(src)
    assert [d.message for d in errs] == [
        "`reg s` must be declared at the top level of a function body"]
    line, _, under = where(src, errs[0])
    assert line == 4 and under == "reg s: u8 = 0;"
    assert "nested block, loop or branch" in errs[0].notes[0].message


def test_nested_state_still_checks_its_uses() -> None:
    src = ("#[top]\nfn f(x: u8, c: bool) -> u8 {\n    if c {\n        mem m: [u8; 2] = [0; 2];\n"
           "        let w = m;\n        m[0] = x + 1u16;\n    }\n    x\n}\n")
    messages = [d.message for d in diags(src)]
    assert messages[0] == "`mem m` must be declared at the top level of a function body"
    assert any("u16" in m for m in messages[1:]), messages  # the type error is still found


def test_a_mem_in_a_helper_called_in_a_branch_is_fine() -> None:
    """Top level means the top level of the body that declares it, wherever it is called."""
    src = ("fn count(b: u1) -> u8 {\n    mem m: [u8; 2] = [0; 2];\n    m[b] = m[b] + 1;\n"
           "    m[b]\n}\n#[top]\nfn f(b: u1, c: bool) -> u8 {\n"
           "    if c { count(b) } else { 0 }\n}\n")
    rows = [{"b": 0, "c": True}, {"b": 0, "c": False}, {"b": 0, "c": True}, {"b": 1, "c": True}]
    assert stream(src, rows) == [1, 0, 2, 1]


def test_state_never_read_is_a_warning_at_its_name() -> None:
    src = ("fn helper(x: u8) -> u8 {\n    reg last: u8 = 0;\n    last = x;\n    x\n}\n"
           "#[top]\nfn f(x: u8) -> u8 {\n    reg s: u8 = 0;\n    reg unused: u4 = 0;\n"
           "    s += x;\n    helper(s) + helper(x)\n}\n")
    program = build_program("t.kera", src)
    assert program.ok  # a warning only
    warns = [d for d in program.diagnostics if d.severity.value == "warning"]
    assert [(d.message, where(src, d)[:2]) for d in warns] == [
        ("reg `last` is never read", (2, 9)), ("reg `unused` is never read", (9, 9))]
    assert all("remove it, or read it" in d.notes[0].message for d in warns)


@pytest.mark.parametrize(("decl", "body", "warnings"), [
    ("reg s: u8 = 0;", "s += x;\n    x", []),  # a compound assignment reads
    ("reg s: u8 = 0;", "s = x;\n    s", []),
    ("reg s: u8 = 0;", "let t = s;\n    s = x;\n    t", []),
    ("reg s: u8 = 0;", "s = x;\n    x", ["reg `s` is never read"]),
    ("mem m: [u8; 256] = [0; 256];", "m[x] = 1;\n    x", ["mem `m` is never read"]),
    ("mem m: [u8; 256] = [0; 256];", "m[0] += 1;\n    x", []),
    ("mem m: [u8; 256] = [0; 256];", "m[x] = 1;\n    m[0]", []),
])
def test_only_state_that_is_never_read_warns(decl: str, body: str, warnings: list[str]) -> None:
    src = f"#[top]\nfn f(x: u8) -> u8 {{\n    {decl}\n    {body}\n}}\n"
    assert [d.message for d in diags(src, "warning")] == warnings


# ----------------------------------------------------------------------------- instances

BIQUAD = """
fn biquad(x: i16) -> i16 {
    reg x1: i16 = 0;
    reg y1: i16 = 0;
    let y = x + x1 - (y1 >> 1);
    x1 = x;
    y1 = y;
    y
}
"""


def _biquad(xs: list[int]) -> list[int]:
    """A Python model of one `biquad` instance (i16 wrap)."""
    x1 = y1 = 0
    out = []
    for x in xs:
        y = ((x + x1 - (y1 >> 1) + 0x8000) & 0xFFFF) - 0x8000
        x1, y1 = x, y
        out.append(y)
    return out


def test_every_unrolled_call_site_is_its_own_filter() -> None:
    src = BIQUAD + ("#[top]\nfn f(x: [i16; 4]) -> [i16; 4] {\n    let mut y = [0i16; 4];\n"
                    "    for c in 0..4 { y[c] = biquad(x[c]); }\n    y\n}\n")
    program = build_program("t.kera", src)
    assert [e.name for e in program.stateful["f"]] == [
        f"biquad[{c}]/{n}" for c in range(4) for n in ("x1", "y1")]
    assert len(program.graph.regions["f"].states) == 8
    chans = [[100, -7, 3000, 0, 5, -32768, 32767, 1], [0] * 8, [1, 2, 3, 4, 5, 6, 7, 8],
             [-1] * 8]
    rows = [{"x": [chans[c][k] for c in range(4)]} for k in range(8)]
    got = stream(src, rows)
    want = list(zip(*(_biquad(ch) for ch in chans), strict=True))
    assert got == [list(w) for w in want]
    assert got != [[_biquad([r["x"][0] for r in rows])[k]] * 4 for k in range(8)]


def test_calls_in_one_expression_and_nested_calls_are_instances() -> None:
    src = ("fn acc(x: u8) -> u8 {\n    reg s: u8 = 0;\n    s = s + x;\n    s\n}\n"
           "fn two(x: u8) -> u8 { acc(x) ^ acc(1) }\n"
           "#[top]\nfn f(x: u8) -> (u8, u8, u8) { (acc(x), acc(x), two(x)) }\n")
    program = build_program("t.kera", src)
    assert [e.name for e in program.stateful["f"]] == [
        "acc[0]/s", "acc[1]/s", "two[0]/acc[0]/s", "two[0]/acc[1]/s"]
    assert stream(src, [{"x": 2}, {"x": 3}]) == [[2, 2, 2 ^ 1], [5, 5, 5 ^ 2]]


# ----------------------------------------------------------------------------- guards

COUNT = "fn tick(x: u8) -> u8 {\n    reg n: u8 = 0;\n    n = n + x;\n    n\n}\n"


ODD = "tick(1) % 2 == 1"  # the parity of the instance's count after this call


@pytest.mark.parametrize(("expr", "taken"), [
    (f"if c {{ {ODD} }} else {{ false }}", lambda c: c),
    (f"if c {{ false }} else {{ {ODD} }}", lambda c: not c),
    (f"if c {{ false }} else if !c {{ {ODD} }} else {{ true }}", lambda c: not c),
    (f"c && {ODD}", lambda c: c),
    (f"!c || {ODD}", lambda c: c),
    (f"(c && true) && {ODD}", lambda c: c),
    (f"c || {ODD}", lambda c: not c),
])
def test_a_call_not_evaluated_leaves_its_state_unchanged(expr: str, taken) -> None:
    src = COUNT + f"#[top]\nfn f(c: bool) -> bool {{\n    {expr}\n}}\n"
    cs = [True, False, False, True, True, False, True, False, False, True, True, True]
    want, n = [], 0
    for c in cs:
        if taken(c):
            n += 1
            want.append(n % 2 == 1)
        else:
            want.append("||" in expr)  # the arm or side that decided
    assert stream(src, [{"c": c} for c in cs]) == want


@pytest.mark.parametrize("expr", [f"false && {ODD}", f"true || {ODD}",
                                  f"if false {{ {ODD} }} else {{ true }}"])
def test_a_call_that_is_never_evaluated_never_moves(expr: str) -> None:
    """Its next value is its read: after -O2 the slot's back edge is the read itself."""
    src = COUNT + f"#[top]\nfn f(c: bool) -> bool {{\n    c ^ ({expr})\n}}\n"
    program = build_program("t.kera", src)
    assert program.ok
    (slot,) = optimize(program.graph, 2).regions["f"].states
    assert slot.next == slot.read
    (live,) = optimize(build_program("t.kera", src.replace("false &&", "c &&").replace(
        "true ||", "c ||").replace("if false", "if c")).graph, 2).regions["f"].states
    assert live.next != live.read  # the same call, reachable, does move


def test_the_counter_of_a_guarded_call_counts_the_taken_transfers() -> None:
    src = COUNT + ("#[top]\nfn f(c: bool, d: bool) -> u8 {\n"
                   "    let a = if c { tick(1) } else { 0 };\n"
                   "    let b = if d && tick(10) > 0 { 1u8 } else { 0 };\n"
                   "    a + b\n}\n")
    rows = [{"c": c, "d": d} for c, d in [(True, True), (False, True), (True, False),
                                            (False, False), (True, True)]]
    # a: the counter of the first instance (1, -, 2, -, 3); b: 1 when d (tick(10) > 0).
    assert stream(src, rows) == [2, 1, 2, 0, 4]


def test_state_updated_in_a_branch_of_its_own_body_merges() -> None:
    src = ("#[top]\nfn f(x: u8, up: bool) -> u8 {\n    reg n: u8 = 10;\n"
           "    if up { n += x; } else { n -= x; }\n    n\n}\n")
    rows = [{"x": 1, "up": True}, {"x": 3, "up": False}, {"x": 250, "up": True}]
    assert stream(src, rows) == [11, 8, 2]


# ----------------------------------------------------------------------------- check


def test_check_says_which_functions_are_stateful_on_stderr(capsys, tmp_path) -> None:
    path = tmp_path / "t.kera"
    path.write_text(BIQUAD + COUNT + ("fn pure(x: u8) -> u8 { x }\n"
                                      "#[top]\nfn f(x: i16) -> i16 { biquad(x) + biquad(x) }\n"))
    assert main(["check", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert f"{path}: ok (4 functions)" in lines
    assert (f"{path}: `biquad` is stateful: 2 state elements, 32 bits "
            "(reg x1: i16, reg y1: i16)") in lines
    assert (f"{path}: `f` is stateful: 4 state elements, 64 bits (reg biquad[0]/x1: i16, "
            "reg biquad[0]/y1: i16, reg biquad[1]/x1: i16, reg biquad[1]/y1: i16)") in lines
    assert f"{path}: `tick` is stateful: 1 state element, 8 bits (reg n: u8)" in lines
    assert not any("`pure`" in line for line in lines)


def test_check_json_keeps_stdout_machine_readable(capsys, tmp_path) -> None:
    path = tmp_path / "t.kera"
    path.write_text("#[top]\nfn f(x: u8) -> u8 {\n    reg s: u8 = 0;\n    reg u: u8 = 0;\n"
                    "    s += x;\n    s\n}\n")
    assert main(["check", "--format", "json", str(path)]) == 0
    out, _ = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["severity"], r["message"], r["line"]) for r in rows] == [
        ("warning", "reg `u` is never read", 4)]


def test_compile_says_the_top_is_stateful_and_stdout_is_the_fingerprint(capsys, tmp_path) -> None:
    path = tmp_path / "t.kera"
    path.write_text("#[top]\nfn f(x: u8) -> u8 {\n    reg s: u8 = 0;\n    s += x;\n    s\n}\n")
    assert main(["compile", str(path), "-o", str(tmp_path / "t.keg")]) == 0
    out, err = capsys.readouterr()
    assert len(out.strip()) == 64 and out.count("\n") == 1
    assert f"{path}: `f` is stateful: 1 state element, 8 bits (reg s: u8)" in err.splitlines()


def test_a_pure_program_says_nothing_of_state(capsys, tmp_path) -> None:
    path = tmp_path / "t.kera"
    path.write_text("#[top]\nfn f(x: u8) -> u8 { x + 1 }\n")
    assert main(["check", str(path)]) == 0
    assert "stateful" not in capsys.readouterr().err
