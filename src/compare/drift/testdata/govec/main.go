// govec answers the cases of ../cases.py with the Go libraries helm-controller 1.6 builds with, one
// JSON answer per input line: a patch (wI2L/jsondiff Compare with Rationalize, as fluxcd/pkg
// ssa/jsondiff calls it), a removal of ignore paths (evanphx/json-patch remove operations with missing
// paths allowed and negative indexes, as ssa/jsondiff.ApplyPatchToUnstructured applies them), or a label
// selector (k8s.io/apimachinery labels.Parse and Matches). Not part of any build: run by hand,
//
//	cd src/drift/testdata && python3 cases.py > /tmp/cases.jsonl
//	(cd govec && GOFLAGS=-mod=mod go build -o /tmp/govec .) && /tmp/govec < /tmp/cases.jsonl > /tmp/answers.jsonl
//
// then join each case with its answer as {"case":…,"go":…} into go-vectors.jsonl (the module cache of
// scripts/tools.sh, GOMODCACHE=~/.cache/cozyhr-e2e/gomod with GOPROXY=off, holds every module it needs).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/wI2L/jsondiff"
	"k8s.io/apimachinery/pkg/labels"
)

type Case struct {
	Src      any               `json:"src,omitempty"`
	Tgt      any               `json:"tgt,omitempty"`
	Doc      any               `json:"doc,omitempty"`
	Paths    []string          `json:"paths,omitempty"`
	Selector *string           `json:"selector,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			panic(err)
		}
		var out any
		switch {
		case c.Selector != nil:
			s, err := labels.Parse(*c.Selector)
			if err != nil {
				out = map[string]any{"error": true}
			} else {
				out = map[string]any{"match": s.Matches(labels.Set(c.Labels))}
			}
		case c.Paths != nil:
			var patch jsondiff.Patch
			for _, p := range c.Paths {
				patch = append(patch, jsondiff.Operation{Type: jsondiff.OperationRemove, Path: p})
			}
			pj, _ := json.Marshal(patch)
			var applier jsonpatch.Patch
			if err := json.Unmarshal(pj, &applier); err != nil {
				panic(err)
			}
			dj, _ := json.Marshal(c.Doc)
			res, err := applier.ApplyWithOptions(dj, &jsonpatch.ApplyOptions{SupportNegativeIndices: true, AllowMissingPathOnRemove: true})
			if err != nil {
				out = map[string]any{"error": true}
			} else {
				var v any
				_ = json.Unmarshal(res, &v)
				out = map[string]any{"doc": v}
			}
		default:
			patch, err := jsondiff.Compare(c.Src, c.Tgt, jsondiff.Rationalize())
			if err != nil {
				panic(err)
			}
			ops := [][]string{}
			for _, op := range patch {
				ops = append(ops, []string{op.Type, op.Path})
			}
			out = ops
		}
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
	}
}
