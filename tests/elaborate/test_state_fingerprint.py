"""State in the fingerprint (STATE.md): identified by elaboration order, never by name or
position, so renaming and reformatting change nothing; initial values and updates do."""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kera.cli import main
from kera.elaborate import build_program
from kera.opt import optimize
from tests.conftest import EXAMPLES
from tests.opt.randstate import StateProgram, state_programs

N = int(os.environ.get("KERA_STATE_EXAMPLES", "40"))
QUICK = settings(max_examples=N, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def fingerprint(source: str) -> str:
    program = build_program("t.kera", source)
    assert program.ok, [d.message for d in program.diagnostics]
    return program.graph.fingerprint()


def _renaming(p: StateProgram) -> dict[str, str]:
    names = [name for name, *_ in p.regs] + ["m", "hs"]
    return {n: f"renamed_{k}_state" for k, n in enumerate(names)}


@QUICK
@given(program=state_programs())
def test_renaming_and_reformatting_change_no_fingerprint(program: StateProgram) -> None:
    base = program.text()
    other = program.text(names=_renaming(program), spaced=True)
    assert other != base
    assert fingerprint(other) == fingerprint(base)
    a, b = (optimize(build_program("t.kera", s).graph, 2) for s in (base, other))
    assert a.fingerprint() == b.fingerprint()


@QUICK
@given(program=state_programs(), data=st.data())
def test_changing_an_initial_value_changes_the_fingerprint(program: StateProgram,
                                                           data: st.DataObject) -> None:
    k = data.draw(st.integers(0, len(program.regs) - 1))
    _, ty, init, _ = program.regs[k]
    changed = program.with_init(k, ty.wrap(init ^ 1))  # flip the low bit
    assert fingerprint(changed.text()) != fingerprint(program.text())


@QUICK
@given(program=state_programs(), data=st.data())
def test_changing_an_update_changes_the_fingerprint(program: StateProgram,
                                                    data: st.DataObject) -> None:
    k = data.draw(st.integers(0, len(program.regs) - 1))
    update = program.regs[k][3]
    changed = program.with_update(k, f"!({update})")
    assert fingerprint(changed.text()) != fingerprint(program.text())


REG_VS = "#[top]\nfn f(i: u2, x: u8) -> u8 {{\n    {kind} m: [u8; 4] = [0; 4];\n" \
         "    m[i] = m[i] + x;\n    m[i]\n}}\n"


def test_reg_and_mem_of_one_array_differ() -> None:
    """The kind is part of the state node: the hardware differs (registers, block RAM)."""
    assert fingerprint(REG_VS.format(kind="reg")) != fingerprint(REG_VS.format(kind="mem"))


def test_declaration_order_is_the_identity() -> None:
    """Two states swapped in the declarations swap their indices: a different graph."""
    one = ("#[top]\nfn f(x: u8) -> u8 {\n    reg a: u8 = 1;\n    reg b: u8 = 2;\n"
           "    a = a + x;\n    b = b ^ a;\n    b\n}\n")
    two = one.replace("reg a: u8 = 1;\n    reg b: u8 = 2;", "reg b: u8 = 2;\n    reg a: u8 = 1;")
    assert fingerprint(one) != fingerprint(two)
    swapped_names = re.sub(r"\b[ab]\b", lambda m: "b" if m.group() == "a" else "a", one)
    assert fingerprint(swapped_names) == fingerprint(one)  # same order, other names


def test_a_pure_program_keeps_its_fingerprint() -> None:
    """Adding state support changed no pure program's hash (region hash without slots)."""
    program = build_program(str(EXAMPLES / "fir8.kera"), (EXAMPLES / "fir8.kera").read_bytes())
    region = program.graph.regions["fir8"]
    assert not region.stateful and region.states == ()


def test_the_fingerprint_command_ignores_renaming(capsys, tmp_path) -> None:
    src = (EXAMPLES / "crc32_stream.kera").read_text()
    renamed = tmp_path / "renamed.kera"
    renamed.write_text("// another name, another layout\n"
                       + re.sub(r"\bcrc\b", "remainder", src).replace("    ", "\t"))
    assert main(["fingerprint", str(EXAMPLES / "crc32_stream.kera")]) == 0
    first = capsys.readouterr().out
    assert "reg remainder: u32" in renamed.read_text()
    assert main(["fingerprint", str(renamed)]) == 0
    assert capsys.readouterr().out == first
