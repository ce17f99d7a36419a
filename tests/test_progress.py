"""Progress bars: on a terminal only, never with --quiet; Ctrl-C stops cleanly with exit 130."""

from __future__ import annotations

import io
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from kera import progress

KERA = [sys.executable, "-m", "kera.cli"]
ROOT = Path(__file__).resolve().parents[1]


class _Terminal(io.StringIO):
    """A text stream that says it is a terminal (what rich and ``is_terminal`` ask)."""

    def isatty(self) -> bool:
        return True


def _count_to(n: int, stream: io.StringIO, enabled: bool = True) -> bool:
    with progress.reporting(enabled, stream=stream) as shown:
        with progress.task("counting", total=n, unit="items") as bar:
            for _ in range(n):
                bar.advance()
                time.sleep(0.02)
    return shown


def test_a_terminal_shows_the_bar_with_counts_and_rate() -> None:
    out = _Terminal()
    assert _count_to(20, out)
    text = out.getvalue()
    assert "counting" in text and "/20" in text and "items/s" in text


def test_a_stream_that_is_not_a_terminal_gets_nothing() -> None:
    out = io.StringIO()
    assert not _count_to(5, out)
    assert out.getvalue() == ""


def test_disabled_reporting_and_tasks_outside_it_show_nothing() -> None:
    out = _Terminal()
    assert not _count_to(5, out, enabled=False)
    with progress.task("alone", total=3) as bar:
        assert not bar.shown
        bar.advance(3)
    assert out.getvalue() == ""


def _default_sigint() -> None:
    """Give a child process the default SIGINT disposition (``Popen(preexec_fn=...)``)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _loop_file(tmp_path: Path, iterations: int, body: str = "(acc ^ x[i % 16]) + i",
               more: str = "") -> Path:
    path = tmp_path / "loop.kera"
    path.write_text("#[top]\npub fn big(x: [u32; 16]) -> u32 {\n    let mut acc = 0u32;\n"
                    f"    for i in 0..{iterations} {{ acc = {body}; }}\n"
                    "    acc\n}\n" + more)
    return path


def _on_a_terminal(args: list[str]) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal; return its exit code and what it showed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(KERA + args, stdout=subprocess.DEVNULL, stderr=slave, cwd=ROOT)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed its side
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def test_check_of_a_big_loop_shows_progress_on_a_terminal_unless_quiet(tmp_path: Path) -> None:
    path = str(_loop_file(tmp_path, 6000))
    code, shown = _on_a_terminal(["check", path])
    assert code == 0, shown
    assert "unrolling `for i in 0..6000`" in shown and "/6000" in shown
    assert "ok (1 function)" in shown
    code, quiet = _on_a_terminal(["check", "--quiet", path])
    assert code == 0 and "unrolling" not in quiet and "ok (1 function)" in quiet


def test_ctrl_c_stops_a_long_check_with_exit_130_and_no_traceback(tmp_path: Path) -> None:
    # Minutes of work: it must be the interrupt that ends it. A loop calling a function is
    # walked every iteration (kera.elaborate.replay replays only call-free bodies).
    path = _loop_file(tmp_path, 150000, "mix(acc, x[i % 16]) + i",
                      "fn mix(a: u32, b: u32) -> u32 { a ^ b }\n")
    # faulthandler: if the interrupt is not honoured, SIGABRT dumps where the child is stuck.
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    # A child inherits an ignored SIGINT (and Python then leaves it ignored): in fresh clones
    # the worker running this test sometimes had it ignored, and the check ran to its end
    # (18 s) instead of stopping. A user's terminal delivers it: the child gets the default.
    proc = subprocess.Popen(KERA + ["check", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
                            preexec_fn=_default_sigint)
    time.sleep(3.0)  # past the imports, into the unrolling
    assert proc.poll() is None
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        status = Path(f"/proc/{proc.pid}/status")
        masks = [ln for ln in status.read_text().splitlines() if ln.startswith("Sig")] \
            if status.exists() else []
        proc.send_signal(signal.SIGABRT)
        out, err = proc.communicate()
        raise AssertionError(f"no exit 30 s after SIGINT ({masks}); its stacks:\n{err}") from None
    assert time.monotonic() - start < 10
    assert (proc.returncode, err, out) == (130, "kera-hls: interrupted\n", "")


def test_an_error_while_ctrl_c_unwinds_is_still_the_interrupt(monkeypatch, capsys) -> None:
    # A cleanup that fails on state the interrupt left half-built must not turn Ctrl-C into
    # "internal compiler error" (exit 70); any other error still is one.
    from kera import cli

    def interrupted_then_broken(args) -> int:
        try:
            raise KeyboardInterrupt
        finally:
            [].pop()  # an IndexError raised while the interrupt unwinds

    def broken(args) -> int:
        return [].pop()

    for fn, code, said in ((interrupted_then_broken, 130, "kera-hls: interrupted\n"),
                           (broken, 70, "internal compiler error: IndexError")):
        monkeypatch.setattr(cli, "cmd_boards", fn)
        assert cli.main(["boards"]) == code
        assert said in capsys.readouterr().err


def test_parity_counts_its_targets_on_the_bar() -> None:
    from kera import load
    from kera.sim.parity import run_parity

    loaded = load(str(ROOT / "examples" / "popcount32.kera"))
    out = _Terminal()
    with progress.reporting(stream=out):
        report = run_parity(loaded.graph, loaded.top, targets=["interp"], vectors=50)
    assert [r.status for r in report.results] == ["ok"]
    assert "parity on" in out.getvalue() and "/1" in out.getvalue()


def test_the_search_for_an_ii_that_fits_shows_progress() -> None:
    """The over-budget error's hint and ``--fit`` schedule one II after another (a minute and
    more for a big design that fits none): a bar counts the IIs tried."""
    from kera.diagnostics import KeraError
    from kera.hls.fit import search

    def plan(ii: int) -> None:
        time.sleep(0.05)
        raise KeraError(f"the clock cannot be met: II {ii} too slow; use a slower clock")

    out = _Terminal()
    with progress.reporting(True, stream=out):
        found, tried, _ = search(plan, 16)  # type: ignore[arg-type]
    assert found is None and [ii for ii, _ in tried] == [32, 64, 128, 256]
    assert tried[0][1] == "II 32 too slow"
    text = out.getvalue()
    assert "searching the least II above 16 that fits" in text and "/4" in text


def test_optimising_and_scheduling_a_big_design_show_their_phases(monkeypatch) -> None:
    """-O2 (about a second per 10k nodes), the schedule and the LUT covers (AES-128: half a
    minute) each have a bar from a size up; the thresholds are lowered here to keep the
    design small."""
    import kera
    import kera.hls.lutcover as lutcover
    import kera.hls.synth as synth
    import kera.opt.manager as manager
    from kera.opt import optimize

    loaded = kera.load(str(ROOT / "examples" / "fir8.kera"), opt_level=0)

    def shown() -> str:
        out = _Terminal()
        with progress.reporting(stream=out):
            graph = optimize(loaded.graph, 2)
            kera.plan(kera.Loaded(graph, loaded.top, "fir8.kera", None), board="icebreaker")
        return out.getvalue()

    assert shown() == ""  # fir8 is far below every threshold
    for module in (manager, synth, lutcover):
        monkeypatch.setattr(module, "SHOW_NODES", 1)
    text = shown()
    assert f"optimising {len(loaded.graph.nodes)} nodes (-O2)" in text
    assert "scheduling `fir8` for icebreaker at 12 MHz" in text
    assert "covering the stages of `fir8` with LUTs" in text
