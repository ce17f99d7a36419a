"""Put a scheduled core on a board: the UART frame format, the Amaranth shell, the bitstream."""
