package topo

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarshalParseRoundTrip(t *testing.T) {
	for i, name := range PresetNames() {
		p, err := Preset(name)
		require.NoError(t, err)
		for _, nodes := range []int{1, 3} {
			tp, err := p.Repeat(nodes)
			require.NoError(t, err)
			b, err := Marshal(tp)
			require.NoError(t, err, "case %d", i)
			back, err := Parse(b)
			require.NoError(t, err, "case %d %s x%d", i, name, nodes)
			assert.Equal(t, tp, back, "case %d %s x%d", i, name, nodes)
			b2, err := Marshal(back)
			require.NoError(t, err)
			assert.Equal(t, string(b), string(b2), "case %d: Marshal(Parse(b)) != b", i)
		}
	}
}

func TestParseErrors(t *testing.T) {
	good, err := Marshal(mustPreset(t, "clusterB"))
	require.NoError(t, err)
	tests := []struct {
		doc  string
		want string
	}{
		/*0*/ {``, `topology JSON: EOF`},
		/*1*/ {`{`, `topology JSON: unexpected EOF`},
		/*2*/ {`{"schema":"goring.topo/v0","name":"x","nodes":[]}`, `schema "goring.topo/v0", want "goring.topo/v1"`},
		/*3*/ {`{"schema":"goring.topo/v1","name":"x","nodes":[]}`, `topology "x": no nodes`},
		/*4*/ {`{"schema":"goring.topo/v1","bogus":1}`, `unknown field "bogus"`},
		/*5*/ {string(good) + `{}`, `trailing data after the document`},
		/*6*/ {string(bytes.Replace(good, []byte(`"a": "gpu:0"`), []byte(`"a": "gpu:9"`), 1)), `endpoint gpu:9: GPU 9 out of range (0..3)`},
		/*7*/ {string(bytes.Replace(good, []byte(`"count": 6`), []byte(`"count": 0`), 1)), `count 0 must be at least 1`},
		/*8*/ {`{"schema":"goring.topo/v1","nodes":[{"sockets":"two"}]}`, `cannot unmarshal string`},
		/*9*/ {`null`, `schema "", want "goring.topo/v1"`},
	}
	for i, tt := range tests {
		_, err := Parse([]byte(tt.doc))
		require.Error(t, err, "case %d", i)
		assert.Contains(t, err.Error(), tt.want, "case %d", i)
	}
}

func TestParseNormalizesEmptyLists(t *testing.T) {
	doc := `{"schema":"goring.topo/v1","name":"one","rails":[],"nodes":[{"name":"a","sockets":1,"nics":[],
	  "gpus":[{"index":0,"socket":0,"numa":0,"rail":-1},{"index":1,"socket":0,"numa":0,"rail":-1}],
	  "links":[{"kind":"nvlink","a":"gpu:0","b":"gpu:1","count":2,"alpha_us":1,"beta_GBps":25,"full_duplex":true}]}]}`
	tp, err := Parse([]byte(doc))
	require.NoError(t, err)
	assert.Nil(t, tp.Rails)
	assert.Nil(t, tp.Nodes[0].NICs)
	b, err := Marshal(tp)
	require.NoError(t, err)
	back, err := Parse(b)
	require.NoError(t, err)
	assert.Equal(t, tp, back)
}

func mustPreset(t testing.TB, name string) *Topology {
	t.Helper()
	p, err := Preset(name)
	require.NoError(t, err)
	return p
}

// FuzzParse: Parse never panics, and whatever it accepts re-marshals to a
// document that parses to an equal value and marshals to the same bytes.
func FuzzParse(f *testing.F) {
	for _, name := range PresetNames() {
		b, err := Marshal(mustPreset(f, name))
		require.NoError(f, err)
		f.Add(b)
	}
	two, _ := mustPreset(f, "clusterA").Repeat(2)
	b, _ := Marshal(two)
	f.Add(b)
	f.Add([]byte(`{"schema":"goring.topo/v1","name":"x","nodes":[{"name":"a","sockets":1,"gpus":[{"index":0,"socket":0,"numa":0,"rail":-1}],"links":null}]}`))
	f.Add([]byte(`{"schema":"goring.topo/v1","nodes":[{"gpus":[{"index":0}],"links":[{"kind":"nic","a":"nic:0","b":"rail:0","count":1,"beta_GBps":1}]}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, err := Parse(data)
		if err != nil {
			require.Nil(t, tp)
			return
		}
		b, err := Marshal(tp)
		require.NoError(t, err)
		back, err := Parse(b)
		require.NoError(t, err, "re-parsing our own output:\n%s", b)
		require.Equal(t, tp, back)
		b2, err := Marshal(back)
		require.NoError(t, err)
		require.Equal(t, string(b), string(b2))
	})
}
