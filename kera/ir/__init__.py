"""Kera's intermediate representation: types, the op registry, the content-addressed graph.

The public names are re-exported here; the modules behind them are ``types`` (Kera's types),
``ops`` (THE op registry), ``graph`` (nodes, regions, hashing), ``validate`` (invariants),
``values`` (batched values and JSONL) and ``keg`` (the ``.keg`` artifact).
"""

from kera.ir import keg, ops, values
from kera.ir.graph import (
    SCHEMA_VERSION,
    Graph,
    Node,
    Region,
    const,
    node_id,
    param,
    type_hash,
)
from kera.ir.ops import OPS, OpDef
from kera.ir.types import (
    BOOL,
    MAX_WIDTH,
    UNIT,
    ArrayType,
    BoolType,
    IntType,
    TupleType,
    Type,
    decode_type,
    is_int,
    sint,
    uint,
)
from kera.ir.validate import InvariantError, check, validate
from kera.ir.values import Value, load_jsonl, read_jsonl

__all__ = [
    "BOOL",
    "MAX_WIDTH",
    "OPS",
    "SCHEMA_VERSION",
    "UNIT",
    "ArrayType",
    "BoolType",
    "Graph",
    "IntType",
    "InvariantError",
    "Node",
    "OpDef",
    "Region",
    "TupleType",
    "Type",
    "Value",
    "check",
    "const",
    "decode_type",
    "is_int",
    "keg",
    "load_jsonl",
    "node_id",
    "ops",
    "param",
    "read_jsonl",
    "sint",
    "type_hash",
    "uint",
    "validate",
    "values",
]
