package team

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/devsync"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/nodeexec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/units"
)

// options are a context's settings, parsed from the options string of
// goring_context_create (the shim builds it from UCC_TL_GORING_*).
type options struct {
	tls     string
	algs    map[coll.Collective]string
	chosen  map[coll.Collective]bool // algs the user named (alg_<coll>, not auto)
	timeout time.Duration            // 0: none (the timeout policy: exec/deadline.go)
	noIPC   bool                     // ipc=n: CUDA buffers on one host go through UCX's cuda_ipc
	lanes   int                      // lanes=W: UCX workers per rank, each driving part of a host buffer (lanes.go); 0: auto
	// calibration: a goring.calibration/v1 file; the push engine splits
	// transfers between GPUs of the host with it (calibration.go).
	calibration string
	// claims: a goring.claims/v1 file, the machine's own measured table
	// of goring against UCC's GPU layers (claims.go).
	claims    string
	keepAwake time.Duration // the runtime keeper's interval (awake.go); 0: off
	// cpathMax is the largest host call (bytes of the vector per rank)
	// that runs in the C executor once its plan is cached (cpath.go); 0:
	// none.
	cpathMax int64
	// fixedScores turns the model's scores off (scores=fixed): goring
	// keeps its default score everywhere (scores.go).
	fixedScores bool
	// crossmem: host allreduce and allgather of a team on one host by
	// reading the peers' memory (crossmem.go): crossmemOff, crossmemAuto,
	// or a thread count for every such call above cpathMax.
	crossmem int
	// nodeMax is the node kernels' slot: the largest call (an allreduce's
	// vector, a reduce_scatter's input, an allgather's output, bytes) that
	// runs as a node kernel (node.go); 0: none.
	nodeMax int64
	// nodeLinger is how long a node kernel stays on the GPU for the team's
	// next call (nodeexec.SetLinger): 0 launches every call.
	nodeLinger time.Duration
	// nodeLL is the largest node call that moves its data in tagged
	// lines (nodeexec.SetLLMax): 0 none.
	nodeLL int64
}

// maxNodeLinger bounds node_linger: work that waits for the whole device
// waits for a lingering kernel this long at most.
const maxNodeLinger = 10 * time.Millisecond

// maxNodeLL bounds node_ll: the most a rank of a pair can send its peer
// in tagged lines (two regions of twice the payload in the LL area).
const maxNodeLL = devsync.LLAreaBytes / 4

// defaultNodeMax is the default slot of the node kernels: two slots of it
// per GPU per team that runs one (128 MiB).
const defaultNodeMax = 64 << 20

// maxNodeMax bounds the option (two slots of it are allocated per GPU).
const maxNodeMax = 1 << 30

const (
	crossmemOff  = 0
	crossmemAuto = -1
)

