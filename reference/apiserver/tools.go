//go:build tools

// Package tools pins the kube-apiserver command as a dependency of this module, so that
// `go build k8s.io/kubernetes/cmd/kube-apiserver` resolves every package it needs from
// go.mod/go.sum here (the usual tools.go pattern).
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
