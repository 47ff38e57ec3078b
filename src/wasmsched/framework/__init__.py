"""The scheduling framework (pkg/scheduler/framework): plugin protocols, Status, CycleState,
NodeInfo, the framework-level types and the runner of a profile's plugins."""
