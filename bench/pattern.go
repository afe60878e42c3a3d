package bench

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
)

// Pattern generates the inputs of one collective call and checks its
// outputs, for validation. The same Pattern serves every rank.
type Pattern struct {
	Coll   coll.Collective
	Dtype  coll.Dtype // reductions only
	Op     coll.Op    // reductions only
	NRanks int
	Bytes  int64     // UCC's meaning (see package coll)
	Counts [][]int64 // alltoallv byte matrix
	Root   int       // bcast
	// Routing is the token traffic of dispatch and combine (dispatch.go).
	Routing *moe.Routing
	moe     moePattern
}

// SrcBytes and DstBytes are the buffer sizes rank r needs.
func (p *Pattern) SrcBytes(r int) int64 {
	if p.Routing != nil {
		src, _ := p.moeBytes(r)
		return src
	}
	switch p.Coll {
	case coll.ReduceScatter:
		return int64(p.NRanks) * p.Bytes
	case coll.Alltoallv:
		var s int64
		for _, c := range p.Counts[r] {
			s += c
		}
		return s
	}
	return p.Bytes
}

// DstBytes is rank r's output size.
func (p *Pattern) DstBytes(r int) int64 {
	if p.Routing != nil {
		_, dst := p.moeBytes(r)
		return dst
	}
	switch p.Coll {
	case coll.Allgather:
		return int64(p.NRanks) * p.Bytes
	case coll.Alltoallv:
		var s int64
		for i := range p.Counts {
			s += p.Counts[i][r]
		}
		return s
	}
	return p.Bytes
}

// patternByte is the input byte at index x of rank r's src in iteration
// it, for collectives that only move data. Each byte of x (and of r)
// weighs in with an odd factor, so that blocks a multiple of 256, 64 Ki,
// 16 Mi... bytes apart never look alike: a byte's term alone repeats
// after 256 of its units, and without the terms of the higher bytes the
// pattern repeated every 16 MiB (an alltoallv's 16 MiB blocks for two
// peers were the same bytes) and ranks 256 apart had the same input.
func patternByte(r, it int, x int64) byte {
	return byte(x*131 + int64(r)*29 + int64(it)*17 + (x>>8)*7 + (x>>16)*3 +
		(x>>24)*5 + (x>>32)*9 + (x>>40)*11 + (x>>48)*13 + (x>>56)*15 + int64(r>>8)*37)
}

// FillSrc writes rank r's input for iteration it into src.
func (p *Pattern) FillSrc(src []byte, r, it int) {
	if p.Routing != nil {
		p.moeFill(src, r, it)
		return
	}
	if !p.Coll.Reduces() {
		for x := range src {
			src[x] = patternByte(r, it, int64(x))
		}
		return
	}
	es := p.Dtype.Size()
	for e := 0; e+es <= len(src); e += es {
		p.putValue(src[e:e+es], p.value(r, it, int64(e/es)))
	}
}

// signed reports whether negative values can be encoded.
func (p *Pattern) signed() bool {
	switch p.Dtype {
	case coll.Uint8, coll.Uint16, coll.Uint32, coll.Uint64:
		return false
	}
	return true
}

