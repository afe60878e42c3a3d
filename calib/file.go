package calib

import "os"

// ReadFile reads and validates the calibration document in file: the one
// function of the package that touches the file system (Parse does the
// rest), so that the CLI's --calibration and the team layer's
// UCC_TL_GORING_CALIBRATION read a file the same way. Callers name the
// flag or option in their errors.
func ReadFile(file string) (*Calibration, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}
