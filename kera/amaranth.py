"""A synthesized Kera core as an Amaranth ``Elaboratable``, to drop into an Amaranth design.

    syn = kera.synthesize(kera.load("fir8.kera"), "icebreaker", outdir="build")
    core = KeraCore.from_synthesis(syn)
    m.submodules.fir = core
    m.d.comb += [core.inputs["x"].eq(x), core.in_valid.eq(go), core.out_ready.eq(1)]

The ports follow the RTL port contract (INTERFACES.md): ``clk`` and ``rst`` come from the
clock domain (default ``sync``), ``in_valid``/``in_ready``/``out_valid``/``out_ready`` are the
handshake, one input per parameter at its flattened width, and ``out`` the result. With a
platform, the Verilog is added to it (``platform.add_file``); the core is an ``Instance`` of the
generated module either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from amaranth.hdl import ClockSignal, Elaboratable, Instance, Module, ResetSignal, Signal


class KeraCore(Elaboratable):
    """The generated module ``module`` (Verilog text ``verilog``) as an Amaranth component."""

    def __init__(self, verilog: str, module: str, inputs: Sequence[tuple[str, int]],
                 out_width: int, *, domain: str = "sync") -> None:
        self.verilog = verilog
        self.module = module
        self.domain = domain
        self.in_valid = Signal(name=f"{module}_in_valid")
        self.in_ready = Signal(name=f"{module}_in_ready")
        self.out_valid = Signal(name=f"{module}_out_valid")
        self.out_ready = Signal(name=f"{module}_out_ready")
        self.inputs = {name: Signal(width, name=f"{module}_{name}") for name, width in inputs}
        self.out = Signal(out_width, name=f"{module}_out")

    @classmethod
    def from_synthesis(cls, synthesis: Any, *, domain: str = "sync") -> KeraCore:
        """Return the core of a ``kera.synthesize`` result (its Verilog and its signature)."""
        schedule = synthesis.schedule
        params, result = schedule.graph.signature(schedule.region)
        return cls(synthesis.verilog, schedule.region,
                   [(name, t.flat_width) for name, t in params], result.flat_width,
                   domain=domain)

    @property
    def ports(self) -> dict[str, Signal]:
        """Every port but the clock and reset, by its Verilog name."""
        return {"in_valid": self.in_valid, "in_ready": self.in_ready, **self.inputs,
                "out_valid": self.out_valid, "out_ready": self.out_ready, "out": self.out}

    def elaborate(self, platform: Any) -> Module:
        """Instantiate the core; add its Verilog to ``platform`` when there is one."""
        m = Module()
        if platform is not None:
            platform.add_file(f"{self.module}.v", self.verilog)
        ports: dict[str, Any] = {"i_clk": ClockSignal(self.domain),
                                 "i_rst": ResetSignal(self.domain),
                                 "i_in_valid": self.in_valid, "o_in_ready": self.in_ready,
                                 "o_out_valid": self.out_valid, "i_out_ready": self.out_ready,
                                 "o_out": self.out}
        ports.update({f"i_{name}": sig for name, sig in self.inputs.items()})
        m.submodules.core = Instance(self.module, **ports)
        return m


__all__ = ["KeraCore"]
