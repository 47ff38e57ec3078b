// Command wazero-boundary times one Filter and one Score call of a guest through wazero,
// the runtime of upstream's Go host (kube-scheduler-wasm-extension), doing per call what
// that host's Filter/Score do around the guest (scheduler/plugin/plugin.go: the call's
// stack put in a context value, the scheduling guest looked up by pod UID under the pool's
// lock, the export called with a reused stack, a status built from the result). It is a
// lower bound for that host: its own allocations and framework types are left out.
//
// Output: one JSON object, nanoseconds per call (best of the repeats):
// {"export_ns": ..., "filter_ns": ..., "score_ns": ...}
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

type stackKey struct{}

// stack is what the host functions of a call read and write (upstream: plugin.stack).
type stack struct {
	podUID   string
	nodeName string
	reason   string
}

// status stands for framework.Status (code and reasons).
type status struct {
	code    int32
	reasons []string
}

// pool stands for upstream's guestPool: one scheduling guest, checked out by pod UID.
type pool struct {
	mu        sync.Mutex
	scheduled string
	guest     *guest
}

func (p *pool) doWithSchedulingGuest(uid string, fn func(*guest)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.scheduled != uid {
		p.scheduled = uid
	}
	fn(p.guest)
}

type guest struct {
	filterFn, scoreFn api.Function
	callStack         []uint64
}

func (g *guest) filter(ctx context.Context) *status {
	if err := g.filterFn.CallWithStack(ctx, g.callStack); err != nil {
		return &status{code: 1, reasons: []string{err.Error()}}
	}
	s := ctx.Value(stackKey{}).(*stack)
	st := &status{code: int32(g.callStack[0])}
	if s.reason != "" {
		st.reasons = []string{s.reason}
	}
	return st
}

func (g *guest) score(ctx context.Context) (int64, *status) {
	if err := g.scoreFn.CallWithStack(ctx, g.callStack); err != nil {
		return 0, &status{code: 1, reasons: []string{err.Error()}}
	}
	raw := g.callStack[0]
	s := ctx.Value(stackKey{}).(*stack)
	st := &status{code: int32(uint32(raw))}
	if s.reason != "" {
		st.reasons = []string{s.reason}
	}
	return int64(int32(raw >> 32)), st
}

func best(repeats, n int, op func()) float64 {
	op()
	b := 0.0
	for r := 0; r < repeats; r++ {
		start := time.Now()
		for i := 0; i < n; i++ {
			op()
		}
		ns := float64(time.Since(start).Nanoseconds()) / float64(n)
		if r == 0 || ns < b {
			b = ns
		}
	}
	return b
}

func main() {
	wasmPath := flag.String("wasm", "", "guest exporting filter and score (no imports)")
	n := flag.Int("n", 200000, "calls per repeat")
	repeats := flag.Int("repeats", 5, "repeats (the best is kept)")
	flag.Parse()
	code, err := os.ReadFile(*wasmPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer rt.Close(ctx)
	mod, err := rt.InstantiateWithConfig(ctx, code, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	g := &guest{filterFn: mod.ExportedFunction("filter"), scoreFn: mod.ExportedFunction("score"),
		callStack: make([]uint64, 1)}
	if g.filterFn == nil || g.scoreFn == nil {
		fmt.Fprintln(os.Stderr, "the guest must export filter and score")
		os.Exit(2)
	}
	p := &pool{guest: g}
	uid := "6d2a4c5e-0000-4000-8000-000000000001"
	var sink int64
	out := map[string]float64{
		"export_ns": best(*repeats, *n, func() {
			_ = g.filterFn.CallWithStack(ctx, g.callStack)
		}),
		"filter_ns": best(*repeats, *n, func() {
			cctx := context.WithValue(ctx, stackKey{}, &stack{podUID: uid, nodeName: "node-0001"})
			p.doWithSchedulingGuest(uid, func(g *guest) { sink += int64(g.filter(cctx).code) })
		}),
		"score_ns": best(*repeats, *n, func() {
			cctx := context.WithValue(ctx, stackKey{}, &stack{podUID: uid, nodeName: "node-0001"})
			p.doWithSchedulingGuest(uid, func(g *guest) {
				s, st := g.score(cctx)
				sink += s + int64(st.code)
			})
		}),
	}
	if sink < 0 {
		fmt.Fprintln(os.Stderr, "unexpected")
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
