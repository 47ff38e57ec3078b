"""An HTTP double of kube-apiserver for the live scheduler's tests."""

from .faults import Faults
from .server import ApiServerDouble, StatusError

__all__ = ["ApiServerDouble", "Faults", "StatusError"]
