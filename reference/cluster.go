package main

// Loading a cluster file the way `wasmsched simulate --cluster` reads it: YAML or JSON,
// several documents, v1 List objects flattened; then the admission the API server
// would have applied (plugin/pkg/admission/priority/admission.go: Admit, and
// plugin/pkg/admission/runtimeclass/admission.go: setOverhead).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// cluster is a loaded cluster file.
type cluster struct {
	nodes   []*corev1.Node
	pods    []*corev1.Pod // in file order
	others  []runtime.Object
	skipped []string // kinds the client-go scheme does not know
}

type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

func loadCluster(path string) (*cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &cluster{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		if err := c.add(path, js); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *cluster) add(path string, js []byte) error {
	var tm typeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if tm.Kind == "List" || (strings.HasSuffix(tm.Kind, "List") && tm.Items != nil) {
		for _, item := range tm.Items {
			if err := c.add(path, item); err != nil {
				return err
			}
		}
		return nil
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(js, nil, nil)
	if err != nil {
		if runtime.IsNotRegisteredError(err) {
			c.skipped = append(c.skipped, tm.Kind)
			return nil
		}
		return fmt.Errorf("%s: %s: %w", path, tm.Kind, err)
	}
	switch o := obj.(type) {
	case *corev1.Node:
		c.nodes = append(c.nodes, o)
	case *corev1.Pod:
		if o.Namespace == "" {
			o.Namespace = "default"
		}
		if o.Spec.SchedulerName == "" {
			o.Spec.SchedulerName = corev1.DefaultSchedulerName
		}
		if o.UID == "" {
			// The fake clientset assigns none; the scheduler keys pods by UID.
			o.UID = types.UID(o.Namespace + "/" + o.Name)
		}
		c.pods = append(c.pods, o)
	default:
		c.others = append(c.others, obj)
	}
	return nil
}

// System classes every API server creates (pkg/apis/scheduling: SystemPriorityClasses).
var systemPriorityClasses = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

// admit fills spec.priority/preemptionPolicy from the PriorityClass (or the
// highest-valued globalDefault class, as getDefaultPriorityClass picks it) and
// spec.overhead from the RuntimeClass. Pods that already carry a priority are kept.
func (c *cluster) admit() {
	type class struct {
		value  int32
		policy *corev1.PreemptionPolicy
	}
	classes := map[string]class{}
	for name, v := range systemPriorityClasses {
		classes[name] = class{value: v}
	}
	var defaultName string
	var defaultClass *class
	overheads := map[string]corev1.ResourceList{}
	for _, o := range c.others {
		switch pc := o.(type) {
		case *schedulingv1.PriorityClass:
			cl := class{value: pc.Value, policy: pc.PreemptionPolicy}
			classes[pc.Name] = cl
			if pc.GlobalDefault && (defaultClass == nil || pc.Value > defaultClass.value) {
				defaultName, defaultClass = pc.Name, &cl
			}
		case *nodev1.RuntimeClass:
			if pc.Overhead != nil && len(pc.Overhead.PodFixed) > 0 {
				overheads[pc.Name] = pc.Overhead.PodFixed
			}
		}
	}
	for _, p := range c.pods {
		if p.Spec.Priority == nil {
			var cl *class
			if p.Spec.PriorityClassName != "" {
				if found, ok := classes[p.Spec.PriorityClassName]; ok {
					cl = &found
				}
			} else if defaultClass != nil {
				p.Spec.PriorityClassName = defaultName
				cl = defaultClass
			}
			if cl != nil {
				v := cl.value
				p.Spec.Priority = &v
				if cl.policy != nil && p.Spec.PreemptionPolicy == nil {
					pol := *cl.policy
					p.Spec.PreemptionPolicy = &pol
				}
			}
		}
		if p.Spec.PreemptionPolicy == nil {
			// The API server's defaulting (pkg/apis/core/v1: SetDefaults_PodSpec).
			pol := corev1.PreemptLowerPriority
			p.Spec.PreemptionPolicy = &pol
		}
		if p.Spec.RuntimeClassName != nil && len(p.Spec.Overhead) == 0 {
			if fixed, ok := overheads[*p.Spec.RuntimeClassName]; ok {
				p.Spec.Overhead = fixed.DeepCopy()
			}
		}
	}
}
