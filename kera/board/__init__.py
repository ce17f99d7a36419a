"""Put a scheduled core on a board (docs/board.md).

``frame``: the UART frame format, host side. ``uart`` and ``shell``: the Amaranth shell (UART
RX → frame decoder → core → frame encoder → UART TX). ``sim``: the shell in cocotb/Verilator at
UART timing. ``platform`` and ``build``: the amaranth-boards platforms and the bitstream build
(``synthesize --bitstream``). ``run``: ``board-run`` over a serial port.

This package imports nothing itself: ``shell_tb`` runs inside the simulator.
"""
