"""Parser: precedence, node shapes, statements, items and syntax errors."""

from __future__ import annotations

import pytest

from kera.syntax import SyntaxKind as K
from kera.syntax import SyntaxNode, dump_tree, parse


def sexpr(node: SyntaxNode) -> str:
    """Render an expression as a compact S-expression (operators by their text)."""
    kind = node.kind
    kids = list(node.child_nodes())
    if kind in (K.LITERAL, K.NAME_REF, K.NAME_TYPE):
        return node.text().strip()
    if kind == K.BIN_EXPR:
        op = next(t for t in node.child_tokens())
        return f"({op.text} {' '.join(sexpr(k) for k in kids)})"
    if kind == K.PREFIX_EXPR:
        return f"({node.first_token().text} {sexpr(kids[0])})"
    if kind == K.CAST_EXPR:
        return f"(as {sexpr(kids[0])} {sexpr(kids[1])})"
    if kind == K.PAREN_EXPR:
        return sexpr(kids[0])
    names = {
        K.CALL_EXPR: "call",
        K.INDEX_EXPR: "index",
        K.TUPLE_EXPR: "tuple",
        K.ARRAY_EXPR: "array",
        K.ARRAY_REPEAT_EXPR: "repeat",
        K.ARG_LIST: "args",
        K.GENERIC_NAME: "generic",
        K.RANGE_EXPR: "range",
        K.ASSIGN_EXPR: "assign",
        K.ARRAY_TYPE: "array-type",
        K.TUPLE_TYPE: "tuple-type",
    }
    if kind == K.FIELD_EXPR:
        return f"(field {sexpr(kids[0])} {node.first_token(K.INT_LITERAL).text})"
    if kind == K.GENERIC_NAME:
        return f"(generic {node.first_token(K.IDENT).text} {' '.join(sexpr(k) for k in kids)})"
    if kind == K.ASSIGN_EXPR:
        op = next(t for t in node.child_tokens())
        return f"({op.text} {' '.join(sexpr(k) for k in kids)})"
    parts = [names.get(kind, kind.name)] + [sexpr(k) for k in kids]
    return "(" + " ".join(parts) + ")"


def expr_of(src: str) -> str:
    """Parse ``src`` as the tail expression of a function body and render it."""
    result = parse(f"fn f() {{ {src} }}")
    assert result.diagnostics == [], result.diagnostics
    block = result.tree.first_child(K.FN).first_child(K.BLOCK)
    (tail,) = list(block.child_nodes())
    return sexpr(tail)


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("a + b * c", "(+ a (* b c))"),
        ("a * b + c", "(+ (* a b) c)"),
        ("a - b - c", "(- (- a b) c)"),
        ("a / b / c", "(/ (/ a b) c)"),
        ("a % b * c", "(* (% a b) c)"),
        ("a << b + c", "(<< a (+ b c))"),
        ("a + b << c", "(<< (+ a b) c)"),
        ("a >> b >> c", "(>> (>> a b) c)"),
        ("a & b << c", "(& a (<< b c))"),
        ("a ^ b & c", "(^ a (& b c))"),
        ("a | b ^ c", "(| a (^ b c))"),
        ("a == b | c", "(== a (| b c))"),
        ("a | b == c & d", "(== (| a b) (& c d))"),
        ("a && b == c", "(&& a (== b c))"),
        ("a || b && c", "(|| a (&& b c))"),
        ("a && b || c && d", "(|| (&& a b) (&& c d))"),
        ("a || b || c", "(|| (|| a b) c)"),
        ("-x as i32", "(as (- x) i32)"),
        ("!x as u8", "(as (! x) u8)"),
        ("a * b as u8", "(* a (as b u8))"),
        ("a as u8 as u16", "(as (as a u8) u16)"),
        ("x as u4 < n", "(< (as x u4) n)"),
        ("- - x", "(- (- x))"),
        ("-a * b", "(* (- a) b)"),
        ("-a[i]", "(- (index a i))"),
        ("-f(x).0", "(- (field (call f (args x)) 0))"),
        ("a[i][j]", "(index (index a i) j)"),
        ("t.0.1", "(field (field t 0) 1)"),
        ("(a + b) * c", "(* (+ a b) c)"),
        ("f(a, b + c,)", "(call f (args a (+ b c)))"),
        ("slice::<0, 4>(x)", "(call (generic slice 0 4) (args x))"),
        ("slice::<LO + 1, W * 2>(x)", "(call (generic slice (+ LO 1) (* W 2)) (args x))"),
        ("slice::<0, 4>(x) > y", "(> (call (generic slice 0 4) (args x)) y)"),
        ("(a, b)", "(tuple a b)"),
        ("(a,)", "(tuple a)"),
        ("()", "(tuple)"),
        ("[1, 2, 3,]", "(array 1 2 3)"),
        ("[]", "(array)"),
        ("[0u8; 16]", "(repeat 0u8 16)"),
        ("[[0u17; 2]; 2]", "(repeat (repeat 0u17 2) 2)"),
        ("a < b", "(< a b)"),
        ("a != b", "(!= a b)"),
        ("-128i8", "(- 128i8)"),
        ("x ^ (x >> 1)", "(^ x (>> x 1))"),
    ],
)
def test_precedence(src: str, expected: str) -> None:
    assert expr_of(src) == expected


