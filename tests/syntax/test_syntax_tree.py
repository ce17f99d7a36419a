"""The green/red tree: navigation, spans, interning, events and the public API."""

from __future__ import annotations

import kera.syntax as syntax
from kera.syntax import NodeCache, SyntaxNode, SyntaxToken, parse
from kera.syntax import SyntaxKind as K
from kera.syntax.parser import Error, Finish, Start, Token

SRC = "fn f(a: u8) -> u8 {\n    let b = a + 1; // note\n    b\n}\n"


def tree() -> SyntaxNode:
    return parse(SRC).tree


def test_public_api() -> None:
    for name in (
        "parse", "lex", "SyntaxKind", "SyntaxNode", "SyntaxToken", "Span", "Diagnostic",
        "SourceFile", "render_all", "parse_int_literal", "dump_tree", "ParseResult",
    ):
        assert name in syntax.__all__
        assert getattr(syntax, name) is not None


def test_parse_accepts_str_and_bytes() -> None:
    assert parse(SRC).tree.text() == SRC
    assert parse(SRC.encode()).tree.text() == SRC
    assert parse("").tree.kind == K.SOURCE_FILE
    assert parse("").tree.text() == ""


def test_children_in_order_with_trivia() -> None:
    fn = tree().first_child(K.FN)
    assert fn is not None
    kinds = [c.kind for c in fn.children()]
    assert kinds == [
        K.FN_KW, K.WHITESPACE, K.IDENT, K.PARAM_LIST, K.WHITESPACE, K.RET_TYPE, K.WHITESPACE,
        K.BLOCK,
    ]
    assert [c.kind for c in fn.child_nodes()] == [K.PARAM_LIST, K.RET_TYPE, K.BLOCK]
    assert [t.kind for t in fn.child_tokens()] == [K.FN_KW, K.IDENT]
    assert len(list(fn.child_tokens(trivia=True))) == 5


def test_first_child_and_first_token() -> None:
    fn = tree().first_child(K.FN)
    assert fn.first_child().kind == K.PARAM_LIST
    assert fn.first_child(K.BLOCK).kind == K.BLOCK
    assert fn.first_child(K.CONST_ITEM) is None
    assert fn.first_token().kind == K.FN_KW
    name = fn.first_token(K.IDENT)
    assert isinstance(name, SyntaxToken)
    assert (name.text, name.span.start, name.span.end) == ("f", 3, 4)
    assert name.parent == fn


def test_spans_are_byte_offsets_and_match_text() -> None:
    src = "fn é() { 'x' }".replace("'x'", "ü")
    result = parse(src)
    data = src.encode()
    for node in result.tree.descendants():
        span = node.span
        assert data[span.start : span.end].decode() == node.text()
    for token in result.tree.tokens():
        assert data[token.span.start : token.span.end].decode() == token.text


def test_parent_and_ancestors() -> None:
    root = tree()
    literal = next(n for n in root.descendants() if n.kind == K.LITERAL)
    chain = [n.kind for n in literal.ancestors()]
    assert chain == [K.LITERAL, K.BIN_EXPR, K.LET_STMT, K.BLOCK, K.FN, K.SOURCE_FILE]
    assert root.parent is None
    token = literal.first_token()
    assert token.parent == literal
    assert [n.kind for n in token.ancestors()][:2] == [K.LITERAL, K.BIN_EXPR]


def test_descendants_are_preorder() -> None:
    kinds = [n.kind for n in tree().descendants()]
    assert kinds[:4] == [K.SOURCE_FILE, K.FN, K.PARAM_LIST, K.PARAM]
    assert kinds.index(K.LET_STMT) < kinds.index(K.BIN_EXPR) < kinds.index(K.LITERAL)


def test_tokens_cover_the_text() -> None:
    root = tree()
    assert "".join(t.text for t in root.tokens()) == SRC
    assert all(not t.kind.is_trivia() for t in root.tokens(trivia=False))


def test_trivia_placement() -> None:
    root = parse("  fn f() {}  // end\n").tree
    first, *_, last = root.children()
    assert first.kind == K.WHITESPACE  # the file's leading trivia is in SOURCE_FILE
    assert last.kind == K.WHITESPACE
    fn = root.first_child(K.FN)
    assert fn.text() == "fn f() {}"  # a node is tight around its tokens
    block = parse("fn f() { a /* c */ }").tree.first_child(K.FN).first_child(K.BLOCK)
    assert [c.kind for c in block.children()] == [
        K.L_CURLY, K.WHITESPACE, K.NAME_REF, K.WHITESPACE, K.BLOCK_COMMENT, K.WHITESPACE,
        K.R_CURLY,
    ]


