// Command deadletters lists, shows, replays and purges the dead letters of
// a natsqueue queue: the jobs that ended without success, which Serve keeps
// in the queue's dead-letter stream "DEAD_<name>" (see natsqueue.DeadLetters).
//
//	deadletters [-url nats://127.0.0.1:4222] -queue NAME list [-n 100] [-reason R] [-error SUBSTR]
//	deadletters -queue NAME show SEQ
//	deadletters -queue NAME replay SEQ...
//	deadletters -queue NAME replay -all [-reason R] [-error SUBSTR]
//	deadletters -queue NAME purge SEQ...
//	deadletters -queue NAME purge -all [-reason R] [-error SUBSTR]
//	deadletters -queue NAME count
//
// list prints a table of the dead letters in the order they were stored,
// the first -n of them (0: all), with their error and data cut short;
// show prints every field of one, its data in full. replay tells each
// job again as a new job, with all its deliveries ahead of it, and deletes
// its dead letter; purge deletes dead letters. SEQ is a dead letter's
// sequence number, as list prints it. -reason selects the dead letters of
// one reason ("permanent", "too many deliveries" or "undecodable"), and
// -error those whose error contains SUBSTR.
//
// The queue must exist: deadletters creates nothing. It exits with status
// 0 on success, 1 when an operation fails (a sequence number that has no
// dead letter, a server it cannot reach, a queue that does not exist), and
// 2, after printing its usage, for a command line it cannot parse.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/crewlib/crew/natsqueue"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// usage is what deadletters prints for -h and after a command line it
// cannot parse.
const usage = `usage: deadletters [-url URL] -queue NAME COMMAND [ARGS]

commands:
  list [-n 100] [-reason R] [-error SUBSTR]
        print a table of the dead letters, the first n (0: all)
  show SEQ
        print every field of a dead letter, its data in full
  replay SEQ... | replay -all [-reason R] [-error SUBSTR]
        tell the dead letters' jobs again and delete the dead letters
  purge SEQ... | purge -all [-reason R] [-error SUBSTR]
        delete dead letters
  count
        print how many dead letters the queue has

flags:
  -url URL        the NATS server (default nats://127.0.0.1:4222)
  -queue NAME     the queue's name
  -reason R       only dead letters of reason R: "permanent",
                  "too many deliveries" or "undecodable"
  -error SUBSTR   only dead letters whose error contains SUBSTR
`

// The widths, in characters, of list's cut columns.
const (
	errorWidth = 40
	dataWidth  = 32
)

// reasons are the values -reason takes.
var reasons = []string{natsqueue.ReasonPermanent, natsqueue.ReasonTooManyDeliveries, natsqueue.ReasonUndecodable}

// main runs the command line and exits with report's status.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(report(err, os.Stderr))
}

// A usageError is a command line that deadletters cannot parse.
type usageError struct{ err error }

// Error returns what is wrong with the command line.
func (e *usageError) Error() string { return e.err.Error() }

// Unwrap returns the error of the flag package, or of usagef, that e is.
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usageError of the message format and args make.
func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// report writes err to stderr and returns the exit status it calls for: 0
// for nil, and for flag.ErrHelp after the usage; 2 for a usageError, with
// the usage; 1 for any other.
func report(err error, stderr io.Writer) int {
	var uerr *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stderr, usage)
		return 0
	case errors.As(err, &uerr):
		fmt.Fprintf(stderr, "deadletters: %v\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "deadletters: %v\n", err)
		return 1
	}
}

// A command is a parsed command line.
type command struct {
	url, queue string
	name       string   // list, show, replay, purge or count
	seqs       []uint64 // show's (one), replay's and purge's
	all        bool     // replay -all, purge -all
	n          int      // list -n; 0: all
	// match selects the dead letters -reason and -error ask for; nil
	// when neither is given.
	match func(natsqueue.DeadLetter) bool
}

