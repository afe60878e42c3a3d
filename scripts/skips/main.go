// Command skips keeps the list of skipped tests that make test prints last.
//
//	go test -json ./... | skips -o LIST    go test's usual output on stdout; each skipped test appended to LIST
//	tests/stack/run.sh 2>&1 | skips -text -o LIST    the lines copied; each "NAME: skipped: REASON" appended to LIST
//	skips -print LIST                      the list: package, test, reason
//
// From go test -json it writes what go test prints without -v: the "ok",
// "?" and "FAIL" line of every package as it ends and, for a package that
// failed, the output of its failed tests and of the package itself (framing
// lines such as "=== RUN" left out); build errors go to stderr. A line that
// is not JSON is copied as it is. LIST holds one tab-separated line per
// skip: package, test, reason (the test's last log entry, which is the
// t.Skip message). Its exit status is 0 unless it cannot read or write;
// the tests' status is go test's (make test sets pipefail).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

func main() {
	out := flag.String("o", "", "append the skips to this file")
	text := flag.Bool("text", false, "read plain lines, not go test -json")
	print := flag.String("print", "", "print the list in this file and exit")
	flag.Parse()
	if err := run(*out, *text, *print); err != nil {
		fmt.Fprintln(os.Stderr, "skips:", err)
		os.Exit(2)
	}
}

func run(out string, text bool, list string) error {
	if list != "" {
		data, err := os.ReadFile(list)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		return printList(os.Stdout, string(data), modulePath("go.mod"))
	}
	var skips []Skip
	var err error
	if text {
		skips, err = scanText(os.Stdin, os.Stdout)
	} else {
		skips, err = scanJSON(os.Stdin, os.Stdout, os.Stderr)
	}
	if err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	f, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	for _, s := range skips {
		fmt.Fprintf(f, "%s\t%s\t%s\n", s.Package, s.Test, s.Reason)
	}
	return f.Close()
}

// Skip is one skipped test.
type Skip struct{ Package, Test, Reason string }

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action, Package, Test, Output string
	ImportPath                    string // build-output
}

// pkgState is a package's output kept until it ends, and how each of its
// tests ended ("pass", "fail", "skip"; none yet: still running when the
// binary died).
type pkgState struct {
	outputs []event
	result  map[string]string
}

// scanJSON reads go test -json from r, writes go test's non-verbose output
// to w (build errors to werr) and returns the skipped tests in order.
func scanJSON(r io.Reader, w, werr io.Writer) ([]Skip, error) {
	pkgs := map[string]*pkgState{}
	var skips []Skip
	anyFailed := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(w, sc.Text())
			continue
		}
		if e.Action == "build-output" {
			fmt.Fprint(werr, e.Output)
			continue
		}
		p := pkgs[e.Package]
		if p == nil {
			p = &pkgState{result: map[string]string{}}
			pkgs[e.Package] = p
		}
		ended := e.Action == "pass" || e.Action == "fail" || e.Action == "skip"
		switch {
		case e.Action == "output":
			p.outputs = append(p.outputs, e)
		case e.Test != "" && ended:
			p.result[e.Test] = e.Action
			if e.Action == "skip" {
				skips = append(skips, Skip{e.Package, e.Test, skipReason(p.outputs, e.Test)})
			}
		case ended:
			writePackage(w, p, e.Action == "fail")
			anyFailed = anyFailed || e.Action == "fail"
			delete(pkgs, e.Package)
		}
	}
	if anyFailed {
		// go test's own last line when a package failed.
		fmt.Fprintln(w, "FAIL")
	}
	return skips, sc.Err()
}

// framing matches the lines go test prints only with -v.
var framing = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|SKIP):)|^PASS$`)

// closing matches a package's last line: ok, ? (no test files), FAIL.
var closing = regexp.MustCompile(`^(ok\s|\?\s|FAIL\s)`)

// writePackage writes a package's lines as go test without -v does: its
// closing line, and for a failed package also the output of the package
// itself and of its tests that did not pass or skip, in the order and
// with the indentation of go test -v (test2json takes a subtest's
// indentation off).
func writePackage(w io.Writer, p *pkgState, failed bool) {
	for _, e := range p.outputs {
		line := strings.TrimRight(e.Output, "\n")
		switch {
		case e.Test == "" && closing.MatchString(e.Output) && line != "FAIL":
			fmt.Fprint(w, e.Output)
		case !failed || framing.MatchString(line):
		case e.Test == "":
			fmt.Fprint(w, e.Output)
		case p.result[e.Test] != "pass" && p.result[e.Test] != "skip":
			fmt.Fprint(w, strings.Repeat("    ", strings.Count(e.Test, "/"))+e.Output)
		}
	}
}

// location is the "file.go:NN: " that starts a test's log entry.
var location = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)

// skipReason is test's last log entry (t.Skip's message is logged last),
// its continuation lines joined, without its file:line.
func skipReason(outputs []event, test string) string {
	var entry []string
	for _, e := range outputs {
		if e.Test != test || framing.MatchString(e.Output) {
			continue
		}
		line := strings.TrimRight(e.Output, "\n")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		// An entry starts with 4 spaces (more for a subtest's), its
		// continuation lines with 4 more.
		if location.MatchString(trimmed) || len(entry) == 0 {
			entry = []string{location.ReplaceAllString(trimmed, "")}
		} else {
			entry = append(entry, trimmed)
		}
	}
	if len(entry) == 0 {
		return "(no reason given)"
	}
	return strings.Join(entry, " ")
}

// skipLine is a script's "NAME: skipped: REASON".
var skipLine = regexp.MustCompile(`^(\S+): skipped: (.*)$`)

// scanText copies r to w line by line and returns the skip lines.
func scanText(r io.Reader, w io.Writer) ([]Skip, error) {
	var skips []Skip
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		fmt.Fprintln(w, sc.Text())
		if m := skipLine.FindStringSubmatch(sc.Text()); m != nil {
			skips = append(skips, Skip{m[1], "-", m[2]})
		}
	}
	return skips, sc.Err()
}

// printList writes the list as a table, packages without the module's
// prefix.
func printList(w io.Writer, data, module string) error {
	var rows [][3]string
	width := [2]int{len("package"), len("test")}
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			continue
		}
		if module != "" {
			f[0] = strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")
			if f[0] == "" {
				f[0] = "."
			}
		}
		rows = append(rows, [3]string{f[0], f[1], f[2]})
		width[0], width[1] = max(width[0], len(f[0])), max(width[1], len(f[1]))
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "make test: no test skipped")
		return err
	}
	fmt.Fprintf(w, "make test: %d skipped:\n", len(rows))
	fmt.Fprintf(w, "  %-*s  %-*s  %s\n", width[0], "package", width[1], "test", "reason")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s  %-*s  %s\n", width[0], r[0], width[1], r[1], r[2])
	}
	return nil
}

// modulePath is the module line of a go.mod ("" if none).
func modulePath(gomod string) string {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}
