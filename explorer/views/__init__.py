"""The explorer's views: central tabs (labels, activity, workload, 3D, batch, compare, cluster) and docks."""
from .activity import ActivityView
from .batch import BatchView
from .cluster import ClusterView
from .compare import CompareView
from .dataset import DatasetPanel
from .labels import LabelsView
from .log import LogPanel
from .solver_panel import SolverPanel
from .timeline import Timeline
from .tracks3d import Tracks3DView
from .workload import WorkloadView

__all__ = ["ActivityView", "BatchView", "ClusterView", "CompareView", "DatasetPanel", "LabelsView", "LogPanel",
           "SolverPanel", "Timeline", "Tracks3DView", "WorkloadView"]