// run carries out the command line args (without the program's name),
// writing its output to stdout and notes to stderr. It parses the whole
// line before it connects: its errors about the line are usageErrors, or
// flag.ErrHelp for -h; the others say which operation failed, and wrap
// natsqueue.ErrNoDeadLetter for a sequence number that has no dead letter.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	nc, err := nats.Connect(c.url, nats.Name("deadletters"))
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", c.url, err)
	}
	defer nc.Close() // every request's answer has come by then
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", c.url, err)
	}
	dl, err := natsqueue.OpenDeadLetters(ctx, js, c.queue)
	if err != nil {
		return err
	}
	switch c.name {
	case "list":
		return list(ctx, dl, c, stdout, stderr)
	case "show":
		d, err := dl.Get(ctx, c.seqs[0])
		if err != nil {
			return err
		}
		return show(d, stdout)
	case "replay":
		return apply(ctx, c, stdout, "replayed", dl.Replay, dl.ReplayAll)
	case "purge":
		return apply(ctx, c, stdout, "purged", dl.Purge, dl.PurgeAll)
	default: // count: parse lets no other through
		n, err := dl.Count(ctx)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, n)
		return err
	}
}

// parse returns the command that args ask for, or a usageError saying
// what is wrong with them (flag.ErrHelp for -h).
func parse(args []string) (command, error) {
	c := command{}
	fs := newFlagSet("deadletters")
	fs.StringVar(&c.url, "url", nats.DefaultURL, "")
	fs.StringVar(&c.queue, "queue", "", "")
	if err := fs.Parse(args); err != nil {
		return c, flagError(err)
	}
	if c.queue == "" {
		return c, usagef("-queue is missing")
	}
	if fs.NArg() == 0 {
		return c, usagef("no command")
	}
	c.name = fs.Arg(0)
	sub := newFlagSet(c.name)
	var reason, substr string
	switch c.name {
	case "list":
		sub.IntVar(&c.n, "n", 100, "")
		sub.StringVar(&reason, "reason", "", "")
		sub.StringVar(&substr, "error", "", "")
	case "replay", "purge":
		sub.BoolVar(&c.all, "all", false, "")
		sub.StringVar(&reason, "reason", "", "")
		sub.StringVar(&substr, "error", "", "")
	case "show", "count":
	default:
		return c, usagef("unknown command %q", c.name)
	}
	if err := sub.Parse(fs.Args()[1:]); err != nil {
		return c, flagError(err)
	}
	for _, arg := range sub.Args() {
		seq, err := strconv.ParseUint(arg, 10, 64)
		if err != nil || seq == 0 {
			return c, usagef("%s: %q is not a sequence number (1, 2, ...)", c.name, arg)
		}
		c.seqs = append(c.seqs, seq)
	}
	if reason != "" && !slices.Contains(reasons, reason) {
		return c, usagef("%s: -reason %q is none of %q", c.name, reason, reasons)
	}
	filtered := reason != "" || substr != ""
	switch {
	case c.name == "list" && c.n < 0:
		return c, usagef("list: -n %d is negative", c.n)
	case (c.name == "list" || c.name == "count") && len(c.seqs) > 0:
		return c, usagef("%s takes no sequence numbers", c.name)
	case c.name == "show" && len(c.seqs) != 1:
		return c, usagef("show takes one sequence number, not %d", len(c.seqs))
	case (c.name == "replay" || c.name == "purge") && c.all == (len(c.seqs) > 0):
		return c, usagef("%s takes sequence numbers or -all, one of them", c.name)
	case (c.name == "replay" || c.name == "purge") && filtered && !c.all:
		return c, usagef("%s: -reason and -error go with -all", c.name)
	}
	if filtered {
		c.match = func(d natsqueue.DeadLetter) bool {
			return (reason == "" || d.Reason == reason) && strings.Contains(d.Error, substr)
		}
	}
	return c, nil
}

// newFlagSet returns a flag set called name that returns its errors
// rather than printing them: report prints them, with the usage.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// flagError returns err, an error of a flag set's Parse, as run returns
// it: flag.ErrHelp as it is, any other as a usageError.
func flagError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return &usageError{err}
}

