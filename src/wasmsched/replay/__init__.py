"""Trace replay: a workload over simulated time (``wasmsched replay``).

``trace`` reads our JSON-lines traces and annotated manifests, ``alibaba`` imports
Alibaba's GPU cluster trace, ``engine`` replays events through the scheduler and
``metrics`` keeps allocation and fragmentation over time.
"""
