"""Dialogs: Generate… (built from solvers.generators.KINDS) and the sample gallery (sample_graphs/)."""
from __future__ import annotations

import html
import os
import re
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from .forms import value_widget, widget_value
from .wording import bytes_words, plain_text

SAMPLES = Path(__file__).resolve().parent.parent / "sample_graphs"

# starting values for required generator parameters: small enough to solve at once
_SUGGESTED = {"rows": 300, "cols": 300, "n": 300, "degree": 3, "scale": 9, "edge_factor": 8,
              "width": 30, "height": 30, "edges": 2000, "a": 4, "b": 3, "frames": 10}


def generator_kinds() -> dict:
    from solvers.generators import KINDS
    return KINDS


class GenerateDialog(QtWidgets.QDialog):
    """Pick a generator kind; its declared parameters become a form; ``request()`` is (kind, params)."""

    def __init__(self, parent=None, kinds: dict | None = None):
        super().__init__(parent)
        self.setWindowTitle("Generate a problem")
        self.kinds = kinds if kinds is not None else generator_kinds()
        self.kind_combo = QtWidgets.QComboBox()
        for name, entry in self.kinds.items():
            self.kind_combo.addItem(f"{name}  ({entry.problem})", name)
        self.summary = QtWidgets.QLabel(wordWrap=True)
        self.summary.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.form_host = QtWidgets.QWidget()
        self.form = QtWidgets.QFormLayout(self.form_host)
        self.widgets: dict[str, QtWidgets.QWidget] = {}
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Ok
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok).setText("Generate")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        top = QtWidgets.QFormLayout()
        top.addRow("Kind", self.kind_combo)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.form_host)
        layout.addStretch(1)
        layout.addWidget(buttons)
        self.kind_combo.currentIndexChanged.connect(self._rebuild)
        self._rebuild()
        self.resize(460, 420)

    @property
    def kind(self) -> str:
        return self.kind_combo.currentData()

    def set_kind(self, name: str) -> None:
        index = self.kind_combo.findData(name)
        if index < 0:
            raise KeyError(name)
        self.kind_combo.setCurrentIndex(index)

    def _rebuild(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.widgets.clear()
        entry = self.kinds.get(self.kind)
        if entry is None:
            return
        # the generators' help is written for a terminal (`degree`): shown as plain words here
        self.summary.setText(f"<b>{html.escape(plain_text(entry.summary))}</b><br>"
                             f"<i>{html.escape(plain_text(entry.family))}</i>")
        for name, param in entry.params.items():
            default = param.default
            if default is Ellipsis:
                default = _SUGGESTED.get(name, 100)
                if param.minimum is not None:
                    default = max(default, param.type(param.minimum))
            widget = value_widget(default, param.type, minimum=param.minimum, maximum=param.maximum,
                                  optional=getattr(param, "optional", False))
            widget.setToolTip(plain_text(param.help))
            label = QtWidgets.QLabel(name + ("" if param.default is not Ellipsis else " *"))
            label.setToolTip(plain_text(param.help))
            self.form.addRow(label, widget)
            self.widgets[name] = widget

    def set_param(self, name: str, value) -> None:
        from .forms import set_widget_value
        set_widget_value(self.widgets[name], value)

    def request(self) -> tuple[str, dict]:
        params = {}
        for name, widget in self.widgets.items():
            value = widget_value(widget)
            if value is not None or getattr(self.kinds[self.kind].params[name], "optional", False):
                params[name] = value
        return self.kind, params


# ---- sample gallery ----------------------------------------------------------------------------

# os.path.isdir / isfile, not Path.is_dir / is_file: those raise OSError on a name longer than the file
# system allows, where these answer False like for any other name that is not there


def sample_files(folder: Path = SAMPLES) -> list[Path]:
    if not os.path.isdir(folder):
        return []
    skip = {".md", ".py", ".pyc"}
    return sorted(p for p in Path(folder).iterdir()
                  if os.path.isfile(p) and p.suffix not in skip and not p.name.startswith("."))


def sample_descriptions(folder: Path = SAMPLES) -> dict[str, dict[str, str]]:
    """File name -> {column: cell} from the table in sample_graphs/README.md (file, kind, size, command...)."""
    readme = Path(folder) / "README.md"
    out: dict[str, dict[str, str]] = {}
    if not os.path.isfile(readme):
        return out
    header: list[str] | None = None
    for line in readme.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [re.sub(r"[`*]", "", c).strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        name = re.sub(r"[\[\]]", "", cells[0]).split("(")[0].strip()
        if name:
            out[name] = dict(zip(header[1:], cells[1:]))
    return out


GALLERY_COLUMNS = (("File", None), ("Kind", ("kind",)), ("Contents", ("size", "sizes", "contents")),
                   ("Format", ("format",)), ("Bytes", None))


class SampleGallery(QtWidgets.QDialog):
    """The bundled sample files with what sample_graphs/README.md says of them; double-click or Open."""

    def __init__(self, parent=None, folder: Path = SAMPLES):
        super().__init__(parent)
        self.setWindowTitle("Open sample")
        self.folder = folder
        self.table = QtWidgets.QTableWidget(0, len(GALLERY_COLUMNS))
        self.table.setHorizontalHeaderLabels([c for c, _ in GALLERY_COLUMNS])
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setAlternatingRowColors(True)
        descriptions = sample_descriptions(folder)
        files = sample_files(folder)
        for path in files:
            info = descriptions.get(path.name, {})
            row = self.table.rowCount()
            self.table.insertRow(row)
            for col, (title, keys) in enumerate(GALLERY_COLUMNS):
                if title == "File":
                    text = path.name
                elif title == "Bytes":
                    text = bytes_words(path.stat().st_size)
                else:
                    text = next((info[k] for k in keys if info.get(k)), "")
                item = QtWidgets.QTableWidgetItem(text)
                if info.get("command"):
                    item.setToolTip(info["command"])
                if col == 0:
                    item.setData(QtCore.Qt.ItemDataRole.UserRole, str(path))
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Open
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.table.doubleClicked.connect(lambda *_: self.accept())
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.table)
        if not files:
            layout.addWidget(QtWidgets.QLabel(f"No sample files in {folder}."))
        hint = QtWidgets.QLabel("Hover a row for the command that made it.")
        hint.setForegroundRole(QtGui.QPalette.ColorRole.PlaceholderText)
        layout.addWidget(hint)
        layout.addWidget(buttons)
        if files:
            self.table.selectRow(0)
        self.resize(860, 440)

    def selected_path(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        return self.table.item(rows[0].row(), 0).data(QtCore.Qt.ItemDataRole.UserRole)


# ---- read as… ----------------------------------------------------------------------------------

READING_HINTS = {"matching": "entries are the edges of a bipartite graph",
                 "assignment": "entries are the costs of pairs (missing pairs are forbidden)",
                 "flow": "a square matrix of capacities: source vertex 0, sink the last vertex",
                 "points": "points in frames, linked frame to frame by assignments"}


def reading_text(kind: str) -> str:
    """``flow: a square matrix of capacities…; solved by dinic, edmonds-karp, wbpr``."""
    import solvers
    names = [a.name for a in solvers.algorithms().values() if kind in a.problem_kinds]
    if kind == "points":
        names = ["tracking with " + ", ".join(a.name for a in solvers.algorithms().values() if a.tracks_points)]
    hint = READING_HINTS.get(kind, "")
    return f"{kind}" + (f": {hint}" if hint else "") + (f" — {', '.join(names)}" if names else "")


class ReadAsDialog(QtWidgets.QDialog):
    """How to read a file whose format can hold several problems (a .mtx: matching, assignment or flow)."""

    def __init__(self, file_name: str, kinds: tuple[str, ...], parent=None, current: str | None = None):
        super().__init__(parent)
        self.setWindowTitle("Read as")
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(QtWidgets.QLabel(f"How should {file_name} be read?"))
        self.group = QtWidgets.QButtonGroup(self)
        self.buttons: dict[str, QtWidgets.QRadioButton] = {}
        for i, kind in enumerate(kinds):
            button = QtWidgets.QRadioButton(reading_text(kind) + ("  (default)" if i == 0 else ""))
            self.group.addButton(button)
            self.buttons[kind] = button
            layout.addWidget(button)
        (self.buttons.get(current) or self.buttons[kinds[0]]).setChecked(True)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Open
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def choose(self, kind: str) -> None:
        self.buttons[kind].setChecked(True)

    def chosen(self) -> str:
        return next(kind for kind, button in self.buttons.items() if button.isChecked())
