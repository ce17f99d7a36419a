"""Constants and their values for the passes, evaluated by the registry's own semantics."""

from __future__ import annotations

import numpy as np

from kera.ir import values
from kera.ir.ops import OPS
from kera.ir.types import BoolType, IntType, Type
from kera.opt.rewrite import Rewriter, Term


def all_ones(t: Type) -> int:
    """Return the value whose bits are all one: -1 for signed, the mask for unsigned, true."""
    if isinstance(t, BoolType):
        return 1
    assert isinstance(t, IntType)
    return -1 if t.signed else t.mask


def is_const(rw: Rewriter, nid: bytes, value: int) -> bool:
    """Return True when ``nid`` is a ``const`` node of the new graph holding ``value``."""
    return rw.const_value(nid) == value


def evaluate_term(rw: Rewriter, t: Term, consts: list[int]) -> int:
    """Evaluate a scalar term on one row of constant operands with the registry's semantics."""
    in_types = [rw.type(a) for a in t.args]
    args = [values.full(ty, v) for ty, v in zip(in_types, consts, strict=True)]
    out = OPS[t.op].evaluate(args, dict(t.attrs), in_types, t.type)
    leaf = np.asarray(out)[0]
    return int(bool(leaf)) if isinstance(t.type, BoolType) else int(leaf)


def eval_const(rw: Rewriter, op: str, t: Type, args: tuple[bytes, ...]) -> bytes:
    """Return a ``const`` holding ``op`` applied to constant operands ``args``."""
    consts = [rw.const_value(a) for a in args]
    assert None not in consts, f"`{op}`: operands are not all constant"
    return rw.const(t, evaluate_term(rw, Term(op, t, args), consts))  # type: ignore[arg-type]


__all__ = ["all_ones", "eval_const", "evaluate_term", "is_const"]
