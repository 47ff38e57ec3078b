// Command celcost prints kube's estimated worst-case cost (CompilationResult.MaxCost) of DRA
// CEL selector expressions, as kube-apiserver v1.37.2 computes it when it validates a
// ResourceClaim, ResourceClaimTemplate or DeviceClass
// (pkg/apis/resource/validation/validation.go validateCELExpression): the NewExpressions
// environment of k8s.io/dynamic-resource-allocation/cel with the default 1.37 gates
// (DRAConsumableCapacity on, DRAListTypeAttributes off).
//
// Input: one JSON string (an expression) per line on stdin. Output: one JSON object per
// line, {"maxCost": N} or {"error": "..."}. tests/test_cel_cost.py compares it with
// wasmsched.api.cel.cost.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

func main() {
	listTypeAttributes := flag.Bool("list-type-attributes", false, "enable DRAListTypeAttributes")
	consumableCapacity := flag.Bool("consumable-capacity", true, "enable DRAConsumableCapacity")
	flag.Parse()
	compiler := dracel.GetCompiler(dracel.Features{
		EnableConsumableCapacity: *consumableCapacity,
		EnableListTypeAttributes: *listTypeAttributes,
	})
	envType := environment.NewExpressions
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	for in.Scan() {
		var expression string
		if err := json.Unmarshal(in.Bytes(), &expression); err != nil {
			fmt.Fprintf(os.Stderr, "celcost: input line is not a JSON string: %v\n", err)
			os.Exit(2)
		}
		result := compiler.CompileCELExpression(expression, dracel.Options{EnvType: &envType})
		var line map[string]any
		if result.Error != nil {
			line = map[string]any{"error": result.Error.Detail}
		} else {
			line = map[string]any{"maxCost": result.MaxCost}
		}
		if err := encoder.Encode(line); err != nil {
			fmt.Fprintf(os.Stderr, "celcost: %v\n", err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "celcost: %v\n", err)
		os.Exit(2)
	}
}
