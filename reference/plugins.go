package main

// Out-of-tree plugins of the reference: the tie-break that lets kube-scheduler follow
// wasmsched's choice among its equally best nodes, and Go twins of our wasm examples.
// The framework types are named through compat_133.go / compat_137.go (fwk*), so this
// file builds against either kube-scheduler.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// TieBreakName is the Score plugin added to every profile when a preference is given.
const TieBreakName = "WasmschedTieBreak"

// tieBreak scores 1 on the node wasmsched chose for the pod, 0 elsewhere. Every other
// score weight is multiplied by weightScale, so the 1 only decides between nodes whose
// weighted sums are equal, where pkg/scheduler/schedule_one.go: selectHost would
// otherwise pick one at random.
type tieBreak struct{ prefer map[string]string }

func (t *tieBreak) Name() string { return TieBreakName }

func (t *tieBreak) Score(_ context.Context, _ fwkCycleState, p *corev1.Pod, n fwkNodeInfo) (int64, *fwkStatus) {
	if t.prefer[key(p)] == n.Node().Name {
		return 1, nil
	}
	return 0, nil
}

func (t *tieBreak) ScoreExtensions() fwkScoreExtensions { return nil }

// nodeNumber is the Go twin of sdk/rust/examples/nodenumber.rs: 10 for a node whose
// name ends with the digit the pod's name ends with, 0 for the others, 10 everywhere
// when the pod's name ends with no digit; guestConfig {"reverse": true} swaps 10 and 0.
type nodeNumber struct {
	name    string
	reverse bool
}

const nodeNumberStateKey fwkStateKey = "PreScoreNodeNumberTwin"

type digitState struct{ digit byte }

func (s *digitState) Clone() fwkStateData { return s }

func lastDigit(s string) (byte, bool) {
	if s == "" {
		return 0, false
	}
	c := s[len(s)-1]
	return c, c >= '0' && c <= '9'
}

func (n *nodeNumber) Name() string { return n.name }

func (n *nodeNumber) PreScore(_ context.Context, state fwkCycleState, p *corev1.Pod, _ []fwkNodeInfo) *fwkStatus {
	if d, ok := lastDigit(p.Name); ok {
		state.Write(nodeNumberStateKey, &digitState{digit: d})
	}
	return nil
}

func (n *nodeNumber) Score(_ context.Context, state fwkCycleState, p *corev1.Pod, ni fwkNodeInfo) (int64, *fwkStatus) {
	matched := true
	if data, err := state.Read(nodeNumberStateKey); err == nil {
		d, ok := lastDigit(ni.Node().Name)
		matched = ok && d == data.(*digitState).digit
	}
	if matched != n.reverse {
		return 10, nil
	}
	return 0, nil
}

func (n *nodeNumber) ScoreExtensions() fwkScoreExtensions { return nil }

func (n *nodeNumber) EventsToRegister(context.Context) ([]fwkClusterEventWithHint, error) {
	return []fwkClusterEventWithHint{{Event: fwkClusterEvent{Resource: fwkNode, ActionType: fwkAdd}}}, nil
}

// wasmTwin is a wasm plugin entry of the config mapped to its Go twin.
type wasmTwin struct {
	guestURL string
	reverse  bool
}

// wasmArgs are the fields of our wasm pluginConfig args the twins read.
type wasmArgs struct {
	GuestURL    string          `json:"guestURL"`
	GuestConfig json.RawMessage `json:"guestConfig"`
}

// twinFor maps a wasm plugin's args to a twin, or says why there is none.
func twinFor(name string, raw []byte) (wasmTwin, bool, error) {
	var a wasmArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.GuestURL == "" {
		return wasmTwin{}, false, nil
	}
	base := a.GuestURL[strings.LastIndex(a.GuestURL, "/")+1:]
	if base != "nodenumber.wasm" {
		return wasmTwin{}, true, fmt.Errorf("plugin %s: no Go twin for guest %s (only the Rust SDK's nodenumber.wasm has one)", name, a.GuestURL)
	}
	t := wasmTwin{guestURL: a.GuestURL}
	if len(a.GuestConfig) > 0 {
		cfg := []byte(a.GuestConfig)
		var s string
		if json.Unmarshal(cfg, &s) == nil {
			cfg = []byte(s) // guestConfig is a JSON string holding JSON
		}
		var gc struct {
			Reverse bool `json:"reverse"`
		}
		if s != "" || string(cfg) != "" {
			if err := json.Unmarshal(cfg, &gc); err != nil {
				return wasmTwin{}, true, fmt.Errorf("plugin %s: guestConfig: %w", name, err)
			}
		}
		t.reverse = gc.Reverse
	}
	return t, true, nil
}

func outOfTreeRegistry(wasm map[string]wasmTwin, prefer map[string]string) (frameworkruntime.Registry, error) {
	reg := frameworkruntime.Registry{}
	for name, twin := range wasm {
		name, twin := name, twin
		if err := reg.Register(name, func(context.Context, runtime.Object, fwkHandle) (fwkPlugin, error) {
			return &nodeNumber{name: name, reverse: twin.reverse}, nil
		}); err != nil {
			return nil, err
		}
	}
	if prefer != nil {
		if err := reg.Register(TieBreakName, func(context.Context, runtime.Object, fwkHandle) (fwkPlugin, error) {
			return &tieBreak{prefer: prefer}, nil
		}); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
