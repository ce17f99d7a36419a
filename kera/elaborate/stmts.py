"""Statements: blocks, `let`, assignment (SSA renaming), `for` unrolling, inlining."""

from __future__ import annotations

from itertools import islice

from kera import progress
from kera.check import typeck
from kera.check.typeck import TypeRuleError
from kera.diagnostics import Note, Span
from kera.elaborate import fixed, replay
from kera.elaborate import tree as t
from kera.elaborate.base import BuilderBase
from kera.elaborate.items import FnItem
from kera.elaborate.values import POISON, Binding, Lit, Val, Value
from kera.ir.gcpause import paused_gc
from kera.ir.types import UNIT, ArrayType, FixedType, IntType, TupleType, Type, uint
from kera.syntax import GreenNode, GreenToken, SyntaxNode, parse_int_literal
from kera.syntax import SyntaxKind as K

BLOCK_LIKE = frozenset({K.IF_EXPR, K.FOR_EXPR, K.BLOCK_EXPR})
STMT_KINDS = t.EXPR_KINDS | {K.LET_STMT, K.EXPR_STMT, K.STATE_DECL}  # what a block runs
# The kinds the statements' hot paths compare with, read once: an enum member read from its
# class costs several times a global.
_EQ, _RETURN_EXPR, _LET_STMT, _STATE_DECL, _EXPR_STMT, _PAREN_EXPR, _NAME_REF, _ERROR = (
    K.EQ, K.RETURN_EXPR, K.LET_STMT, K.STATE_DECL, K.EXPR_STMT, K.PAREN_EXPR, K.NAME_REF,
    K.ERROR)
MAX_UNROLL = 1 << 20  # loop iterations in one program, all loops together
Step = Val | int  # a step into a place: an index value (array element) or a field number
REPLAY_MIN_TRIPS = 4  # loops this long are walked twice, then replayed (kera.elaborate.replay)
MAX_UNROLL_WORK = 1 << 21  # estimated operations (body expressions x iterations), all loops
PROGRESS_WORK = 1 << 16  # a loop estimated at this many operations or more shows a bar
COMPOUND = {
    K.PLUSEQ: "+", K.MINUSEQ: "-", K.STAREQ: "*", K.SLASHEQ: "/", K.PERCENTEQ: "%",
    K.AMPEQ: "&", K.PIPEEQ: "|", K.CARETEQ: "^", K.SHLEQ: "<<", K.SHREQ: ">>",
}


class LoopBudget:
    """What the loops of one program may unroll to, estimated before each loop's work starts.

    A loop's estimate is its trip count times its body's weight: the body's expressions, where
    a nested loop with literal bounds counts its own trips times its body's weight. Those
    nested loops are then *covered* (already counted) while the loop that counted them unrolls;
    other loops (bounds from constants, loops in inlined functions) are counted when reached.
    """

    def __init__(self) -> None:
        self.iterations = 0
        self.work = 0
        self.covered = 0  # how many loops are being unrolled (their nests are counted)
        self._weights: dict[int, tuple[int, int]] = {}  # id(green body) -> (iterations, work)
        self.replayable: dict[int, bool] = {}  # id(green body) -> whether it may be replayed

    def weight(self, node: SyntaxNode) -> tuple[int, int]:
        """Return (loop iterations, operations) that one copy of ``node`` unrolls to."""
        key = id(node.green)
        known = self._weights.get(key)
        if known is not None:
            return known
        iterations = work = 0
        for child in node.child_nodes():
            if child.kind == K.FOR_EXPR:
                trips, body = literal_trips(child), child.first_child(K.BLOCK)
                if trips is not None and body is not None:
                    inner_iterations, inner_work = self.weight(body)
                    iterations += trips * (1 + inner_iterations)
                    work += trips * inner_work
                work += 1
            else:
                inner_iterations, inner_work = self.weight(child)
                iterations += inner_iterations
                work += inner_work + (child.kind in t.EXPR_KINDS)
        self._weights[key] = (iterations, work)
        return iterations, work


