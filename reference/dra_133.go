//go:build !kube137

package main

// kube-scheduler v1.33.4 reads no resource.k8s.io/v1 objects: no resourceclaim
// controller to stand in for (dra_137.go is the v1.37.2 build's).

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func claimsFromTemplates([]*corev1.Pod, []runtime.Object) []runtime.Object { return nil }

func releaseClaims(*roomyTracker, *corev1.Pod) {}
