"""What every central view shares: redraw only when the session changed, export hooks, themed charts."""
from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..theme import style_plot_widget


def _same(now, before) -> bool:
    """Numbers, text and tuples of them by value; anything else (a problem, a run) by identity."""
    plain = (int, float, str, bool, tuple, type(None))
    return now is before or (type(now) is type(before) and isinstance(now, plain) and now == before)


class View(QtWidgets.QWidget):
    """A tab. ``refresh(session)`` is called by the main window's ~30 Hz timer; it redraws only when
    the session's version moved (or ``force``). Charts export through ``export_item`` / ``tables``."""

    title = "View"
    formats = ("png", "svg", "csv")

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self._drawn_from: tuple | None = None  # what the last redraw drew from (None: redraw next time)
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

    def drawn_from(self) -> tuple:
        """What the view draws from: it redraws when any of it changed. By default any change of
        the session; a view that shows less of it narrows this (objects compare by identity)."""
        return (self.session.version,)

    def refresh(self, force: bool = False) -> bool:
        now = self.drawn_from()
        if not force and self._drawn_from is not None and len(now) == len(self._drawn_from) \
                and all(map(_same, now, self._drawn_from)):
            return False
        self._drawn_from = now
        self.redraw()
        return True

    def redraw(self) -> None:  # override
        pass

    def invalidate(self) -> None:
        self._drawn_from = None

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


class NamedColumnsTable(QtCore.QAbstractTableModel):
    """A read-only table model with fixed, named columns (``columns``); a subclass says how many
    rows it holds (``row_count``) and what a cell shows (``data``)."""

    columns: tuple[str, ...] = ()

    def row_count(self) -> int:
        return 0

    def rowCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if parent.isValid() else self.row_count()

    def columnCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section, orientation, role=QtCore.Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if role == QtCore.Qt.ItemDataRole.DisplayRole and orientation == QtCore.Qt.Orientation.Horizontal:
            return self.columns[section]
        return None


SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole  # a table's raw value of a cell, for sorting


def sortable_table(model: QtCore.QAbstractTableModel, parent) -> tuple[QtCore.QSortFilterProxyModel,
                                                                       QtWidgets.QTableView]:
    """(proxy, view) of a read-only table sorted by its models' SORT_ROLE, one whole row selected at a time."""
    proxy = QtCore.QSortFilterProxyModel(parent)
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    table = QtWidgets.QTableView()
    table.setModel(proxy)
    table.setSortingEnabled(True)
    table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
    return proxy, table


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


class DecadeAxis(pg.AxisItem):
    """An axis whose log scale is numbered at the powers of ten first, then at 2 and 5 times them,
    then at the other whole multiples, each level only where there is room. pyqtgraph's own log
    ticks number every multiple when the axis spans less than a few decades, and on a short chart
    those numbers overlap. On a linear scale it is a plain axis."""

    def logTickValues(self, minVal, maxVal, size, stdTicks):  # noqa: N802 - pyqtgraph's name
        levels = {1: [], 2: [], 0: []}  # decades, then 2x and 5x, then the other multiples
        for decade in range(int(np.floor(minVal)), int(np.ceil(maxVal)) + 1):
            for factor in range(1, 10):
                value = decade + np.log10(factor)
                if minVal <= value <= maxVal:
                    levels[{1: 1, 2: 2, 5: 2}.get(factor, 0)].append(value)
        return [(None, levels[1]), (None, levels[2]), (None, levels[0])]


def add_plot(layout: pg.GraphicsLayout, row: int, col: int, title: str, x_label: str, y_label: str,
             integer_x: bool = False, **kwargs) -> pg.PlotItem:
    if integer_x:
        kwargs["axisItems"] = {"bottom": IntegerAxis("bottom")}
    plot = layout.addPlot(row=row, col=col, **kwargs)
    plot.setTitle(title, size="10pt")
    plot.setLabel("bottom", x_label)
    plot.setLabel("left", y_label)
    no_si_prefix(plot)
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setMenuEnabled(True)
    return plot


def no_si_prefix(plot: pg.PlotItem) -> None:
    """Axes show the numbers themselves: pyqtgraph's automatic SI prefix turns a count axis into
    "launch (x0.001)" or "degree (k)". Axes that carry a unit name it in their label instead."""
    for name in ("left", "bottom", "right", "top"):
        plot.getAxis(name).enableAutoSIPrefix(False)


ENDPOINT_PHASES = frozenset({"start", "done"})  # what a solver that runs as one call reports around it


def reports_intermediate_state(columns) -> bool:
    """Whether a run reported anything between its start and its end (the scipy-backed solvers run as
    one call and report only "start" and "done", in each of their solves)."""
    return any(phase not in ENDPOINT_PHASES for phase in columns.phases)


def time_unit(largest_seconds: float) -> tuple[float, str]:
    """(factor, unit) that shows seconds up to ``largest_seconds`` as plain numbers: s, ms or µs."""
    if largest_seconds >= 1.0:
        return 1.0, "s"
    if largest_seconds >= 1e-3:
        return 1e3, "ms"
    return 1e6, "µs"


