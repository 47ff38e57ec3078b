//go:build tools

// Package tools pins the kube-apiserver and kube-scheduler commands as dependencies of this
// module, so that `go build k8s.io/kubernetes/cmd/kube-apiserver` (and cmd/kube-scheduler,
// which benchmarks/bench_live.py runs beside wasmsched) resolves every package it needs from
// go.mod/go.sum here, or from go.1.37.mod/go.1.37.sum with -modfile (the usual tools.go
// pattern).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
