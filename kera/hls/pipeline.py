"""The ``Schedule``: the one object every backend lowers from (ARCHITECTURE.md, invariant 3).

Timing contract (shared by the scheduler, the Verilog emitter, the cycle report, the cocotb
testbench and the CPU/WASM/PTX golden models):

* A pipeline has ``latency`` stages, numbered ``0 .. latency-1``, and ``latency`` register banks.
  Bank ``s`` is loaded at the end of stage ``s``; the last bank is the output register.
* Every node of the region has a stage. ``param`` nodes are in stage 0 (they are the input
  ports). ``const`` nodes are free wiring and take the stage of their earliest user.
  A node in stage ``s`` reads only nodes of stages ``<= s``; a value produced in stage ``p`` and
  read in stage ``s > p`` travels through banks ``p .. s-1`` (the pipeline registers). The
  region's result is registered in every bank from its stage to the last.
* Handshake: an input transferred at rising edge *t* (``in_valid && in_ready``) is computed by
  stage 0 before that edge and loaded into bank 0 at *t*; with ``out_ready`` held high the result
  is presented with ``out_valid`` and transferred at edge *t + latency*. A new input is accepted
  every ``ii`` cycles. ``latency >= 1``: the output is always registered.
* ``start_ns[n]`` is when node ``n`` may start within its stage (its inputs' arrival), and
  ``finish_ns[n] = start_ns[n] + delay``; every finish is at most the clock period minus the
  register overhead of the delay model.
* ``order`` lists every node of the region sorted by (stage, start_ns, canonical topological
  index): evaluating nodes in this order is always valid, and it is the order the CPU, WASM and
  PTX backends emit code in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from kera.ir.graph import Graph

if TYPE_CHECKING:
    from kera.hls.lutcover import StageCover
    from kera.hls.regbind import RegisterBinding


@dataclass(frozen=True)
class StatePlan:
    """How a stateful region's II was chosen and what its state becomes (STATE.md, "Hardware").

    ``requested`` is the `#[pipeline(ii = N)]` II (None without it); ``recurrences`` the
    report's entries, one per state whose next value depends on its own read; ``mems`` what
    each state element maps to (``kera.hls.memory``); ``reset_cycles`` the rising edges after
    reset before ``in_ready`` may rise.
    """

    requested: int | None
    rec_mii: int
    res_mii: int
    recurrences: tuple[Mapping[str, Any], ...] = ()
    mems: tuple[Any, ...] = ()
    reset_cycles: int = 0

    @property
    def binding(self) -> str:
        """The largest of requested, rec_mii, res_mii (the first of them on a tie)."""
        req = self.requested or 0
        best = max(req, self.rec_mii, self.res_mii)
        if req == best:
            return "requested"
        return "rec_mii" if self.rec_mii == best else "res_mii"


@dataclass(frozen=True)
class Unit:
    """One hardware operator that ``len(ops)`` ops of one kind share at ``ii`` > 1 (binding).

    ``ops[k]`` runs in a stage congruent to ``slots[k]`` modulo the II (the slots are distinct):
    the unit's operand ``j`` is a multiplexer, selected by the modulo counter, of the ops'
    operands ``j`` cut to their ``in_widths[j]`` significant bits and extended back to the
    op's operand type (sign-extended when ``in_signed[j]``); an operand all of whose ops read
    one signal (``sources[j]`` = 1) is that signal, no multiplexer. ``on_dsp`` says whether a
    multiply unit takes DSP blocks; ``mux_lut`` is the estimated LUTs of its multiplexers and
    constant ROMs; ``sources`` the distinct sources of each operand.
    """

    name: str
    kind: str
    width: int
    ops: tuple[bytes, ...]
    slots: tuple[int, ...]
    in_widths: tuple[int, ...]
    in_signed: tuple[bool, ...]
    mux_lut: int = 0
    mux_ns: float = 0.0
    on_dsp: bool = False
    sources: tuple[int, ...] = ()


@dataclass(frozen=True)
class Schedule:
    """Node → stage and start time for one region of one graph, at one clock and II."""

    graph: Graph
    region: str
    clock_mhz: float
    ii: int
    latency: int
    stage: Mapping[bytes, int]
    start_ns: Mapping[bytes, float]
    finish_ns: Mapping[bytes, float]
    order: tuple[bytes, ...]
    method: str = "sdc"  # how it was found: "sdc" (LP) or "list" (documented fallback)
    family: str = ""
    notes: tuple[str, ...] = field(default=())
    state: StatePlan | None = None  # None for a pure region
    # Nodes with no circuit of their own (a block RAM's state node and update chain): never
    # registered, never emitted as wires (kera.rtl.memory emits the RAM's ports instead).
    virtual: frozenset[bytes] = frozenset()
    # Multiplies on a DSP with its own input and output registers (``kera.hls.schedule.
    # pipeline_dsps``): operands registered in the bank before their stage, product in theirs.
    pipelined: frozenset[bytes] = frozenset()
    # Lookups read from a ROM in block RAM (``kera.hls.rom``): the address (the index) is
    # registered by the RAM at the end of the stage before the read, the data is the read's.
    roms: frozenset[bytes] = frozenset()
    # ... read through the RAM's output register: the address two stages before the read.
    rom_outreg: bool = False
    # Values read by a block RAM's write port in a later stage than their users: node -> stage.
    extra_uses: Mapping[bytes, int] = field(default_factory=dict)
    # Operator sharing at ii > 1 (``kera.hls.sharing``): the units, each serving several ops.
    units: tuple[Unit, ...] = ()
    # Why this II (``--fit``'s search, or what was requested); for the report.
    ii_reason: str = ""
    # Whether values of different sources may share a pipeline register behind a multiplexer
    # (fewer FFs, more LUTs); ``--fit`` turns it off where the LUTs are what does not fit.
    register_mux: bool = True
    # The timing margin it was scheduled with (``plan_schedule``: the requested one, or less
    # where the estimate or an op that nothing splits needed less); None where not recorded.
    margin: float | None = None
    # Stages whose bitwise logic is written as LUT cells for area (``kera.hls.lutcover``).
    covers: tuple[StageCover, ...] = ()

    @property
    def aligned(self) -> bool:
        """Whether inputs start only when the modulo counter is at 0.

        That is when a unit is shared, or when values share pipeline registers
        (``register_binding``): both need stage ``s`` to run at count ``s mod ii``.
        """
        if self.ii <= 1:
            return False
        if any(len(u.ops) > 1 for u in self.units):
            return True
        binding = self.register_binding
        return binding is not None and binding.saves

    @cached_property
    def register_binding(self) -> RegisterBinding | None:
        """The pipeline registers on the modulo circle (``kera.hls.regbind``); None at ii 1."""
        if self.ii <= 1:
            return None
        from kera.hls.regbind import bind, unregistered

        return bind(self, unregistered(self), mix=self.register_mux)

    def bound(self) -> dict[bytes, Unit]:
        """Return op -> the shared unit (two ops or more) that computes it."""
        return {nid: u for u in self.units if len(u.ops) > 1 for nid in u.ops}

    @property
    def clock_ns(self) -> float:
        """The clock period in ns."""
        return 1000.0 / self.clock_mhz

    def crossing(self) -> list[list[bytes]]:
        """Return, for each bank ``s``, the node ids whose values it holds (sorted by order).

        A value is held in bank ``s`` when it is produced in a stage ``<= s`` and read in a stage
        ``> s``, or when it is the region's result (held from its stage to the last bank).
        Constants are never registered.
        """
        graph = self.graph
        region = graph.regions[self.region]
        last_use: dict[bytes, int] = {}
        # a ROM's address (two stages before through the RAM's output register), and a block
        # RAM's read through its output register (its hit tests are registered a stage before
        # the data): last read in the stage before
        early = dict.fromkeys(self.roms, 2 if self.rom_outreg else 1)
        early.update((m.ports.read, 1) for m in (self.state.mems if self.state else ())
                     if m.outreg and m.ports is not None)
        for nid in self.order:
            node = graph.nodes[nid]
            used = self.stage[nid] - early.get(nid, 0)
            for i in node.inputs:
                if graph.nodes[i].op != "const":
                    last_use[i] = max(last_use.get(i, -1), used)
        for nid, used in self.extra_uses.items():
            if graph.nodes[nid].op != "const":
                last_use[nid] = max(last_use.get(nid, -1), used)
        last_use[region.result] = self.latency
        position = {nid: k for k, nid in enumerate(self.order)}
        banks: list[list[bytes]] = [[] for _ in range(self.latency)]
        for nid, used in last_use.items():
            if graph.nodes[nid].op == "const" and nid != region.result or nid in self.virtual:
                continue
            for s in range(self.stage[nid], min(used, self.latency)):
                banks[s].append(nid)
        for bank in banks:
            bank.sort(key=position.__getitem__)
        return banks


def single_stage(graph: Graph, region: str, clock_mhz: float = 12.0, ii: int = 1) -> Schedule:
    """Return the trivial schedule: everything in stage 0, latency 1 (timing not checked).

    Used as a stand-in in unit tests of the backends and as the `-O0`-style reference; the real
    scheduler is ``kera.hls.schedule``.
    """
    order = tuple(graph.topo_order(graph.regions[region]))
    zero = dict.fromkeys(order, 0)
    return Schedule(graph, region, clock_mhz, ii, 1, zero, dict.fromkeys(order, 0.0),
                    dict.fromkeys(order, 0.0), order, method="single-stage")
