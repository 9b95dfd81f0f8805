package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/denar-mk/denar/internal/cli"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
)

const ujpUsage = `Usage:
  denar ujp check --env sandbox|production [--company cmp_…] [--sign [--wait D]] [--json]

Checks the connection to UJP before going live, line by line: UJP's server
time and this host's clock skew, the identities UJP accepts (X-EUJP-ID,
X-EDB), UJP's code lists against this build's, the company's registry entry,
with --sign the company's certificate and portal privileges (DP, RD, DA)
through three signed reads its agent signs, and the rate budget and queue of
each UJP user. Each line that does not hold says what to do. The run is
stored; the dashboard shows the last per company. It uses the configuration
of denar serve (DENAR_* variables, the same database).

Exit status: 0 when every line holds, 1 otherwise, 2 a wrong command line.
See docs/going-live.md.
`

func runUJP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.Fail(stderr, ujpUsage, nil, "denar ujp: no command given")
	}
	if cli.IsHelp(args[0]) {
		fmt.Fprint(stdout, ujpUsage)
		return cli.ErrHelp
	}
	if args[0] != "check" {
		return cli.Fail(stderr, ujpUsage, nil, fmt.Sprintf("denar ujp: unknown command %q", args[0]))
	}
	fs := flag.NewFlagSet("denar ujp check", flag.ContinueOnError)
	env := fs.String("env", "", "the environment: sandbox or production")
	company := fs.String("company", "", "the company to check (cmp_…)")
	sign := fs.Bool("sign", false, "ask the company's agent to sign three read requests (certificate and privileges)")
	wait := fs.Duration("wait", 2*time.Minute, "how long --sign waits for the agent's signatures")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := cli.Parse(fs, args[1:], 0, 0, ujpUsage, stdout, stderr); err != nil {
		return err
	}
	switch {
	case *env != "sandbox" && *env != "production":
		return cli.Fail(stderr, ujpUsage, fs, "denar ujp check: --env must be sandbox or production")
	case *sign && *company == "":
		return cli.Fail(stderr, ujpUsage, fs, "denar ujp check: --sign needs --company")
	}
	cfg, err := LoadConfig()
	if err != nil {
		return err
	}
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	log := newLogger(cfg, stderr)
	reg, err := newRegistry(cfg, log, db)
	if err != nil {
		return err
	}
	hooks := newWebhooks(db, cfg, log, nil)
	app := newApplication(einvoicing.Deps{DB: db, Log: log, Registry: reg, Events: hooks},
		ujpSide{gateways: reg.gateways, operators: reg.operators}, cfg, hooks, nil)
	rep, err := app.reconcile.CheckUJP(ctx, reconcile.UJPCheck{Environment: *env, CompanyID: *company, Sign: *sign, SignWait: *wait})
	if err != nil {
		return fmt.Errorf("ujp check: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printCheck(stdout, rep)
	}
	if !rep.OK {
		var bad []string
		for _, l := range rep.Lines {
			if l.State == reconcile.CheckFail || l.State == reconcile.CheckWarn {
				bad = append(bad, l.Name)
			}
		}
		return fmt.Errorf("ujp check: not ready to go live: %s", strings.Join(bad, ", "))
	}
	return nil
}

// printCheck writes the report as a table, each line's action under it.
func printCheck(w io.Writer, rep reconcile.UJPCheckReport) {
	who := "the operator"
	if rep.CompanyID != "" {
		who = rep.CompanyID
	}
	fmt.Fprintf(w, "UJP check of %s (%s), %s\n\n", rep.Environment, who, rep.CheckedAt.Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LINE\tSTATE\tDETAIL")
	for _, l := range rep.Lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Name, strings.ToUpper(l.State), l.Detail)
		if l.Action != "" {
			fmt.Fprintf(tw, "\t\t→ %s\n", l.Action)
		}
	}
	tw.Flush()
	if rep.OK {
		fmt.Fprintln(w, "\nEvery line holds.")
	} else {
		fmt.Fprintln(w, "\nNot every line holds: see the actions above.")
	}
}
