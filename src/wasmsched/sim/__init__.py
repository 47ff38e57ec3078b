"""The simulation: wasmsched on an in-memory cluster and a simulated clock
(``wasmsched simulate``, and the runs of ``replay`` and the what-if commands).

``simulation`` is the discrete-event loop with its in-memory cluster, ``workloads`` the
controllers that create the pods of Deployments, StatefulSets and the other workloads.
"""
