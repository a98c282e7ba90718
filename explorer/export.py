"""Exports: charts (PNG/SVG through pyqtgraph's exporters, data as CSV), the 3D view (PNG), tables
(CSV/Markdown), solutions, tracks and datasets (through solvers.save, in the format the extension
names, refused in one line when none does) and a Markdown run report. Every write is atomic:
the bytes are produced in memory and land through solvers.io_util.atomic_write_*.

Every file dialog's filters come from here, built from the formats registry (solvers.formats), so a
dialog offers exactly the names the readers and writers take, ``.gz`` included where they take it."""
from __future__ import annotations

import csv
import io
import math
import tempfile
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters as pgx
from PySide6 import QtCore, QtGui

import solvers
from solvers.io_util import atomic_write_bytes, atomic_write_text


def qimage_png_bytes(image: QtGui.QImage) -> bytes:
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError("could not encode the image as PNG")
    return bytes(buffer.data())


def chart_png(item, path, width: int | None = None) -> Path:
    """A pyqtgraph item (PlotItem, GraphicsLayout) as a PNG file."""
    exporter = pgx.ImageExporter(item)
    if width:
        exporter.parameters()["width"] = int(width)
    image = exporter.export(toBytes=True)
    atomic_write_bytes(path, qimage_png_bytes(image))
    return Path(path)


def chart_svg(item, path) -> Path:
    """A chart as SVG, drawn by Qt's own SVG paint engine.

    pyqtgraph's SVGExporter (0.14) cannot be used with Qt 6.11+: its coordinate rewriting chokes on the
    closing "Z" that Qt now writes into every path (it fails even on an empty plot), and leaves the
    items in export mode when it does."""
    from PySide6 import QtSvg
    scene = item.scene()
    source = item.sceneBoundingRect()
    target = QtCore.QRectF(0, 0, source.width(), source.height())
    path = Path(path)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        drawn = Path(tmp) / "chart.svg"
        generator = QtSvg.QSvgGenerator()
        generator.setFileName(str(drawn))
        generator.setSize(source.size().toSize())
        generator.setViewBox(target)
        generator.setTitle("matchscope chart")
        painter = QtGui.QPainter(generator)
        try:
            views = scene.views()
            if views:
                painter.fillRect(target, views[0].backgroundBrush())
            scene.render(painter, target, source)
        finally:
            painter.end()
        del painter, generator  # the file is complete once the paint engine is gone
        atomic_write_bytes(path, drawn.read_bytes())
    return path


def array_png(rgba: np.ndarray, path) -> Path:
    """An (h, w, 3|4) uint8 image (e.g. vispy's canvas.render()) as PNG."""
    rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
    h, w, c = rgba.shape
    fmt = QtGui.QImage.Format.Format_RGBA8888 if c == 4 else QtGui.QImage.Format.Format_RGB888
    image = QtGui.QImage(rgba.data, w, h, w * c, fmt).copy()  # copy: the array may go away
    atomic_write_bytes(path, qimage_png_bytes(image))
    return Path(path)


def pixmap_png(pixmap: QtGui.QPixmap, path) -> Path:
    atomic_write_bytes(path, qimage_png_bytes(pixmap.toImage()))
    return Path(path)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return "" if math.isnan(v) else repr(v)
    if isinstance(value, (np.integer, np.bool_)):
        return str(value.item())
    return str(value)


def columns_csv(columns: Mapping[str, Sequence], path) -> Path:
    """Columns of equal length (shorter ones padded with empty cells) as CSV."""
    names = list(columns)
    arrays = [np.asarray(columns[n]) for n in names]
    length = max((a.shape[0] for a in arrays), default=0)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(names)
    for i in range(length):
        writer.writerow([_cell(a[i]) if i < a.shape[0] else "" for a in arrays])
    atomic_write_text(path, out.getvalue())
    return Path(path)


def tables_csv(tables: Mapping[str, Mapping[str, Sequence]], path) -> list[Path]:
    """A view's tables as one CSV, PATH itself (written atomically, nothing else beside it): one
    table's columns as they are named; several tables side by side, each column named
    "TABLE: COLUMN" (a shorter table's column ends in empty cells)."""
    if len(tables) == 1:
        return [columns_csv(next(iter(tables.values())), path)]
    return [columns_csv({f"{name}: {column}": values for name, cols in tables.items()
                         for column, values in cols.items()}, path)]


def rows_csv(headers: Sequence[str], rows: Iterable[Sequence], path) -> Path:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(headers)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    atomic_write_text(path, out.getvalue())
    return Path(path)


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence]) -> str:
    def fmt(v) -> str:
        if isinstance(v, (float, np.floating)):
            return "" if math.isnan(float(v)) else f"{float(v):.6g}"
        if v is None:
            return ""
        return str(v).replace("|", "\\|")
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def rows_markdown(headers: Sequence[str], rows: Iterable[Sequence], path, title: str = "") -> Path:
    text = (f"# {title}\n\n" if title else "") + markdown_table(headers, rows)
    atomic_write_text(path, text)
    return Path(path)


# ---- file-dialog filters ------------------------------------------------------------------------

RUN_RECORD_FILTER = "Run records (*.npz)"  # RunRecord.save / load: a plain .npz
ALL_FILES = "All files (*)"


def open_filters() -> list[str]:
    """File ▸ Open: every format solvers.load reads (its own "All supported files" entry first, with
    the compressed names it takes, e.g. *.mtx.gz), then run records, then all files."""
    from solvers.formats import file_filters
    filters = [f for f in file_filters() if f != ALL_FILES]
    return filters + [RUN_RECORD_FILTER, ALL_FILES]


