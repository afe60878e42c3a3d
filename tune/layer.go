package tune

import "fmt"

// Layer is what one collective layer's software adds to the transfers of
// the algorithm it runs: a cost once per call (entry, lookup, completion)
// and one per message between two ranks (posting, matching, a
// rendezvous), both in microseconds. The links' own startups and rates
// are the regime's and the same for every layer.
type Layer struct {
	Name      string
	CallUS    float64
	MessageUS float64
}

func (l Layer) validate() error {
	if l.CallUS < 0 || l.MessageUS < 0 {
		return fmt.Errorf("tune: layer %s: call %g us, message %g us: want costs not negative", l.Name, l.CallUS, l.MessageUS)
	}
	return nil
}
