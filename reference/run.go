package main

// One reference run: kube-scheduler's scheduler (pkg/scheduler: New, Run; v1.33.4, or
// v1.37.2 in the kube137 build) in process against client-go's fake clientset, fed a
// cluster file.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The fake clientset's watchers hold this many events before they block (DefaultChanSize
// of apimachinery's watch.RaceFreeFakeWatcher); pending pods are created in smaller batches.
const createBatch = 50

type runOptions struct {
	prefer      map[string]string // "namespace/name" -> node wasmsched chose
	parallelism int32             // 0: the config's, or 1 above 100 nodes
	quiet       time.Duration     // no activity for this long = settled
	timeout     time.Duration
	// How long a cycle waits for the binding cycles still running (0: no wait).
	// VolumeBinding's PreBind polls for the claims every second (binder.go:
	// BindPodVolumes), so the default is more than that.
	bindWait time.Duration
}

type podResult struct {
	Namespace     string  `json:"namespace"`
	Name          string  `json:"name"`
	Node          *string `json:"node"`
	Result        string  `json:"result"`
	Message       string  `json:"message"`
	NominatedNode *string `json:"nominatedNode"`
	// status.extendedResourceClaimStatus and its claim (1.37 build; extended resources
	// backed by DRA).
	ExtendedResourceClaim any `json:"extendedResourceClaim,omitempty"`
}

type preemption struct {
	Victim    string `json:"victim"`
	Node      string `json:"node"`
	Preemptor string `json:"preemptor"`
}

type report struct {
	Pods    []podResult    `json:"pods"`
	Summary map[string]any `json:"summary"`
}

// recorder keeps the Preempted events (victim, preemptor) and drops the rest.
type recorder struct {
	mu    sync.Mutex
	preem map[string]string // victim key -> preemptor key
}

func (r *recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	if reason != "Preempted" {
		return
	}
	// The preemptor is the *v1.Pod in 1.33, a wrapper embedding it in 1.37
	// (framework/preemption/executor.go: podExecutorPreemptor): read its metadata.
	victim, ok := regarding.(*corev1.Pod)
	preemptor, err := meta.Accessor(related)
	if ok && err == nil {
		r.mu.Lock()
		r.preem[key(victim)] = preemptor.GetNamespace() + "/" + preemptor.GetName()
		r.mu.Unlock()
	}
}

func (r *recorder) WithLogger(klog.Logger) events.EventRecorderLogger { return r }

