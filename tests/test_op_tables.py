"""Every per-opcode table is checked against the op registry (ARCHITECTURE.md, invariant 1).

A table maps each opcode of ``kera.ir.ops.OPS`` to its rule (a callable: a lowering, a transfer
function, the reference semantics) or to ``Unsupported(reason)`` (``kera.ir.tables``) where the
table deliberately has no rule for it. ``test_table_covers_the_registry`` runs once per table in
``TABLES`` and fails, naming the table, for an opcode in neither, an entry for an opcode the
registry does not have, an entry that is not callable, and an ``Unsupported`` without a reason.

Putting a table under the check is one line in this module::

    register("delay model (ice40)", lambda: load_model("ice40").table(), is_rule=is_data)

``register(name, load, is_rule=callable)`` takes the name messages use, a function returning the
table (called at check time, so a test that changes the registry sees the tables as they are)
and what a rule looks like in that table: a callable by default; ``is_data`` accepts any value
but None, for tables of data such as a delay model's curves.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Mapping

import pytest

from kera.backends.cpu import ops as cpu_ops
from kera.backends.ptx import ops as ptx_ops
from kera.backends.wasm import ops as wasm_ops
from kera.backends.wasm import simd as wasm_simd
from kera.ir.ops import OPS
from kera.ir.tables import Unsupported
from kera.opt import ranges
from kera.rtl.lower import LOWERINGS

Load = Callable[[], Mapping[str, object]]
IsRule = Callable[[object], bool]
TABLES: dict[str, tuple[Load, IsRule]] = {}


def is_data(entry: object) -> bool:
    """Return True for a data entry (anything but None)."""
    return entry is not None


def register(name: str, load: Load, is_rule: IsRule = callable) -> None:
    """Put the table ``load()`` returns under the registry check, as ``name``."""
    assert name not in TABLES, f"table `{name}` is registered twice"
    TABLES[name] = (load, is_rule)


INTERP = "interp (the registry's evaluate)"
register(INTERP, lambda: {name: d.evaluate for name, d in OPS.items()})
register("cpu (kera/backends/cpu/ops.py)", lambda: cpu_ops.TABLE)
register("wasm (kera/backends/wasm/ops.py)", lambda: wasm_ops.TABLE)
register("wasm simd (kera/backends/wasm/simd.py)", lambda: wasm_simd.TABLE)
register("ptx (kera/backends/ptx/ops.py)", lambda: ptx_ops.TABLE)
register("verilog (kera/rtl/lower.py)", lambda: LOWERINGS)
register("value ranges (kera/opt/ranges.py)", lambda: ranges.RULES)


def table_problems(table: Mapping[str, object], is_rule: IsRule = callable) -> list[str]:
    """Return what is wrong with one table, compared with the registry (empty when nothing)."""
    problems = []
    missing = sorted(set(OPS) - set(table))
    if missing:
        problems.append(f"no entry for {missing}")
    unknown = sorted(set(table) - set(OPS))
    if unknown:
        problems.append(f"entries for opcodes the registry lacks: {unknown}")
    for op in sorted(set(table) & set(OPS)):
        entry = table[op]
        if isinstance(entry, Unsupported):
            if not entry.reason.strip():
                problems.append(f"`{op}` is Unsupported without a reason")
        elif not is_rule(entry):
            problems.append(f"`{op}` has an entry that is neither a rule nor Unsupported")
    return problems


def uncovered(names: Iterable[str]) -> str | None:
    """Return one message naming each of the tables ``names`` that fails the check, or None."""
    lines = []
    for name in names:
        load, is_rule = TABLES[name]
        problems = table_problems(load(), is_rule)
        if problems:
            lines.append(f"{name}: {'; '.join(problems)}")
    return "tables out of step with kera.ir.ops.OPS:\n" + "\n".join(lines) if lines else None


@pytest.mark.parametrize("name", list(TABLES))
def test_table_covers_the_registry(name: str) -> None:
    message = uncovered([name])
    assert message is None, message


DUMMY = "zz_dummy_op"


@pytest.fixture
def dummy_op() -> Iterator[str]:
    """Insert an opcode into the registry alone (no table entry anywhere); remove it after."""
    assert DUMMY not in OPS
    OPS[DUMMY] = dataclasses.replace(OPS["add"], name=DUMMY)
    try:
        yield DUMMY
    finally:
        del OPS[DUMMY]


def test_an_op_only_in_the_registry_fails_naming_every_table_without_it(dummy_op: str) -> None:
    message = uncovered(TABLES)
    assert message is not None
    lacking = [line for line in message.splitlines()[1:] if f"no entry for ['{dummy_op}']" in line]
    # Only the interpreter's table is the registry itself; every other table must say so.
    expected = [name for name in TABLES if name != INTERP]
    assert [line.split(":")[0] for line in lacking] == expected, message
    assert len(expected) == len(TABLES) - 1 >= 6
    for name in expected:  # and the table test itself fails for each of them
        with pytest.raises(AssertionError, match=re.escape(f"{name}: no entry for ['{dummy_op}']")):
            test_table_covers_the_registry(name)
    test_table_covers_the_registry(INTERP)


def test_a_table_with_an_extra_or_reasonless_entry_fails() -> None:
    table = dict(cpu_ops.TABLE, zz_gone=cpu_ops.TABLE["add"], div=Unsupported(" "))
    assert table_problems(table) == ["entries for opcodes the registry lacks: ['zz_gone']",
                                     "`div` is Unsupported without a reason"]
    table["div"] = None
    assert table_problems(table)[1] == "`div` has an entry that is neither a rule nor Unsupported"
    assert table_problems(table, is_data)[1] == table_problems(table)[1]
    table["div"] = "a data record"
    assert len(table_problems(table)) == 2 and len(table_problems(table, is_data)) == 1
