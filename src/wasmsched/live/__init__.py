"""The live scheduler: wasmsched against a Kubernetes API server (``wasmsched run``)."""

from wasmsched.live.client import ApiClient, ApiError, KubeConfigError, load_kube_config
from wasmsched.live.leader import LeaderElector, LeaseConfig
from wasmsched.live.runner import LiveRunner, RunOptions
from wasmsched.live.snapshot import dump, snapshot

__all__ = [
    "ApiClient",
    "ApiError",
    "KubeConfigError",
    "LeaderElector",
    "LeaseConfig",
    "LiveRunner",
    "RunOptions",
    "dump",
    "load_kube_config",
    "snapshot",
]
