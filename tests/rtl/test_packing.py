"""Port packing (element 0 / field 0 in the low bits): an exact, invertible layout."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kera.ir.types import BOOL, ArrayType, IntType, TupleType, Type
from kera.rtl.packing import layout, pack, unpack

_scalars = st.one_of(
    st.just(BOOL),
    st.builds(IntType, st.integers(1, 64), st.booleans()),
)
types = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.builds(ArrayType, inner, st.integers(1, 4)),
        st.builds(lambda es: TupleType(tuple(es)), st.lists(inner, max_size=3)),
    ),
    max_leaves=8,
)


def values(t: Type) -> st.SearchStrategy:
    if isinstance(t, IntType):
        return st.integers(t.min, t.max)
    if isinstance(t, ArrayType):
        return st.lists(values(t.elem), min_size=t.length, max_size=t.length)
    if isinstance(t, TupleType):
        return st.tuples(*(values(e) for e in t.elems)).map(list)
    return st.booleans()


@given(st.data())
def test_pack_unpack_round_trip(data: st.DataObject) -> None:
    t = data.draw(types)
    value = data.draw(values(t))
    bits = pack(value, t)
    assert 0 <= bits < 1 << max(t.flat_width, 1)
    assert unpack(bits, t) == value


@given(st.data())
def test_the_testbench_packs_as_the_compiler(data: st.DataObject) -> None:
    pytest.importorskip("cocotb", reason="cocotb is not installed (pip install -e .[tools])")
    from kera.sim.templates import kera_tb

    t = data.draw(types)
    value = data.draw(values(t))
    bits = pack(value, t)
    assert kera_tb.pack(value, layout(t)) == bits  # the testbench's own copy agrees
    assert kera_tb.unpack(bits, layout(t)) == value


def test_element_zero_is_in_the_low_bits() -> None:
    from kera.ir.types import uint

    t = ArrayType(TupleType((uint(4), ArrayType(uint(2), 2))), 2)
    value = [[1, [2, 3]], [4, [1, 0]]]
    bits = pack(value, t)
    assert bits == 1 | 2 << 4 | 3 << 6 | 4 << 8 | 1 << 12 | 0 << 14
    assert unpack(bits, t) == value
