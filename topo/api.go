package topo

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/goring-hpc/goring/jsondoc"
)

// presets maps a preset name to its constructor (one node). Each preset file
// registers itself here.
var presets = map[string]func() *Topology{}

// PresetNames lists the preset names in order.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns a fresh copy of the named single-node preset.
func Preset(name string) (*Topology, error) {
	mk, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("unknown topology preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	return mk(), nil
}

// Parse decodes a goring.topo/v1 document and validates it.
func Parse(data []byte) (*Topology, error) {
	var t Topology
	if err := jsondoc.Decode(data, &t, true); err != nil {
		return nil, fmt.Errorf("topology JSON: %w", err)
	}
	if t.Schema != Schema {
		return nil, fmt.Errorf("topology JSON: schema %q, want %q", t.Schema, Schema)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	t.normalize()
	return &t, nil
}

// normalize makes empty optional lists nil, as Marshal leaves them out:
// then Parse(Marshal(t)) equals t for every t that Parse returns.
func (t *Topology) normalize() {
	if len(t.Rails) == 0 {
		t.Rails = nil
	}
	for i := range t.Nodes {
		if len(t.Nodes[i].NICs) == 0 {
			t.Nodes[i].NICs = nil
		}
	}
}

// Marshal encodes t as an indented goring.topo/v1 document. Encoding the
// result of Parse gives the same bytes back.
func Marshal(t *Topology) ([]byte, error) {
	c := *t
	c.Schema = Schema
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Repeat returns a topology of n copies of t's node (t must describe exactly
// one kind of node: a single node, or nodes identical but for their names).
func (t *Topology) Repeat(n int) (*Topology, error) {
	if n < 1 {
		return nil, fmt.Errorf("--nodes %d: want at least 1", n)
	}
	if len(t.Nodes) == 0 {
		return nil, fmt.Errorf("topology %q has no node to repeat", t.Name)
	}
	if len(t.Nodes) > 1 && n != len(t.Nodes) {
		return nil, fmt.Errorf("topology %q already has %d nodes; cannot repeat it to %d", t.Name, len(t.Nodes), n)
	}
	if len(t.Nodes) == n {
		return t, nil
	}
	out := *t
	out.Nodes = make([]Node, n)
	for i := range out.Nodes {
		out.Nodes[i] = cloneNode(t.Nodes[0])
		out.Nodes[i].Name = fmt.Sprintf("node%d", i)
	}
	return &out, nil
}

func cloneNode(n Node) Node {
	c := n
	c.GPUs = append([]GPU(nil), n.GPUs...)
	c.NICs = append([]NICPort(nil), n.NICs...)
	c.Links = append([]Link(nil), n.Links...)
	return c
}
