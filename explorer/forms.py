"""Editors for declared values (algorithm Options, generator Params): combo for choices, check box for
bools, spin boxes for numbers, a line edit for anything else (an empty line means None).

An algorithm Option's editor takes its declared range (``option_widget``); what is typed is checked
by the Option itself (``Option.parse``), so the form refuses exactly what the solver would."""
from __future__ import annotations

import math
import re

from PySide6 import QtGui, QtWidgets

INT_LIMIT = 2_000_000_000
INT32 = 2**31 - 1  # QSpinBox holds a C int
FLOAT_LIMIT = 1e15


class CompactDoubleSpinBox(QtWidgets.QDoubleSpinBox):
    """Shows 0.5 rather than 0.500000, yet keeps six decimals of precision."""

    def textFromValue(self, value: float) -> str:
        return f"{value:.6g}"


_PARTIAL_NUMBER = re.compile(r"^[+-]?(\d*\.?\d*)([eE][+-]?\d*)?$")


def short_float(value: float) -> str:
    """0.5, 5, 1e-20, 1e+300, inf: the shortest text that reads back as the same number."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(float(value))  # the shortest text that reads back as exactly this double
    return text[:-2] if text.endswith(".0") else text


class FloatSpinBox(QtWidgets.QDoubleSpinBox):
    """A spin box for any double a user may type (1e-20, 1e300, inf), shown short; the arrows step
    adaptively and stay inside the declared range. Text outside the range is left as typed
    ("intermediate") so the form can say why it is refused."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setDecimals(323)  # every double is representable: nothing is rounded to 6 places
        self.setStepType(QtWidgets.QAbstractSpinBox.StepType.AdaptiveDecimalStepType)

    def textFromValue(self, value: float) -> str:  # noqa: N802 (Qt's name)
        return short_float(value)

    def valueFromText(self, text: str) -> float:  # noqa: N802
        try:
            return float(text.strip())
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int):
        t = text.strip()
        state = QtGui.QValidator.State
        try:
            value = float(t)
        except ValueError:
            partial = _PARTIAL_NUMBER.match(t) or "infinity".startswith(t.lstrip("+-").lower())
            return (state.Intermediate if partial else state.Invalid), text, pos
        if math.isnan(value):
            return state.Invalid, text, pos
        ok = self.minimum() <= value <= self.maximum()
        return (state.Acceptable if ok else state.Intermediate), text, pos

    def fixup(self, text: str) -> str:
        return text


def option_widget(option) -> QtWidgets.QWidget:
    """The editor for a solvers.registry.Option, limited to its declared range."""
    kind = option.kind
    if kind == "choice":
        return value_widget(option.default, choices=option.choices)
    if kind == "bool":
        return value_widget(bool(option.default), bool)
    if kind == "int":
        w = QtWidgets.QSpinBox()
        low = -INT32 if option.low is None else max(int(math.ceil(option.low)), -INT32)
        high = INT32 if option.high is None or math.isinf(option.high) else min(int(option.high), INT32)
        w.setRange(low, high)
        w.setValue(int(option.default))
        w.setGroupSeparatorShown(True)
        w.setProperty("value_kind", "int")
        return w
    if kind == "float":
        w = FloatSpinBox()
        w.setRange(-math.inf if option.low is None else float(option.low),
                   math.inf if option.high is None else float(option.high))
        w.setValue(float(option.default))
        w.setProperty("value_kind", "float")
        return w
    return value_widget(option.default, None)


def widget_text(w: QtWidgets.QWidget) -> str | None:
    """What the editor shows, as typed (None for combo and check boxes, which cannot hold a bad value)."""
    if isinstance(w, QtWidgets.QSpinBox):  # without the thousands separators it shows
        return w.cleanText().replace(w.locale().groupSeparator(), "")
    if isinstance(w, QtWidgets.QAbstractSpinBox):
        return w.lineEdit().text()
    if isinstance(w, QtWidgets.QLineEdit):
        return w.text()
    return None


