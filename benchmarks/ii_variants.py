"""Write the II > 1 variants of the QoR kernels that check the sharing estimates (docs/models.md,
thirty-first run): each kernel with ``#[pipeline(ii = N)]`` for the listed N.

Usage: python benchmarks/ii_variants.py OUTDIR, then
``python benchmarks/qor.py --families ecp5 --seeds 1 OUTDIR/*.kera`` (and ``ice40``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "kernels"
#: kernel -> (source, the IIs)
VARIANTS: dict[str, tuple[Path, tuple[int, ...]]] = {
    "aes128": (ROOT / "examples" / "aes128.kera", (2, 4, 8)),  # block RAM ROMs, shared ports
    "cordic": (ROOT / "examples" / "cordic.kera", (4, 8, 16)),
    "fir8": (ROOT / "examples" / "fir8.kera", (2, 4, 8)),
    "matmul4": (ROOT / "examples" / "matmul4.kera", (4, 16)),
    "xtea": (ROOT / "examples" / "xtea.kera", (4, 8, 32)),
    "mat2": (SHARED / "mat2.kera", (2, 4)),
    "crc32_word": (SHARED / "peers" / "crc32_word.kera", (4, 8)),
    "isqrt32": (SHARED / "peers" / "isqrt32.kera", (4, 8, 16)),
    "popcount64": (SHARED / "peers" / "popcount64.kera", (4, 8)),
    "sort8": (SHARED / "peers" / "sort8.kera", (2, 4, 8)),
}


def main(out: Path) -> None:
    """Write ``<kernel>_ii<N>.kera`` into ``out`` for every variant."""
    out.mkdir(parents=True, exist_ok=True)
    for name, (path, iis) in VARIANTS.items():
        text = re.sub(r"^#\[pipeline\(ii = \d+\)\]\n", "", path.read_text(), flags=re.M)
        for ii in iis:
            (out / f"{name}_ii{ii}.kera").write_text(
                text.replace("#[top]\n", f"#[top]\n#[pipeline(ii = {ii})]\n", 1))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
