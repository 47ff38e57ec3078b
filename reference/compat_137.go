//go:build kube137

package main

// kube-scheduler v1.37.2's names for what the version-independent files use: the
// framework interfaces moved to k8s.io/kube-scheduler/framework, where CycleState and
// NodeInfo are interfaces; the queue pops entities (a pod or a pod group). Built with
// `go build -modfile=go.1.37.mod -tags kube137` (scripts/build-reference).

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// kubeVersion is the kube-scheduler this build runs.
const kubeVersion = "v1.37.2"

type (
	fwkStatus               = fwk.Status
	fwkNominatingInfo       = fwk.NominatingInfo
	fwkCycleState           = fwk.CycleState
	fwkNodeInfo             = fwk.NodeInfo
	fwkStateKey             = fwk.StateKey
	fwkStateData            = fwk.StateData
	fwkScoreExtensions      = fwk.ScoreExtensions
	fwkClusterEvent         = fwk.ClusterEvent
	fwkClusterEventWithHint = fwk.ClusterEventWithHint
	fwkPlugin               = fwk.Plugin
	fwkHandle               = fwk.Handle
)

const (
	fwkNode = fwk.Node
	fwkAdd  = fwk.Add
)

// recorderFactory gives every profile the recorder (pkg/scheduler/profile: RecorderFactory).
func recorderFactory(r *recorder) profile.RecorderFactory {
	return func(string) events.EventRecorderLogger { return r }
}

func newInformerFactory(client clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(client, 0, nil)
}

// wrapNextPod runs before ahead of each pop of the scheduling queue and after behind it
// (pkg/scheduler/scheduler.go: Scheduler.NextEntity).
func wrapNextPod(sched *scheduler.Scheduler, before, after func()) {
	next := sched.NextEntity
	sched.NextEntity = func(l klog.Logger) (framework.QueuedEntityInfo, error) {
		before()
		e, err := next(l)
		after()
		return e, err
	}
}

// bindingClearsNomination: the API server's binding storage clears
// status.nominatedNodeName when ClearingNominatedNodeNameAfterBinding is on
// (pkg/registry/core/pod/storage/storage.go: setPodNodeAndMetadata).
func bindingClearsNomination() bool {
	return utilfeature.DefaultFeatureGate.Enabled(features.ClearingNominatedNodeNameAfterBinding)
}

// SignPod makes the tie-break batchable (k8s.io/kube-scheduler/framework: SignPlugin): a
// Score plugin without it turns opportunistic batching off for the whole profile
// (framework/runtime/framework.go: computeBatchablePlugins), and the reference would then
// never batch. It adds nothing to the signature, so pods batch exactly when the
// in-tree plugins let them; a batched pod takes the cached next-best node
// (framework/runtime/batch.go: GetNodeHint) and the preference only counts where the
// pod is scored (a full cycle, or the rescored last-chosen node).
func (t *tieBreak) SignPod(context.Context, *corev1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return nil, nil
}
