"""Look and feel: Fusion style, light/dark palettes that follow the system, plot colours, icons.

Plots take their background and text colours from the Qt palette, so a chart is drawn in the same
scheme as the window around it and re-coloured when the system switches between light and dark.
"""
from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

ASSETS = Path(__file__).resolve().parent.parent / "assets"

# Okabe-Ito: distinguishable for colour-blind readers, one per run / series
SERIES_COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#999999"]
PHASE_COLORS = ["#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#999999"]
CORRECT_COLOR = "#2ca25f"
WRONG_COLOR = "#e34a33"


def series_color(i: int) -> str:
    return SERIES_COLORS[i % len(SERIES_COLORS)]


def icon(name: str) -> QtGui.QIcon:
    """An icon drawn in assets/NAME.svg (empty icon if the file is missing, never an error)."""
    path = ASSETS / f"{name}.svg"
    return QtGui.QIcon(str(path)) if path.exists() else QtGui.QIcon()


def dark_palette() -> QtGui.QPalette:
    p = QtGui.QPalette()
    c = QtGui.QColor
    roles = QtGui.QPalette.ColorRole
    p.setColor(roles.Window, c(37, 39, 43))
    p.setColor(roles.WindowText, c(220, 222, 226))
    p.setColor(roles.Base, c(27, 29, 32))
    p.setColor(roles.AlternateBase, c(45, 47, 52))
    p.setColor(roles.ToolTipBase, c(45, 47, 52))
    p.setColor(roles.ToolTipText, c(220, 222, 226))
    p.setColor(roles.Text, c(220, 222, 226))
    p.setColor(roles.Button, c(48, 50, 55))
    p.setColor(roles.ButtonText, c(220, 222, 226))
    p.setColor(roles.BrightText, c(255, 90, 90))
    p.setColor(roles.Highlight, c(61, 125, 216))
    p.setColor(roles.HighlightedText, c(255, 255, 255))
    p.setColor(roles.Link, c(100, 160, 240))
    p.setColor(roles.PlaceholderText, c(130, 133, 140))
    disabled = QtGui.QPalette.ColorGroup.Disabled
    for role in (roles.Text, roles.ButtonText, roles.WindowText):
        p.setColor(disabled, role, c(120, 123, 130))
    return p


def system_prefers_dark(app: QtWidgets.QApplication) -> bool:
    hints = app.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is None:
        return is_dark(app.palette())
    return scheme() == QtCore.Qt.ColorScheme.Dark


def is_dark(palette: QtGui.QPalette) -> bool:
    return palette.color(QtGui.QPalette.ColorRole.Window).lightness() < 128


def apply_app_theme(app: QtWidgets.QApplication, scheme: str = "system") -> None:
    """Fusion with the light or dark palette ("system" follows the desktop's colour scheme)."""
    app.setStyle("Fusion")
    dark = system_prefers_dark(app) if scheme == "system" else scheme == "dark"
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    apply_plot_defaults(app.palette())


def plot_colors(palette: QtGui.QPalette | None = None) -> tuple[QtGui.QColor, QtGui.QColor]:
    """(background, foreground) for charts, from the palette."""
    if palette is None:
        app = QtWidgets.QApplication.instance()
        palette = app.palette() if app is not None else QtGui.QPalette()
    return (palette.color(QtGui.QPalette.ColorRole.Base), palette.color(QtGui.QPalette.ColorRole.Text))


def apply_plot_defaults(palette: QtGui.QPalette) -> None:
    bg, fg = plot_colors(palette)
    pg.setConfigOptions(background=bg, foreground=fg, antialias=True, imageAxisOrder="row-major")


def style_plot_widget(widget: pg.GraphicsView, palette: QtGui.QPalette | None = None) -> None:
    """Re-colour an existing chart (background, axes, titles) after a palette change."""
    bg, fg = plot_colors(palette)
    widget.setBackground(bg)
    for item in widget.scene().items():
        if isinstance(item, pg.AxisItem):
            item.setPen(fg)
            item.setTextPen(fg)
        elif isinstance(item, pg.LabelItem):
            item.setText(item.text, color=fg)


def faint(color, alpha: int) -> QtGui.QColor:
    c = QtGui.QColor(color)
    c.setAlpha(alpha)
    return c
