"""The Code tab's Python colours: tokens told apart, light and dark schemes."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextDocument

from workbench.ui.code_view import CodeView
from workbench.ui.widgets.python_highlighter import PythonHighlighter

from .helpers import FAST

SOURCE = '''x = "a # not a comment"  # a comment
y = f(1.5e-3, 0x1F)
z = """opened here,
still "inside" # here,
closed""" + str(2)
@decorated
class Net(Base):
    pass
'''


def roles(highlighter: PythonHighlighter, line: int) -> dict[str, str]:
    """Each coloured run of ``line`` with the role whose colour it has."""
    by_colour = {
        highlighter.format_for(role).foreground().color().name(): role
        for role in (
            "keyword",
            "string",
            "comment",
            "number",
            "definition",
            "builtin",
            "decorator",
        )
    }
    block = highlighter.document().findBlockByNumber(line)
    text = block.text()
    runs = {}
    for fmt in block.layout().formats():
        colour = QTextCharFormat(fmt.format).foreground().color().name()
        runs[text[fmt.start : fmt.start + fmt.length]] = by_colour[colour]
    return runs


def test_each_token_gets_its_role(qtbot):
    document = QTextDocument()
    highlighter = PythonHighlighter(document)
    document.setPlainText(SOURCE)
    highlighter.rehighlight()  # a document no view lays out: colour it now
    assert roles(highlighter, 0) == {
        '"a # not a comment"': "string",
        "# a comment": "comment",
    }
    assert roles(highlighter, 1) == {"1.5e-3": "number", "0x1F": "number"}
    assert roles(highlighter, 2) == {'"""opened here,': "string"}
    assert roles(highlighter, 3) == {'still "inside" # here,': "string"}
    assert roles(highlighter, 4) == {
        'closed"""': "string",
        "str": "builtin",
        "2": "number",
    }
    assert roles(highlighter, 5) == {"@decorated": "decorator"}
    assert roles(highlighter, 6) == {"class": "keyword", "Net": "definition"}
    assert roles(highlighter, 7) == {"pass": "keyword"}


def test_a_dark_palette_gets_the_dark_colours(qtbot):
    view = CodeView(lambda: FAST)
    qtbot.addWidget(view)
    light = view.highlighter.format_for("keyword").foreground().color()
    assert not view.highlighter.dark
    palette = view.palette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    palette.setColor(QPalette.ColorRole.Text, QColor("#dddddd"))
    view.setPalette(palette)
    assert view.highlighter.dark
    dark = view.highlighter.format_for("keyword").foreground().color()
    assert dark.lightness() > light.lightness()  # light text on a dark field
