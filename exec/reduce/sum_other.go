//go:build !amd64

package reduce

import "github.com/goring-hpc/goring/coll"

// Without a vector kernel for this architecture the generic loop runs.

const haveVectorSum = false

func sumFloat32(d, s []float32) { apply(coll.Sum, d, s) }

func sumFloat64(d, s []float64) { apply(coll.Sum, d, s) }
