// Command wasmsched-reference runs kube-scheduler's scheduler in process on a cluster
// file and prints what `wasmsched simulate --output json` prints for it (pods:
// namespace, name, node, result, message, nominatedNode; summary.preemptions). It is
// kube-scheduler v1.33.4 (go.mod), or v1.37.2 when built with -modfile=go.1.37.mod
// -tags kube137 (scripts/build-reference --kubernetes-version 1.37).
//
//	wasmsched-reference --cluster cluster.yaml [--config config.yaml] [--prefer prefer.json]
//	wasmsched-reference --cases DIR [--jobs 4]
//
// --prefer names, per pod ("namespace/name": node), the node wasmsched chose: a Score
// plugin then breaks kube-scheduler's ties in its favour (see plugins.go: tieBreak).
// --cases runs every DIR/*/cluster.yaml (with config.yaml and prefer.json beside it when
// present) and writes DIR/*/reference.json, or DIR/*/reference.err on failure.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
)

var (
	metav1CreateOptions = metav1.CreateOptions{}
	everything          = labels.Everything()
)

func main() {
	clusterPath := flag.String("cluster", "", "cluster file (YAML/JSON, several documents, v1 List)")
	configPath := flag.String("config", "", "KubeSchedulerConfiguration (default: the default profile)")
	preferPath := flag.String("prefer", "", "JSON object namespace/name -> node: break ties towards it")
	output := flag.String("output", "-", "where to write the JSON report")
	cases := flag.String("cases", "", "directory of cases (DIR/*/cluster.yaml)")
	jobs := flag.Int("jobs", 2, "cases run at once with --cases")
	parallelism := flag.Int("parallelism", 0, "override the config's parallelism (default: it, or 1 above 100 nodes)")
	quiet := flag.Duration("quiet", 150*time.Millisecond, "settled: no scheduling activity for this long")
	timeout := flag.Duration("timeout", 60*time.Second, "per run")
	bindWait := flag.Duration("bind-wait", 3*time.Second, "before each cycle, wait this long at most for the binding cycles in flight (0: do not wait)")
	asyncPreemption := flag.Bool("async-preemption", false, "keep the SchedulerAsyncPreemption feature gate (on by default in 1.33 and 1.37)")
	featureGates := flag.String("feature-gates", "", "key=value pairs as kube-scheduler's --feature-gates takes them, applied after --async-preemption")
	showVersion := flag.Bool("version", false, "print the kube-scheduler version this binary runs and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println(kubeVersion)
		return
	}

	// With asynchronous preemption (pkg/scheduler/framework/preemption: prepareCandidateAsync)
	// whether the next pods see a victim still running depends on goroutine timing; the
	// simulator's API calls take no time, which is what the synchronous path does.
	gates := fmt.Sprintf("SchedulerAsyncPreemption=%t", *asyncPreemption)
	if *featureGates != "" {
		gates += "," + *featureGates
	}
	if err := utilfeature.DefaultMutableFeatureGate.Set(gates); err != nil {
		fmt.Fprintln(os.Stderr, "wasmsched-reference: --feature-gates:", err)
		os.Exit(2)
	}

	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	opts := runOptions{parallelism: int32(*parallelism), quiet: *quiet, timeout: *timeout, bindWait: *bindWait}
	ctx := context.Background()
	if *cases != "" {
		os.Exit(runCases(ctx, *cases, *jobs, opts))
	}
	if *clusterPath == "" {
		fmt.Fprintln(os.Stderr, "wasmsched-reference: --cluster or --cases is required")
		os.Exit(2)
	}
	rep, err := runFiles(ctx, *clusterPath, *configPath, *preferPath, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmsched-reference:", err)
		os.Exit(1)
	}
	if err := writeJSON(*output, rep); err != nil {
		fmt.Fprintln(os.Stderr, "wasmsched-reference:", err)
		os.Exit(1)
	}
}

func runFiles(ctx context.Context, clusterPath, configPath, preferPath string, opts runOptions) (*report, error) {
	c, err := loadCluster(clusterPath)
	if err != nil {
		return nil, err
	}
	cfg, wasm, err := loadConfig(configPath)
	if err != nil {
		return nil, err
	}
	if preferPath != "" {
		data, err := os.ReadFile(preferPath)
		if err != nil {
			return nil, err
		}
		opts.prefer = map[string]string{}
		if err := json.Unmarshal(data, &opts.prefer); err != nil {
			return nil, fmt.Errorf("%s: %w", preferPath, err)
		}
		addTieBreak(cfg)
	}
	return runCase(ctx, c, cfg, wasm, opts)
}

func runCases(ctx context.Context, dir string, jobs int, opts runOptions) int {
	matches, err := filepath.Glob(filepath.Join(dir, "*", "cluster.yaml"))
	if err != nil || len(matches) == 0 {
		fmt.Fprintf(os.Stderr, "wasmsched-reference: no %s/*/cluster.yaml\n", dir)
		return 2
	}
	sort.Strings(matches)
	work := make(chan string)
	var wg sync.WaitGroup
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for clusterPath := range work {
				caseDir := filepath.Dir(clusterPath)
				optional := func(name string) string {
					p := filepath.Join(caseDir, name)
					if _, err := os.Stat(p); err == nil {
						return p
					}
					return ""
				}
				rep, err := runFiles(ctx, clusterPath, optional("config.yaml"), optional("prefer.json"), opts)
				if err != nil {
					_ = os.WriteFile(filepath.Join(caseDir, "reference.err"), []byte(err.Error()+"\n"), 0o644)
					continue
				}
				if err := writeJSON(filepath.Join(caseDir, "reference.json"), rep); err != nil {
					_ = os.WriteFile(filepath.Join(caseDir, "reference.err"), []byte(err.Error()+"\n"), 0o644)
				}
			}
		}()
	}
	for _, m := range matches {
		work <- m
	}
	close(work)
	wg.Wait()
	return 0
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if path == "-" {
		_, err = os.Stdout.Write(data)
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