// value is rank r's element e in iteration it of a reduction. Values are
// small integers chosen per op so that the result and every partial result
// are exact in every datatype, whatever the reduction order:
// sums stay within ±64 (unsigned: 128), products within ±4 (one or two
// ranks per element contribute a 2), min/max within ±100.
//
// Two more properties make a wrong call fail: the result of every op
// changes from one iteration to the next on most elements (a reposted
// call that did not run leaves the previous one's), and no two ranks'
// sum, prod or bxor inputs are alike (a rank's contribution taken in
// place of another's). So sums, and the rare values of land, lor, band
// and bor, draw from a hash of (e, r, it): a linear mix modulo a small
// number repeats over ranks (sums modulo 2*64/n+1 once n > 8) or over
// iterations. Products rotate the 2 over every rank within n elements
// and add a second 2 on the third of the elements that moves with it, so
// that an unsigned product (1s and 2s) is not 2 in every iteration.
func (p *Pattern) value(r, it int, e int64) int64 {
	n := int64(max(p.NRanks, 1))
	switch p.Op {
	case coll.Sum:
		a := max(1, 64/n)
		h := int64(mixHash(e, r, it) % uint64(2*a+1))
		if p.signed() {
			return h - a
		}
		return h
	case coll.Prod:
		v := int64(1)
		holder := (e + int64(it)*3) % n
		second := n > 1 && (e+int64(it))%3 == 0 && (holder+1)%n == int64(r)
		if holder == int64(r) || second {
			v = 2
		}
		if p.signed() && (e+int64(r)+int64(it))%7 == 0 {
			v = -v
		}
		return v
	case coll.Min, coll.Max:
		v := (e*13 + int64(r)*7 + int64(it)*3) % 201
		if p.signed() {
			return v - 100
		}
		return v
	case coll.Land, coll.Lor:
		// Rare zeros for land, rare ones for lor, so both outcomes occur;
		// hashed, as a linear mix modulo 2n can put them on the same
		// elements in consecutive iterations (n = 3).
		z := mixHash(e, r, it)%uint64(2*n) == 0
		if p.Op == coll.Land {
			return b2i(!z)
		}
		return b2i(z)
	case coll.Band, coll.Bor:
		// Each of 7 bits is rarely 0 for band, rarely 1 for bor (about one
		// chance in 2n, from its own 9 bits of the hash; a compare, not a
		// modulo, as this runs n times per checked element): with even
		// odds per bit, n >= 5 ranks would and every element to 0 and or
		// it to 0x7f, in every iteration and without any one rank.
		h, below := mixHash(e, r, it), uint64(max(1, 512/(2*n)))
		var rare int64
		for b := range 7 {
			if h>>(9*b)&0x1ff < below {
				rare |= 1 << b
			}
		}
		if p.Op == coll.Band {
			return 0x7f &^ rare
		}
		return rare
	case coll.Bxor:
		return (e*37 + int64(r)*101 + int64(it)*59) & 0x7f
	}
	return 0
}