// parseOptions reads "key=value;key=value" (semicolons: UCX transport
// lists contain commas). Unknown keys and bad values
// are errors: a typo in UCC_TL_GORING_* must not pass silently.
func parseOptions(s string) (options, error) {
	o := options{algs: map[coll.Collective]string{}, chosen: map[coll.Collective]bool{}, lanes: 1, keepAwake: defaultKeepAwake, cpathMax: defaultCPathMax, nodeMax: defaultNodeMax, nodeLinger: nodeexec.DefaultLinger, nodeLL: nodeexec.DefaultLLMax}
	for _, c := range coll.Collectives {
		if a := choose.Base(c); a != "" && !c.Routed() {
			o.algs[c] = a
		}
	}
	for _, kv := range strings.Split(s, ";") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return o, fmt.Errorf("option %q: want key=value", kv)
		}
		switch {
		case k == "tls":
			o.tls = v
		case k == "timeout_ms":
			// "inf", the default, is no deadline (exec/deadline.go says why).
			if v == "inf" {
				o.timeout = 0
				break
			}
			ms, err := strconv.ParseInt(v, 10, 64)
			if err != nil || ms <= 0 || ms > math.MaxInt64/int64(time.Millisecond) {
				return o, fmt.Errorf("option timeout_ms=%q: want inf (no deadline, the default) or a positive whole number of milliseconds", v)
			}
			o.timeout = time.Duration(ms) * time.Millisecond
		case k == "ipc":
			switch strings.ToLower(v) {
			case "y", "yes", "1", "on", "true":
				o.noIPC = false
			case "n", "no", "0", "off", "false":
				o.noIPC = true
			default:
				return o, fmt.Errorf("option ipc=%q: want y or n", v)
			}
		case k == "lanes":
			if strings.EqualFold(v, "auto") {
				o.lanes = 0
				break
			}
			w, err := strconv.Atoi(v)
			if err != nil || coll.CheckLanes(coll.Allreduce, w) != nil {
				return o, fmt.Errorf("option lanes=%q: want auto or a whole number of lanes from 1 (the default) to %d", v, coll.MaxLanes)
			}
			o.lanes = w
		case k == "calibration":
			o.calibration = v
		case k == "claims":
			o.claims = v
		case k == "keepawake":
			d, err := parseKeepAwake(v)
			if err != nil {
				return o, err
			}
			o.keepAwake = d
		case k == "cpath_max":
			n, err := units.ParseBytes(v)
			if err != nil || n > maxCPathMax {
				return o, fmt.Errorf("option cpath_max=%q: want a byte count from 0 (the C path off) to %d, with an optional suffix (K, M, KiB, MiB)", v, maxCPathMax)
			}
			o.cpathMax = n
		case k == "scores":
			switch v {
			case "model":
				o.fixedScores = false
			case "fixed":
				o.fixedScores = true
			default:
				return o, fmt.Errorf("option scores=%q: want model (the default: goring claims where its model predicts it faster than tl/ucp) or fixed", v)
			}
		case k == "node_max":
			n, err := units.ParseBytes(v)
			if err != nil || n < 0 || n > maxNodeMax {
				return o, fmt.Errorf("option node_max=%q: want a byte count from 0 (node kernels off) to %d, with an optional suffix (K, M, KiB, MiB)", v, maxNodeMax)
			}
			o.nodeMax = n / devsync.Align * devsync.Align
		case k == "node_linger":
			d, err := time.ParseDuration(v)
			if v == "0" || strings.EqualFold(v, "off") {
				d, err = 0, nil
			}
			if err != nil || d < 0 || d > maxNodeLinger {
				return o, fmt.Errorf("option node_linger=%q: want off, 0, or a Go duration up to %v (how long a node kernel waits on the GPU for the next call)", v, maxNodeLinger)
			}
			o.nodeLinger = d
		case k == "node_ll":
			n, err := units.ParseBytes(v)
			if strings.EqualFold(v, "off") {
				n, err = 0, nil
			}
			if err != nil || n < 0 || n > maxNodeLL {
				return o, fmt.Errorf("option node_ll=%q: want off, 0, or a byte count up to %d (the largest node call a rank sends each peer in tagged lines)", v, maxNodeLL)
			}
			o.nodeLL = n
		case k == "crossmem":
			switch n, err := strconv.Atoi(v); {
			case strings.EqualFold(v, "off") || v == "n" || v == "no":
				o.crossmem = crossmemOff
			case strings.EqualFold(v, "auto"):
				o.crossmem = crossmemAuto
			case err == nil && n >= 1 && n <= direct.MaxThreads:
				o.crossmem = n
			default:
				return o, fmt.Errorf("option crossmem=%q: want off (the default), auto, or a thread count from 1 to %d", v, direct.MaxThreads)
			}
		case strings.HasPrefix(k, "alg_"):
			c, err := coll.ParseCollective(strings.TrimPrefix(k, "alg_"))
			if err != nil {
				return o, fmt.Errorf("option %s: %w", k, err)
			}
			if c.Routed() || choose.Base(c) == "" {
				return o, fmt.Errorf("option %s: goring's team layer does not run %s", k, c)
			}
			// auto is what naming nothing means: goring's one choice
			// (choose.Auto), so the algorithm counts as not chosen.
			if v != "auto" {
				if _, err := sched.Lookup(c, v); err != nil {
					return o, fmt.Errorf("option %s: %w", k, err)
				}
			}
			o.algs[c] = v
			o.chosen[c] = v != "auto"
		default:
			return o, fmt.Errorf("unknown option %q (known: tls, timeout_ms, ipc, lanes, calibration, claims, keepawake, cpath_max, scores, crossmem, node_max, node_linger, node_ll, alg_<collective>)", k)
		}
	}
	return o, nil
}

// parseKeepAwake reads the keeper's interval: a Go duration up to
// keeperMaxInterval, or off (also 0, n, no).
func parseKeepAwake(v string) (time.Duration, error) {
	switch strings.ToLower(v) {
	case "off", "0", "n", "no":
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > keeperMaxInterval {
		return 0, fmt.Errorf("option keepawake=%q: want off (the default) or a duration above 0 and at most %v", v, keeperMaxInterval)
	}
	return d, nil
}
