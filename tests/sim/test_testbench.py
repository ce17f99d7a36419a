"""The standalone testbench that `synthesize` writes beside the Verilog."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kera.hls.pipeline import single_stage
from kera.rtl import emit_verilog
from kera.sim import design_info, render_testbench

pytest.importorskip("cocotb", reason="cocotb is not installed (pip install -e .[tools])")
from kera.sim.templates import kera_tb  # noqa: E402 (needs cocotb)
from tests.rtl.schedules import depth_schedule
from tests.sim.test_simulate import _gray


def test_render_is_deterministic_python_with_the_design_embedded() -> None:
    graph, top = _gray()
    schedule = depth_schedule(graph, top, 2)
    text = render_testbench(schedule)
    assert text == render_testbench(schedule)
    compile(text, f"{top}_tb.py", "exec")
    namespace: dict = {}
    embedded = next(line for line in text.splitlines() if line.startswith("DESIGN"))
    exec(embedded.split("  #")[0], {"json": json}, namespace)
    assert namespace["DESIGN"] == design_info(schedule)
    assert namespace["DESIGN"]["latency"] == 2 and namespace["DESIGN"]["out_width"] == 16


def test_testbench_packing_matches_the_compiler() -> None:
    from kera.ir.types import ArrayType, TupleType, sint, uint
    from kera.rtl.packing import layout, pack, unpack

    t = TupleType((ArrayType(sint(5), 3), uint(7), TupleType(())))
    value = [[-16, 15, -1], 100, []]
    assert kera_tb.pack(value, layout(t)) == pack(value, t)
    assert kera_tb.unpack(pack(value, t), layout(t)) == unpack(pack(value, t), t) == value
    assert kera_tb.width(layout(t)) == t.flat_width


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="Icarus (iverilog) is not installed")
def test_standalone_testbench_runs_next_to_the_verilog(tmp_path: Path) -> None:
    graph, top = _gray()
    schedule = single_stage(graph, top)
    (tmp_path / f"{top}.v").write_text(
        emit_verilog(schedule, board="icebreaker", version="test"), encoding="utf-8"
    )
    (tmp_path / f"{top}_tb.py").write_text(render_testbench(schedule), encoding="utf-8")
    vectors = tmp_path / "vectors.jsonl"
    vectors.write_text("".join(json.dumps({"inputs": {"x": x}, "expected": e}) + "\n"
                               for x, e in ((0, [0, 0]), (1, [1, 1]), (3, [2, 2]))),
                       encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    proc = subprocess.run([sys.executable, f"{top}_tb.py", str(vectors), "icarus"],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["passed"] and summary["latency_observed"] == 1
