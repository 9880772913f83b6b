"""Python syntax colours for a read-only code view (the Code tab).

One left-to-right scan per line with a single alternation of token patterns,
so a ``#`` inside a string is no comment and quotes inside a comment open no
string. Triple-quoted strings carry over lines in the block state.
"""

from __future__ import annotations

import builtins
import keyword
import re

from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)

_PREFIX = r"(?:[rRbBfFuU]{1,2})?"
_NUMBER = r"0[xXoObB][0-9a-fA-F_]+|\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?j?"
_TOKEN = re.compile(
    rf"""
    (?P<triple>{_PREFIX}(?:\"\"\"|'''))
    | (?P<string>{_PREFIX}(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'))
    | (?P<comment>\#.*)
    | (?P<number>(?<![\w.])(?:{_NUMBER}))
    | (?P<decorator>(?<![\w)\]])@[A-Za-z_][\w.]*)
    | (?P<word>[A-Za-z_]\w*)
    """,
    re.VERBOSE,
)
_KEYWORDS = frozenset(keyword.kwlist) | {"match", "case"}
_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
# Block states: outside any string, or inside a string opened by """ or '''.
_STATES = {'"""': 1, "'''": 2}
_DELIMITERS = {state: quote for quote, state in _STATES.items()}

# (colour, bold, italic) per role; light and dark schemes each keep the text
# at a contrast of about 4.5:1 or more on the editor's base colour.
_LIGHT = {
    "keyword": ("#0033b3", True, False),
    "string": ("#067d17", False, False),
    "comment": ("#5f6b76", False, True),
    "number": ("#1750eb", False, False),
    "definition": ("#00627a", True, False),
    "builtin": ("#7a3e9d", False, False),
    "decorator": ("#7d6608", False, False),
}
_DARK = {
    "keyword": ("#e28b4f", True, False),
    "string": ("#8fbc6b", False, False),
    "comment": ("#9a9a9a", False, True),
    "number": ("#79aee0", False, False),
    "definition": ("#f0c674", True, False),
    "builtin": ("#c39ad8", False, False),
    "decorator": ("#d4c45a", False, False),
}


def is_dark(palette: QPalette) -> bool:
    """True when ``palette`` paints text fields dark (light text on them)."""
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def _formats(scheme: dict[str, tuple[str, bool, bool]]) -> dict[str, QTextCharFormat]:
    formats = {}
    for role, (colour, bold, italic) in scheme.items():
        fmt = QTextCharFormat()
        fmt.setForeground(QColor(colour))
        if bold:
            fmt.setFontWeight(QFont.Weight.Bold)
        fmt.setFontItalic(italic)
        formats[role] = fmt
    return formats


class PythonHighlighter(QSyntaxHighlighter):
    """Keywords, strings (docstrings over lines too), comments, numbers, names."""

    def __init__(self, document: QTextDocument, *, dark: bool = False) -> None:
        super().__init__(document)
        self.dark = dark
        self._formats = _formats(_DARK if dark else _LIGHT)

    def set_dark(self, dark: bool) -> None:
        """Switch the colour scheme (the palette changed) and repaint."""
        if dark != self.dark:
            self.dark = dark
            self._formats = _formats(_DARK if dark else _LIGHT)
            self.rehighlight()

    def format_for(self, role: str) -> QTextCharFormat:
        """The format of ``role`` (``keyword``, ``string``, ``comment``, ...)."""
        return QTextCharFormat(self._formats[role])

    def highlightBlock(self, text: str) -> None:
        """Colour one line, continuing a triple-quoted string from the last."""
        self.setCurrentBlockState(0)
        position = 0
        state = self.previousBlockState()
        if state in _DELIMITERS:
            position = self._string_from(text, 0, _DELIMITERS[state], 0)
            if position < 0:
                return
        after_def = False
        while (match := _TOKEN.search(text, position)) is not None:
            role = match.lastgroup
            start, position = match.span()
            if role == "triple":
                position = self._string_from(text, start, match.group()[-3:], position)
                if position < 0:
                    return
                continue
            if role == "word":
                word = match.group()
                if after_def:
                    role = "definition"
                elif word in _KEYWORDS:
                    role = "keyword"
                elif word in _BUILTINS:
                    role = "builtin"
                else:
                    role = ""
                after_def = word in ("def", "class")
            if role:
                self.setFormat(start, position - start, self._formats[role])

    def _string_from(self, text: str, start: int, quote: str, search: int) -> int:
        """Colour a triple-quoted string from ``start`` (its end looked for from
        ``search``); where it ends, or -1 when it goes on past this line.
        """
        close = text.find(quote, search)
        while close > 0 and text[close - 1] == "\\":  # an escaped quote
            close = text.find(quote, close + 1)
        end = len(text) if close < 0 else close + 3
        self.setFormat(start, end - start, self._formats["string"])
        if close < 0:
            self.setCurrentBlockState(_STATES[quote])
            return -1
        return end
