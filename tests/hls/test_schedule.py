"""The scheduler: dependencies, the clock period, minimal latency, register bits, errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kera.hls.schedule as sched_mod
from kera.diagnostics import KeraError
from kera.elaborate import build_program
from kera.hls.lower import lower_for_hardware
from kera.hls.pipeline import Schedule
from kera.hls.schedule import schedule
from kera.hls.timing import CostModel, SimpleModel
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import BOOL, uint
from tests.conftest import kernel_params

MODEL = SimpleModel()
U16 = uint(16)


def usable(clock_mhz: float, margin: float = 0.1, model: object = MODEL) -> float:
    return 1000.0 / clock_mhz * (1 - margin) - CostModel(model).overhead_ns  # type: ignore[arg-type]


def check(s: Schedule, model: object = MODEL, margin: float = 0.1) -> int:
    """Check a schedule against the contract independently; return its register bits.

    A pipelined DSP multiply (``Schedule.pipelined``) costs its DSP stage and reads only
    registered operands, and only later stages read its product."""
    g = s.graph
    costs = CostModel(model, pipelined=s.pipelined)  # type: ignore[arg-type]
    region = g.regions[s.region]
    nodes = g.topo_order(region)
    assert set(s.stage) == set(nodes) and sorted(s.order) == sorted(nodes)
    assert s.latency == max(s.stage.values()) + 1 >= 1
    period = usable(s.clock_mhz, margin, model)
    users: dict[bytes, list[bytes]] = {n: [] for n in nodes}
    for v in nodes:
        for u in g.nodes[v].inputs:
            users[u].append(v)
    finish: dict[bytes, float] = {}
    for v in nodes:
        node = g.nodes[v]
        if node.op == "param":
            assert s.stage[v] == 0
        if node.op == "const":
            assert s.stage[v] == min((s.stage[w] for w in users[v]), default=0)
            finish[v] = 0.0
            continue
        for u in node.inputs:
            assert s.stage[u] <= s.stage[v], "a node reads a later stage"
            if v in s.pipelined and g.nodes[u].op != "const":
                assert s.stage[u] < s.stage[v], "a pipelined DSP reads an unregistered operand"
            if u in s.pipelined:
                assert s.stage[u] < s.stage[v], "a pipelined DSP's product is read unregistered"
        start = max((finish[u] for u in node.inputs
                     if s.stage[u] == s.stage[v] and g.nodes[u].op != "const"), default=0.0)
        finish[v] = start + costs.delay(g, node)
        assert finish[v] <= period + 1e-6, "a stage is longer than the usable period"
        assert s.start_ns[v] == pytest.approx(start) and s.finish_ns[v] == pytest.approx(finish[v])
    pos = {n: k for k, n in enumerate(s.order)}
    assert all(pos[u] < pos[v] for v in nodes for u in g.nodes[v].inputs)
    topo = {n: k for k, n in enumerate(nodes)}
    keys = [(s.stage[n], s.start_ns[n], topo[n]) for n in s.order]
    assert keys == sorted(keys)
    return sum(g.nodes[n].type.flat_width for bank in s.crossing() for n in bank)


def chain(delays_ops: list[str], width: int = 16) -> Graph:
    g = Graph("chain.kera")
    t = uint(width)
    a, b = param(g, 0, "a", t), param(g, 1, "b", t)
    x = a
    for op in delays_ops:
        x = g.add(op, t, (x, b))
    g.add_region(Region("f", (a, b), x))
    return g


# ------------------------------------------------------------------------------ chains


@pytest.mark.parametrize("n", [1, 2, 5, 13, 40])
@pytest.mark.parametrize("clock", [12.0, 50.0, 100.0, 180.0])
def test_chain_latency_is_minimal(n: int, clock: float) -> None:
    g = chain(["add"] * n)
    s = schedule(g, "f", family="simple", clock_mhz=clock, model=MODEL)
    check(s)
    d, p = MODEL.delay_ns("add", 16), usable(clock)
    lower_bound = math.ceil(n * d / p)
    assert s.latency >= lower_bound
    assert s.latency == math.ceil(n / math.floor(p / d))  # exact for equal delays


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.sampled_from(["add", "xor", "mul", "sub", "and"]), min_size=1,
                    max_size=30), clock=st.sampled_from([20.0, 60.0, 95.0]))
def test_mixed_chain_latency_equals_optimal_partition(ops: list[str], clock: float) -> None:
    g = chain(ops)
    s = schedule(g, "f", family="simple", clock_mhz=clock, model=MODEL)
    check(s)
    p = usable(clock)
    # per-node costs: a bitwise op costs the LUT levels it adds (b ^ b cancels: no level)
    costs = CostModel(MODEL)
    chain_nodes = [nid for nid in g.topo_order(g.regions["f"]) if g.nodes[nid].op != "param"]
    delays = [costs.delay(g, g.nodes[nid]) for nid in chain_nodes]
    # independent: the fewest segments of the chain with each segment's sum <= p (DP)
    best = [0] + [math.inf] * len(delays)
    for j in range(1, len(delays) + 1):
        for i in range(j):
            if sum(delays[i:j]) <= p + 1e-9:
                best[j] = min(best[j], best[i] + 1)
    assert s.latency == best[-1] >= math.ceil(sum(delays) / p - 1e-9)  # a float sum's error


# ------------------------------------------------------------------------------ random DAGs


@st.composite
def dags(draw: st.DrawFn, max_ops: int = 7) -> Graph:
    g = Graph("dag.kera")
    values = [param(g, i, f"p{i}", U16) for i in range(draw(st.integers(1, 3)))]
    params = tuple(values)
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(["add", "mul", "xor", "select", "narrow", "const"]))
        a, b = draw(st.sampled_from(values)), draw(st.sampled_from(values))
        if kind == "select":
            c = g.add("lt", BOOL, (a, b))
            v = g.add("select", U16, (c, a, b))
        elif kind == "narrow":  # a zero-delay slice + widening cast: registers prefer 4 bits
            v = g.add("cast", U16, (g.add("slice", uint(4), (a,), {"lo": 3}),))
        elif kind == "const":
            v = g.add("add", U16, (a, const(g, U16, draw(st.integers(0, 65535)))))
        else:
            v = g.add(kind, U16, (a, b))
        values.append(v)
    out = values[-1]
    for v in values[len(params):-1]:
        if draw(st.booleans()):
            out = g.add("xor", U16, (out, v))
    g.add_region(Region("f", params, out))
    return g


def brute_force(g: Graph, clock: float, latency: int) -> int | None:
    """Return the fewest register bits of any valid schedule with ``latency`` stages.

    Backtracking over the nodes in topological order: each takes a stage from the latest of
    its inputs' up to ``latency - 1`` while its chained finish fits in the period.
    """
    costs = CostModel(MODEL)
    nodes = [n for n in g.topo_order(g.regions["f"]) if g.nodes[n].op != "const"]
    result = g.regions["f"].result
    inputs = {v: [u for u in dict.fromkeys(g.nodes[v].inputs) if u in set(nodes)] for v in nodes}
    delay = {v: costs.delay(g, g.nodes[v]) for v in nodes}
    p = usable(clock)
    stage: dict[bytes, int] = {}
    fin: dict[bytes, float] = {}
    best: list[int] = []

    def bits() -> int:
        last = dict(stage)
        for v in nodes:
            for u in inputs[v]:
                last[u] = max(last[u], stage[v])
        last[result] = latency
        return sum(g.nodes[u].type.flat_width * (last[u] - stage[u]) for u in nodes)

    def place(k: int) -> None:
        if k == len(nodes):
            best.append(bits())
            return
        v = nodes[k]
        lo = max((stage[u] for u in inputs[v]), default=0)
        for s in [0] if g.nodes[v].op == "param" else range(lo, latency):
            start = max((fin[u] for u in inputs[v] if stage[u] == s), default=0.0)
            if start + delay[v] <= p + 1e-9:
                stage[v], fin[v] = s, start + delay[v]
                place(k + 1)
        stage.pop(v, None)

    place(0)
    return min(best) if best else None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=dags(), clock=st.sampled_from([40.0, 90.0, 120.0]))
def test_sdc_is_optimal_on_small_dags(g: Graph, clock: float) -> None:
    s = schedule(g, "f", family="simple", clock_mhz=clock, model=MODEL, method="sdc")
    assert s.method == "sdc"
    bits = check(s)
    assert brute_force(g, clock, s.latency - 1) is None if s.latency > 1 else True
    assert bits == brute_force(g, clock, s.latency)
    fallback = schedule(g, "f", family="simple", clock_mhz=clock, model=MODEL, method="list")
    assert fallback.method == "list" and fallback.latency == s.latency
    assert check(fallback) >= bits


@settings(max_examples=25, deadline=None)
@given(g=dags(max_ops=40), clock=st.sampled_from([30.0, 120.0]))
def test_larger_dags_are_valid_and_deterministic(g: Graph, clock: float) -> None:
    a = schedule(g, "f", family="simple", clock_mhz=clock, model=MODEL)
    b = schedule(g, "f", family="simple", clock_mhz=clock, model=MODEL)
    fallback = schedule(g, "f", family="simple", clock_mhz=clock, model=MODEL, method="list")
    assert (a.order, a.stage, a.start_ns) == (b.order, b.stage, b.start_ns)
    assert fallback.latency == a.latency
    assert check(a) <= check(fallback)


def test_register_minimisation_moves_wiring() -> None:
    """A wide value needed late only through a narrow slice is registered narrow."""
    g = Graph("w.kera")
    a = param(g, 0, "a", uint(64))
    narrow = g.add("slice", uint(4), (a,), {"lo": 0})
    x = g.add("cast", U16, (narrow,))
    b = param(g, 1, "b", U16)
    y = b
    for _ in range(12):
        y = g.add("add", U16, (y, b))
    g.add_region(Region("f", (a, b), g.add("xor", U16, (y, x))))
    s = schedule(g, "f", family="simple", clock_mhz=100.0, model=MODEL)
    bits = check(s)
    assert s.latency > 2
    assert s.stage[narrow] == 0  # the slice stays with the 64-bit input
    assert s.stage[x] == s.latency - 1  # the widening cast waits for its user
    # per bank: the 4-bit slice, the 16-bit `b` and the 16-bit running sum; then the result
    assert bits == (s.latency - 1) * (4 + 16 + 16) + 16


# ------------------------------------------------------------------------------ contract


def test_params_consts_and_trivial_regions() -> None:
    g = Graph("t.kera")
    a = param(g, 0, "a", U16)
    g.add_region(Region("id", (a,), a))
    c = const(g, U16, 7)
    g.add_region(Region("seven", (), c))
    for name in ("id", "seven"):
        s = schedule(g, name, family="simple", clock_mhz=12.0, model=MODEL)
        assert s.latency == 1 and set(s.stage.values()) == {0}
        assert s.crossing() == [[g.regions[name].result]]
    g2 = chain(["add"] * 20)
    s = schedule(g2, "f", family="simple", clock_mhz=150.0, model=MODEL)
    check(s)
    assert all(g2.nodes[n].op != "const" for bank in s.crossing() for n in bank)


def test_ii_is_recorded() -> None:
    g = chain(["add"] * 6)
    s = schedule(g, "f", family="simple", clock_mhz=80.0, ii=3, model=MODEL)
    one = schedule(g, "f", family="simple", clock_mhz=80.0, model=MODEL)
    assert s.ii == 3 and one.ii == 1
    assert s.stage == one.stage and s.latency == one.latency
    assert any("every 3 cycles" in n for n in s.notes)


def test_infeasible_clock_message() -> None:
    g = Graph("m.kera")
    t = uint(64)
    a, b = param(g, 0, "a", t), param(g, 1, "b", t)
    g.add_region(Region("f", (a, b), g.add("mul", t, (a, b))))
    with pytest.raises(KeraError) as info:
        schedule(g, "f", family="simple", clock_mhz=100.0, model=MODEL)
    assert info.value.exit_code == 1
    assert info.value.message == ("`mul` (64 bits) needs 18.0 ns but the clock period at 100 MHz "
                                  "leaves 8.0 ns; try --clock-mhz 47 or lower")
    check(schedule(g, "f", family="simple", clock_mhz=47.0, model=MODEL))
    with pytest.raises(KeraError):
        schedule(g, "f", family="simple", clock_mhz=48.0, model=MODEL)


@pytest.mark.parametrize("kwargs", [{"clock_mhz": 0.0}, {"clock_mhz": -5.0},
                                    {"clock_mhz": math.inf}, {"ii": 0}, {"ii": (1 << 20) + 1},
                                    {"ii": 1 << 32}, {"margin": 1.0}, {"method": "magic"}])
def test_bad_options_are_usage_errors(kwargs: dict) -> None:
    args = {"family": "simple", "clock_mhz": 12.0, "model": MODEL} | kwargs
    with pytest.raises(KeraError) as info:
        schedule(chain(["add"]), "f", **args)
    assert info.value.exit_code == 2


def test_unknown_region() -> None:
    with pytest.raises(KeraError, match="no function named `g`"):
        schedule(chain(["add"]), "g", family="simple", clock_mhz=12.0, model=MODEL)


def test_fallback_above_the_lp_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    g = chain(["add", "mul", "xor"] * 10)
    sdc = schedule(g, "f", family="simple", clock_mhz=60.0, model=MODEL)
    monkeypatch.setattr(sched_mod, "LP_MAX_NODES", 10)
    s = schedule(g, "f", family="simple", clock_mhz=60.0, model=MODEL)
    assert sdc.method == "sdc" and s.method == "list"
    assert any("fallback" in n for n in s.notes)
    assert s.latency == sdc.latency and check(s) >= check(sdc)


def test_division_is_pipelined_after_lowering() -> None:
    p = build_program("d.kera", "#[top] pub fn f(a: u32, b: u32) -> u32 { a / b }")
    assert p.graph is not None
    g = lower_for_hardware(p.graph)
    s = schedule(g, "f", family="simple", clock_mhz=100.0, model=MODEL)
    check(s)
    assert s.latency > 3  # 32 compare/subtract steps do not fit in one 10 ns cycle
    raw = schedule(p.graph, "f", family="simple", clock_mhz=1.0, model=MODEL)
    assert raw.latency == 1  # an unlowered divider is costed as one (slow) combinational op


# ------------------------------------------------------------------------------ kernels


def _real_model(family: str) -> object:
    models = pytest.importorskip("kera.hls.models")
    if not hasattr(models, "load_model"):
        pytest.skip("kera.hls.models.load_model is not there yet")
    try:
        return models.load_model(family)
    except KeraError as e:
        pytest.skip(f"no model for {family}: {e.message}")


@pytest.mark.parametrize("kernel", kernel_params())
@pytest.mark.parametrize(("family", "clock"), [("ice40", 12.0), ("ecp5", 25.0),
                                               ("ice40", 60.0), ("ecp5", 150.0)])
def test_shared_kernels_schedule(kernel: Path, family: str, clock: float) -> None:
    model = _real_model(family)
    p = build_program(str(kernel), kernel.read_bytes())
    assert p.graph is not None and p.top is not None, p.diagnostics
    g = lower_for_hardware(p.graph)
    try:
        s = schedule(g, p.top, family=family, clock_mhz=clock, model=model)  # type: ignore[arg-type]
    except KeraError as e:  # a tight clock may be too fast for one op: that must be the reason
        assert "try --clock-mhz" in e.message and clock > 25
        return
    check(s, model)


def test_costs_of_derived_and_wiring_ops() -> None:
    from kera.ir.types import ArrayType

    g = Graph("c.kera")
    arr_t = ArrayType(U16, 8)
    arr, i = param(g, 0, "arr", arr_t), param(g, 1, "i", uint(3))
    v = param(g, 2, "v", U16)
    costs = CostModel(MODEL)
    upd = g.nodes[g.add("array_update", arr_t, (arr, i, v))]
    idx = g.nodes[g.add("array_index", U16, (arr, i))]
    fixed = g.nodes[g.add("array_index", U16, (arr, const(g, uint(3), 2)))]
    div = g.nodes[g.add("div", U16, (v, v))]
    sel, eq = MODEL.delay_ns("select", 16), MODEL.delay_ns("eq", 3)
    assert costs.delay(g, upd) == pytest.approx(sel + eq)
    assert costs.area(g, upd)["lut"] == 8 * (16 + 3)
    assert costs.delay(g, idx) == MODEL.delay_ns("array_index", 16, 8)
    assert costs.delay(g, fixed) == 0.0 and not any(costs.area(g, fixed).values())
    step = MODEL.delay_ns("sub", 16) + sel
    assert costs.delay(g, div) == pytest.approx(16 * step)
    three, mask = const(g, uint(4), 3), const(g, U16, 0xFF)
    for op, ins in (("shl", (v, three)), ("rotr", (v, three)), ("and", (mask, v)),
                    ("or", (v, mask))):
        assert costs.delay(g, g.nodes[g.add(op, U16, ins)]) == 0.0, op
    assert costs.delay(g, g.nodes[g.add("shl", U16, (v, i))]) > 0
    # xor with a constant only inverts bits: inverters fold into the LUTs that read them
    assert costs.delay(g, g.nodes[g.add("xor", U16, (v, mask))]) == 0.0
    both = g.nodes[g.add("xor", U16, (v, g.add("not", U16, (v,))))]  # v ^ ~v: all ones
    assert costs.delay(g, both) == 0.0
    w = param(g, 3, "w", U16)
    assert costs.delay(g, g.nodes[g.add("xor", U16, (v, w))]) == costs.level_ns > 0