// mixHash scrambles (e, r, it) into 64 bits whose residues modulo any
// small number look independent across all three (a multiply-xorshift
// finalizer over odd-constant products).
func mixHash(e int64, r, it int) uint64 {
	x := uint64(e)*0x9e3779b97f4a7c15 ^ uint64(r+1)*0xc2b2ae3d27d4eb4f ^ uint64(it+1)*0x165667b19e3779f9
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	return x
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// expected folds element e over all ranks.
func (p *Pattern) expected(it int, e int64) int64 {
	acc := p.value(0, it, e)
	for r := 1; r < p.NRanks; r++ {
		v := p.value(r, it, e)
		switch p.Op {
		case coll.Sum:
			acc += v
		case coll.Prod:
			acc *= v
		case coll.Min:
			acc = min(acc, v)
		case coll.Max:
			acc = max(acc, v)
		case coll.Land:
			acc = b2i(acc != 0 && v != 0)
		case coll.Lor:
			acc = b2i(acc != 0 || v != 0)
		case coll.Band:
			acc &= v
		case coll.Bor:
			acc |= v
		case coll.Bxor:
			acc ^= v
		}
	}
	return acc
}

var ne = binary.NativeEndian

// putValue encodes the small integer v as one element of p.Dtype.
func (p *Pattern) putValue(b []byte, v int64) {
	switch p.Dtype {
	case coll.Int8, coll.Uint8:
		b[0] = byte(v)
	case coll.Int16, coll.Uint16:
		ne.PutUint16(b, uint16(v))
	case coll.Int32, coll.Uint32:
		ne.PutUint32(b, uint32(v))
	case coll.Int64, coll.Uint64:
		ne.PutUint64(b, uint64(v))
	case coll.Float16:
		ne.PutUint16(b, Float16FromInt(v))
	case coll.Bfloat16:
		// bfloat16 is the top half of a float32; small integers are exact.
		ne.PutUint16(b, uint16(math.Float32bits(float32(v))>>16))
	case coll.Float32:
		ne.PutUint32(b, math.Float32bits(float32(v)))
	case coll.Float64:
		ne.PutUint64(b, math.Float64bits(float64(v)))
	}
}

// Float16FromInt encodes an integer of magnitude at most 2048 exactly as an
// IEEE 754 half-precision number.
func Float16FromInt(v int64) uint16 {
	var sign uint16
	if v < 0 {
		sign, v = 0x8000, -v
	}
	if v == 0 {
		return sign
	}
	exp := 63 - bits.LeadingZeros64(uint64(v)) // floor(log2 v)
	var mant uint64
	if exp <= 10 {
		mant = uint64(v)<<(10-exp) - 1<<10
	} else {
		mant = uint64(v)>>(exp-10) - 1<<10
	}
	return sign | uint16(exp+15)<<10 | uint16(mant)
}

// ValidationError reports the first wrong output byte or element.
type ValidationError struct {
	Rank, Iteration int
	Offset          int64 // byte offset in dst
	Got, Want       string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("validation failed on rank %d, iteration %d: dst byte %d is %s, want %s", e.Rank, e.Iteration, e.Offset, e.Got, e.Want)
}

// Check compares rank r's output of iteration it with what the collective
// must produce and returns a *ValidationError at the first difference.
func (p *Pattern) Check(dst []byte, r, it int) error {
	if int64(len(dst)) != p.DstBytes(r) {
		return fmt.Errorf("rank %d: dst is %d bytes, want %d", r, len(dst), p.DstBytes(r))
	}
	if p.Routing != nil {
		return p.moeCheck(dst, r, it)
	}
	bad := func(off int64, got, want byte) error {
		return &ValidationError{Rank: r, Iteration: it, Offset: off, Got: fmt.Sprintf("%#02x", got), Want: fmt.Sprintf("%#02x", want)}
	}
	switch p.Coll {
	case coll.Allgather:
		for j := 0; j < p.NRanks; j++ {
			base := int64(j) * p.Bytes
			for x := int64(0); x < p.Bytes; x++ {
				if w := patternByte(j, it, x); dst[base+x] != w {
					return bad(base+x, dst[base+x], w)
				}
			}
		}
	case coll.Bcast:
		for x := range dst {
			if w := patternByte(p.Root, it, int64(x)); dst[x] != w {
				return bad(int64(x), dst[x], w)
			}
		}
	case coll.Alltoallv:
		var rd int64
		for i := 0; i < p.NRanks; i++ {
			var sd int64
			for k := 0; k < r; k++ {
				sd += p.Counts[i][k]
			}
			for x := int64(0); x < p.Counts[i][r]; x++ {
				if w := patternByte(i, it, sd+x); dst[rd+x] != w {
					return bad(rd+x, dst[rd+x], w)
				}
			}
			rd += p.Counts[i][r]
		}
	case coll.Allreduce, coll.ReduceScatter:
		es := p.Dtype.Size()
		var first int64 // element index of dst[0] in the full vector
		if p.Coll == coll.ReduceScatter {
			first = int64(r) * p.Bytes / int64(es)
		}
		want := make([]byte, es)
		for off := 0; off+es <= len(dst); off += es {
			p.putValue(want, p.expected(it, first+int64(off/es)))
			for k := 0; k < es; k++ {
				if dst[off+k] != want[k] {
					return &ValidationError{Rank: r, Iteration: it, Offset: int64(off),
						Got: fmt.Sprintf("%x", dst[off:off+es]), Want: fmt.Sprintf("%x (%s %d)", want, p.Dtype, p.expected(it, first+int64(off/es)))}
				}
			}
		}
	default:
		return fmt.Errorf("no validation rule for collective %q", p.Coll)
	}
	return nil
}
