//go:build kube137

package main

// kube-scheduler v1.37.2's names for what the version-independent files use: the
// framework interfaces moved to k8s.io/kube-scheduler/framework, where CycleState and
// NodeInfo are interfaces; the queue pops entities (a pod or a pod group). Built with
// `go build -modfile=go.1.37.mod -tags kube137` (scripts/build-reference).

import (
	"context"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
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

// reactToClaimCreates: the fake tracker neither generates names nor sets a
// resourceVersion, which the API server does when DynamicResources' PreBind creates a
// pod's extended-resource claim from its generateName
// (extendeddynamicresources.go: createExtendedResourceClaimInAPI; the assume cache
// parses resourceVersion). The five random characters are a counter here.
func reactToClaimCreates(client *fake.Clientset, tracker clienttesting.ObjectTracker) {
	var made atomic.Int64
	client.PrependReactor("create", "resourceclaims", func(action clienttesting.Action) (bool, runtime.Object, error) {
		claim := action.(clienttesting.CreateAction).GetObject().(*resourceapi.ResourceClaim).DeepCopy()
		if claim.Name != "" || claim.GenerateName == "" {
			return false, nil, nil
		}
		base := claim.GenerateName
		if len(base) > 58 {
			base = base[:58]
		}
		claim.Name = fmt.Sprintf("%s%05d", base, made.Add(1))
		claim.UID = types.UID("claim-" + claim.Name)
		claim.ResourceVersion = "1"
		if err := tracker.Create(claimsGVR, claim, claim.Namespace); err != nil {
			return true, nil, err
		}
		return true, claim, nil
	})
}

// extendedClaimReport: the pod's status.extendedResourceClaimStatus and the claim it
// names, as the run left them (nil for a pod without one).
func extendedClaimReport(tracker clienttesting.ObjectTracker, pod *corev1.Pod) any {
	status := pod.Status.ExtendedResourceClaimStatus
	if status == nil {
		return nil
	}
	out := map[string]any{"status": status}
	if obj, err := tracker.Get(claimsGVR, pod.Namespace, status.ResourceClaimName); err == nil {
		claim := obj.(*resourceapi.ResourceClaim)
		out["claim"] = map[string]any{
			"metadata": map[string]any{
				"name":            claim.Name,
				"generateName":    claim.GenerateName,
				"annotations":     claim.Annotations,
				"ownerReferences": claim.OwnerReferences,
				"finalizers":      claim.Finalizers,
			},
			"spec":   claim.Spec,
			"status": map[string]any{"allocation": claim.Status.Allocation, "reservedFor": claim.Status.ReservedFor},
		}
	}
	return out
}
