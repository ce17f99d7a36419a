"""PTX: every opcode and every shared kernel assembles for sm_80 and sm_90; running needs a
CUDA device, and without one ``run_ptx`` is a clean exit-code-3 error."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kera.backends.ptx import ARCHES, assemble, emit_ptx, find_ptxas, ptx_available, run_ptx
from kera.diagnostics import KeraError
from kera.elaborate import build_program
from kera.hls.pipeline import single_stage
from kera.ir.ops import OPS
from tests.conftest import kernel_params

from .kit import EDGE_WIDTHS, op_program
from .test_ops import width_sweep

needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas (CUDA toolkit) is absent")


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("widths", [EDGE_WIDTHS[:8], EDGE_WIDTHS[8:]], ids=["w1-16", "w17-64"])
def test_every_width_assembles(arch: str, widths: tuple[int, ...]) -> None:
    program = width_sweep(widths)
    assemble(emit_ptx(single_stage(program.graph, program.top), arch), arch)


@needs_ptxas
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_opcode_assembles(data: st.DataObject) -> None:
    program = op_program(sorted(OPS), data, 1)
    for arch in ARCHES:
        text = emit_ptx(single_stage(program.graph, program.top), arch)
        assert f".target {arch}" in text and ".version 8.0" in text
        assemble(text, arch)


@needs_ptxas
@pytest.mark.parametrize("kernel", kernel_params())
def test_kernel_assembles(kernel) -> None:
    program = build_program(str(kernel), kernel.read_bytes())
    schedule = single_stage(program.graph, program.top)
    for arch in ARCHES:
        cubin = assemble(emit_ptx(schedule, arch), arch)
        assert cubin[:4] == b"\x7fELF"


def test_no_fused_or_approximate_instructions() -> None:
    program = width_sweep(EDGE_WIDTHS)
    text = emit_ptx(single_stage(program.graph, program.top))
    for banned in (".ftz", ".approx", "fma.", "mad.wide"):
        assert banned not in text


def test_run_ptx_without_a_device_is_exit_3() -> None:
    if ptx_available() is None:
        pytest.skip("a CUDA device is present: tests/parity runs PTX for real")
    kernel = kernel_params()[0].values[0]
    if kernel is None:
        pytest.skip("../shared/kernels is absent")
    program = build_program(str(kernel), kernel.read_bytes())
    params, _ = program.graph.signature(program.top)
    with pytest.raises(KeraError) as info:
        run_ptx(single_stage(program.graph, program.top), {})
    assert info.value.exit_code == 3
    assert "no CUDA device" in info.value.message
    assert params  # the check above fails before any input is looked at


def test_assemble_without_ptxas_is_exit_3(monkeypatch) -> None:
    monkeypatch.setenv("PTXAS", "/nonexistent/ptxas")
    with pytest.raises(KeraError) as info:
        assemble(".version 8.0\n.target sm_80\n.address_size 64\n", "sm_80")
    assert info.value.exit_code == 3 and "ptxas" in info.value.message


def test_run_jsonl_on_ptx_without_a_device_is_exit_3() -> None:
    if ptx_available() is None:
        pytest.skip("a CUDA device is present")
    from kera import Loaded, run

    from .test_golden import small_graph

    with pytest.raises(KeraError) as info:
        run(Loaded(small_graph(), "f"), ['{"a": 1}'], target="ptx")
    assert info.value.exit_code == 3 and "no CUDA device" in info.value.message
