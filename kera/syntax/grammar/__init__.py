"""Kera's grammar as recursive-descent functions over a ``Parser`` (see kinds.py for shapes)."""

from kera.syntax.grammar.items import source_file

__all__ = ["source_file"]
