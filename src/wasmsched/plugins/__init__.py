"""The in-tree plugins of kube-scheduler v1.33 (pkg/scheduler/framework/plugins), one module or
package per plugin; ``registry`` lists them under their KubeSchedulerConfiguration names."""
