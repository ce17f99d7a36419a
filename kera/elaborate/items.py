"""Items of a source file: functions, constants, type aliases and attributes."""

from __future__ import annotations

from dataclasses import dataclass, field

from kera.diagnostics import Note, Span
from kera.elaborate import tree as t
from kera.elaborate.base import BuilderBase
from kera.ir.graph import MAX_II
from kera.ir.types import BOOL, ArrayType, IntType, TupleType, Type, int_type, uint
from kera.syntax import SyntaxKind as K
from kera.syntax import SyntaxNode

KNOWN_ATTRS = ("top", "pipeline")
MAX_SCALARS = 1 << 20
"""The most integers and bools (all array levels together) the type of one value may hold: a
parameter, a variable, a `mem`. Every target holds a value's scalars one by one, and the
interpreter one column per scalar; `[0u8; 4294967295]` ran out of memory before."""


def scalar_count(t: Type) -> int:
    """Return how many integers and bools a value of type ``t`` holds."""
    if isinstance(t, ArrayType):
        return t.length * scalar_count(t.elem)
    if isinstance(t, TupleType):
        return sum(scalar_count(e) for e in t.elems)
    return 1


@dataclass
class FnItem:
    """A function's signature and body, resolved lazily."""

    name: str
    node: SyntaxNode
    name_span: Span
    is_pub: bool
    is_top: bool = False
    ii: int | None = None  # from `#[pipeline(ii = N)]`; None when not requested
    params: list[tuple[str, Type | None, Span]] = field(default_factory=list)
    ret: Type | None = None
    ret_span: Span | None = None


@dataclass
class ConstItem:
    """A `const` item: its declared type and (once evaluated) its graph value."""

    name: str
    node: SyntaxNode
    name_span: Span
    type: Type | None = None
    value: object = None  # Val once built
    state: str = "new"  # new | building | done


