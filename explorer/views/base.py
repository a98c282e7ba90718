"""What every central view shares: redraw only when the session changed, export hooks, themed charts."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..theme import style_plot_widget


class View(QtWidgets.QWidget):
    """A tab. ``refresh(session)`` is called by the main window's ~30 Hz timer; it redraws only when
    the session's version moved (or ``force``). Charts export through ``export_item`` / ``tables``."""

    title = "View"
    formats = ("png", "svg", "csv")

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self._drawn_version = -1
        self.placeholder = QtWidgets.QLabel(alignment=QtCore.Qt.AlignmentFlag.AlignCenter, wordWrap=True)
        self.placeholder.setObjectName("placeholder")
        self.placeholder.setForegroundRole(QtGui.QPalette.ColorRole.PlaceholderText)  # follows theme changes
        font = self.placeholder.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        self.placeholder.setFont(font)
        self.stack = QtWidgets.QStackedLayout(self)
        self.stack.addWidget(self.placeholder)
        self.content: QtWidgets.QWidget | None = None

    def set_content(self, widget: QtWidgets.QWidget) -> None:
        self.content = widget
        self.stack.addWidget(widget)

    def show_message(self, text: str | None) -> None:
        """Show ``text`` in place of the charts (None shows the charts)."""
        if text:
            self.placeholder.setText(text)
            self.stack.setCurrentWidget(self.placeholder)
        elif self.content is not None:
            self.stack.setCurrentWidget(self.content)

    @property
    def showing_message(self) -> bool:
        return self.stack.currentWidget() is self.placeholder

    def refresh(self, force: bool = False) -> bool:
        if not force and self.session.version == self._drawn_version:
            return False
        self._drawn_version = self.session.version
        self.redraw()
        return True

    def redraw(self) -> None:  # override
        pass

    def invalidate(self) -> None:
        self._drawn_version = -1

    def has_content(self) -> bool:
        return False

    # ---- export hooks -----------------------------------------------------------------------
    def export_item(self):
        """The pyqtgraph item saved as PNG/SVG (a GraphicsLayout holding every chart of the view)."""
        return None

    def tables(self) -> dict[str, dict]:
        """Chart data: table name -> columns (name -> 1-D array)."""
        return {}

    def apply_theme(self, palette=None) -> None:
        for w in self.findChildren(pg.GraphicsView):
            style_plot_widget(w, palette)
        self.invalidate()


def new_layout_widget() -> pg.GraphicsLayoutWidget:
    w = pg.GraphicsLayoutWidget()
    w.ci.setContentsMargins(6, 6, 6, 6)
    w.ci.layout.setSpacing(8)
    return w


class IntegerAxis(pg.AxisItem):
    """An axis of whole numbers (iterations, launches): no tick between two of them, however far one
    zooms in. ``integer = False`` turns it back into a plain axis (e.g. for elapsed time)."""

    integer = True

    def tickSpacing(self, minVal, maxVal, size):
        levels = super().tickSpacing(minVal, maxVal, size)
        if not self.integer:
            return levels
        whole = [(spacing, offset) for spacing, offset in levels if spacing >= 1]
        return whole or [(1.0, 0.0)]

    def set_integer(self, integer: bool) -> None:
        if integer != self.integer:
            self.integer = integer
            self.picture = None  # the cached ticks
            self.update()


def add_plot(layout: pg.GraphicsLayout, row: int, col: int, title: str, x_label: str, y_label: str,
             integer_x: bool = False, **kwargs) -> pg.PlotItem:
    if integer_x:
        kwargs["axisItems"] = {"bottom": IntegerAxis("bottom")}
    plot = layout.addPlot(row=row, col=col, **kwargs)
    plot.setTitle(title, size="10pt")
    plot.setLabel("bottom", x_label)
    plot.setLabel("left", y_label)
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setMenuEnabled(True)
    return plot


def cursor_line() -> pg.InfiniteLine:
    line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#d64541", width=1.5, style=QtCore.Qt.PenStyle.DashLine))
    line.setZValue(50)
    line.hide()
    return line


SYMBOLS_BELOW = 200  # sparse series get a marker per point, so lone values stay visible


def set_points(curve: pg.PlotDataItem, x: np.ndarray, y: np.ndarray) -> None:
    """Draw only the reported points: iterations that did not report this quantity (NaN) are skipped,
    not drawn as gaps, and a sparse series gets markers."""
    ok = np.isfinite(y)
    xs, ys = x[ok], y[ok]
    pen = curve.opts["pen"]
    color = pg.mkPen(pen).color() if pen is not None else None
    if xs.size < SYMBOLS_BELOW:
        curve.setSymbol("o")
        curve.setSymbolSize(4)
        curve.setSymbolBrush(color)
        curve.setSymbolPen(None)
    else:
        curve.setSymbol(None)
    curve.setData(xs, ys)


def set_title(plot: pg.PlotItem, text: str, size: str = "10pt") -> None:
    """setTitle only when the text changes: re-setting it re-lays out and repaints the chart."""
    if getattr(plot, "_shown_title", None) != text:
        plot._shown_title = text
        plot.setTitle(text, size=size)


def set_axis_label(plot: pg.PlotItem, axis: str, text: str) -> None:
    """setLabel only when the text changes: re-setting it throws away the axis' cached picture."""
    shown = plot.__dict__.setdefault("_shown_labels", {})
    if shown.get(axis) != text:
        shown[axis] = text
        if axis == "axis":  # a ColorBarItem's own axis
            plot.axis.setLabel(text)
        else:
            plot.setLabel(axis, text)


def step_path(x: np.ndarray, y: np.ndarray, x_end: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A quantity that holds its value until the next report, as a staircase: (x0, y0) -> (x1, y0)
    -> (x1, y1) -> ... -> (x_end, y_last). Unreported (NaN) iterations are skipped."""
    ok = np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size == 0:
        return x, y
    end = float(x[-1]) if x_end is None else max(float(x_end), float(x[-1]))
    return np.append(np.repeat(x, 2)[1:], end), np.repeat(y, 2)
