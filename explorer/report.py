"""Run report: a Markdown summary of the dataset and the current run, with every populated chart as a
PNG in a folder beside it (REPORT_files/), and the comparison table when there is one."""
from __future__ import annotations

import math
from pathlib import Path

from solvers.io_util import atomic_write_text

from . import export
from .wording import certificate_short, duration, settings_words, value_words


def _fmt(value) -> str:
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.6g}"
    return "—" if value is None else value_words(value)


def write_report(window, path) -> Path:
    session = window.session
    run = session.current_run
    if run is None:
        raise ValueError("no run to report on")
    path = Path(path)
    assets = path.with_name(f"{path.stem}_files")
    assets.mkdir(parents=True, exist_ok=True)
    lines = [f"# matchscope run report: {run.algorithm}", ""]
    if session.problem is not None:
        source = session.path or (f"generated: {session.generator[0]} ({settings_words(session.generator[1])})"
                                  if getattr(session, "generator", None) else "unnamed dataset")
        lines += ["## Dataset", "", f"Source: `{source}`", ""]
        lines += [export.markdown_table(["property", "value"], [[k, _fmt(v)] for k, v in
                                                                session.problem.describe().items()])]
    lines += ["## Run", ""]
    rows = [["algorithm", run.algorithm], ["backend requested", run.backend],
            ["options", settings_words(run.options)], ["status", run.status],
            ["iterations", "—" if run.iterations is None else run.iterations],  # the solver's own count
            ["telemetry reports", run.n_reports], ["snapshots recorded", len(run.recorder.snapshots)]]
    if run.certificate_status is not None:
        rows.append(["outcome", certificate_short(run.certificate_status,
                                                  getattr(getattr(run.result, "certificate", None), "gap", 0.0))])
    if run.solver_seconds is not None:
        rows.append(["solver time", duration(run.solver_seconds)])
    if not run.replayed and run.status == "finished":
        rows.append(["wall time (solve, checks and certificate; without the warm-up)", duration(run.wall_seconds)])
        if run.warmup_seconds > 0.001:
            rows.append(["warm-up (compiling before the run, not counted)", duration(run.warmup_seconds)])
    if run.result is not None:
        r = run.result
        rows += [["backend", r.backend], ["value", _fmt(r.value)], ["certificate", r.certificate.summary()]]
        rows += [[f"stat: {k}", _fmt(v)] for k, v in r.summary().get("stats", {}).items()]
    elif run.track is not None:
        rows += [["accuracy", _fmt(getattr(run.track, "accuracy", math.nan))],
                 ["frame pairs", len(getattr(run.track, "links", []) or [])],
                 ["certificate", run.certificate_text]]
    elif run.recorded_summary:
        rows += [[k, _fmt(v)] for k, v in run.recorded_summary.items()
                 if not isinstance(v, dict) and k not in ("iterations",)]
    if run.error:
        rows.append(["message", run.error])
    lines += [export.markdown_table(["", ""], rows)]
    window.refresh_all()
    charts = []
    for view in [window.dataset_panel, *window.views]:
        if view is window.compare_view:
            continue
        try:
            if view is window.tracks_view:
                if view.has_content():
                    charts.append((view.title, export.array_png(view.render_image(), assets / "view-3d.png")))
            elif view.has_content():
                charts.append((view.title, export.chart_png(view.export_item(), assets / f"{view.title.lower()}.png")))
        except Exception as exc:  # a chart that cannot render is noted, the report still gets written
            lines.append(f"*{view.title}: not exported ({exc})*\n")
    if charts:
        lines += ["## Charts", ""]
        for title, file in charts:
            lines += [f"### {title}", "", f"![{title}]({assets.name}/{file.name})", ""]
    if session.comparison:
        headers, table = window.compare_view.table_rows()
        lines += ["## Comparison", "", export.markdown_table(headers, table)]
        if window.compare_view.has_content():
            chart = export.chart_png(window.compare_view.export_item(), assets / "compare.png")
            lines += [f"![comparison]({assets.name}/{chart.name})", ""]
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