def test_green_nodes_are_interned() -> None:
    root = parse("fn f() { (a + 1) * (a + 1) }").tree
    parens = [n for n in root.descendants() if n.kind == K.PAREN_EXPR]
    assert len(parens) == 2
    assert parens[0].green is parens[1].green
    assert parens[0] != parens[1]  # same green, different places
    assert parens[0].span != parens[1].span
    idents = [t for t in root.tokens() if t.kind == K.IDENT and t.text == "a"]
    assert idents[0].green is idents[1].green


def test_a_shared_cache_shares_subtrees_between_files() -> None:
    cache = NodeCache()
    one = parse("fn f() { x + 1 }", cache).tree
    two = parse("fn g() { x + 1 }", cache).tree
    bin_one = next(n for n in one.descendants() if n.kind == K.BIN_EXPR)
    bin_two = next(n for n in two.descendants() if n.kind == K.BIN_EXPR)
    assert bin_one.green is bin_two.green


def test_green_text_len_counts_bytes() -> None:
    root = parse("fn é() {}").tree
    assert root.green.text_len == len("fn é() {}".encode())
    name = root.first_child(K.FN).first_token(K.IDENT)
    assert name.green.text_len == 2


def test_nodes_compare_by_position() -> None:
    a, b = tree(), tree()
    assert a == a.first_child(K.FN).parent
    assert hash(a) == hash(a.first_child(K.FN).parent)
    assert a != b or a.green is b.green  # separate parses only share greens through a cache


def test_events_are_balanced_and_consume_every_token() -> None:
    result = parse(SRC)
    events = result.events
    assert isinstance(events[0], Start) and events[0].kind == K.SOURCE_FILE
    opened = sum(1 for e in events if isinstance(e, Start) and e.kind is not None)
    closed = sum(1 for e in events if isinstance(e, Finish))
    assert opened == closed
    tokens = sum(1 for e in events if isinstance(e, Token))
    assert tokens == sum(1 for t in result.tokens if not t.kind.is_trivia())
    assert not any(isinstance(e, Error) for e in events)
    preceded = [e for e in events if isinstance(e, Start) and e.forward_parent]
    assert preceded  # `a + 1` is built with precede


def test_error_events_carry_spans() -> None:
    result = parse("fn f() { let = 1; }")
    errors = [e for e in result.events if isinstance(e, Error)]
    assert [(e.message, e.span.start) for e in errors] == [("expected a pattern, found `=`", 13)]
    assert [d.message for d in result.diagnostics] == [errors[0].message]


def test_parse_result_tokens() -> None:
    result = parse("a  b")
    assert [(t.kind, t.text, t.start, t.end) for t in result.tokens] == [
        (K.IDENT, "a", 0, 1),
        (K.WHITESPACE, "  ", 1, 3),
        (K.IDENT, "b", 3, 4),
    ]


def test_str_input_with_lone_surrogates_never_raises() -> None:
    result = parse("// a\udcff")  # as decoded with surrogateescape: the byte 0xff
    assert result.source == b"// a\xff"
    assert [d.message for d in result.diagnostics] == ["invalid UTF-8 byte 0xff"]
    result = parse("// a\ud800")  # not from bytes at all: encoded as it stands
    assert result.source == b"// a\xed\xa0\x80"
    assert len(result.diagnostics) == 3


def replay(events: list) -> list[str]:
    """Rebuild the node outline from event objects, as rust-analyzer's `process` does."""
    out: list[str] = []
    depth = 0
    entered: set[int] = set()
    for i, event in enumerate(events):
        if isinstance(event, Start):
            if i in entered:
                continue
            chain, at, fp = [event.kind], i, event.forward_parent
            while fp:
                at += fp
                entered.add(at)
                chain.append(events[at].kind)
                fp = events[at].forward_parent
            for kind in reversed(chain):
                if kind is not None:
                    out.append("  " * depth + kind.name)
                    depth += 1
        elif isinstance(event, Finish):
            depth -= 1
    assert depth == 0
    return out


def outline(node: SyntaxNode) -> list[str]:
    out: list[str] = []
    stack = [(node, 0)]
    while stack:
        current, depth = stack.pop()
        out.append("  " * depth + current.kind.name)
        stack.extend((child, depth + 1) for child in reversed(list(current.child_nodes())))
    return out


def test_events_replay_to_the_tree() -> None:
    sources = [
        SRC,
        "fn f() { a + b * c - d as u8 < e && !f(g)[h].0 || i }",
        "const X: [u8; 2] = [1, 2]; fn g(t: (u8, u8)) -> u8 { let (a, _) = t; a += 1; a }",
        "fn broken( { let = ; x.y } }",
    ]
    for src in sources:
        result = parse(src)
        assert replay(result.events) == outline(result.tree), src