func key(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

var (
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	pvsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	pvcsGVR = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
)

// runCase schedules every pending pod of the cluster and reports each one.
func runCase(parent context.Context, c *cluster, cfg *schedulerapi.KubeSchedulerConfiguration, wasm map[string]wasmTwin, opts runOptions) (*report, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	c.admit()

	profiles := map[string]bool{}
	for _, p := range cfg.Profiles {
		profiles[p.SchedulerName] = true
	}
	var initial []runtime.Object
	for _, n := range c.nodes {
		initial = append(initial, n)
	}
	var pending []*corev1.Pod
	for _, p := range c.pods {
		// The scheduler's pod informer never sees terminated pods
		// (pkg/scheduler: newPodInformer's field selector); the fake clientset
		// ignores field selectors, so they are left out here.
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Spec.NodeName != "" || !profiles[p.Spec.SchedulerName] {
			initial = append(initial, p)
			continue
		}
		pending = append(pending, p)
	}
	// The resourceclaim controller makes the pending pods' claims from their templates.
	c.others = append(c.others, claimsFromTemplates(pending, c.others)...)
	initial = append(initial, c.others...)
	for _, o := range initial {
		// What the API server would have set; the fake tracker sets neither, and the
		// volume binder's assume cache parses resourceVersion, claimRefs need UIDs.
		if m, err := meta.Accessor(o); err == nil {
			if m.GetResourceVersion() == "" {
				m.SetResourceVersion("1")
			}
			if m.GetUID() == "" {
				m.SetUID(types.UID(fmt.Sprintf("%T/%s/%s", o, m.GetNamespace(), m.GetName())))
			}
		}
	}
	for _, p := range pending {
		if p.ResourceVersion == "" {
			p.ResourceVersion = "1"
		}
	}
	prebind(initial)
	client := fake.NewSimpleClientset(initial...)
	// Every write waits for the watchers to have room (tracker.go); the reactors below
	// are prepended after it, so they run first and write through it too.
	tracker := newRoomyTracker(client)
	reactToClaimCreates(client, tracker)

	var activity, changes atomic.Int64 // any write; bindings and deletes
	var mu sync.Mutex
	attempted := map[string]bool{}
	boundTo := map[string]string{}
	victimNode := map[string]string{}
	deleted := map[string]bool{}
	var unseen []*corev1.Pod // deleted, maybe still in the scheduler's cache
	// Claims the PV reactor below bound during the run: a pod that set a PV's claimRef in
	// its PreBind then waits in volumebinding's poll (binder.go: BindPodVolumes polls
	// checkBindings every second, not immediately), and kube-scheduler's next cycles do
	// not wait for it.
	boundDuringRun := map[string]bool{}

	// pods/binding: the fake clientset does not persist it; set spec.nodeName as the
	// API server's binding storage (pkg/registry/core/pod/storage: assignPod) does.
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := action.(clienttesting.CreateAction).GetObject().(*corev1.Binding)
		obj, err := tracker.Get(podsGVR, b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*corev1.Pod).DeepCopy()
		if pod.Spec.NodeName != "" {
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), b.Name, fmt.Errorf("pod %s is already assigned to node %q", b.Name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = b.Target.Name
		if bindingClearsNomination() {
			pod.Status.NominatedNodeName = ""
		}
		bumpVersion(pod)
		if err := tracker.Update(podsGVR, pod, pod.Namespace); err != nil {
			return true, nil, err
		}
		mu.Lock()
		attempted[key(pod)] = true
		boundTo[key(pod)] = b.Target.Name
		mu.Unlock()
		activity.Add(1)
		changes.Add(1)
		return true, b, nil
	})
	client.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		d := action.(clienttesting.DeleteAction)
		obj, err := tracker.Get(podsGVR, d.GetNamespace(), d.GetName())
		if err == nil {
			mu.Lock()
			k := d.GetNamespace() + "/" + d.GetName()
			victimNode[k] = obj.(*corev1.Pod).Spec.NodeName
			deleted[k] = true
			unseen = append(unseen, obj.(*corev1.Pod))
			mu.Unlock()
		}
		activity.Add(1)
		changes.Add(1)
		handled, out, derr := clienttesting.ObjectReaction(tracker)(action)
		if err == nil && derr == nil {
			// The resourceclaim controller, once the pod is gone (dra_137.go).
			releaseClaims(tracker, obj.(*corev1.Pod))
		}
		return handled, out, derr
	})
	// The PV controller (pkg/controller/volume/persistentvolume: syncVolume/bind) is not
	// running: when the scheduler's volume binder sets a PV's claimRef (PreBind), bind
	// the claim the way it would, so that checkBindings sees it fully bound.
	client.PrependReactor("update", "persistentvolumes", func(action clienttesting.Action) (bool, runtime.Object, error) {
		pv := action.(clienttesting.UpdateAction).GetObject().(*corev1.PersistentVolume).DeepCopy()
		bumpVersion(pv)
		if err := tracker.Update(pvsGVR, pv, ""); err != nil {
			return true, nil, err
		}
		activity.Add(1)
		ref := pv.Spec.ClaimRef
		if ref == nil {
			return true, pv, nil
		}
		obj, err := tracker.Get(pvcsGVR, ref.Namespace, ref.Name)
		if err != nil {
			return true, pv, nil
		}
		pvc := obj.(*corev1.PersistentVolumeClaim).DeepCopy()
		if pvc.Spec.VolumeName == "" {
			pvc.Spec.VolumeName = pv.Name
			if pvc.Annotations == nil {
				pvc.Annotations = map[string]string{}
			}
			pvc.Annotations["pv.kubernetes.io/bind-completed"] = "yes"
			pvc.Annotations["pv.kubernetes.io/bound-by-controller"] = "yes"
			pvc.Status.Phase = corev1.ClaimBound
			pvc.Status.AccessModes = pv.Spec.AccessModes
			pvc.Status.Capacity = pv.Spec.Capacity
			bumpVersion(pvc)
			_ = tracker.Update(pvcsGVR, pvc, pvc.Namespace)
			mu.Lock()
			boundDuringRun[pvc.Namespace+"/"+pvc.Name] = true
			mu.Unlock()
		}
		return true, pv, nil
	})
	// Status patches (PodScheduled condition, nominatedNodeName). The fake tracker keeps
	// resourceVersion as it is, and kube-scheduler drops an update whose resourceVersion
	// did not change (eventhandlers.go: updatePodInSchedulingQueue): the queued pod would
	// keep a stale condition, and updatePod (schedule_one.go) would skip writing a
	// message equal to that stale one. The API server bumps it on every write; so here.
	client.PrependReactor("patch", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		activity.Add(1)
		handled, obj, err := clienttesting.ObjectReaction(tracker)(action)
		if err != nil || obj == nil {
			return handled, obj, err
		}
		pod := obj.(*corev1.Pod).DeepCopy()
		bumpVersion(pod)
		if err := tracker.Update(podsGVR, pod, pod.Namespace); err != nil {
			return true, nil, err
		}
		return true, pod, nil
	})

	rec := &recorder{preem: map[string]string{}}
	registry, err := outOfTreeRegistry(wasm, opts.prefer)
	if err != nil {
		return nil, err
	}
	parallelism := cfg.Parallelism
	if opts.parallelism > 0 {
		parallelism = opts.parallelism
	} else if len(c.nodes) > 100 {
		// Node sampling (findNodesThatPassFilters) stops early at parallelism > 1, and
		// which nodes were processed, hence the next start index, is then racy.
		parallelism = 1
	}
	informerFactory := newInformerFactory(client)
	sched, err := scheduler.New(ctx, client, informerFactory, nil,
		recorderFactory(rec),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithParallelism(parallelism),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
	)
	if err != nil {
		return nil, err
	}
	// The pods whose last attempt ended in an error (not a rejection), by when that
	// attempt started.
	erroredAt := map[string]time.Time{}
	failure := sched.FailureHandler
	sched.FailureHandler = func(ctx context.Context, f framework.Framework, pi *framework.QueuedPodInfo, st *fwkStatus, ni *fwkNominatingInfo, start time.Time) {
		failure(ctx, f, pi, st, ni, start)
		mu.Lock()
		attempted[key(pi.Pod)] = true
		// handleSchedulingFailure (schedule_one.go) reports SchedulerError unless the
		// status is a rejection.
		if st != nil && !st.IsRejected() {
			erroredAt[key(pi.Pod)] = start
		} else {
			delete(erroredAt, key(pi.Pod))
		}
		mu.Unlock()
		activity.Add(1)
	}
	// The simulator's writes take effect at once; here a deletion reaches the scheduler's
	// cache through the informer, and a cycle started meanwhile would still see the
	// victim. Wait (bounded) for the cache before each cycle.
	//
	// The binding cycle runs on its own goroutine (schedule_one.go: ScheduleOne), and
	// its bind call is issued before the next cycle starts; against an API server it
	// lands first, while here the next cycle (pod to pod in microseconds) could
	// preempt the assumed pod before the goroutine ran. The simulator binds at once;
	// so before each pop, wait (bounded) until the assumed pods are bound and seen
	// by the cache (cache.go: AddPod confirms an assumed pod) or forgotten. A pod in
	// volumebinding's PreBind poll is the exception: its bind lands a second later
	// against an API server too, after the cycles kube-scheduler runs meanwhile.
	inVolumePoll := func(uid string) bool {
		ns, name, _ := strings.Cut(uid, "/") // pod UIDs are namespace/name (cluster.go)
		obj, err := tracker.Get(podsGVR, ns, name)
		if err != nil {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		for _, v := range obj.(*corev1.Pod).Spec.Volumes {
			if v.PersistentVolumeClaim != nil && boundDuringRun[ns+"/"+v.PersistentVolumeClaim.ClaimName] {
				return true
			}
		}
		return false
	}
	wrapNextPod(sched, func() {
		if opts.bindWait > 0 {
			_ = waitFor(ctx, opts.bindWait, func() bool {
				for uid := range sched.Cache.Dump().AssumedPods {
					if !inVolumePoll(uid) {
						return false
					}
				}
				return true
			})
		}
	}, func() {
		mu.Lock()
		waiting := unseen
		unseen = nil
		mu.Unlock()
		for _, v := range waiting {
			_ = waitFor(ctx, time.Second, func() bool {
				_, err := sched.Cache.GetPod(v)
				return err != nil
			})
		}
	})
	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	// The informers' stores are synced; wait for the scheduler's handlers to have put
	// the nodes and bound pods into its cache too, as kube-scheduler does before its
	// first cycle (cmd/kube-scheduler/app/server.go: Run).
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return nil, fmt.Errorf("scheduler event handlers not synced: %w", err)
	}

	// Every pending pod is in the queue before the first cycle, as in the simulator.
	podLister := informerFactory.Core().V1().Pods().Lister()
	base := len(initial) - len(c.others) - len(c.nodes)
	for i := 0; i < len(pending); i += createBatch {
		end := min(i+createBatch, len(pending))
		for _, p := range pending[i:end] {
			if _, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1CreateOptions); err != nil {
				return nil, fmt.Errorf("create pod %s: %w", key(p), err)
			}
		}
		if err := waitFor(ctx, opts.timeout, func() bool {
			all, _ := podLister.List(everything)
			return len(all) >= base+end
		}); err != nil {
			return nil, fmt.Errorf("pods not seen by the informer: %w", err)
		}
	}
	if err := waitFor(ctx, opts.timeout, func() bool {
		pods, _ := sched.SchedulingQueue.PendingPods()
		return len(pods) >= len(pending)
	}); err != nil {
		return nil, fmt.Errorf("pods not queued: %w", err)
	}

	started := time.Now()
	go sched.Run(ctx)
	deadline := time.Now().Add(opts.timeout)
	// A pod whose attempt ended in an error waits in the backoff queue and is retried
	// for as long as it fails (backend/queue/backoff_queue.go: podErrorBackoffQ), so the
	// queue never empties. When that attempt started after the cluster's last write had
	// reached the informers (quiet after it, as for settling), a retry meets the same
	// cluster and fails again: nothing can change any more, as the simulator concludes
	// (scheduler.py: has_work_that_could_change).
	backoffQ := sched.SchedulingQueue.(interface{ PodsInBackoffQ() []*corev1.Pod })
	onlyRepeatingErrors := func() bool {
		written := tracker.lastWriteTime()
		mu.Lock()
		defer mu.Unlock()
		for _, p := range backoffQ.PodsInBackoffQ() {
			start, ok := erroredAt[key(p)]
			if !ok || start.Sub(written) < opts.quiet {
				return false
			}
		}
		return true
	}
	settle := func() (time.Time, string) {
		last, quietSince := activity.Load(), time.Now()
		for {
			time.Sleep(2 * time.Millisecond)
			if a := activity.Load(); a != last {
				last, quietSince = a, time.Now()
			}
			if time.Now().After(deadline) {
				return quietSince, fmt.Sprintf("stopped after %s", opts.timeout)
			}
			_, summary := sched.SchedulingQueue.PendingPods()
			var active, backoff, unsched int
			fmt.Sscanf(summary, "activeQ:%d; backoffQ:%d; unschedulablePods:%d", &active, &backoff, &unsched)
			if active > 0 || backoff > 0 && !onlyRepeatingErrors() {
				continue
			}
			mu.Lock()
			all := true
			for _, p := range pending {
				if !attempted[key(p)] && len(p.Spec.SchedulingGates) == 0 {
					all = false
					break
				}
			}
			mu.Unlock()
			if all && len(sched.Cache.Dump().AssumedPods) == 0 && time.Since(quietSince) >= opts.quiet {
				return quietSince, ""
			}
		}
	}
	lastActivity, stopped := settle()
	// From the first cycle to the last thing that happened.
	wall := lastActivity.Sub(started).Seconds()
	// Then let time pass as the simulator does: pods left in the unschedulable pool are
	// retried by the leftover flush after podMaxInUnschedulablePodsDuration
	// (backend/queue/scheduling_queue.go: flushUnschedulablePodsLeftover, an
	// UnschedulableTimeout event), until a flush changes nothing.
	logger := klog.FromContext(ctx)
	for round := 0; round < 5 && stopped == ""; round++ {
		before := changes.Load()
		sched.SchedulingQueue.MoveAllToActiveOrBackoffQueue(logger, framework.EventUnschedulableTimeout, nil, nil, nil)
		_, stopped = settle()
		if changes.Load() == before {
			break
		}
	}
	cancel()

	rep := &report{Pods: []podResult{}, Summary: map[string]any{}}
	counts := map[string]int{}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range pending {
		r := podResult{Namespace: p.Namespace, Name: p.Name, Result: "Pending"}
		k := key(p)
		obj, err := tracker.Get(podsGVR, p.Namespace, p.Name)
		if err != nil {
			// Deleted: only a preemption victim. Bound before, it is reported as the
			// simulator reports it: Preempted on its node (no message: the
			// simulator's names its simulated time).
			if node, ok := boundTo[k]; ok {
				r.Node, r.Result = &node, "Preempted"
			}
		} else {
			cur := obj.(*corev1.Pod)
			r.ExtendedResourceClaim = extendedClaimReport(tracker, cur)
			if cur.Status.NominatedNodeName != "" {
				n := cur.Status.NominatedNodeName
				r.NominatedNode = &n
			}
			if cur.Spec.NodeName != "" {
				n := cur.Spec.NodeName
				r.Node, r.Result = &n, "Scheduled"
			} else {
				for _, cond := range cur.Status.Conditions {
					if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
						r.Message = cond.Message
						if cond.Reason == corev1.PodReasonSchedulerError {
							r.Result = "Error"
						} else {
							r.Result = "Unschedulable"
						}
					}
				}
				if r.Result == "Pending" && len(cur.Spec.SchedulingGates) > 0 {
					// The API server, not the scheduler, writes SchedulingGated.
					r.Result = "Unschedulable"
				}
			}
		}
		counts[r.Result]++
		rep.Pods = append(rep.Pods, r)
	}
	pre := []preemption{}
	rec.mu.Lock()
	for victim, by := range rec.preem {
		pre = append(pre, preemption{Victim: victim, Node: victimNode[victim], Preemptor: by})
	}
	rec.mu.Unlock()
	sort.Slice(pre, func(i, j int) bool { return pre[i].Victim < pre[j].Victim })
	rep.Summary["pods"] = len(pending)
	rep.Summary["scheduled"] = counts["Scheduled"]
	rep.Summary["unschedulable"] = counts["Unschedulable"]
	rep.Summary["error"] = counts["Error"]
	rep.Summary["pending"] = counts["Pending"]
	rep.Summary["preempted"] = counts["Preempted"]
	rep.Summary["nodes"] = len(c.nodes)
	rep.Summary["preemptions"] = pre
	rep.Summary["wallSeconds"] = wall
	if wall > 0 {
		rep.Summary["podsPerSecond"] = float64(len(pending)) / wall
	}
	if stopped != "" {
		rep.Summary["stoppedEarly"] = stopped
	} else {
		rep.Summary["stoppedEarly"] = nil
	}
	if len(c.skipped) > 0 {
		rep.Summary["kindsIgnored"] = strings.Join(c.skipped, ",")
	}
	return rep, nil
}

