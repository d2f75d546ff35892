"""Markdown whose text is text, never markup: a label holding ``<img onerror=…>``, ``|``,
``![x](http://…)``, ``[link](…)``, an ESC sequence or U+202E (a model name, a component
label, an axis value, a spelling, model or env text) is shown as written, not run, rendered,
split or reordered.

- :func:`md_text`: one line of text for a Markdown line (a list item, a heading):
  terminal controls and bidirectional overrides dropped (:func:`statelab.llm.terminal_safe`),
  whatever could open an HTML tag (or an autolink) escaped, every ``\\`` doubled and every
  ``]`` that could close a link, an image or a reference (before ``(``, ``[`` or ``:``)
  escaped, newlines joined. Brackets elsewhere (a CI ``[0.1, 0.3]``) stay as they are.
- :func:`md_cell`: :func:`md_text` with ``|`` escaped too (one table cell).
- :func:`md_document`: a whole report's text with terminal controls dropped (a belt for text
  a section wrote without the two above; it escapes no markup).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from statelab.llm import terminal_safe

#: a ``<`` that could open an HTML tag, comment or declaration (``p<0.05`` stays as it is)
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
#: a ``]`` that could close the text of a link or image, or a reference's label
_LINK_END = re.compile(r"\](?=[(\[:])")


def md_text(value: Any) -> str:
    """One line of plain text for Markdown: no controls, no tag, no image or link."""
    text = terminal_safe(str(value)).replace("\\", "\\\\")
    text = _TAG.sub("&lt;", _LINK_END.sub(r"\\]", text))
    return " ".join(text.splitlines())


def md_cell(value: Any) -> str:
    """One table cell: :func:`md_text` with ``|`` escaped."""
    return md_text(value).replace("|", "\\|")


@dataclass(frozen=True)
class Link:
    """A cell or line that links: its text escaped as any cell, its target percent-encoded
    (a relative path and fragment statelab wrote, e.g. into the viewer's page)."""

    text: str
    href: str

    def markdown(self) -> str:
        """``[text](href)`` with the text made plain and the target made safe."""
        return f"[{md_cell(self.text)}]({quote(self.href, safe='/#=&.-_')})"


def md_row(cells: Iterable[Any]) -> str:
    """One table row of :func:`md_cell` cells (a :class:`Link` renders as a link)."""
    text = (c.markdown() if isinstance(c, Link) else md_cell(c) for c in cells)
    return "| " + " | ".join(text) + " |"


def md_document(text: str) -> str:
    """A report's text without terminal controls or bidirectional overrides (newlines and
    tabs kept)."""
    return terminal_safe(text)
