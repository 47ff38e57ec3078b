package main

// The KubeSchedulerConfiguration, read as cmd/kube-scheduler/app/options/configfile.go:
// loadConfig does (the scheduler scheme's decoder, which applies the v1 defaults).

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

const emptyConfig = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// weightScale multiplies every Score weight when the tie-break plugin (weight 1, score
// 0 or 1) is added: weighted sums that differ still differ by at least weightScale > 1.
const weightScale = 4

func loadConfig(path string) (*schedulerapi.KubeSchedulerConfiguration, map[string]wasmTwin, error) {
	data := []byte(emptyConfig)
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, nil, err
		}
	}
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg, ok := obj.(*schedulerapi.KubeSchedulerConfiguration)
	if !ok {
		return nil, nil, fmt.Errorf("%s: not a KubeSchedulerConfiguration", path)
	}
	wasm := map[string]wasmTwin{}
	for _, prof := range cfg.Profiles {
		for _, pc := range prof.PluginConfig {
			u, ok := pc.Args.(*runtime.Unknown)
			if !ok {
				continue
			}
			twin, isWasm, err := twinFor(pc.Name, u.Raw)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", path, err)
			}
			if isWasm {
				wasm[pc.Name] = twin
			}
		}
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, wasm, nil
}

// addTieBreak scales every Score weight and appends the tie-break Score plugin to each
// profile (explicit Score entries take precedence over multiPoint ones, as in
// pkg/scheduler/framework/runtime/framework.go: getScoreWeights).
func addTieBreak(cfg *schedulerapi.KubeSchedulerConfiguration) {
	scale := func(ps []schedulerapi.Plugin) {
		for i := range ps {
			w := ps[i].Weight
			if w == 0 {
				w = 1
			}
			ps[i].Weight = w * weightScale
		}
	}
	for i := range cfg.Profiles {
		p := cfg.Profiles[i].Plugins
		if p == nil {
			continue
		}
		scale(p.MultiPoint.Enabled)
		scale(p.Score.Enabled)
		p.Score.Enabled = append(p.Score.Enabled, schedulerapi.Plugin{Name: TieBreakName, Weight: 1})
	}
}