def assign_shape(green: GreenNode) -> tuple[K | None, list[tuple[GreenNode, int]]]:
    """Return an assignment node's operator kind (`=` or a compound one; None without one) and
    its expression children, each with its offset from the node's start."""
    op_kind = None
    for child in green.children:
        if type(child) is GreenToken and (child.kind == _EQ or child.kind in COMPOUND):
            op_kind = child.kind
            break
    _, operands = t.operator_and_operands(green)
    return op_kind, operands


def literal_trips(loop: SyntaxNode) -> int | None:
    """Return the trip count of `for _ in A..B` with integer-literal bounds, else None."""
    rng = loop.first_child(K.RANGE_EXPR)
    bounds = t.exprs(rng) if rng is not None else []
    if len(bounds) != 2 or any(b.kind != K.LITERAL for b in bounds):
        return None
    values = []
    for b in bounds:
        tok = b.first_token(K.INT_LITERAL)
        try:
            values.append(parse_int_literal(tok.text)[0] if tok is not None else None)
        except ValueError:
            return None
    lo, hi = values
    return None if lo is None or hi is None else max(0, hi - lo)


class StmtMixin(BuilderBase):
    """Build blocks and statements; keep the variable environment."""

    # --- scopes ------------------------------------------------------------------------------

    def lookup(self, name: str) -> Binding | None:
        """Return the innermost binding of ``name``."""
        for scope in reversed(self.scopes):
            binding = scope.get(name)
            if binding is not None:
                return binding
        return None

    def snapshot(self) -> list[tuple[Binding, Val]]:
        """Record every visible binding's current value (before a branch)."""
        return [(b, b.value) for scope in self.scopes for b in scope.values()]

    @staticmethod
    def snapshot_values(saved: list[tuple[Binding, Val]]) -> list[Val]:
        """Return the current values of the bindings in ``saved``."""
        return [b.value for b, _ in saved]

    @staticmethod
    def restore(saved: list[tuple[Binding, Val]]) -> None:
        """Put every binding back to its value at ``snapshot`` time."""
        for binding, value in saved:
            binding.value = value

    def merge(self, saved: list[tuple[Binding, Val]], cond: Val, then_vals: list[Val],
              else_vals: list[Val]) -> None:
        """After an `if`, give each variable assigned in a branch a `select` of both arms."""
        for (binding, _), a, b in zip(saved, then_vals, else_vals, strict=True):
            if a.id == b.id:
                binding.value = a
            elif a.poisoned or b.poisoned:
                binding.value = POISON
            else:
                binding.value = self.add("select", a.live_type, [cond, a, b], span=binding.span)

    # --- blocks ------------------------------------------------------------------------------

    def block(self, node: SyntaxNode, hint: Type | None, fn_body: bool = False) -> Value:
        """Build a block; its value is the tail expression (or a final `return`), else `()`."""
        items = node.child_nodes_of(STMT_KINDS)
        self.scopes.append({})
        try:
            for i, item in enumerate(items):
                last = i == len(items) - 1
                inner = self._stmt_expr(item)
                if inner is not None and inner.green.kind == _RETURN_EXPR:
                    if not (last and fn_body):
                        return self._expr_return_expr(inner, hint)
                    values = t.exprs(inner)
                    return self.expr(values[0], hint) if values else self.unit()
                kind = item.green.kind
                if last and inner is not None and (kind in t.EXPR_KINDS
                                                   or self._is_tail_stmt(item)):
                    return self.expr(inner, hint)
                if kind == _LET_STMT:
                    self.let_stmt(item)
                elif kind == _STATE_DECL:
                    self.state_decl(item, fn_body)
                elif inner is not None:
                    self.expr_stmt(inner)
            return self.unit()
        finally:
            self.scopes.pop()

    @staticmethod
    def _stmt_expr(item: SyntaxNode) -> SyntaxNode | None:
        kind = item.green.kind
        if kind in t.EXPR_KINDS:
            return item
        if kind == _EXPR_STMT:
            return t.first_expr(item)
        return None

    @staticmethod
    def _is_tail_stmt(item: SyntaxNode) -> bool:
        """A block-like expression statement without `;` at the end of a block is its value."""
        if item.kind != K.EXPR_STMT or item.first_token(K.SEMI) is not None:
            return False
        inner = t.exprs(item)
        return bool(inner) and inner[0].kind in BLOCK_LIKE

    def expr_stmt(self, node: SyntaxNode) -> None:
        """Build an expression statement for its effect on variables; its value is dropped."""
        self.expr(node, None)

    # --- let and patterns --------------------------------------------------------------------

    def let_stmt(self, node: SyntaxNode) -> None:
        """Build `let pattern (: T)? = expr;`."""
        pat = t.pattern(node)
        tys = t.types(node)
        values = t.exprs(node)
        declared = self.resolve_type(tys[0]) if tys else None
        if not values:
            return
        value = self.expr(values[0], declared)
        if tys:
            note = Note(f"expected `{declared}` because of this annotation", tys[0].span)
            value = self.expect(value, declared, values[0], note) if declared else POISON
        elif isinstance(value, Lit):
            value = self.settle(value, None)
        if pat is not None:
            self.bind(pat, value)

    def bind(self, pat: SyntaxNode, value: Val) -> None:
        """Bind a pattern to a value in the innermost scope."""
        if pat.kind == K.IDENT_PAT:
            ident = pat.first_token(K.IDENT)
            if ident is not None:
                mutable = pat.first_token(K.MUT_KW) is not None
                self.scopes[-1][ident.text] = Binding(ident.text, value, mutable, ident.span)
        elif pat.kind == K.TUPLE_PAT:
            subs = [c for c in pat.child_nodes() if c.kind in t.PAT_KINDS]
            if value.poisoned:
                parts = [POISON] * len(subs)
            elif not isinstance(value.type, TupleType) or len(value.type.elems) != len(subs):
                self.error(f"this pattern has {len(subs)} fields, but the value is `{value.type}`",
                           pat.span)
                parts = [POISON] * len(subs)
            else:
                parts = [
                    self.add("tuple_get", ty, [value], {"index": i}, span=pat.span)
                    for i, ty in enumerate(value.type.elems)
                ]
            for sub, part in zip(subs, parts, strict=True):
                self.bind(sub, part)

    # --- assignment --------------------------------------------------------------------------

    def assign(self, node: SyntaxNode) -> None:
        """Build `place = value` / `place op= value` as a new SSA value of the root variable."""
        op_kind, operands = assign_shape(node.green)
        if len(operands) != 2 or op_kind is None:
            return
        offset = node.offset
        parts = [SyntaxNode(green, node, offset + at) for green, at in operands]
        place = self.place(parts[0])
        if place is None:
            self.expr(parts[1], None)
            return
        binding, path = place
        if binding.memory and not path:
            self.error(f"memory `{binding.name}` cannot be assigned as a whole", parts[0].span,
                       Note("write its elements, `m[i] = v`", binding.span))
            self.expr(parts[1], binding.value.type)
            return
        if op_kind != _EQ and binding.state is not None:
            self.read_state(binding, parts[0], whole=False)  # `s += x` reads `s`
        chain = [binding.value]
        for key in path:
            chain.append(self._read_step(chain[-1], key, node.span))
        target = chain[-1]
        if op_kind == _EQ:
            if target.poisoned:
                new = POISON
            else:
                value = self.operand(parts[1].green, parts[1].offset, node, target.type)
                if value.__class__ is Val and value.id is not None and (
                        value.type is target.type or value.type == target.type):
                    new = value  # what `expect` says, without a note
                else:
                    note = Note(f"expected `{target.type}` because of the assigned place",
                                parts[0].span)
                    new = self.expect(value, target.type, parts[1], note)
        elif isinstance(target.type, FixedType):
            new = fixed.refuse_compound(self, COMPOUND[op_kind], target.type, node.span)
        else:
            built = self.binary(COMPOUND[op_kind], target, parts[0], parts[1], node.span)
            new = built if isinstance(built, Val) else POISON
        if path:
            new = self._updated(chain, path, new, node.span)
        old = binding.value
        if new.id is not None and old.id is not None and new.type is not old.type \
                and new.type != old.type:
            new = POISON
        binding.value = new

    def _updated(self, chain: list[Val], path: list[Step], new: Val, span: Span) -> Val:
        """Return the root variable's new value after its place ``path`` (the values read
        along it: ``chain``) takes ``new``: element updates and rebuilt tuples, inside out."""
        for key, outer in zip(reversed(path), reversed(chain[:-1]), strict=True):
            if new.poisoned or outer.poisoned:
                new = POISON
            elif isinstance(key, Val):
                new = self.add("array_update", outer.live_type, [outer, key, new], span=span)
            else:
                ty = outer.type
                assert isinstance(ty, TupleType)  # reading this field built `new`
                fields = [
                    new if i == key else
                    self.add("tuple_get", elem, [outer], {"index": i}, span=span)
                    for i, elem in enumerate(ty.elems)
                ]
                new = self.add("tuple", ty, fields, span=span)
        return new

    def _read_step(self, outer: Val, key: Step, span: Span) -> Val:
        """Read one step of a place: an element (``key`` is the index) or a field number."""
        ty = outer.type
        if isinstance(key, Val) and isinstance(ty, ArrayType):
            return self.add("array_index", ty.elem, [outer, key], span=span)
        if isinstance(key, int) and isinstance(ty, TupleType):
            return self.add("tuple_get", ty.elems[key], [outer], {"index": key}, span=span)
        return POISON  # a poisoned value, or a step `place` reported as wrong

    def place(self, node: SyntaxNode) -> tuple[Binding, list[Step]] | None:
        """Resolve an assignable place: a `let mut` variable, then indices and fields."""
        kind = node.green.kind
        if kind == _PAREN_EXPR:
            inner = t.exprs(node)
            return self.place(inner[0]) if inner else None
        if kind == _NAME_REF:
            name = t.name(node) or ""
            binding = self.lookup(name)
            if binding is None:
                what = "constant" if name in self.consts else "variable"
                known = name in self.consts
                self.error(f"cannot assign to {what} `{name}`" if known
                           else f"cannot find `{name}` in this scope", node.span)
                return None
            if not binding.mutable:
                self.error(
                    f"cannot assign twice to immutable variable `{name}`",
                    node.span,
                    Note(f"make this binding mutable: `mut {name}`", binding.span),
                )
                return None
            return binding, []
        if kind in (K.INDEX_EXPR, K.FIELD_EXPR):
            parts = t.exprs(node)
            base = self.place(parts[0]) if parts else None
            if base is None:
                return None
            binding, path = base
            current = self._path_type(binding.value.type, path)
            if node.kind == K.INDEX_EXPR:
                index = self.any_unsigned(parts[1]) if len(parts) > 1 else POISON
                if current is not None and not index.poisoned:
                    try:
                        typeck.index_result(current, index.live_type)
                    except TypeRuleError as e:
                        self.error(str(e), node.span)
                        return None
                return binding, [*path, index]
            tok = node.first_token(K.INT_LITERAL)
            field = int(tok.text) if tok is not None and tok.text.isdigit() else -1
            if current is not None:
                try:
                    typeck.field_result(current, field)
                except TypeRuleError as e:
                    self.error(str(e), node.span)
                    return None
            return binding, [*path, field]
        self.error("this expression cannot be assigned to", node.span)
        return None

    @staticmethod
    def _path_type(ty: Type | None, path: list[Step]) -> Type | None:
        for key in path:
            if isinstance(key, Val):
                ty = ty.elem if isinstance(ty, ArrayType) else None
            else:
                ty = ty.elems[key] if isinstance(ty, TupleType) else None
        return ty

    # --- loops -------------------------------------------------------------------------------

    def for_loop(self, node: SyntaxNode) -> None:
        """Unroll `for pat (: T)? in lo..hi { body }` (bounds known at compile time)."""
        pat = t.pattern(node)
        tys = t.types(node)
        rng = node.first_child(K.RANGE_EXPR)
        body = node.first_child(K.BLOCK)
        if rng is None or body is None:
            return
        bounds = t.exprs(rng)
        if len(bounds) != 2:
            return
        ty = self.resolve_type(tys[0]) if tys else None
        raw = [self.expr(b, ty) for b in bounds]
        if ty is None and not tys:
            ty = next((v.type for v in raw if isinstance(v, Val) and not v.poisoned), uint(32))
        if not isinstance(ty, IntType):
            if ty is not None:
                self.error(f"a loop variable must be an integer, not `{ty}`",
                           tys[0].span if tys else rng.span)
            return
        lo, hi = (self.closed(v, ty, b, "loop bound") for v, b in zip(raw, bounds, strict=True))
        if lo is None or hi is None:
            return
        name = f"for {pat.text().strip() if pat is not None else '_'} in {lo}..{hi}"
        if not self._within_budget(node, name, hi - lo, body, rng.span):
            return
        outermost = self.loops.covered == 0
        show = outermost and max(0, hi - lo) * self.loops.weight(body)[1] >= PROGRESS_WORK
        self.loops.covered += 1  # the nests inside are in an estimate already
        try:
            with progress.task(f"unrolling `{name}`", total=hi - lo, unit="iterations",
                               show=show) as bar:
                self._unroll(pat, ty, body, lo, hi, bar)
        finally:
            self.loops.covered -= 1

    def _within_budget(self, node: SyntaxNode, name: str, trips: int, body: SyntaxNode,
                       span: Span) -> bool:
        """Count a loop's estimate against the program's budget; report a loop over it."""
        budget = self.loops
        trips = max(0, trips)
        if budget.covered and literal_trips(node) is not None:
            return True  # counted by the loop that holds it
        inner_iterations, inner_work = budget.weight(body)
        iterations, work = trips * (1 + inner_iterations), trips * inner_work
        if budget.iterations + iterations > MAX_UNROLL:
            self.error(f"loop `{name}`: loops unroll to more than {MAX_UNROLL} iterations in "
                       "total", span)
            return False
        if budget.work + work > MAX_UNROLL_WORK:
            self.error(f"loop `{name}` unrolls to about {work:,} operations ({trips:,} "
                       f"iterations of {inner_work:,}); a program may unroll to at most "
                       f"{MAX_UNROLL_WORK:,}, all loops together", span)
            return False
        budget.iterations += iterations
        budget.work += work
        return True

    def _unroll(self, pat: SyntaxNode | None, ty: IntType, body: SyntaxNode, lo: int, hi: int,
                bar: progress.Task) -> None:
        """Build ``body`` once per iteration value ``lo..hi`` (the variable bound to each).

        Longer loops are built twice by walking the tree and then replayed from a template of
        one walk that predicts the other exactly (``kera.elaborate.replay``).
        """
        template: replay.Template | None = None
        start = lo
        # While an enclosing loop records an iteration, this one is walked (and recorded).
        if hi - lo >= REPLAY_MIN_TRIPS and "add" not in vars(self) and self._replayable(body):
            bindings = [b for b, _ in self.snapshot()]
            traces: list[replay.Trace | None] = []
            # The first iteration may build what later ones reuse (a `const` item's nodes on
            # first use): then the second and third are compared instead.
            while template is None and len(traces) < 3 and start < hi - 1:
                traces.append(self._traced_iteration(pat, ty, body, start, bindings))
                bar.advance()
                start += 1
                if len(traces) >= 2:
                    template = self._template(traces[-2], traces[-1], pat)
        if template is not None:
            with paused_gc():  # nodes, ids and tuples by the hundred thousand, none freed
                template.replay(self.graph, ty, start, hi, bindings, bar.advance)
            return
        for i in range(start, hi):
            self._iteration(pat, ty, body, i, None)
            bar.advance()

    @staticmethod
    def _template(first: replay.Trace | None, second: replay.Trace | None,
                  pat: SyntaxNode | None) -> replay.Template | None:
        """Return a template of one trace that predicts the other exactly, else None.

        An id can stand for two things in one iteration (`acc` starting at `0u32` is the node
        of `i` when `i == 0`): a template that predicts the other iteration resolved them as
        the walk did.
        """
        if first is None or second is None:
            return None
        for model, other in ((second, first), (first, second)):
            template = replay.Template(model, pat.span if pat is not None else None)
            if template.ok and template.predicts(other):
                return template
        return None

    def _iteration(self, pat: SyntaxNode | None, ty: IntType, body: SyntaxNode, i: int,
                   iter_val: Val | None) -> None:
        """Build one iteration of ``body`` with the loop variable ``i`` (``iter_val``, if made)."""
        self.scopes.append({})
        try:
            if pat is not None:
                self.bind(pat, iter_val if iter_val is not None else self.const(ty, i, pat.span))
            value = self.block(body, None)
            if isinstance(value, Lit) or (not value.poisoned and value.type != UNIT):
                self.error("a `for` body must not end in a value", body.span)
        finally:
            self.scopes.pop()

    def _traced_iteration(self, pat: SyntaxNode | None, ty: IntType, body: SyntaxNode, i: int,
                          bindings: list[Binding]) -> replay.Trace | None:
        """Build one iteration while recording it; None when it cannot be replayed."""
        iter_val = self.const(ty, i, pat.span) if pat is not None else None
        if any(b.value.poisoned or b.state is not None or b.memory for b in bindings):
            self._iteration(pat, ty, body, i, iter_val)
            return None
        marks = (len(self._diags), len(self.graph.nodes), self.loops.iterations, self.loops.work)
        trace = replay.traced(self, lambda: self._iteration(pat, ty, body, i, iter_val),
                              iter_val.id if iter_val is not None else None, bindings)
        if marks[0] != len(self._diags) or marks[2:] != (self.loops.iterations, self.loops.work):
            return None
        if any(c[5] is None for c in trace.calls) or any(v.poisoned for v in trace.exit):
            return None
        made = trace.made
        nodes = self.graph.nodes
        if len(nodes) - marks[1] > len(made) or not all(
                nid in made for nid in islice(nodes, marks[1], None)):
            return None  # a node was added other than through `add`
        return trace

    def _replayable(self, body: SyntaxNode) -> bool:
        """Return True unless ``body`` declares state or calls a user function (syntax only)."""
        key = id(body.green)
        known = self.loops.replayable.get(key)
        if known is None:
            known = True
            stack = [body.green]
            while stack and known:
                green = stack.pop()
                kind = green.kind
                if kind == K.STATE_DECL:
                    known = False
                elif kind == K.CALL_EXPR:
                    known = not any(type(c) is GreenNode and c.kind == K.NAME_REF
                                    and c.children[0].text in self.fns for c in green.children)
                stack.extend(c for c in green.children if type(c) is GreenNode)
            self.loops.replayable[key] = known
        return known

    def closed(self, value: Value, ty: IntType, node: SyntaxNode, what: str) -> int | None:
        """Return the compile-time integer value of an already-built value of type ``ty``."""
        val = self.expect(value, ty, node)
        if val.poisoned:
            return None
        result = self.closed_int(val)
        if result is None:
            self.error(f"{what} must be known at compile time", node.span)
        return result

    # --- calls -------------------------------------------------------------------------------

    def inline(self, fn: FnItem, args: list[Val], span: Span, top: bool = False) -> Val:
        """Build a function body with its parameters bound to ``args`` (calls are inlined)."""
        if fn.name in self.call_stack:
            self.error(
                f"recursive call to `{fn.name}`: every call is inlined, so recursion is not "
                "allowed",
                span,
            )
            return POISON
        body = fn.node.first_child(K.BLOCK)
        if body is None:
            return POISON
        saved, covered = self.scopes, self.loops.covered
        self.scopes = [{name: Binding(name, arg, False, pspan)
                        for (name, _, pspan), arg in zip(fn.params, args, strict=True)}]
        self.call_stack.append(fn.name)
        self.loops.covered = 0  # the estimates of loops around a call left its body out
        try:
            with self.instance(fn.name, top):
                value = self.block(body, fn.ret, fn_body=True)
            tail = self._tail_node(body)
            note = Note(f"expected `{fn.ret}` because of the return type", fn.ret_span) \
                if fn.ret_span else None
            return self.expect(value, fn.ret, tail or body, note)
        finally:
            self.call_stack.pop()
            self.scopes, self.loops.covered = saved, covered

    @staticmethod
    def _tail_node(body: SyntaxNode) -> SyntaxNode | None:
        """Return the last child node of ``body`` that is not an ``ERROR`` (found from the end,
        without a red node per statement)."""
        offset = body.offset + body.green.text_len
        for green in reversed(body.green.children):
            offset -= green.text_len
            if type(green) is GreenNode and green.kind != _ERROR:
                return SyntaxNode(green, body, offset)
        return None
