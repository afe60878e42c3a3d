package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/tune"
	"github.com/goring-hpc/goring/units"
)

func init() { subcommands = append(subcommands, newTuneCmd) }

func newTuneCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "tune",
		Short: "measure goring against UCC's other layers on this machine, for the team layer's claims",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(newTuneUCCCmd(), newTuneShowCmd())
	return c
}

// tuneUCCFlags are the flags of "goring tune ucc".
type tuneUCCFlags struct {
	np       int
	perftest string
	launcher string
	layers   string
	colls    string
	min, max string
	iters    int
	warmup   int
	timeout  time.Duration
	gpu      string
	shared   string
	out      string
}

// tuneColls are the collectives goring claims by measurement.
var tuneColls = []string{"allreduce", "allgather", "reduce_scatter", "bcast"}

func newTuneUCCCmd() *cobra.Command {
	var f tuneUCCFlags
	c := &cobra.Command{
		Use:   "ucc --np N --out FILE [--perftest PATH] [--launcher CMD] [--layers nccl,cuda] [--min 16K --max 256M] [--gpu NAME] [--shared auto|yes|no]",
		Short: "time goring and UCC's GPU layers through ucc_perftest, and write the claims file UCC_TL_GORING_CLAIMS reads",
		Long: `ucc runs UCC's own benchmark, ucc_perftest -m cuda -d float32, on --np ranks
of this machine for allreduce, allgather, reduce_scatter and bcast, once for goring and
once for each layer of --layers, each forced (UCC_TLS=ucp,LAYER and the layer's
TUNE string inf; "ucp": UCC_TLS=ucp). Each run is preceded by one untimed
pass with UCC's collective trace: a size that UCC ran on another layer than the
one forced (tl/cuda has no allreduce without NVLS, tl/nccl no team of ranks
sharing a GPU) is no time of that layer. It writes a goring.claims/v1 file
(docs/contracts.md) to --out and prints each size with what goring would claim
with these layers installed: score 41 where goring beat the layer UCC would
otherwise run by 5%. Set UCC_TL_GORING_CLAIMS=FILE (for Open MPI:
ompi-config/goring-ucc.env says how) and teams of the same shape claim by it
instead of the tables shipped for H100 and H200 nodes.

--launcher is the command that starts the ranks, before ucc_perftest and its
arguments; an Open MPI mpirun (the default) gets "-np N" and "-x NAME=VALUE"
for each setting; another launcher (e.g. "srun -n 4") must start N ranks and
pass the environment on, as srun does. Bytes are per rank (an allreduce's
or a bcast's vector, an allgather's input block, a reduce_scatter's output
block).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTuneUCC(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f, strings.Join(os.Args, " "))
		},
	}
	fl := c.Flags()
	fl.IntVar(&f.np, "np", 0, "ranks, 2 to 16")
	fl.StringVar(&f.perftest, "perftest", "ucc_perftest", "UCC's ucc_perftest")
	fl.StringVar(&f.launcher, "launcher", "mpirun", "command that starts the ranks (mpirun gets -np and -x)")
	fl.StringVar(&f.layers, "layers", "nccl,cuda", "UCC's layers to time beside goring: nccl, cuda, ucp")
	fl.StringVar(&f.colls, "colls", strings.Join(tuneColls, ","), "collectives")
	fl.StringVar(&f.min, "min", "16K", "smallest bytes per rank (a power of 2, K/M suffixes)")
	fl.StringVar(&f.max, "max", "256M", "largest bytes per rank")
	fl.IntVar(&f.iters, "iters", 20, "timed calls a size (ucc_perftest -n)")
	fl.IntVar(&f.warmup, "warmup", 5, "warm-up calls a size (ucc_perftest -w)")
	fl.DurationVar(&f.timeout, "timeout", 3*time.Minute, "longest one ucc_perftest run may take")
	fl.StringVar(&f.gpu, "gpu", "", "the GPUs' name as the driver gives it (default: GPU 0's, from the driver here)")
	fl.StringVar(&f.shared, "shared", "auto", "whether the ranks share one GPU: auto (fewer GPUs here than ranks), yes or no")
	fl.StringVar(&f.out, "out", "", "claims file to write")
	return c
}

// tuneLayer is one layer's runs: the environment that forces it and the
// name UCC's trace gives it.
type tuneLayer struct {
	name string // goring, nccl, cuda, ucp
	env  []string
}

func tuneLayerOf(name string) (tuneLayer, error) {
	switch name {
	case "goring":
		return tuneLayer{name, []string{"UCC_TLS=ucp,goring", "UCC_TL_GORING_TUNE=" + strings.Join(tuneColls, ",") + ":cuda:inf"}}, nil
	case "nccl", "cuda":
		return tuneLayer{name, []string{"UCC_TLS=ucp," + name, "UCC_TL_" + strings.ToUpper(name) + "_TUNE=inf"}}, nil
	case "ucp":
		return tuneLayer{name, []string{"UCC_TLS=ucp", "UCC_TL_UCP_TUNE=inf"}}, nil
	}
	return tuneLayer{}, fmt.Errorf("--layers: %q: want nccl, cuda or ucp", name)
}

func runTuneUCC(ctx context.Context, w, progress io.Writer, f tuneUCCFlags, command string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	switch {
	case f.np < 2 || f.np > tune.MaxRanks:
		return fmt.Errorf("--np %d: want 2 to %d ranks", f.np, tune.MaxRanks)
	case f.out == "":
		return fmt.Errorf("--out FILE: where to write the claims file")
	case f.iters < 1 || f.warmup < 0:
		return fmt.Errorf("--iters %d --warmup %d: want at least 1 timed call and no negative warm-up", f.iters, f.warmup)
	case strings.TrimSpace(f.launcher) == "":
		return fmt.Errorf("--launcher: the command that starts the ranks")
	}
	if err := checkOutFile("--out", f.out); err != nil {
		return err
	}
	lo, err := units.ParseBytes(f.min)
	if err != nil {
		return fmt.Errorf("--min: %w", err)
	}
	hi, err := units.ParseBytes(f.max)
	if err != nil {
		return fmt.Errorf("--max: %w", err)
	}
	if lo < 4 || hi < lo || lo&(lo-1) != 0 {
		return fmt.Errorf("--min %s --max %s: want a power of 2 from 4 bytes, up to --max", f.min, f.max)
	}
	var layers []tuneLayer
	for _, n := range splitList(f.layers) {
		l, err := tuneLayerOf(n)
		if err != nil {
			return err
		}
		layers = append(layers, l)
	}
	g, _ := tuneLayerOf("goring")
	layers = append(layers, g)
	colls := splitList(f.colls)
	for _, c := range colls {
		if !slices.Contains(tuneColls, c) {
			return fmt.Errorf("--colls: %q: want %s", c, strings.Join(tuneColls, ", "))
		}
	}
	file := &tune.ClaimsFile{Format: tune.ClaimsFormat, Ranks: f.np, Measured: time.Now().UTC().Format(time.RFC3339),
		Command: command, Rows: map[string][]tune.ClaimsRow{}}
	if file.GPU, file.Shared, err = tuneMachine(f); err != nil {
		return err
	}
	perftest, err := exec.LookPath(f.perftest)
	if err != nil {
		return fmt.Errorf("--perftest %s: %w", f.perftest, err)
	}
	var notes []string
	for _, c := range colls {
		times := map[string]map[int64]float64{}
		for _, l := range layers {
			fmt.Fprintf(progress, "goring tune: %s on %s: trace pass\n", c, l.name)
			args := []string{"-c", c, "-m", "cuda", "-d", "float32", "-b", fmt.Sprint(lo / 4), "-e", fmt.Sprint(hi / 4)}
			traced, err := tuneRunPerftest(ctx, f, perftest, append(l.env, "UCC_COLL_TRACE=info"), append(args, "-n", "1", "-w", "0"))
			var timed []byte
			if err == nil {
				fmt.Fprintf(progress, "goring tune: %s on %s: timed pass (%d calls a size)\n", c, l.name, f.iters)
				timed, err = tuneRunPerftest(ctx, f, perftest, l.env, append(args, "-n", fmt.Sprint(f.iters), "-w", fmt.Sprint(f.warmup)))
			}
			if err != nil && l.name == "goring" {
				return fmt.Errorf("%s on goring: %w", c, err)
			}
			if err != nil { // a peer that does not run here is no column
				notes = append(notes, fmt.Sprintf("%s on tl/%s failed, not counted: %v", c, l.name, err))
				continue
			}
			ran := perftestLayers(bytes.NewReader(traced), c)
			times[l.name] = map[int64]float64{}
			var off []int64
			for b, us := range perftestTimes(bytes.NewReader(timed), c, f.np) {
				if got := ran[b]; len(got) == 1 && got[l.name] {
					times[l.name][b] = us
				} else {
					off = append(off, b)
				}
			}
			if len(off) > 0 {
				slices.Sort(off)
				where := make([]string, len(off))
				for i, b := range off {
					where[i] = units.FormatBytes(b) + " on " + tuneRanOn(ran[b])
				}
				notes = append(notes, fmt.Sprintf("%s forced on %s ran elsewhere, not counted: %s", c, l.name, strings.Join(where, ", ")))
			}
		}
		file.Rows[c] = tuneRows(times)
		if len(file.Rows[c]) == 0 {
			delete(file.Rows, c)
			notes = append(notes, c+": no size ran on goring")
		}
	}
	if err := file.Check(); err != nil {
		return fmt.Errorf("nothing to write: %w", err)
	}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(f.out, append(data, '\n'), 0o644); err != nil {
		return err
	}
	present := append([]string{"ucp"}, splitList(f.layers)...)
	if err := writeClaimsTable(w, file, present); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note: "+n)
	}
	fmt.Fprintf(w, "wrote %s: set UCC_TL_GORING_CLAIMS=%s\n", f.out, absPath(f.out))
	return nil
}

// tuneMachine is the GPUs' name and whether the ranks share one: from
// the flags, else from the driver here. Where the driver is needed and
// absent the error exits 3, as every command's (docs/contracts.md "CLI").
func tuneMachine(f tuneUCCFlags) (string, bool, error) {
	gpu, n := f.gpu, -1
	count, errCount := cuda.DeviceCount()
	noDriver := func(err error) error {
		if cuda.IsNoDriver(errCount) {
			return withExit(3, err)
		}
		return err
	}
	if errCount == nil {
		n = count
		if gpu == "" {
			var err error
			if gpu, err = cuda.DeviceName(0); err != nil {
				return "", false, fmt.Errorf("the driver's name of GPU 0: %w", err)
			}
		}
	} else if gpu == "" {
		return "", false, noDriver(fmt.Errorf("--gpu NAME: no CUDA driver here to name the GPUs (%v)", errCount))
	}
	switch f.shared {
	case "yes":
		return gpu, true, nil
	case "no":
		return gpu, false, nil
	case "auto":
		switch {
		case n < 0:
			return "", false, noDriver(fmt.Errorf("--shared auto: no CUDA driver here to count the GPUs; say yes or no"))
		case n == 1:
			return gpu, true, nil
		case n >= f.np:
			return gpu, false, nil
		}
		return "", false, fmt.Errorf("--np %d on %d GPUs: the claims cover ranks with a GPU each or all on one", f.np, n)
	}
	return "", false, fmt.Errorf("--shared %q: want auto, yes or no", f.shared)
}

// tuneRunPerftest runs ucc_perftest with args on the ranks, with the
// settings env, and returns what rank 0 printed.
func tuneRunPerftest(ctx context.Context, f tuneUCCFlags, perftest string, env, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	launch := strings.Fields(f.launcher)
	if tuneOpenMPI(launch[0]) {
		launch = append(launch, "-np", fmt.Sprint(f.np))
		for _, e := range env {
			launch = append(launch, "-x", e)
		}
	}
	cmd := exec.CommandContext(ctx, launch[0], append(append(launch[1:], perftest), args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() == context.DeadlineExceeded {
		return out, fmt.Errorf("no end after %v (--timeout)", f.timeout)
	}
	if err != nil {
		return out, fmt.Errorf("%s: %w; its last lines: %s", strings.Join(cmd.Args, " "), err, lastLines(out, 4))
	}
	return out, nil
}

// tuneOpenMPI says whether a launcher takes Open MPI's -np and -x.
func tuneOpenMPI(launcher string) bool {
	switch filepath.Base(launcher) {
	case "mpirun", "mpiexec", "orterun", "prterun":
		return true
	}
	return false
}

// tuneRows are the claims rows of one collective: every size goring ran,
// with the peers that ran it too.
func tuneRows(times map[string]map[int64]float64) []tune.ClaimsRow {
	var rows []tune.ClaimsRow
	for b, us := range times["goring"] {
		r := tune.ClaimsRow{Bytes: b, Goring: us, Peers: map[string]float64{}}
		for l, t := range times {
			if p, ok := t[b]; ok && l != "goring" {
				r.Peers[l] = p
			}
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Bytes < rows[j].Bytes })
	return rows
}

func tuneRanOn(got map[string]bool) string {
	if len(got) == 0 {
		return "no traced layer"
	}
	var ls []string
	for l := range got {
		ls = append(ls, "tl/"+l)
	}
	sort.Strings(ls)
	return strings.Join(ls, "+")
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// lastLines is the last n lines of out, on one line.
func lastLines(out []byte, n int) string {
	ls := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}
