package team

import "testing"

func TestStripeLanesOnePerNamedDevice(t *testing.T) {
	for _, c := range []struct {
		devs, set string
		want      string
		ok        bool
	}{
		{"", "", "", false},
		{"rail0", "", "", false},
		{"rail0,rail1", "", "2", true},
		{" rail0, rail1 ,rail2,", "", "3", true},
		{"mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1", "", "4", true},
		{"all", "", "", false},
		{"rail0,all", "", "", false},
		{"rail0,rail1", "1", "", false}, // the caller's own setting stands
		{"d0,d1,d2,d3,d4,d5,d6,d7,d8,d9", "", "8", true},
	} {
		got, ok := stripeLanes(c.devs, c.set)
		if got != c.want || ok != c.ok {
			t.Errorf("stripeLanes(%q, %q) = %q, %v; want %q, %v", c.devs, c.set, got, ok, c.want, c.ok)
		}
	}
}
