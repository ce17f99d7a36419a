"""Routed net delays: what a net costs by its fanout and the size of the design around it.

The op curves are measured in small designs, and the per-level net delay of the LUT network
(``fit.fit_lut_network``) is the median net of the ``eq``/``ne`` points: a few dozen LUTs. In
a design of thousands of LUTs, and on a net that drives many inputs, nextpnr routes longer
wires: the nets of the worst paths of the repository's designs (iCE40, placed) average 1.8 ns
in a 50-LUT design and 2.5-3.2 ns in a 2,000-5,000-LUT one, and a net of fanout 32 or more
3.6-4.2 ns.

Each sample is one routed net of a worst register-to-register path: its delay, its fanout (the
cell inputs the yosys netlist connects to it) and the design's LUT count (nextpnr's
utilisation). Carry-chain hops (``COUT``/``FCO``) are left out: they are in the fitted carry
curves; so are the hops inside an ECP5 slice (into a PFUMX/L6MUX21, into the flip-flop beside
the LUT). ``fit_routing`` fits ``delay = a + b log2(fanout) + c log2(size)`` by least squares;
``kera.hls.sta`` uses it for every net of the bit-level timing.

``python -m kera.hls.characterize --family F --routing [FILE.kera ...]`` places each design
(default: the repository's examples and ../shared kernels) at its board's clock in the serial
shell with seed 1 and writes the samples to ``kera/hls/models/data/<family>.nets.jsonl``; the
fit of the model file reads them (``fit.fit_family``).
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .tools import FLOWS, Flow, _run, commands, tool_versions

#: nextpnr's utilisation entry that counts a family's logic cells.
LOGIC_CELLS = {"ice40": "ICESTORM_LC", "ecp5": "TRELLIS_COMB"}
#: Output ports of a carry hop (in the fitted carry curves, not a net of the LUT network).
CARRY_PORTS = frozenset({"COUT", "FCO"})
#: Input ports reached inside a slice, not over the routing: ECP5's wide-function muxes
#: (PFUMX/L6MUX21: in the LUT library's delays) and a flip-flop's input from its own LUT
#: (``ff_packing_ns``).
INTERNAL_PORTS = frozenset({"F0", "F1", "FXA", "FXB", "DI"})


def nets_path(family: str) -> Path:
    """Return the path of a family's net samples (JSON lines)."""
    from kera.hls.characterize import DATA_DIR

    return DATA_DIR / f"{family}.nets.jsonl"


def fanouts(netlist: dict[str, Any]) -> dict[str, int]:
    """Return the fanout of every net bit of a yosys JSON netlist, by nextpnr's net name."""
    module = netlist["modules"]["top"]
    sinks: Counter[int] = Counter()
    for cell in module["cells"].values():
        for port, direction in cell["port_directions"].items():
            if direction == "input":
                sinks.update(b for b in cell["connections"][port] if isinstance(b, int))
    out: dict[str, int] = {}
    for name, info in module["netnames"].items():
        bits = info["bits"]
        for i, b in enumerate(bits):
            if isinstance(b, int):
                out[name if len(bits) == 1 else f"{name}[{i}]"] = sinks[b]
    return out


def samples(report: dict[str, Any], netlist: dict[str, Any], family: str,
            design: str) -> list[dict[str, Any]]:
    """Return the net samples of the worst register-to-register path of a placed design."""
    paths = [p for p in report.get("critical_paths", [])
             if p["from"].startswith("posedge") and p["from"] == p["to"]]
    if not paths:
        return []
    size = int(report["utilization"].get(LOGIC_CELLS[family], {}).get("used", 0))
    fan = fanouts(netlist)
    out = []
    for seg in paths[0]["path"]:
        if (seg["type"] != "routing" or seg["from"].get("port") in CARRY_PORTS
                or seg["to"].get("port") in INTERNAL_PORTS):
            continue
        f = fan.get(seg.get("net", ""))
        if not f:
            continue
        out.append({"design": design, "family": family, "size": size, "fanout": f,
                    "delay_ns": round(float(seg["delay"]), 4),
                    "from_port": seg["from"].get("port"), "to_port": seg["to"].get("port")})
    return out


def fit_routing(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Fit ``delay = a + b log2(fanout) + c log2(size)`` to the samples (least squares)."""
    y = np.array([r["delay_ns"] for r in records], dtype=float)
    x = np.array([[1.0, math.log2(r["fanout"]), math.log2(max(2, r["size"]))]
                  for r in records])
    keep = [0, 1, 2]
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    for k in (2, 1):  # no net faster for a larger fanout or design: such a term is left out
        if coef[k] < 0:
            keep.remove(k)
            sub, *_ = np.linalg.lstsq(x[:, keep], y, rcond=None)
            coef = np.zeros(3)
            coef[keep] = sub
    rms = float(np.sqrt(np.mean((y - x @ coef) ** 2)))
    a, b, c = (round(float(v), 4) for v in coef)
    return {"a": a, "fanout": b, "size": c, "points": len(records),
            "designs": len({r["design"] for r in records}), "rms_ns": round(rms, 4),
            "method": "least squares of a + b log2(fanout) + c log2(size LUTs) over the routed "
                      "nets of the worst paths of placed designs, b, c >= 0 "
                      "(kera.hls.characterize.routing)"}


def place_design(flow: Flow, verilog: str, work: Path) -> tuple[dict, dict]:
    """Synthesise and place ``verilog`` (module ``top``) with seed 1 in ``work``; return the
    nextpnr report and the yosys netlist."""
    (work / "top.v").write_text(verilog)
    yosys, nextpnr = commands(flow, True, 1)
    _run(yosys, work)
    _run(nextpnr, work)
    return (json.loads((work / "report1.json").read_text()),
            json.loads((work / "net.json").read_text()))


def measure_routing(family: str, files: list[Path], out: Path,
                    progress: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr,
                                                                         flush=True)) -> Path:
    """Place each design at its board's clock and write the net samples to ``out``."""
    from kera import load
    from kera.hls.characterize import BOARD_OF
    from kera.hls.pnr import shell_verilog
    from kera.hls.synth import plan_schedule
    from kera.rtl import emit_verilog

    flow = FLOWS[family]
    versions = tool_versions(flow)
    rows: list[dict[str, Any]] = []
    for k, path in enumerate(files, 1):
        loaded = load(str(path))
        sched, board, _ = plan_schedule(loaded.graph, loaded.top, board=BOARD_OF[family])
        params, result = sched.graph.signature(sched.region)
        verilog = shell_verilog(emit_verilog(sched, board=board.name, version="routing"),
                                sched.region, [(n, t.flat_width) for n, t in params],
                                result.flat_width)
        with tempfile.TemporaryDirectory(prefix="kera-nets-") as tmp:
            try:
                report, netlist = place_design(flow, verilog, Path(tmp))
            except RuntimeError as e:  # a design that does not fit the device: no samples
                progress(f"[{k}/{len(files)}] {path.stem}: {str(e).splitlines()[0][:120]}")
                continue
        got = samples(report, netlist, family, path.stem)
        progress(f"[{k}/{len(files)}] {path.stem}: {len(got)} nets")
        rows += [{**r, "tools": versions} for r in got]
    out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return out


__all__ = ["CARRY_PORTS", "INTERNAL_PORTS", "LOGIC_CELLS", "fanouts", "fit_routing",
           "measure_routing", "nets_path", "place_design", "samples"]