@pytest.mark.parametrize(
    "src", ["a < b < c", "a == b == c", "a < b == c", "a >= b != c", "a < b > c"]
)
def test_comparisons_do_not_chain(src: str) -> None:
    result = parse(f"fn f() {{ {src} }}")
    assert [d.message for d in result.diagnostics] == ["comparison operators cannot be chained"]
    op2 = src.split()[3]
    start = len("fn f() { ") + src.index(op2, src.index(src.split()[1]) + 1)
    assert result.diagnostics[0].span.start == start
    assert result.diagnostics[0].span.end == start + len(op2)


def test_comparison_operands_may_be_comparisons_in_parentheses() -> None:
    assert expr_of("(a < b) == (c < d)") == "(== (< a b) (< c d))"
    assert expr_of("a < b && c < d") == "(&& (< a b) (< c d))"


def test_dump_of_a_small_function() -> None:
    result = parse(b"fn f(a: u8) -> u8 {\n    a + 1 // one\n}\n")
    assert dump_tree(result.tree) == (
        "SOURCE_FILE@0..39\n"
        "  FN@0..38\n"
        '    FN_KW@0..2 "fn"\n'
        '    WHITESPACE@2..3 " "\n'
        '    IDENT@3..4 "f"\n'
        "    PARAM_LIST@4..11\n"
        '      L_PAREN@4..5 "("\n'
        "      PARAM@5..10\n"
        '        IDENT@5..6 "a"\n'
        '        COLON@6..7 ":"\n'
        '        WHITESPACE@7..8 " "\n'
        "        NAME_TYPE@8..10\n"
        '          IDENT@8..10 "u8"\n'
        '      R_PAREN@10..11 ")"\n'
        '    WHITESPACE@11..12 " "\n'
        "    RET_TYPE@12..17\n"
        '      ARROW@12..14 "->"\n'
        '      WHITESPACE@14..15 " "\n'
        "      NAME_TYPE@15..17\n"
        '        IDENT@15..17 "u8"\n'
        '    WHITESPACE@17..18 " "\n'
        "    BLOCK@18..38\n"
        '      L_CURLY@18..19 "{"\n'
        '      WHITESPACE@19..24 "\\n    "\n'
        "      BIN_EXPR@24..29\n"
        "        NAME_REF@24..25\n"
        '          IDENT@24..25 "a"\n'
        '        WHITESPACE@25..26 " "\n'
        '        PLUS@26..27 "+"\n'
        '        WHITESPACE@27..28 " "\n'
        "        LITERAL@28..29\n"
        '          INT_LITERAL@28..29 "1"\n'
        '      WHITESPACE@29..30 " "\n'
        '      LINE_COMMENT@30..36 "// one"\n'
        '      WHITESPACE@36..37 "\\n"\n'
        '      R_CURLY@37..38 "}"\n'
        '  WHITESPACE@38..39 "\\n"'
    )


def test_dump_escapes_token_text() -> None:
    result = parse(b"fn f() {\t\xff}")
    lines = dump_tree(result.tree).splitlines()
    assert '      WHITESPACE@8..9 "\\t"' in lines
    assert '      ERROR_TOKEN@9..10 "\\xff"' in lines


def block_shapes(body: str) -> list[str]:
    """Return the kinds of the BLOCK's child nodes, nested one level: 'EXPR_STMT(IF_EXPR)'."""
    result = parse(f"fn f() {{ {body} }}")
    assert result.diagnostics == [], result.diagnostics
    block = result.tree.first_child(K.FN).first_child(K.BLOCK)
    out = []
    for child in block.child_nodes():
        inner = child.first_child()
        out.append(f"{child.kind.name}({inner.kind.name})" if inner else child.kind.name)
    return out