def editor_changed(w: QtWidgets.QWidget):
    """The signal a form listens to for every edit, typed characters included."""
    if isinstance(w, QtWidgets.QComboBox):
        return w.currentIndexChanged
    if isinstance(w, QtWidgets.QCheckBox):
        return w.toggled
    if isinstance(w, QtWidgets.QAbstractSpinBox):
        return w.lineEdit().textChanged
    return w.textChanged


def value_widget(default, value_type: type | None = None, *, choices=None, minimum=None, maximum=None,
                 optional: bool = False) -> QtWidgets.QWidget:
    value_type = value_type or (type(default) if default is not None else str)
    if choices:
        w = QtWidgets.QComboBox()
        for c in choices:
            w.addItem(str(c), c)
        if default in choices:
            w.setCurrentIndex(list(choices).index(default))
        w.setProperty("value_kind", "choice")
        return w
    if value_type is bool and not optional:
        w = QtWidgets.QCheckBox()
        w.setChecked(bool(default))
        w.setProperty("value_kind", "bool")
        return w
    if value_type is int and not optional and default is not None:
        w = QtWidgets.QSpinBox()
        w.setRange(int(minimum) if minimum is not None else -INT_LIMIT,
                   int(min(maximum, INT_LIMIT)) if maximum is not None else INT_LIMIT)
        w.setValue(int(default))
        w.setGroupSeparatorShown(True)
        w.setProperty("value_kind", "int")
        return w
    if value_type is float and not optional and default is not None:
        w = CompactDoubleSpinBox()
        w.setDecimals(6)
        w.setRange(float(minimum) if minimum is not None else -FLOAT_LIMIT,
                   float(maximum) if maximum is not None else FLOAT_LIMIT)
        w.setValue(float(default))
        w.setStepType(QtWidgets.QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
        w.setProperty("value_kind", "float")
        return w
    w = QtWidgets.QLineEdit("" if default is None else str(default))
    w.setPlaceholderText("default" if default is None else "")
    w.setProperty("value_kind", "text")
    w.setProperty("value_type", value_type.__name__ if value_type in (int, float, bool, str) else "str")
    return w


def _coerce_text(text: str, type_name: str):
    text = text.strip()
    if not text or text.lower() == "none":
        return None
    if type_name == "int":
        try:
            return int(text)
        except ValueError:
            return text  # the receiver's own check names the bad value
    if type_name in ("float", "str"):
        for conv in (int, float):
            try:
                value = conv(text)
                return value if type_name == "str" or conv is float else float(value)
            except ValueError:
                continue
        return text
    return text


def widget_value(w: QtWidgets.QWidget):
    kind = w.property("value_kind")
    if kind == "choice":
        return w.currentData()
    if kind == "bool":
        return w.isChecked()
    if kind == "int":
        return int(w.value())
    if kind == "float":
        return float(w.value())
    return _coerce_text(w.text(), w.property("value_type") or "str")


def set_widget_value(w: QtWidgets.QWidget, value) -> None:
    kind = w.property("value_kind")
    if kind == "choice":
        for i in range(w.count()):
            if w.itemData(i) == value or w.itemText(i) == str(value):
                w.setCurrentIndex(i)
                return
        raise ValueError(f"{value} is not one of {', '.join(w.itemText(i) for i in range(w.count()))}")
    if kind == "bool":
        w.setChecked(bool(value))
    elif kind == "int":
        if not w.minimum() <= int(value) <= w.maximum():
            raise ValueError(f"{value} is outside {w.minimum()} to {w.maximum()}")
        w.setValue(int(value))
    elif kind == "float":
        if not isinstance(w, FloatSpinBox) and not math.isfinite(float(value)):
            raise ValueError(f"{value} is not finite")
        if not w.minimum() <= float(value) <= w.maximum():
            raise ValueError(f"{value} is outside {short_float(w.minimum())} to {short_float(w.maximum())}")
        w.setValue(float(value))
    else:
        w.setText("" if value is None else str(value))
