"""Token and node kinds of the Kera syntax tree.

This enum is the contract between the lexer, the parser, the tree and every consumer of the
tree (graph builder, formatter, language server). Kinds are an ``IntEnum`` so that recovery and
first sets can be ``int`` bitmasks (``1 << kind``).
"""

from __future__ import annotations

from enum import IntEnum


class SyntaxKind(IntEnum):
    """Every token and node kind. Tokens first, then nodes (see ``is_token``)."""

    # --- trivia -------------------------------------------------------------------------------
    WHITESPACE = 0
    LINE_COMMENT = 1
    BLOCK_COMMENT = 2
    # --- tokens -------------------------------------------------------------------------------
    ERROR_TOKEN = 3  # a byte run the lexer could not make sense of (diagnostic attached)
    IDENT = 4
    INT_LITERAL = 5  # 123, 0x7f, 0b1010, 0o17, 1_000, 255u8, 3i5
    # keywords
    FN_KW = 6
    PUB_KW = 7
    LET_KW = 8
    MUT_KW = 9
    CONST_KW = 10
    FOR_KW = 11
    IN_KW = 12
    IF_KW = 13
    ELSE_KW = 14
    RETURN_KW = 15
    AS_KW = 16
    TRUE_KW = 17
    FALSE_KW = 18
    TYPE_KW = 19
    # reserved for later (an identifier spelled like this is an error)
    RESERVED_KW = 20
    # punctuation
    L_PAREN = 21
    R_PAREN = 22
    L_BRACK = 23
    R_BRACK = 24
    L_CURLY = 25
    R_CURLY = 26
    COMMA = 27
    SEMI = 28
    COLON = 29
    COLON2 = 30  # ::
    DOT = 31
    DOT2 = 32  # ..
    ARROW = 33  # ->
    POUND = 34  # #
    EQ = 35  # =
    EQ2 = 36  # ==
    NEQ = 37  # !=
    LT = 38
    LTEQ = 39
    GT = 40
    GTEQ = 41
    PLUS = 42
    MINUS = 43
    STAR = 44
    SLASH = 45
    PERCENT = 46
    AMP = 47
    AMP2 = 48  # &&
    PIPE = 49
    PIPE2 = 50  # ||
    CARET = 51
    BANG = 52
    SHL = 53  # <<
    SHR = 54  # >>
    PLUSEQ = 55
    MINUSEQ = 56
    STAREQ = 57
    SLASHEQ = 58
    PERCENTEQ = 59
    AMPEQ = 60
    PIPEEQ = 61
    CARETEQ = 62
    SHLEQ = 63
    SHREQ = 64
    UNDERSCORE = 65  # `_` alone
    FRAC_LITERAL = 66  # 1.25, 3e-2, 0x1.8p-3, 1_000.5 (fixed-point values, FIXED.md)
    REG_KW = 67  # state (STATE.md)
    MEM_KW = 68
    EOF = 69  # never stored in the tree

    # --- nodes --------------------------------------------------------------------------------
    SOURCE_FILE = 80
    ERROR = 81  # wraps tokens skipped during recovery
    # items
    FN = 82  # ATTR* PUB_KW? FN_KW IDENT PARAM_LIST RET_TYPE? BLOCK
    CONST_ITEM = 83  # CONST_KW IDENT COLON type EQ expr SEMI
    TYPE_ALIAS = 84  # TYPE_KW IDENT EQ type SEMI
    ATTR = 85  # POUND L_BRACK IDENT ATTR_ARG_LIST? R_BRACK
    ATTR_ARG_LIST = 86  # L_PAREN (ATTR_ARG (COMMA ATTR_ARG)*)? R_PAREN
    ATTR_ARG = 87  # IDENT EQ expr
    PARAM_LIST = 88  # L_PAREN (PARAM (COMMA PARAM)* COMMA?)? R_PAREN
    PARAM = 89  # IDENT COLON type
    RET_TYPE = 90  # ARROW type
    # types
    NAME_TYPE = 91  # IDENT (bool, uN, iN, an alias)
    ARRAY_TYPE = 92  # L_BRACK type SEMI expr R_BRACK
    TUPLE_TYPE = 93  # L_PAREN (type (COMMA type)* COMMA?)? R_PAREN ; `()` is unit
    # statements
    BLOCK = 94  # L_CURLY stmt* expr? R_CURLY
    LET_STMT = 95  # LET_KW pattern (COLON type)? EQ expr SEMI
    EXPR_STMT = 96  # expr SEMI?   (assignments are ASSIGN_EXPR inside an EXPR_STMT)
    # patterns
    IDENT_PAT = 97  # MUT_KW? IDENT
    WILDCARD_PAT = 98  # UNDERSCORE
    TUPLE_PAT = 99  # L_PAREN (pattern (COMMA pattern)* COMMA?)? R_PAREN
    # expressions
    LITERAL = 100  # INT_LITERAL | FRAC_LITERAL | TRUE_KW | FALSE_KW
    NAME_REF = 101  # IDENT
    PAREN_EXPR = 102  # L_PAREN expr R_PAREN
    TUPLE_EXPR = 103  # L_PAREN (expr COMMA)+ expr? R_PAREN, or `()`
    ARRAY_EXPR = 104  # L_BRACK (expr (COMMA expr)* COMMA?)? R_BRACK
    ARRAY_REPEAT_EXPR = 105  # L_BRACK expr SEMI expr R_BRACK
    PREFIX_EXPR = 106  # (MINUS | BANG) expr
    BIN_EXPR = 107  # expr op expr
    CAST_EXPR = 108  # expr AS_KW type
    CALL_EXPR = 109  # (NAME_REF | GENERIC_NAME) ARG_LIST
    GENERIC_NAME = 110  # IDENT COLON2 LT expr (COMMA expr)* GT     e.g. slice::<0, 4>
    ARG_LIST = 111  # L_PAREN (expr (COMMA expr)* COMMA?)? R_PAREN
    INDEX_EXPR = 112  # expr L_BRACK expr R_BRACK
    FIELD_EXPR = 113  # expr DOT INT_LITERAL
    BLOCK_EXPR = 114  # BLOCK used as an expression
    IF_EXPR = 115  # IF_KW expr BLOCK (ELSE_KW (IF_EXPR | BLOCK))?
    FOR_EXPR = 116  # FOR_KW pattern (COLON type)? IN_KW RANGE_EXPR BLOCK
    RANGE_EXPR = 117  # expr DOT2 expr
    RETURN_EXPR = 118  # RETURN_KW expr?
    ASSIGN_EXPR = 119  # expr (EQ | PLUSEQ | ... | SHREQ) expr
    FIXED_TYPE = 120  # IDENT(fx | ufx) LT expr (COMMA expr)* GT    e.g. fx<16, 2, rnd, sat>
    STATE_DECL = 121  # (REG_KW | MEM_KW) IDENT COLON type EQ expr SEMI   (STATE.md)

    def is_trivia(self) -> bool:
        """Return True for whitespace and comments."""
        return self <= SyntaxKind.BLOCK_COMMENT

    def is_token(self) -> bool:
        """Return True for token kinds (trivia included)."""
        return self < SyntaxKind.SOURCE_FILE


