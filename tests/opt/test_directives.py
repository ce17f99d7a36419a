"""`#[pipeline(ii = N)]` survives every optimisation level, every pass and the `.keg`."""

from __future__ import annotations

import pytest

from kera.elaborate import build_program
from kera.hls.synth import plan_schedule
from kera.ir import keg
from kera.opt import PASSES, optimize

SRC = "#[top]\n#[pipeline(ii = 3)]\nfn f(x: u32, y: u32) -> u32 {\n    (x + 0) / 10 + y * 2\n}\n"


@pytest.mark.parametrize("level", [0, 1, 2])
def test_every_level_keeps_the_ii(level: int) -> None:
    p = build_program("f.kera", SRC)
    graph = optimize(p.graph, level)
    assert graph.directives == {"f": {"ii": 3}}
    assert keg.load(keg.write(graph), "f.keg").directives == {"f": {"ii": 3}}
    assert plan_schedule(graph, "f", clock_mhz=12.0)[0].ii == 3


@pytest.mark.parametrize("name", sorted(PASSES))
def test_every_pass_keeps_the_ii(name: str) -> None:
    p = build_program("f.kera", SRC)
    assert optimize(p.graph, pipeline=(name,)).directives == {"f": {"ii": 3}}
