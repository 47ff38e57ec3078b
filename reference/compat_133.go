//go:build !kube137

package main

// kube-scheduler v1.33.4's names for what the version-independent files use. The
// framework types live in k8s.io/kubernetes/pkg/scheduler/framework; CycleState and
// NodeInfo are structs passed by pointer. The v1.37.2 build (go.1.37.mod, tag
// kube137) has compat_137.go instead.

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// kubeVersion is the kube-scheduler this build runs.
const kubeVersion = "v1.33.4"

type (
	fwkStatus               = framework.Status
	fwkNominatingInfo       = framework.NominatingInfo
	fwkCycleState           = *framework.CycleState
	fwkNodeInfo             = *framework.NodeInfo
	fwkStateKey             = framework.StateKey
	fwkStateData            = framework.StateData
	fwkScoreExtensions      = framework.ScoreExtensions
	fwkClusterEvent         = framework.ClusterEvent
	fwkClusterEventWithHint = framework.ClusterEventWithHint
	fwkPlugin               = framework.Plugin
	fwkHandle               = framework.Handle
)

const (
	fwkNode = framework.Node
	fwkAdd  = framework.Add
)

// recorderFactory gives every profile the recorder (pkg/scheduler/profile: RecorderFactory).
func recorderFactory(r *recorder) profile.RecorderFactory {
	return func(string) events.EventRecorder { return r }
}

func newInformerFactory(client clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(client, 0)
}

// wrapNextPod runs before ahead of each pop of the scheduling queue and after behind it
// (pkg/scheduler/scheduler.go: Scheduler.NextPod).
func wrapNextPod(sched *scheduler.Scheduler, before, after func()) {
	next := sched.NextPod
	sched.NextPod = func(l klog.Logger) (*framework.QueuedPodInfo, error) {
		before()
		pi, err := next(l)
		after()
		return pi, err
	}
}

// bindingClearsNomination: the API server's binding storage keeps
// status.nominatedNodeName in v1.33 (ClearingNominatedNodeNameAfterBinding is 1.34+).
func bindingClearsNomination() bool { return false }

// v1.33.4 has no extended resources backed by DRA (DRAExtendedResource, 1.34+).
func reactToClaimCreates(*fake.Clientset, clienttesting.ObjectTracker) {}

func extendedClaimReport(clienttesting.ObjectTracker, *corev1.Pod) any { return nil }