KEYWORDS: dict[str, SyntaxKind] = {
    "fn": SyntaxKind.FN_KW,
    "pub": SyntaxKind.PUB_KW,
    "let": SyntaxKind.LET_KW,
    "mut": SyntaxKind.MUT_KW,
    "const": SyntaxKind.CONST_KW,
    "for": SyntaxKind.FOR_KW,
    "in": SyntaxKind.IN_KW,
    "if": SyntaxKind.IF_KW,
    "else": SyntaxKind.ELSE_KW,
    "return": SyntaxKind.RETURN_KW,
    "as": SyntaxKind.AS_KW,
    "true": SyntaxKind.TRUE_KW,
    "false": SyntaxKind.FALSE_KW,
    "type": SyntaxKind.TYPE_KW,
    "reg": SyntaxKind.REG_KW,
    "mem": SyntaxKind.MEM_KW,
}

RESERVED_WORDS: frozenset[str] = frozenset(
    "struct enum match while loop break continue proc use mod impl trait".split()
)

ASSIGN_OPS: frozenset[SyntaxKind] = frozenset(
    {
        SyntaxKind.EQ,
        SyntaxKind.PLUSEQ,
        SyntaxKind.MINUSEQ,
        SyntaxKind.STAREQ,
        SyntaxKind.SLASHEQ,
        SyntaxKind.PERCENTEQ,
        SyntaxKind.AMPEQ,
        SyntaxKind.PIPEEQ,
        SyntaxKind.CARETEQ,
        SyntaxKind.SHLEQ,
        SyntaxKind.SHREQ,
    }
)
