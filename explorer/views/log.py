"""Log dock: timestamped messages from the explorer, and Python logging records of matchscope (any thread)."""
from __future__ import annotations

import html
import logging
import time

from PySide6 import QtCore, QtGui, QtWidgets

LEVEL_COLORS = {"error": "#d64541", "warning": "#e08a1e", "info": None, "debug": "#888888"}


class _Bridge(QtCore.QObject):
    record = QtCore.Signal(str, str)


class _QtHandler(logging.Handler):
    """Forwards log records to the GUI thread through a queued signal."""

    def __init__(self, bridge: _Bridge):
        super().__init__(logging.INFO)
        self.bridge = bridge

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.bridge.record.emit(record.levelname.lower(), self.format(record))
        except RuntimeError:  # the window is gone
            pass


class LogPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.text = QtWidgets.QPlainTextEdit(readOnly=True)
        self.text.setMaximumBlockCount(5000)
        self.text.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont))
        # long lines (a run's options, a certificate) wrap at the dock's width rather than hiding off-screen
        self.text.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.setWordWrapMode(QtGui.QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.text.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.CustomContextMenu)
        self.text.customContextMenuRequested.connect(self._menu)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.text)
        self.entries: list[tuple[str, str]] = []
        self._bridge = _Bridge()
        self._bridge.record.connect(self.log)
        self.handler = _QtHandler(self._bridge)
        self.handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        logging.getLogger("matchscope").addHandler(self.handler)

    def _menu(self, pos) -> None:
        menu = self.text.createStandardContextMenu()
        menu.addSeparator()
        menu.addAction("Clear log", self.text.clear)
        menu.exec(self.text.mapToGlobal(pos))

    def detach(self) -> None:
        logging.getLogger("matchscope").removeHandler(self.handler)

    def log(self, level: str, message: str) -> None:
        self.entries.append((level, message))
        stamp = time.strftime("%H:%M:%S")
        color = LEVEL_COLORS.get(level)
        body = html.escape(message).replace("\n", "<br>")
        if color:
            body = f"<span style='color:{color}'>{body}</span>"
        self.text.appendHtml(f"<span style='color:#888'>{stamp}</span> {body}")
