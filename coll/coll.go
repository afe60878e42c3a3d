package coll

import (
	"fmt"
	"sort"
	"strings"
)

// Collective is one of the collective operations goring schedules.
type Collective string

// The collectives of docs/contracts.md. Byte counts follow UCC's meaning: allgather
// counts each rank's contribution, allreduce the whole vector, reduce_scatter
// each rank's output block, bcast the message. Dispatch and combine (MoE
// token traffic, package moe) count one token row.
const (
	Allgather     Collective = "allgather"
	Allreduce     Collective = "allreduce"
	ReduceScatter Collective = "reduce_scatter"
	Alltoallv     Collective = "alltoallv"
	Bcast         Collective = "bcast"
	// Dispatch sends every token row to the ranks of its top-k experts,
	// grouped by expert there (docs/contracts.md "dispatch and combine").
	Dispatch Collective = "dispatch"
	// Combine returns every expert's output row to the token's owner,
	// which sums a token's k rows in a fixed order.
	Combine Collective = "combine"
)

// Collectives lists every collective in a stable order.
var Collectives = []Collective{Allgather, Allreduce, ReduceScatter, Alltoallv, Bcast, Dispatch, Combine}

// ParseCollective maps a name to a Collective.
func ParseCollective(s string) (Collective, error) {
	for _, c := range Collectives {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown collective %q (known: %s)", s, joinNames(Collectives))
}

// Reduces reports whether the collective combines data with a reduction op.
func (c Collective) Reduces() bool { return c == Allreduce || c == ReduceScatter || c == Combine }

// Routed reports whether the collective's traffic follows an MoE routing
// (package moe) rather than a byte count per rank.
func (c Collective) Routed() bool { return c == Dispatch || c == Combine }

// Reduction is the datatype and operator a call of c reduces with: d and o
// when c reduces, none (the invalid zero values) when it only moves bytes.
// Callers pass whatever the user or UCC gave; a moving collective's dtype
// is meaningless, and an executor handed one would look for a reduction
// kernel it never needs.
func (c Collective) Reduction(d Dtype, o Op) (Dtype, Op) {
	if !c.Reduces() {
		return DtypeInvalid, OpInvalid
	}
	return d, o
}

func joinNames[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}

// Dtype is an element type of a reduction, with UCC's set of types.
type Dtype uint8

// Datatypes. The zero value is invalid so a forgotten field is caught.
const (
	DtypeInvalid Dtype = iota
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float16
	Bfloat16
	Float32
	Float64
)

var dtypeNames = map[Dtype]string{
	Int8: "int8", Int16: "int16", Int32: "int32", Int64: "int64",
	Uint8: "uint8", Uint16: "uint16", Uint32: "uint32", Uint64: "uint64",
	Float16: "float16", Bfloat16: "bfloat16", Float32: "float32", Float64: "float64",
}

var dtypeSizes = map[Dtype]int{
	Int8: 1, Int16: 2, Int32: 4, Int64: 8,
	Uint8: 1, Uint16: 2, Uint32: 4, Uint64: 8,
	Float16: 2, Bfloat16: 2, Float32: 4, Float64: 8,
}

// Dtypes lists every valid datatype in a stable order.
var Dtypes = []Dtype{Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Float16, Bfloat16, Float32, Float64}

// Size is the element size in bytes (0 for an invalid type).
func (d Dtype) Size() int { return dtypeSizes[d] }

// IsFloat reports whether the type is a floating-point type.
func (d Dtype) IsFloat() bool { return d == Float16 || d == Bfloat16 || d == Float32 || d == Float64 }

func (d Dtype) String() string {
	if n, ok := dtypeNames[d]; ok {
		return n
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// ParseDtype maps a name such as "float32" to a Dtype.
func ParseDtype(s string) (Dtype, error) {
	for _, d := range Dtypes {
		if dtypeNames[d] == s {
			return d, nil
		}
	}
	names := make([]string, 0, len(Dtypes))
	for _, d := range Dtypes {
		names = append(names, d.String())
	}
	return DtypeInvalid, fmt.Errorf("unknown dtype %q (known: %s)", s, strings.Join(names, ", "))
}

// Op is a reduction operator, with UCC's set of operators.
type Op uint8

// Reduction operators. The zero value is invalid.
const (
	OpInvalid Op = iota
	Sum
	Prod
	Min
	Max
	Land
	Lor
	Band
	Bor
	Bxor
)

var opNames = map[Op]string{
	Sum: "sum", Prod: "prod", Min: "min", Max: "max",
	Land: "land", Lor: "lor", Band: "band", Bor: "bor", Bxor: "bxor",
}

// Ops lists every valid operator in a stable order.
var Ops = []Op{Sum, Prod, Min, Max, Land, Lor, Band, Bor, Bxor}

func (o Op) String() string {
	if n, ok := opNames[o]; ok {
		return n
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Bitwise reports whether the operator works on bits (band, bor, bxor),
// which UCC defines only for integer types.
func (o Op) Bitwise() bool { return o == Band || o == Bor || o == Bxor }

// ParseOp maps a name such as "sum" to an Op.
func ParseOp(s string) (Op, error) {
	for _, o := range Ops {
		if opNames[o] == s {
			return o, nil
		}
	}
	names := make([]string, 0, len(opNames))
	for _, n := range opNames {
		names = append(names, n)
	}
	sort.Strings(names)
	return OpInvalid, fmt.Errorf("unknown op %q (known: %s)", s, strings.Join(names, ", "))
}

// Supports reports whether op is defined for dtype, following UCC: bitwise
// operators only on integers.
func Supports(o Op, d Dtype) bool {
	if d.Size() == 0 || opNames[o] == "" {
		return false
	}
	return !(o.Bitwise() && d.IsFloat())
}

// CombineSums reports whether combine sums token rows of dtype d: its
// reducing kernels serve bfloat16 and float32 rows only.
func CombineSums(d Dtype) bool { return d == Bfloat16 || d == Float32 }
