"""kera-hls: the Kera language compiled to one fingerprinted graph for FPGA, CPU, WASM and PTX."""

__version__ = "0.1.0"
