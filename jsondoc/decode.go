package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ErrTrailing is Decode's error for input that goes on after the
// document (two files run together, a stray bracket).
var ErrTrailing = errors.New("trailing data after the document")

// Decode decodes data into v as one JSON document and nothing after it;
// strict refuses fields v does not have. Only the end of the input ends
// the document: json.Decoder.More is false in front of a closing bracket,
// so a stray '}' or ']' after the document would pass it.
func Decode(data []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return ErrTrailing
	}
	return nil
}