def test_statements_and_tail() -> None:
    assert block_shapes("let x = 1; x") == ["LET_STMT(IDENT_PAT)", "NAME_REF"]
    assert block_shapes("x = 1; y += 2;") == ["EXPR_STMT(ASSIGN_EXPR)", "EXPR_STMT(ASSIGN_EXPR)"]
    assert block_shapes("arr[i] = v; m[i][j] <<= 1;") == [
        "EXPR_STMT(ASSIGN_EXPR)",
        "EXPR_STMT(ASSIGN_EXPR)",
    ]
    assert block_shapes("if c { a; } b") == ["EXPR_STMT(IF_EXPR)", "NAME_REF"]
    assert block_shapes("for i in 0..8 { } x") == ["EXPR_STMT(FOR_EXPR)", "NAME_REF"]
    assert block_shapes("{ a } b") == ["EXPR_STMT(BLOCK_EXPR)", "NAME_REF"]
    assert block_shapes("if c { a } else { b }") == ["IF_EXPR(NAME_REF)"]
    assert block_shapes("f(x); return y;") == ["EXPR_STMT(CALL_EXPR)", "EXPR_STMT(RETURN_EXPR)"]
    assert block_shapes("return") == ["RETURN_EXPR"]
    assert block_shapes("if c { a } else { b };") == ["EXPR_STMT(IF_EXPR)"]
    assert block_shapes(";;") == []
    assert block_shapes("") == []


def test_every_assignment_operator() -> None:
    for op in ("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="):
        assert expr_of(f"{{ a {op} b; }}") == f"(BLOCK_EXPR (BLOCK (EXPR_STMT ({op} a b))))"


def test_let_statement_forms() -> None:
    result = parse("fn f() { let mut acc: i32 = 0i32; let (a, _) = t; let _ = 1; }")
    assert result.diagnostics == []
    lets = list(result.tree.first_child(K.FN).first_child(K.BLOCK).child_nodes())
    assert [sexpr(let.first_child()) for let in lets] == [
        "(IDENT_PAT)",
        "(TUPLE_PAT (IDENT_PAT) (WILDCARD_PAT))",
        "(WILDCARD_PAT)",
    ]
    first = lets[0]
    assert first.first_child(K.IDENT_PAT).first_token(K.MUT_KW) is not None
    assert first.first_child(K.NAME_TYPE).text() == "i32"
    assert first.first_child(K.LITERAL).text() == "0i32"


def test_if_else_if_chain_nests() -> None:
    result = parse("fn f() { if a { 1 } else if b { 2 } else { 3 } }")
    assert result.diagnostics == []
    outer = result.tree.first_child(K.FN).first_child(K.BLOCK).first_child(K.IF_EXPR)
    assert [c.kind for c in outer.child_nodes()] == [K.NAME_REF, K.BLOCK, K.IF_EXPR]
    inner = outer.first_child(K.IF_EXPR)
    assert [c.kind for c in inner.child_nodes()] == [K.NAME_REF, K.BLOCK, K.BLOCK]
    assert inner.text() == "if b { 2 } else { 3 }"


def test_for_expression_shape() -> None:
    result = parse("fn f() { for i: u4 in 0..n + 1 { s += i; } }")
    assert result.diagnostics == []
    loop = result.tree.first_child(K.FN).first_child(K.BLOCK).first_child(K.FOR_EXPR)
    assert [c.kind for c in loop.child_nodes()] == [
        K.IDENT_PAT,
        K.NAME_TYPE,
        K.RANGE_EXPR,
        K.BLOCK,
    ]
    assert sexpr(loop.first_child(K.RANGE_EXPR)) == "(range 0 (+ n 1))"
    assert loop.first_token(K.IN_KW) is not None


def test_if_condition_and_range_bound_stop_at_the_block() -> None:
    assert expr_of("if a == b { c } else { d }") == "(IF_EXPR (== a b) (BLOCK c) (BLOCK d))"
    result = parse("fn f() { for _ in 0..n { } }")
    assert result.diagnostics == []


def test_items_and_attributes() -> None:
    src = (
        "const TAPS: [i16; 2] = [1, -2];\n"
        "type Word = u32;\n"
        "#[top]\n#[pipeline(ii = 1)]\npub fn f(x: [u8; 4], t: (u8, bool),) -> () { }\n"
    )
    result = parse(src)
    assert result.diagnostics == []
    items = list(result.tree.child_nodes())
    assert [i.kind for i in items] == [K.CONST_ITEM, K.TYPE_ALIAS, K.FN]
    fn = items[2]
    assert [c.kind for c in fn.child_nodes()] == [
        K.ATTR,
        K.ATTR,
        K.PARAM_LIST,
        K.RET_TYPE,
        K.BLOCK,
    ]
    assert fn.first_token(K.PUB_KW) is not None
    assert fn.first_token(K.IDENT).text == "f"
    top, pipeline = list(fn.child_nodes())[:2]
    assert top.first_token(K.IDENT).text == "top" and top.first_child() is None
    arg = pipeline.first_child(K.ATTR_ARG_LIST).first_child(K.ATTR_ARG)
    assert arg.first_token(K.IDENT).text == "ii"
    assert arg.first_child(K.LITERAL).text() == "1"
    params = list(fn.first_child(K.PARAM_LIST).child_nodes())
    assert [sexpr(p.first_child()) for p in params] == [
        "(array-type u8 4)",
        "(tuple-type u8 bool)",
    ]
    assert sexpr(fn.first_child(K.RET_TYPE).first_child()) == "(tuple-type)"
    const = items[0]
    assert sexpr(const.first_child(K.ARRAY_TYPE)) == "(array-type i16 2)"
    assert sexpr(const.first_child(K.ARRAY_EXPR)) == "(array 1 (- 2))"


