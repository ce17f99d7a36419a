"""State declarations (STATE.md): `reg NAME: T = INIT;` and `mem NAME: [T; N] = INIT;`.

A declaration adds a ``state`` node (numbered in elaboration order: call sites in source order
after unrolling, declarations in order) and binds its name like a `let mut`. When the function
body that declared it ends, the binding's value is the state's next value; where the call was
not evaluated in the transfer (an untaken `if` arm, the short-circuited side of `&&`/`||`), the
next value is the old one, through a `select` on the path condition (``guards``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from kera.diagnostics import Diagnostic, Note, Span
from kera.elaborate import tree as t
from kera.elaborate.base import BuilderBase
from kera.elaborate.values import POISON, Binding, Val
from kera.ir.graph import StateSlot
from kera.ir.types import BOOL, ArrayType, BoolType, IntType, TupleType, Type
from kera.ir.values import Value
from kera.syntax import SyntaxKind as K
from kera.syntax import SyntaxNode


@dataclass
class StateInfo:
    """One state element being built: what reports and the checker say of it."""

    index: int
    kind: str  # "reg" or "mem"
    name: str  # its instance path, e.g. `biquad[2]/x1`
    type: Type
    read: bytes
    init: bytes
    span: Span
    binding: Binding
    reads: int = 0  # how often the body reads it (0: a warning)


@dataclass
class FunctionState:
    """The state of the region being built: its elements, the open call instances."""

    elements: list[StateInfo] = field(default_factory=list)
    slots: dict[int, StateSlot] = field(default_factory=dict)
    open: list[list[StateInfo]] = field(default_factory=list)  # per inlined call, innermost last
    paths: list[str] = field(default_factory=list)  # instance path of each open call
    sites: dict[tuple[str, str], int] = field(default_factory=dict)  # (parent, fn) -> calls


def state_bits(ty: Type) -> int:
    """Return the bits a state element of type ``ty`` holds."""
    if isinstance(ty, IntType):
        return ty.width
    if isinstance(ty, BoolType):
        return 1
    if isinstance(ty, ArrayType):
        return ty.length * state_bits(ty.elem)
    if isinstance(ty, TupleType):
        return sum(state_bits(e) for e in ty.elems)
    return 0


class StateMixin(BuilderBase):
    """Build state declarations and close each instance's state when its body ends."""

    fstate: FunctionState
    guards: list[Val]

    def start_states(self) -> None:
        """Begin a region: no state yet, no path condition."""
        self.fstate = FunctionState()
        self.guards = []

    def region_states(self) -> tuple[StateSlot, ...]:
        """Return the region's state slots in index order (after every body has ended)."""
        return tuple(self.fstate.slots[i] for i in range(len(self.fstate.slots)))

    # --- call instances ----------------------------------------------------------------------

    @contextmanager
    def instance(self, fn_name: str, top: bool) -> Iterator[None]:
        """Open one call instance of ``fn_name``: its declarations end with it."""
        fs = self.fstate
        parent = fs.paths[-1] if fs.paths else ""
        if top:
            path = ""
        else:
            k = fs.sites.get((parent, fn_name), 0)
            fs.sites[(parent, fn_name)] = k + 1
            path = f"{parent}{fn_name}[{k}]/"
        fs.paths.append(path)
        fs.open.append([])
        try:
            yield
        finally:
            fs.paths.pop()
            self._close(fs.open.pop())

    def _close(self, declared: list[StateInfo]) -> None:
        guard = self._guard()
        for info in declared:
            value = info.binding.value
            nxt = value.id
            if nxt is None or value.type != info.type:
                nxt = info.read
            elif guard is not None and nxt != info.read:
                nxt = self.graph.add("select", info.type, (guard, nxt, info.read))
            self.fstate.slots[info.index] = StateSlot(info.read, info.init, nxt)
            if info.reads == 0:  # one warning per declaration, however many instances
                self._warn(f"{info.kind} `{info.binding.name}` is never read", info.span,
                           Note("its value never reaches a result or another state; remove "
                                "it, or read it"))

    def _warn(self, message: str, span: Span, *notes: Note) -> None:
        key = (span.start, span.end, message)
        if key not in self._diags:
            self._diags[key] = Diagnostic.warning(message, span, *notes)

    # --- path conditions ---------------------------------------------------------------------

    @contextmanager
    def guarded(self, cond: Val, negate: bool = False) -> Iterator[None]:
        """Build what follows only when ``cond`` (or, with ``negate``, its negation) holds."""
        if cond.poisoned:
            yield
            return
        if negate:
            cond = self.add("not", BOOL, [cond])
        self.guards.append(cond)
        try:
            yield
        finally:
            self.guards.pop()

    def _guard(self) -> bytes | None:
        """Return the conjunction of the path conditions (None: always evaluated)."""
        ids = [g.id for g in self.guards if g.id is not None]
        if not ids:
            return None
        out = ids[0]
        for g in ids[1:]:
            out = self.graph.add("and", BOOL, (out, g))
        return out

    # --- declarations ------------------------------------------------------------------------

    def state_decl(self, node: SyntaxNode, top_level: bool) -> None:
        """Build `reg NAME: T = INIT;` / `mem NAME: [T; N] = INIT;` in the innermost scope."""
        kind = "mem" if node.first_token(K.MEM_KW) is not None else "reg"
        ident = node.first_token(K.IDENT)
        tys, values = t.types(node), t.exprs(node)
        if ident is None or not tys or not values:
            return  # the parser reported what is missing
        name = ident.text
        # A refused declaration still binds its name (as a `let mut`), so that its uses are
        # checked and do not each report "cannot find" as well.
        refused = Binding(name, POISON, True, ident.span, memory=kind == "mem")
        self.scopes[-1][name] = refused
        nested = not top_level or not self.fstate.open
        if nested:
            self.error(f"`{kind} {name}` must be declared at the top level of a function body",
                       node.span, Note("state persists across transfers, so it cannot live in "
                                       "a nested block, loop or branch"))
        ty = self.resolve_type(tys[0])
        if ty is None:
            return
        if kind == "mem" and not isinstance(ty, ArrayType):
            self.error(f"`mem {name}` must be an array `[T; N]`, not `{ty}`", tys[0].span,
                       Note("a single value of state is a `reg`"))
            return
        init = self.expect(self.expr(values[0], ty), ty, values[0],
                           Note(f"expected `{ty}` because of the type of `{name}`", tys[0].span))
        if init.poisoned:
            return
        refused.value = init
        if nested:
            return
        constant = self._constant(init, ty)
        if constant is None:
            self.error(f"the initial value of `{kind} {name}` must be a constant expression",
                       values[0].span, Note("literals, array and tuple literals, repeats, "
                                            "consts and operators on them"))
            return
        fs = self.fstate
        index = len(fs.elements)
        read = self.graph.add("state", ty, (), {"index": index, "kind": kind}, span=ident.span)
        binding = Binding(name, Val(read, ty), True, ident.span, memory=kind == "mem")
        info = StateInfo(index, kind, fs.paths[-1] + name, ty, read, constant, ident.span,
                         binding)
        binding.state = info
        self.graph.state_names[read] = info.name
        fs.elements.append(info)
        fs.open[-1].append(info)
        self.scopes[-1][name] = binding

    def _constant(self, value: Val, ty: Type) -> bytes | None:
        """Rebuild a closed value as a tree of `const`, `array` and `tuple` nodes."""
        assert value.id is not None
        folded = self._folder.value(value.id)
        if not isinstance(folded, list | tuple) and not hasattr(folded, "shape"):
            return None  # open: it depends on a parameter or a state
        return self._tree(folded, ty)

    def _tree(self, v: Value, ty: Type) -> bytes | None:
        if isinstance(ty, ArrayType) and isinstance(v, list):
            elems = [self._tree(e, ty.elem) for e in v]
            if any(e is None for e in elems):
                return None
            return self.graph.add("array", ty, [e for e in elems if e is not None])
        if isinstance(ty, TupleType) and isinstance(v, tuple):
            fields = [self._tree(e, f) for e, f in zip(v, ty.elems, strict=True)]
            if any(f is None for f in fields):
                return None
            return self.graph.add("tuple", ty, [f for f in fields if f is not None])
        if isinstance(ty, IntType | BoolType) and hasattr(v, "shape"):
            raw = int(v[0])
            value = ty.wrap(raw) if isinstance(ty, IntType) else int(bool(raw))
            return self.graph.add("const", ty, (), {"value": value})
        return None

    # --- uses --------------------------------------------------------------------------------

    def read_state(self, binding: Binding, node: SyntaxNode, whole: bool) -> Val:
        """Read a state binding: a `mem` only element by element (``whole`` is refused)."""
        if isinstance(binding.state, StateInfo):
            binding.state.reads += 1
        if whole and binding.memory:
            self.error(f"memory `{binding.name}` cannot be used as a whole value", node.span,
                       Note("a `mem` is read and written element by element, `m[i]`; use a "
                            "`reg` array for a value that is copied, passed or compared",
                            binding.span))
            return POISON
        return binding.value
