package coll

import "fmt"

// CheckMatrix checks an alltoallv byte matrix of n ranks (m[i][j]: the
// bytes rank i sends rank j): n rows of n entries, none negative and,
// where elem > 0, each a whole number of elem-byte elements. The error
// names the first entry that is wrong; callers say which matrix it is.
func CheckMatrix(m [][]int64, n int, elem int64) error {
	if len(m) != n {
		return fmt.Errorf("%d rows, want %d (one per rank)", len(m), n)
	}
	for i, row := range m {
		if len(row) != n {
			return fmt.Errorf("row %d has %d entries, want %d", i, len(row), n)
		}
		for j, v := range row {
			switch {
			case v < 0:
				return fmt.Errorf("[%d][%d] = %d bytes is negative", i, j, v)
			case elem > 0 && v%elem != 0:
				return fmt.Errorf("[%d][%d] = %d bytes is not a whole number of %d-byte elements", i, j, v, elem)
			}
		}
	}
	return nil
}