class ItemsMixin(BuilderBase):
    """Collect items, resolve type syntax, evaluate `const` items and attributes."""

    def collect_items(self, root: SyntaxNode) -> None:
        """Record every item by name, reporting duplicates."""
        seen: dict[str, Span] = {}
        for item in root.child_nodes():
            if item.kind not in (K.FN, K.CONST_ITEM, K.TYPE_ALIAS):
                continue
            ident = item.first_token(K.IDENT)
            if ident is None:
                continue
            name, span = ident.text, ident.span
            namespace = "type" if item.kind == K.TYPE_ALIAS else "value"
            key = f"{namespace}:{name}"
            if key in seen:
                self.error(
                    f"`{name}` is defined more than once",
                    span,
                    Note("first defined here", seen[key]),
                )
                continue
            seen[key] = span
            if item.kind == K.FN:
                self.fns[name] = FnItem(name, item, span, item.first_token(K.PUB_KW) is not None)
            elif item.kind == K.CONST_ITEM:
                self.consts[name] = ConstItem(name, item, span)
            else:
                self.aliases[name] = item

    # --- types -------------------------------------------------------------------------------

    def sized_array(self, elem: Type, length: int, span: Span) -> ArrayType | None:
        """Return ``[elem; length]``, or None after an error at ``span`` when it would hold more
        than ``MAX_SCALARS`` scalars."""
        count = length * scalar_count(elem)
        if count > MAX_SCALARS:
            self.error(f"`[{elem}; {length}]` holds {count:,} scalars; a value holds at most "
                       f"{MAX_SCALARS:,} (2^20)", span)
            return None
        return ArrayType(elem, length)

    def resolve_type(self, node: SyntaxNode | None) -> Type | None:
        """Turn type syntax into a Type; report problems and return None on failure."""
        if node is None:
            return None
        if node.kind == K.NAME_TYPE:
            return self._named_type(node)
        if node.kind == K.FIXED_TYPE:
            from kera.elaborate import fixed

            return fixed.resolve(self, node)
        if node.kind == K.ARRAY_TYPE:
            elems = t.types(node)
            elem = self.resolve_type(elems[0]) if elems else None
            lens = t.exprs(node)
            length = self.const_int(lens[0], uint(32), "array length") if lens else None
            if elem is None or length is None:
                return None
            if length < 1:
                self.error(f"array length must be at least 1, not {length}", lens[0].span)
                return None
            return self.sized_array(elem, length, lens[0].span)
        if node.kind == K.TUPLE_TYPE:
            inner = t.types(node)
            if len(inner) == 1 and node.first_token(K.COMMA) is None:
                return self.resolve_type(inner[0])  # `(T)` is a parenthesised type
            parts = [p for p in [self.resolve_type(c) for c in inner] if p is not None]
            if len(parts) != len(inner):
                return None
            return TupleType(tuple(parts))
        return None

    def _named_type(self, node: SyntaxNode) -> Type | None:
        name = t.name(node)
        if name is None:
            return None
        if name == "bool":
            return BOOL
        if name[0] in "ui" and name[1:].isdigit() and not name[1:].startswith("0"):
            width = int(name[1:])
            if not 1 <= width <= 64:
                self.error(f"integer width must be in 1..=64, not {width}", node.span)
                return None
            return int_type(width, name[0] == "i")
        alias = self.aliases.get(name)
        if alias is None:
            self.error(f"cannot find type `{name}` in this file", node.span)
            return None
        if name in self._alias_stack:
            self.error(f"type alias `{name}` refers to itself", node.span)
            return None
        self._alias_stack.append(name)
        try:
            inner = t.types(alias)
            return self.resolve_type(inner[0]) if inner else None
        finally:
            self._alias_stack.pop()

    # --- constants ---------------------------------------------------------------------------

    def const_item_value(self, item: ConstItem, use_span: Span):
        """Build a `const` item once (lazily, in dependency order) and return its Val."""
        from kera.elaborate.values import POISON

        if item.state == "done":
            return item.value
        if item.state == "building":
            self.error(f"constant `{item.name}` depends on itself", use_span)
            return POISON
        item.state = "building"
        saved = self.scopes
        self.scopes = [{}]
        guards, self.guards = self.guards, []  # a constant is built under no path condition
        try:
            tys = t.types(item.node)
            item.type = self.resolve_type(tys[0]) if tys else None
            bodies = t.exprs(item.node)
            value = POISON
            if item.type is None and tys == [] and bodies:
                self.error(f"constant `{item.name}` needs a type annotation", item.name_span)
            elif item.type is not None and bodies:
                note = Note(f"expected `{item.type}` because of this annotation", tys[0].span)
                value = self.expect(self.expr(bodies[0], item.type), item.type, bodies[0], note)
        finally:
            self.scopes = saved
            self.guards = guards
        item.value = value
        item.state = "done"
        return value

    def const_int(self, node: SyntaxNode, default: IntType, what: str) -> int | None:
        """Evaluate an expression that must be known at compile time to a Python int."""
        value = self.settle(self.expr(node, None), default)
        if value.poisoned:
            return None
        if not isinstance(value.type, IntType):
            self.error(f"{what} must be an integer, not `{value.type}`", node.span)
            return None
        result = self.closed_int(value)
        if result is None:
            self.error(f"{what} must be known at compile time", node.span)
        return result

    # --- attributes --------------------------------------------------------------------------

    def read_attributes(self, fn: FnItem) -> None:
        """Apply `#[top]` and `#[pipeline(ii = N)]`; reject unknown attributes."""
        for attr in fn.node.child_nodes():
            if attr.kind != K.ATTR:
                continue
            name = t.name(attr)
            args = attr.first_child(K.ATTR_ARG_LIST)
            if name == "top":
                fn.is_top = True
                if args is not None:
                    self.error("`#[top]` takes no arguments", args.span)
            elif name == "pipeline":
                self._pipeline_attr(fn, attr, args)
            elif name is not None:
                known = ", ".join(f"`{k}`" for k in KNOWN_ATTRS)
                self.error(f"unknown attribute `{name}` (known: {known})", attr.span)

    def _pipeline_attr(self, fn: FnItem, attr: SyntaxNode, args: SyntaxNode | None) -> None:
        if args is None:
            self.error("`#[pipeline]` needs an argument: `#[pipeline(ii = N)]`", attr.span)
            return
        for arg in args.child_nodes():
            if arg.kind != K.ATTR_ARG:
                continue
            key = t.name(arg)
            value_nodes = t.exprs(arg)
            if key != "ii":
                self.error(f"unknown `#[pipeline]` argument `{key}` (known: `ii`)", arg.span)
                continue
            if not value_nodes:
                continue
            ii = self.const_int(value_nodes[0], uint(32), "`ii`")
            if ii is not None and ii < 1:
                self.error(f"`ii` must be at least 1, not {ii}", value_nodes[0].span)
            elif ii is not None and ii > MAX_II:
                self.error(f"`ii` must be at most {MAX_II} (2^20), not {ii}: a longer interval "
                           "shares no more operators", value_nodes[0].span)
            elif ii is not None:
                fn.ii = ii

    def read_signature(self, fn: FnItem) -> None:
        """Resolve parameter and return types, reporting duplicate parameter names."""
        plist = fn.node.first_child(K.PARAM_LIST)
        seen: dict[str, Span] = {}
        for param in plist.child_nodes() if plist is not None else []:
            if param.kind != K.PARAM:
                continue
            ident = param.first_token(K.IDENT)
            if ident is None:
                continue
            tys = t.types(param)
            ty = self.resolve_type(tys[0]) if tys else None
            if ident.text in seen:
                self.error(
                    f"parameter `{ident.text}` is declared more than once",
                    ident.span,
                    Note("first declared here", seen[ident.text]),
                )
            seen[ident.text] = ident.span
            fn.params.append((ident.text, ty, ident.span))
        ret = fn.node.first_child(K.RET_TYPE)
        if ret is not None:
            tys = t.types(ret)
            fn.ret = self.resolve_type(tys[0]) if tys else None
            fn.ret_span = tys[0].span if tys else ret.span
        else:
            fn.ret = TupleType(())