// bumpVersion stands in for the API server's resourceVersion on a write, which the
// fake tracker does not change (the volume binder's checkBindings compares them).
func bumpVersion(o metav1.Object) {
	v, _ := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
	o.SetResourceVersion(strconv.FormatInt(v+1, 10))
}

// prebind does at load what the PV controller (pkg/controller/volume/persistentvolume:
// syncClaim, bind) would have done before the scheduler saw the cluster: a claim that
// names its volume, says it is Bound (or has the annotation), and whose volume exists
// and is unclaimed or claimed by it (syncUnboundClaim), is fully bound (the
// bind-completed annotation the volume binder's isPVCFullyBound checks, the PV's
// claimRef). A missing PV leaves the claim unbound, as the controller would.
func prebind(objs []runtime.Object) {
	pvs := map[string]*corev1.PersistentVolume{}
	for _, o := range objs {
		if pv, ok := o.(*corev1.PersistentVolume); ok {
			pvs[pv.Name] = pv
		}
	}
	for _, o := range objs {
		pvc, ok := o.(*corev1.PersistentVolumeClaim)
		if !ok || pvc.Spec.VolumeName == "" {
			continue
		}
		// A claim the controller has not bound yet (no annotation, status not Bound) is
		// left as the scheduler would see it: unbound.
		if _, done := pvc.Annotations["pv.kubernetes.io/bind-completed"]; !done && pvc.Status.Phase != corev1.ClaimBound {
			continue
		}
		pv, ok := pvs[pvc.Spec.VolumeName]
		if !ok {
			continue
		}
		// A PV claimed by another claim stays so (storagehelpers.IsVolumeBoundToClaim).
		if ref := pv.Spec.ClaimRef; ref != nil && (ref.Name != pvc.Name || ref.Namespace != pvc.Namespace || (ref.UID != "" && ref.UID != pvc.UID)) {
			continue
		}
		if pvc.Annotations == nil {
			pvc.Annotations = map[string]string{}
		}
		pvc.Annotations["pv.kubernetes.io/bind-completed"] = "yes"
		pvc.Status.Phase = corev1.ClaimBound
		if pvc.Status.AccessModes == nil {
			pvc.Status.AccessModes = pv.Spec.AccessModes
		}
		if pvc.Status.Capacity == nil {
			pvc.Status.Capacity = pv.Spec.Capacity
		}
		pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID}
		pv.Status.Phase = corev1.VolumeBound
	}
}

func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}
