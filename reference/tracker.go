package main

// A fake clientset's object tracker whose writes wait for its watchers to have room.
//
// client-go's tracker (k8s.io/client-go/testing/fixture.go: tracker.add, Delete) sends
// every write's event to each watcher without blocking, and a watcher holds 100 events
// (apimachinery's watch.RaceFreeFakeWatcher, DefaultChanSize); when a write finds one
// full it panics "channel full". A real API server has no such limit: a slow watcher
// falls behind, nobody crashes. Without --bind-wait, kube-scheduler's binding goroutines
// (2,000 bindings a second on a DaemonSet workload) could outrun the informer's reflector
// draining the pod watch. Here every write is serialized and first waits until each live
// watcher has room for the event it adds (one per watcher per write), so a write never
// finds a full buffer; reads pass through. The interface is the same in client-go
// v0.33.4 and v0.37.2, so both builds use this file.

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

type roomyTracker struct {
	clienttesting.ObjectTracker
	write    sync.Mutex // one write at a time: the room checked is the room used
	mu       sync.Mutex
	watchers []*watch.RaceFreeFakeWatcher
	// When the last write ended (under mu): run.go's settle compares attempts with it.
	lastWrite time.Time
}

// newRoomyTracker makes the client's reads, writes and watches go through a roomyTracker
// around its own tracker; the reactors run.go prepends write through the returned one.
func newRoomyTracker(client *fake.Clientset) *roomyTracker {
	t := &roomyTracker{ObjectTracker: client.Tracker()}
	client.PrependReactor("*", "*", clienttesting.ObjectReaction(t))
	client.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(clienttesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := t.Watch(action.GetResource(), action.GetNamespace(), opts)
		return true, w, err
	})
	return t
}

func (t *roomyTracker) Watch(gvr schema.GroupVersionResource, ns string, opts ...metav1.ListOptions) (watch.Interface, error) {
	w, err := t.ObjectTracker.Watch(gvr, ns, opts...)
	if err != nil {
		return nil, err
	}
	if fw, ok := w.(*watch.RaceFreeFakeWatcher); ok {
		t.mu.Lock()
		t.watchers = append(t.watchers, fw)
		t.mu.Unlock()
	}
	return w, nil
}

// waitForRoom blocks until every watcher still open has room for one more event. A
// stopped watcher (its reflector restarted or the run ended) gets no events.
func (t *roomyTracker) waitForRoom() {
	for {
		full := false
		t.mu.Lock()
		open := t.watchers[:0]
		for _, w := range t.watchers {
			if w.IsStopped() {
				continue
			}
			open = append(open, w)
			ch := w.ResultChan()
			full = full || len(ch) >= cap(ch)
		}
		t.watchers = open
		t.mu.Unlock()
		if !full {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// wrote stamps the end of a write that scheduling can see (deferred inside the write
// lock).
func (t *roomyTracker) wrote(seen bool) {
	if !seen {
		return
	}
	t.mu.Lock()
	t.lastWrite = time.Now()
	t.mu.Unlock()
}

// seen: false for a pod write that changes only its conditions (and resourceVersion),
// the failure handler reporting an attempt (schedule_one.go: updatePod). Nothing
// scheduling reads changes: the queue ignores a pod update that changed only its status
// (backend/queue/scheduling_queue.go: isPodUpdated), and no plugin reads a condition.
func (t *roomyTracker) seen(gvr schema.GroupVersionResource, obj runtime.Object, ns string) bool {
	pod, ok := obj.(*corev1.Pod)
	if !ok || gvr != podsGVR {
		return true
	}
	stored, err := t.ObjectTracker.Get(gvr, ns, pod.Name)
	if err != nil {
		return true
	}
	// Shallow copies: only their own top-level fields are cleared.
	before, after := *stored.(*corev1.Pod), *pod
	before.ResourceVersion, after.ResourceVersion = "", ""
	before.Status.Conditions, after.Status.Conditions = nil, nil
	return !equality.Semantic.DeepEqual(&before, &after)
}

// lastWriteTime is when the last write ended (zero before any).
func (t *roomyTracker) lastWriteTime() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastWrite
}

func (t *roomyTracker) Add(obj runtime.Object) error {
	t.write.Lock()
	defer t.write.Unlock()
	defer t.wrote(true)
	t.waitForRoom()
	return t.ObjectTracker.Add(obj)
}

func (t *roomyTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	t.write.Lock()
	defer t.write.Unlock()
	defer t.wrote(true)
	t.waitForRoom()
	return t.ObjectTracker.Create(gvr, obj, ns, opts...)
}

func (t *roomyTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	t.write.Lock()
	defer t.write.Unlock()
	defer t.wrote(t.seen(gvr, obj, ns))
	t.waitForRoom()
	return t.ObjectTracker.Update(gvr, obj, ns, opts...)
}

func (t *roomyTracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	t.write.Lock()
	defer t.write.Unlock()
	defer t.wrote(t.seen(gvr, obj, ns))
	t.waitForRoom()
	return t.ObjectTracker.Patch(gvr, obj, ns, opts...)
}

func (t *roomyTracker) Apply(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	t.write.Lock()
	defer t.write.Unlock()
	defer t.wrote(true)
	t.waitForRoom()
	return t.ObjectTracker.Apply(gvr, obj, ns, opts...)
}

func (t *roomyTracker) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	t.write.Lock()
	defer t.write.Unlock()
	defer t.wrote(true)
	t.waitForRoom()
	return t.ObjectTracker.Delete(gvr, ns, name, opts...)
}
