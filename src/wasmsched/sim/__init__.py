"""The simulation: wasmsched on an in-memory cluster and a simulated clock
(``wasmsched simulate``, and the runs of ``replay`` and the what-if commands).

``simulation`` is the discrete-event loop (``Simulation``) and ``clock`` its simulated
clock; ``store`` the in-memory API server that the scheduler and the drivers of a run
subscribe to; ``workloads`` the controllers that create the pods of Deployments,
StatefulSets and the other workloads; ``result`` what a run reports, and ``document``
its JSON document (``simulate --output json``, the explain JSON lines, the HTML
report's data).
"""