// list writes a table of the dead letters that c selects, the first c.n
// (all if 0), and a note to stderr if it left some out.
func list(ctx context.Context, dl *natsqueue.DeadLetters, c command, stdout, stderr io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tID\tREASON\tATTEMPTS\tDIED\tERROR\tDATA")
	n, more := 0, false
	for d, err := range dl.All(ctx) {
		if err != nil {
			tw.Flush() // the rows so far
			return err
		}
		if c.match != nil && !c.match(d) {
			continue
		}
		if c.n > 0 && n == c.n {
			more = true
			break
		}
		n++
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", d.Seq, cell(d.ID, 0), d.Reason, d.Attempts,
			d.Died.UTC().Format(time.RFC3339), cell(d.Error, errorWidth), cell(string(d.Data), dataWidth))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if more {
		fmt.Fprintf(stderr, "deadletters: listed the first %d; -n 0 lists all\n", c.n)
	}
	return nil
}

// cell returns s as a cell of list's table: quoted, as strconv.Quote does,
// if it holds a tab, a line break, another character that is not
// printable, or is not UTF-8, so that each row is one line of aligned
// columns; then, if it is longer than width and width is not 0, cut to
// width-1 characters less the spaces they end with, and "…".
func cell(s string, width int) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		s = strconv.Quote(s)
	}
	if width == 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	return strings.TrimRight(string([]rune(s)[:width-1]), " ") + "…"
}

// show writes every field of d, one a line, then its data in full as it is
// stored, ending in a line break.
func show(d natsqueue.DeadLetter, stdout io.Writer) error {
	told := "-" // a dead letter of a message without metadata
	if !d.Told.IsZero() {
		told = d.Told.UTC().Format(time.RFC3339Nano)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Seq:\t%d\n", d.Seq)
	fmt.Fprintf(tw, "Queue:\t%s\n", d.Queue)
	fmt.Fprintf(tw, "ID:\t%s\n", d.ID)
	fmt.Fprintf(tw, "Reason:\t%s\n", d.Reason)
	fmt.Fprintf(tw, "Error:\t%s\n", d.Error)
	fmt.Fprintf(tw, "Attempts:\t%d\n", d.Attempts)
	fmt.Fprintf(tw, "Sequence:\t%d\n", d.Sequence)
	fmt.Fprintf(tw, "Told:\t%s\n", told)
	fmt.Fprintf(tw, "Died:\t%s\n", d.Died.UTC().Format(time.RFC3339Nano))
	if len(d.Header) == 0 {
		fmt.Fprintf(tw, "Header:\t(none)\n")
	}
	for _, k := range slices.Sorted(maps.Keys(d.Header)) {
		for _, v := range d.Header[k] {
			fmt.Fprintf(tw, "Header:\t%s: %s\n", k, v)
		}
	}
	fmt.Fprintf(tw, "Data:\t%d bytes\n", len(d.Data))
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := stdout.Write(d.Data); err != nil {
		return err
	}
	if bytes.HasSuffix(d.Data, []byte("\n")) {
		return nil
	}
	_, err := io.WriteString(stdout, "\n")
	return err
}

// apply replays or purges (done names which) the dead letters c selects:
// with c.all, through all, those c.match selects; else through one, each
// of c.seqs in turn, going on past a sequence number that has no dead
// letter but stopping at any other error. It writes how many it did, and
// returns the errors it met.
func apply(ctx context.Context, c command, stdout io.Writer, done string,
	one func(context.Context, uint64) error, all func(context.Context, func(natsqueue.DeadLetter) bool) (int, error),
) error {
	var n int
	var err error
	if c.all {
		n, err = all(ctx, c.match)
	} else {
		var errs []error
		for _, seq := range c.seqs {
			e := one(ctx, seq)
			if e == nil {
				n++
				continue
			}
			errs = append(errs, e)
			if !errors.Is(e, natsqueue.ErrNoDeadLetter) {
				break
			}
		}
		err = errors.Join(errs...)
	}
	letters := "dead letters"
	if n == 1 {
		letters = "dead letter"
	}
	if _, werr := fmt.Fprintf(stdout, "%s %d %s\n", done, n, letters); err == nil {
		err = werr
	}
	return err
}