def test_attributes_before_const_belong_to_it() -> None:
    result = parse("#[top]\nconst X: u8 = 1;")
    assert result.diagnostics == []
    const = result.tree.first_child(K.CONST_ITEM)
    assert const.first_child().kind == K.ATTR


def test_leading_comments_attach_to_items() -> None:
    result = parse("// file header\n\n// about f\nfn f() {}\n")
    fn = result.tree.first_child(K.FN)
    assert fn.text() == "// about f\nfn f() {}"
    assert fn.span.start == len("// file header\n\n")


@pytest.mark.parametrize(
    ("src", "message", "at"),
    [
        ("fn f() { while x {} }", "`while` is reserved for a later version of Kera", "while"),
        ("fn f() { let loop = 1; }", "`loop` is reserved for a later version of Kera", "loop"),
        ("fn f() { let x = (1 + ; }", "expected an expression, found `;`", ";"),
        ("fn f() { foo(a, b; }", "expected `,` or `)`, found `;`", ";"),
        ("fn f() { a }}", "expected an item, found `}`", "}}"),
        ("fn f(a: u8 b: u8) {}", "expected `,` or `)`, found `b`", "b:"),
        ("fn f() { x.y }", "expected a tuple field index, found `y`", "y"),
        ("fn f() -> { }", "expected a type, found `{`", "{"),
        ("fn f() { let x = 1 }", "expected `;`, found `}`", "}"),
        ("fn f() { if x }", "expected `{`, found `}`", "}"),
    ],
)
def test_first_error_message_and_span(src: str, message: str, at: str) -> None:
    result = parse(src)
    first = min(result.diagnostics, key=lambda d: d.span.start)
    assert first.message == message
    start = src.index(at) if at != "}}" else src.index("}}") + 1
    assert first.span.start == start


def test_error_at_end_of_file_points_after_the_last_token() -> None:
    src = b"fn f() {\n  x + 1  \n\n"
    result = parse(src)
    assert [d.message for d in result.diagnostics] == ["expected `}`, found end of file"]
    end = src.index(b"1") + 1
    assert (result.diagnostics[0].span.start, result.diagnostics[0].span.end) == (end, end)


def test_all_errors_are_reported_in_one_run() -> None:
    src = "const A: u8 = ;\nfn f(a u8) { let b = a +; }\nfn g() { 0 < 1 < 2 }\n"
    result = parse(src)
    assert [d.message for d in result.diagnostics] == [
        "expected an expression, found `;`",
        "expected `:`, found `u8`",
        "expected an expression, found `;`",
        "comparison operators cannot be chained",
    ]


def test_missing_close_brace_before_next_item() -> None:
    result = parse("fn a() { let x = 1;\n x\nfn b() {}\n")
    assert [d.message for d in result.diagnostics] == ["expected `}`, found `fn`"]
    assert [n.kind for n in result.tree.child_nodes()] == [K.FN, K.FN]


def test_error_token_is_skipped_by_the_parser() -> None:
    result = parse("fn f() { let x€ = 1; x }")
    assert [d.message for d in result.diagnostics] == ["unexpected character `€`"]
    let = result.tree.first_child(K.FN).first_child(K.BLOCK).first_child(K.LET_STMT)
    assert K.ERROR_TOKEN in [t.kind for t in let.child_tokens(trivia=True)]
    assert K.ERROR_TOKEN not in [t.kind for t in let.child_tokens()]


def test_nesting_limit() -> None:
    ok = "fn f() { " + "(" * 999 + "x" + ")" * 999 + " }"
    assert parse(ok).diagnostics == []
    deep = "fn f() { " + "(" * 1000 + "x" + ")" * 1000 + " }"
    assert [d.message for d in parse(deep).diagnostics] == ["nesting deeper than 1000 levels"]
