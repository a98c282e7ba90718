"""Editors for declared values (algorithm Options, generator Params): combo for choices, check box for
bools, spin boxes for numbers, a line edit for anything else (an empty line means None)."""
from __future__ import annotations

import math

from PySide6 import QtWidgets

INT_LIMIT = 2_000_000_000
FLOAT_LIMIT = 1e15


class CompactDoubleSpinBox(QtWidgets.QDoubleSpinBox):
    """Shows 0.5 rather than 0.500000, yet keeps six decimals of precision."""

    def textFromValue(self, value: float) -> str:
        return f"{value:.6g}"


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
        raise ValueError(f"{value!r} is not one of {[w.itemText(i) for i in range(w.count())]}")
    if kind == "bool":
        w.setChecked(bool(value))
    elif kind == "int":
        w.setValue(int(value))
    elif kind == "float":
        if not math.isfinite(float(value)):
            raise ValueError(f"{value!r} is not finite")
        w.setValue(float(value))
    else:
        w.setText("" if value is None else str(value))
