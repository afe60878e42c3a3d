package team

import "testing"

func TestStageRemoteWantedWithoutRDMAOrWhenTold(t *testing.T) {
	for _, c := range []struct {
		env  string
		rdma int
		want bool
	}{
		{"", 0, true}, {"", 2, false}, {"1", 2, true}, {"0", 0, false}, {"yes", 0, true}, {"yes", 1, false},
	} {
		if got := stageRemoteWanted(c.env, c.rdma); got != c.want {
			t.Errorf("stageRemoteWanted(%q, %d) = %v, want %v", c.env, c.rdma, got, c.want)
		}
	}
}