def run_record_filters() -> list[str]:
    """File ▸ Open Run Record."""
    return [RUN_RECORD_FILTER, ALL_FILES]


VIEW_FILTERS = {"png": "PNG image (*.png)", "svg": "SVG vector image (*.svg)", "csv": "CSV data (*.csv)",
                "md": "Markdown table (*.md)"}
REPORT_FILTER = "Markdown report (*.md)"


def view_filters(formats) -> list[str]:
    """Export ▸ Current View / 3D View / Comparison, cluster results: the explorer's own exports, by extension."""
    return [VIEW_FILTERS[f] for f in formats]


def _formats_saving(table, class_name: str) -> list:
    return [f for f in table if f.write is not None and class_name in f.saves]


def _check_extension(path, formats, what: str) -> None:
    """Refuse, in one line, a file name whose extension none of ``formats`` writes (no extension: CSV)."""
    from solvers.errors import InputError
    name = Path(path).name.lower()
    base = name[:-3] if name.endswith(".gz") else name
    if not Path(base).suffix and any(".csv" in f.extensions for f in formats):
        return  # a name without an extension is written as CSV, as `matchscope solve --out` does
    for f in formats:
        if any(base.endswith(e) for e in f.extensions) and (base == name or f.gzip):
            return
    choices = ", ".join(dict.fromkeys(p for f in formats for p in f.patterns))
    raise InputError(f"{what} cannot be written as {Path(path).name}; choose one of {choices}", str(path))


def solution_filters(tracks: bool = False) -> list[str]:
    """Save-dialog filters for a solve's result or a tracking run's tracks (from the formats table)."""
    from solvers.formats import RESULT_FORMATS
    return [f.file_filter() for f in _formats_saving(RESULT_FORMATS, "TrackResult" if tracks else "Result")]


def solution(result, path, problem=None) -> Path:
    """A solve's matching / assignment / flow through solvers.save (Result CSV, JSON or Matrix Market
    by extension), as `matchscope solve --out` writes it. Flow exports need the problem (a Result
    holds flows per edge, not the edges)."""
    from solvers.formats import RESULT_FORMATS
    _check_extension(path, _formats_saving(RESULT_FORMATS, "Result"), "a solution")
    if problem is None:
        solvers.save(result, str(path))
    else:
        solvers.save(result, str(path), problem=problem)
    return Path(path)


def tracks(track_result, path) -> Path:
    """A tracking run's tracks as Track CSV or Track JSON (by extension), through solvers.save."""
    from solvers.formats import RESULT_FORMATS
    _check_extension(path, _formats_saving(RESULT_FORMATS, "TrackResult"), "tracks")
    solvers.save(track_result, str(path))
    return Path(path)


BATCH_FILTERS = (("CSV, one line per row of every problem", "result-csv"), ("JSON, per problem", "result-json"))


def batch_filters() -> list[str]:
    """Save-dialog filters for a batch run's assignments (as `matchscope solve BATCH --out` writes them).
    The batch writer picks CSV or JSON by the extension as the result formats do, ``.gz`` compressed
    alike, so the names come from those formats' patterns (*.csv *.csv.gz)."""
    from solvers.formats import RESULT_FORMATS
    patterns = {f.key: f.patterns for f in RESULT_FORMATS}
    return [f"{name} ({' '.join(patterns[key])})" for name, key in BATCH_FILTERS]


def batch_solution(batch_result, path, problem=None) -> Path:
    """A batch run's assignments as CSV (item,row,col,cost) or JSON, by extension, atomically."""
    from solvers.errors import InputError
    from solvers.formats.batch import save_batch_result
    name = Path(path).name.lower().removesuffix(".gz")
    if not name.endswith((".csv", ".json")):
        raise InputError(f"a batch's assignments cannot be written as {Path(path).name}; choose *.csv or *.json",
                         str(path))
    costs = None if problem is None else (problem.item_costs(b) for b in range(len(problem)))
    save_batch_result(batch_result, str(path), costs)
    return Path(path)


def dataset_filters(problem) -> list[str]:
    """Save-dialog filters of the formats that can hold ``problem``, its usual format first."""
    from solvers.formats import FORMATS
    return [f.file_filter() for f in _formats_saving(FORMATS, type(problem).__name__)]


def dataset_default_extension(problem) -> str:
    from solvers.formats import FORMATS
    usable = _formats_saving(FORMATS, type(problem).__name__)
    return usable[0].extensions[0] if usable else ""


def dataset(problem, path) -> Path:
    """The problem written by solvers.save in the format its extension names (atomically)."""
    from solvers.errors import InputError
    from solvers.formats import FORMATS
    usable = _formats_saving(FORMATS, type(problem).__name__)
    name = Path(path).name.lower().removesuffix(".gz")
    if not any(name.endswith(e) or any(name.startswith(p) for p in f.prefixes) for f in usable for e in f.extensions):
        choices = ", ".join(dict.fromkeys(p for f in usable for p in f.patterns))
        article = "an" if problem.kind[:1] in "aeiou" else "a"
        raise InputError(f"{article} {problem.kind} problem cannot be written as {Path(path).name}; choose one of {choices}",
                         str(path))
    solvers.save(problem, str(path))
    return Path(path)


def plot_item_of(widget) -> pg.GraphicsItem:
    """What to export for a chart widget: the whole layout of a GraphicsLayoutWidget, or the PlotItem."""
    if isinstance(widget, pg.GraphicsLayoutWidget):
        return widget.ci
    if isinstance(widget, pg.PlotWidget):
        return widget.getPlotItem()
    return widget
