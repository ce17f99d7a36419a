"""Small stateful kernels shared by the state tests of the scheduler, the RTL and simulation."""

from __future__ import annotations

import tempfile
from pathlib import Path

import kera
from kera.hls.pipeline import Schedule
from kera.hls.synth import plan_schedule

ACC = """#[top]
pub fn acc(x: i32) -> i32 {
    reg sum: i32 = 0;
    sum = sum + x;
    sum
}
"""

# A multiply-add loop: 2 cycles at 30 MHz on iCE40 (the 16-bit multiply alone takes ~25 ns).
MAC = """#[top]
pub fn mac(x: i16) -> i16 {
    reg s: i16 = 7;
    s = s * x + x;
    s
}
"""

# The next value needs 3 stages at 30 MHz but does not depend on the read: the read waits.
LATE = """#[top]
pub fn late(x: i16) -> i16 {
    reg last: i16 = 5;
    let y = last;
    last = (x * x + x) * x;
    y
}
"""

MOVING_SUM = """#[top]
pub fn moving_sum8(x: i16) -> i19 {
    reg window: [i16; 8] = [0; 8];
    reg sum: i19 = 0;
    sum = sum + (x as i19) - (window[7] as i19);
    for i in 0..7 { window[7 - i] = window[6 - i]; }
    window[0] = x;
    sum
}
"""

TUPLE_BOOL = """#[top]
pub fn tup(x: u8, go: bool) -> (u8, bool) {
    reg t: (u8, bool) = (3, true);
    reg flag: bool = false;
    if go { t = (t.0 + x, !t.1); }
    flag = flag ^ go;
    (t.0 ^ x, t.1 & flag)
}
"""

# Two states in one strongly connected component: a <- b + x, b <- a * x + x.
PAIR = """#[top]
pub fn pair(x: i16) -> i16 {
    reg a: i16 = 1;
    reg b: i16 = 2;
    let na = b + x;
    b = a * x + x;
    a = na;
    a ^ b
}
"""


#: One folder for the whole run, removed when the interpreter exits: error locations read
#: the source file again, so each `k.kera` must outlive its load.
_FOLDER = tempfile.TemporaryDirectory(prefix="kera-state-")


def planned(text: str, clock_mhz: float | None = None, board: str = "icebreaker",
            ii: int | None = None, margin: float | None = None) -> Schedule:
    """Return the schedule every target uses for ``text`` on ``board`` (at ``margin``, or the
    one ``plan_schedule`` picks)."""
    path = Path(tempfile.mkdtemp(dir=_FOLDER.name)) / "k.kera"  # a file: locations have lines
    path.write_text(text, encoding="utf-8")
    loaded = kera.load(path)
    return plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=clock_mhz, ii=ii,
                         margin=margin)[0]


def with_ii(text: str, ii: int) -> str:
    """Return ``text`` with `#[pipeline(ii = N)]` on its top function."""
    return text.replace("#[top]\n", f"#[top]\n#[pipeline(ii = {ii})]\n", 1)

HISTOGRAM = """#[top]
pub fn histogram(bin: u8, clear: bool) -> u16 {
    mem counts: [u16; 256] = [0; 256];
    let c = if clear { 0u16 } else { counts[bin] + 1 };
    counts[bin] = c;
    c
}
"""

# A guarded write (`if`), a non-zero initial value, and a narrower address than the memory.
GUARDED = """#[top]
pub fn guarded(a: u6, v: u12, we: bool) -> u12 {
    mem m: [u12; 64] = [5; 64];
    let old = m[a];
    if we { m[a] = old ^ v; }
    old
}
"""

# Tiny, so it stays in flip-flops; two reads per transfer.
TINY = """#[top]
pub fn tiny(a: u2, b: u2, v: u4) -> u4 {
    mem t: [u4; 4] = [1, 2, 3, 4];
    let r = t[a] + t[b];
    t[a] = v;
    r
}
"""


def histogram_rows(n: int, seed: int = 3) -> list[dict]:
    """Bins with long runs of the same bin back to back, a few clears."""
    import random

    r = random.Random(seed)
    out = []
    for _ in range(n):
        b = r.choice([5, 5, 5, 7, r.randrange(256)]) if r.random() < 0.7 else r.randrange(4)
        out.append({"bin": b, "clear": r.random() < 0.03})
    return out
