package main

import (
	"fmt"

	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/units"
)

// The words of the --svg timeline: the size in its title, the short label
// inside a box and the full step a box shows on hover.

func bytesLabel(n int64) string {
	s := units.FormatBytes(n)
	if s == fmt.Sprint(n) {
		return s + " B"
	}
	return s
}

func stepLabel(s *sched.Step) string {
	switch s.Op {
	case sched.OpSend:
		return fmt.Sprintf("→%d", s.Peer)
	case sched.OpRecv:
		return fmt.Sprintf("←%d", s.Peer)
	case sched.OpCopy:
		return "cp"
	default:
		return "+"
	}
}

func stepText(plan *sched.Plan, r, id int) string {
	s := &plan.Ranks[r].Steps[id]
	deps := plan.Ranks[r].Deps(id)
	switch s.Op {
	case sched.OpSend:
		return fmt.Sprintf("rank %d step %d: send %s[%d,+%d) to %d tag %d, deps %v", r, id, s.SrcBuf, s.SrcOff, s.Len, s.Peer, s.Tag, deps)
	case sched.OpRecv:
		return fmt.Sprintf("rank %d step %d: recv %s[%d,+%d) from %d tag %d, deps %v", r, id, s.DstBuf, s.DstOff, s.Len, s.Peer, s.Tag, deps)
	default:
		return fmt.Sprintf("rank %d step %d: %s %s[%d,+%d) into %s[%d], deps %v", r, id, s.Op, s.SrcBuf, s.SrcOff, s.Len, s.DstBuf, s.DstOff, deps)
	}
}