def time_decimals(factor: float, seconds=()) -> int:
    """Decimals of the times of one column, shown in the unit ``time_unit`` chose for it (``factor``
    per second): 1.234 s, 12.34 ms, 123.4 µs; more (up to 4) where the smallest of ``seconds`` would
    otherwise read 0 (3 µs in a column of milliseconds: 0.0030)."""
    decimals = {1.0: 3, 1e3: 2, 1e6: 1}.get(factor, 3)
    shown = np.asarray(seconds, dtype=np.float64) * factor
    shown = shown[np.isfinite(shown) & (shown > 0)]
    if shown.size:
        decimals = max(decimals, min(4, int(np.ceil(-np.log10(shown.min()))) + 1))
    return decimals


def log_scale_wanted(values, spread: float = 100.0) -> bool:
    """A log axis reads better when the positive values spread widely: max / median > ``spread``
    (power-law degrees, counts that fall from 10^5 to 1). Non-positive and non-finite values are ignored."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size < 2:
        return False
    return float(v.max()) > spread * float(np.median(v))


class SideLegend(pg.LegendItem):
    """A legend that takes its own cell of the chart layout (beside or above the plots) instead of
    floating over the data: every entry is visible, and none covers a curve, box or whisker."""

    def __init__(self, columns: int = 1):
        super().__init__(offset=None, labelTextSize="8pt", colCount=columns, verSpacing=-4)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Fixed, QtWidgets.QSizePolicy.Policy.Fixed)

    def updateSize(self):  # noqa: N802 - pyqtgraph's name; the layout places it, we only say how big
        width = height = 0.0
        for row in range(self.layout.rowCount()):
            row_width = row_height = 0.0
            for col in range(self.layout.columnCount()):
                item = self.layout.itemAt(row, col)
                if item:
                    hint = item.effectiveSizeHint(QtCore.Qt.SizeHint.PreferredSize)
                    row_width += hint.width() + 3
                    row_height = max(row_height, hint.height())
            width, height = max(width, row_width), height + row_height
        width, height = max(width, 1.0) + 6, max(height, 1.0) + 4
        self.setMinimumSize(width, height)
        self.setMaximumSize(width, height)
        self.setPreferredSize(width, height)
        self.updateGeometry()


def add_side_legend(layout: pg.GraphicsLayout, row: int, col: int, rowspan: int = 1, colspan: int = 1,
                    columns: int = 1) -> SideLegend:
    legend = SideLegend(columns)
    layout.addItem(legend, row=row, col=col, rowspan=rowspan, colspan=colspan)
    layout.layout.setAlignment(legend, QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
    return legend


class EmptyNote:
    """A note in the middle of a chart with nothing to draw ("no launch reported"), with its axes
    hidden: an empty graph says why it is empty instead of showing a meaningless axis."""

    def __init__(self, plot: pg.PlotItem):
        self.plot = plot
        self.label = pg.LabelItem("", size="10pt", color="#888")
        self.label.setParentItem(plot.getViewBox())
        self.label.anchor(itemPos=(0.5, 0.5), parentPos=(0.5, 0.5))
        self.label.hide()
        self.text: str | None = None

    def set(self, text: str | None) -> None:
        if text == self.text:
            return
        self.text = text
        # the label is HTML: a line break must be <br> (a "\n" ran the lines into one, past the chart)
        self.label.setText(html.escape(text or "").replace("\n", "<br>"), color="#888")
        self.label.setVisible(bool(text))
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setStyle(showValues=not text)
        self.plot.showGrid(x=not text, y=not text, alpha=0.15)


def cursor_line() -> pg.InfiniteLine:
    line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#d64541", width=1.5, style=QtCore.Qt.PenStyle.DashLine))
    line.setZValue(50)
    line.hide()
    return line


SYMBOLS_BELOW = 200  # sparse series get a marker per point, so lone values stay visible


def set_points(curve: pg.PlotDataItem, x: np.ndarray, y: np.ndarray, breaks: np.ndarray | None = None) -> None:
    """Draw only the reported points: iterations that did not report this quantity (NaN) are skipped,
    not drawn as gaps, and a sparse series gets markers. ``breaks``: indices (into x, y) where a new
    segment starts; points on both sides of one are not joined (several solves in one run)."""
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
    if breaks is None or not len(breaks) or xs.size < 2:
        curve.setData(xs, ys, connect="all")  # said every time: a curve keeps the last connect it was given
        return
    segment = np.searchsorted(np.asarray(breaks), np.flatnonzero(ok), side="right")
    connect = np.append(segment[:-1] == segment[1:], False)
    curve.setData(xs, ys, connect=connect)


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


def no_data_words(run, waiting: str, missing: str) -> str:
    """What a view says when ``run`` gave it nothing to draw: ``waiting`` while it runs, the reason
    when it failed or was stopped, else ``missing`` (it ended without reporting this)."""
    if run.is_active:
        return waiting
    if run.status == "failed":
        return f"the run failed before reporting anything here:\n{run.error}" if run.error else "the run failed."
    if run.status == "cancelled":
        return "the run was stopped before reporting anything here."
    return missing

