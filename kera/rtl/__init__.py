"""Verilog for a scheduled region: the emitter, its per-opcode lowerings, and lint.

``emit_verilog`` writes one Verilog-2005 module per schedule (ports, packing and handshake as in
INTERFACES.md); ``lint`` runs Verilator's ``--lint-only -Wall`` on it and ``parse_ports`` reads
its port list back with pyverilog.
"""

from kera.rtl.emit import emit_verilog
from kera.rtl.lint import Port, lint, parse_ports
from kera.rtl.lower import LOWERINGS
from kera.rtl.names import FIXED_PORTS, KEYWORDS
from kera.rtl.packing import layout, pack, unpack

__all__ = [
    "FIXED_PORTS",
    "KEYWORDS",
    "LOWERINGS",
    "Port",
    "emit_verilog",
    "layout",
    "lint",
    "pack",
    "parse_ports",
    "unpack",
]
