//go:build kube137

package main

// What the resourceclaim controller (pkg/controller/resourceclaim/controller.go) does
// around kube-scheduler, which the fake clientset lacks: it makes a pending pod's claims
// from their ResourceClaimTemplates before the scheduler sees the pod (syncPod,
// handleClaim), and after a pod is deleted it takes the pod out of its claims'
// reservedFor, deallocates a claim left without consumers that the scheduler allocated
// (its finalizer) and deletes a claim the pod owned (syncClaim). wasmsched's simulation
// does the same (sim/simulation.py: _with_claims, _release_claims); the claim names use
// its reproducible suffix (api/dra.py: claims_from_templates) where the API server would
// draw five random characters, so that messages naming a claim can be compared.

import (
	"crypto/sha256"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var (
	claimsGVR = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}
	claimsGVK = schema.GroupVersionKind{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaim"}
)

const (
	podClaimNameAnnotation = "resource.kubernetes.io/pod-claim-name"
	allocationFinalizer    = "resource.kubernetes.io/delete-protection"
	suffixAlphabet         = "bcdfghjklmnpqrstvwxz2456789"
)

// claimsFromTemplates makes the claims of the pending pods' template entries that have
// no status entry yet, and names them in the pods' status.resourceClaimStatuses.
func claimsFromTemplates(pending []*corev1.Pod, others []runtime.Object) []runtime.Object {
	templates := map[string]*resourceapi.ResourceClaimTemplate{}
	for _, o := range others {
		if t, ok := o.(*resourceapi.ResourceClaimTemplate); ok {
			templates[t.Namespace+"/"+t.Name] = t
		}
	}
	var made []runtime.Object
	for _, pod := range pending {
		done := map[string]bool{}
		for _, s := range pod.Status.ResourceClaimStatuses {
			done[s.Name] = true
		}
		for _, entry := range pod.Spec.ResourceClaims {
			if entry.ResourceClaimTemplateName == nil || done[entry.Name] {
				continue
			}
			t, ok := templates[pod.Namespace+"/"+*entry.ResourceClaimTemplateName]
			if !ok {
				continue
			}
			generate := pod.Name + "-" + entry.Name + "-"
			seed := string(pod.UID) + "/" + entry.Name
			digest := sha256.Sum256([]byte(seed))
			name := generate
			for _, b := range digest[:5] {
				name += string(suffixAlphabet[int(b)%len(suffixAlphabet)])
			}
			annotations := map[string]string{}
			for k, v := range t.Spec.ObjectMeta.Annotations {
				annotations[k] = v
			}
			annotations[podClaimNameAnnotation] = entry.Name
			controller := true
			claim := &resourceapi.ResourceClaim{
				ObjectMeta: metav1.ObjectMeta{
					Name:         name,
					GenerateName: generate,
					Namespace:    pod.Namespace,
					UID:          types.UID(uuid.NewSHA1(uuid.NameSpaceURL, []byte("wasmsched:claim/"+seed)).String()),
					Labels:       t.Spec.ObjectMeta.Labels,
					Annotations:  annotations,
					OwnerReferences: []metav1.OwnerReference{{
						APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &controller,
					}},
				},
				Spec: *t.Spec.Spec.DeepCopy(),
			}
			made = append(made, claim)
			claimName := name
			pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses,
				corev1.PodResourceClaimStatus{Name: entry.Name, ResourceClaimName: &claimName})
		}
	}
	return made
}

// releaseClaims is syncClaim for every claim of the deleted pod's namespace that it
// consumed or owned.
func releaseClaims(tracker *roomyTracker, pod *corev1.Pod) {
	list, err := tracker.List(claimsGVR, claimsGVK, pod.Namespace)
	if err != nil {
		return
	}
	for i := range list.(*resourceapi.ResourceClaimList).Items {
		claim := list.(*resourceapi.ResourceClaimList).Items[i].DeepCopy()
		var remaining []resourceapi.ResourceClaimConsumerReference
		for _, r := range claim.Status.ReservedFor {
			if r.UID != pod.UID {
				remaining = append(remaining, r)
			}
		}
		owned := false
		for _, ref := range claim.OwnerReferences {
			if ref.Controller != nil && *ref.Controller && ref.UID == pod.UID {
				owned = true
			}
		}
		if len(remaining) < len(claim.Status.ReservedFor) {
			claim.Status.ReservedFor = remaining
			if len(remaining) == 0 {
				var finalizers []string
				for _, f := range claim.Finalizers {
					if f != allocationFinalizer {
						finalizers = append(finalizers, f)
					}
				}
				if len(finalizers) < len(claim.Finalizers) {
					claim.Status.Allocation = nil
					claim.Finalizers = finalizers
				}
			}
			bumpVersion(claim)
			_ = tracker.Update(claimsGVR, claim, claim.Namespace)
		}
		if owned && len(remaining) == 0 {
			_ = tracker.Delete(claimsGVR, claim.Namespace, claim.Name)
		}
	}
}
