"""Tests of the front end: lexer, parser, tree."""
