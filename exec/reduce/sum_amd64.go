package reduce

// Vector sums for the two dtypes that training gradients use, in
// assembly (sum_amd64.s): Go does not vectorise loops, and the scalar
// float32 loop reduces at 3–6 GB/s, slower than the shared-memory copies
// it alternates with in a host allreduce. Same IEEE additions, element by
// element, so the results equal the Go loop's bit for bit.

//go:noescape
func sumFloat32(d, s []float32)

//go:noescape
func sumFloat64(d, s []float64)

const haveVectorSum = true
