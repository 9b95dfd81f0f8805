package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/cli"
	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// adminCommand is one "denar admin GROUP VERB" command.
type adminCommand struct {
	name     string // "account create"
	synopsis string // its arguments, as in the usage
	about    string
	run      func(a *admin, ctx context.Context, args []string) error
}

var adminCommands = []adminCommand{
	{"account create", "--name NAME [--plan sandbox|starter|business|enterprise]\n                             [--owner-email EMAIL]... [--json]",
		"Creates an account on a plan of \"denar admin plan list\"; owners are mailed when a webhook endpoint is disabled.", (*admin).accountCreate},
	{"account list", "[--json]", "Lists accounts.", (*admin).accountList},
	{"account set-plan", "--account ACCOUNT --plan PLAN [--json]",
		"Moves an account to another plan; production credentials follow the plan from the next request.", (*admin).accountSetPlan},
	{"account owners", "ACCOUNT [EMAIL]...",
		"Sets who is mailed when one of the account's webhook endpoints is disabled; no address clears the list.", (*admin).accountOwners},
	{"plan list", "[--json]", "Lists plans: included documents, price of an extra document, production.", (*admin).planList},
	{"plan set", "--code CODE --included N --extra-price AMOUNT [--currency MKD] [--production=true|false] [--json]",
		"Creates or changes a plan.", (*admin).planSet},
	{"company create", "--account ACCOUNT --name NAME --tax-number EDB [--json]",
		"Registers an employer company (payroll).", (*admin).companyCreate},
	{"key create", "--account ACCOUNT --service payroll|einvoice --env sandbox|production\n                         [--scope SCOPE]... [--company COMPANY]... [--json]",
		"Creates an API key and prints it once.", (*admin).keyCreate},
	{"key list", "[--account ACCOUNT] [--json]", "Lists API keys (never their secrets).", (*admin).keyList},
	{"key revoke", "KEY_ID", "Revokes an API key.", (*admin).keyRevoke},
	{"client create", "--account ACCOUNT --env sandbox|production\n                            [--scope SCOPE]... [--company COMPANY]... [--json]",
		"Creates OAuth client credentials for the e-invoicing service and prints the secret once.", (*admin).clientCreate},
	{"client list", "[--account ACCOUNT] [--json]", "Lists OAuth clients (never their secrets).", (*admin).clientList},
	{"client revoke", "CLIENT_ID", "Revokes OAuth client credentials; the access tokens issued to the client stop working at once.", (*admin).clientRevoke},
	{"agent list", "[--account ACCOUNT] [--json]", "Lists signing agents: account, environment, name, last seen, revoked; --json adds the companies an agent may act for (none: all).", (*admin).agentList},
	{"agent revoke", "AGENT_ID",
		"Revokes a signing agent: its credential stops working, its claims go back to pending, its open WebSocket and long-poll end within a second.", (*admin).agentRevoke},
	{"user create", "--account ACCOUNT --email EMAIL --role owner|staff|viewer\n                          [--password-stdin] [--json]",
		"Creates a dashboard user; prints a generated password once, or reads one line from standard input with --password-stdin.", (*admin).userCreate},
	{"user list", "--account ACCOUNT [--json]", "Lists the account's dashboard users.", (*admin).userList},
	{"mail list", "[--state queued|sent|logged|dead] [--limit N] [--show-body] [--json]",
		"Shows the mail outbox, newest first; bodies (which hold mandate links) only with --show-body.", (*admin).mailList},
	{"mail retry", "MAIL_ID", "Queues a mail that was not sent for delivery again, with fresh attempts.", (*admin).mailRetry},
}

// adminUsage lists the commands whose name starts with prefix ("" for all).
func adminUsage(prefix string) string {
	var b strings.Builder
	b.WriteString("Usage:\n")
	for _, c := range adminCommands {
		if strings.HasPrefix(c.name, prefix) {
			fmt.Fprintf(&b, "  denar admin %s %s\n", c.name, c.synopsis)
		}
	}
	b.WriteString("\n" + adminStoreNote + "\"denar admin GROUP VERB -h\" explains one command.\n")
	return b.String()
}

// adminStoreNote says which store the admin commands use.
const adminStoreNote = `Admin commands use DENAR_DATABASE_URL (default: denar.db in DENAR_DATA_DIR,
./denar-data) and work while the server runs. They name the database they
use on standard error, and do not create a SQLite database that is not
there (run from another directory, ./denar-data is another one): pass
--create-database to start a new, empty one; on a terminal they ask.
`

func (c adminCommand) usage() string {
	return fmt.Sprintf("Usage: denar admin %s %s [--create-database]\n\n%s\n\n%s",
		c.name, c.synopsis, c.about, adminStoreNote)
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*s = append(*s, part)
		}
	}
	return nil
}

func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.Fail(stderr, adminUsage(""), nil, "denar admin: no command given")
	}
	if cli.IsHelp(args[0]) {
		fmt.Fprint(stdout, adminUsage(""))
		return cli.ErrHelp
	}
	group := args[0] + " "
	if len(args) >= 2 {
		for _, c := range adminCommands {
			if c.name == group+args[1] {
				a := &admin{cmd: c, stdin: os.Stdin, stdout: stdout, stderr: stderr, terminal: func() bool { return cli.IsTerminal(os.Stdin) }}
				defer a.close()
				return c.run(a, ctx, args[2:])
			}
		}
	}
	if !strings.Contains(adminUsage(group), "denar admin "+group) {
		return cli.Fail(stderr, adminUsage(""), nil, fmt.Sprintf("denar admin: unknown command %q", args[0]))
	}
	switch {
	case len(args) == 1:
		return cli.Fail(stderr, adminUsage(group), nil, fmt.Sprintf("denar admin %s: which command?", args[0]))
	case cli.IsHelp(args[1]):
		fmt.Fprint(stdout, adminUsage(group))
		return cli.ErrHelp
	}
	return cli.Fail(stderr, adminUsage(group), nil, fmt.Sprintf("denar admin: unknown command %q", group+args[1]))
}

// admin runs one command; its store is opened once the command line parsed,
// unless db is set already.
type admin struct {
	cmd    adminCommand
	db     *store.DB
	auth   *auth.Store
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// terminal reports that a person can be asked on stdin.
	terminal func() bool
	create   *bool // --create-database
}

// flags is the command's flag set, with --create-database, which every
// admin command takes.
func (a *admin) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("denar admin "+name, flag.ContinueOnError)
	a.create = fs.Bool("create-database", false, "create the SQLite database when it does not exist yet (a new, empty one)")
	return fs
}

// checkStore names the store the command is about to use on standard
// error and refuses a SQLite database that does not exist, unless
// --create-database asks for it or a person at the terminal says yes: a
// command run from another directory would otherwise create an empty
// ./denar-data and report an empty system.
func (a *admin) checkStore(cfg Config) error {
	dialect, target, err := store.ParseURL(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	if dialect != store.SQLite {
		fmt.Fprintf(a.stderr, "denar admin: database %s\n", redactURL(cfg.DatabaseURL))
		return nil
	}
	path, err := filepath.Abs(target)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		fmt.Fprintf(a.stderr, "denar admin: database %s\n", path)
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	from := "DENAR_DATABASE_URL"
	if os.Getenv("DENAR_DATABASE_URL") == "" {
		from = fmt.Sprintf("DENAR_DATA_DIR %q", cfg.DataDir)
		if !filepath.IsAbs(cfg.DataDir) {
			wd, _ := os.Getwd()
			from += " in " + wd
		}
	}
	switch {
	case a.create != nil && *a.create:
		fmt.Fprintf(a.stderr, "denar admin: creating a new, empty database %s\n", path)
		return nil
	case a.terminal != nil && a.terminal():
		fmt.Fprintf(a.stderr, "denar admin: there is no database at %s (%s).\nCreate a new, empty one? [y/N] ", path, from)
		if answer := strings.ToLower(strings.TrimSpace(readLine(a.stdin))); answer == "y" || answer == "yes" {
			return nil
		}
		return fmt.Errorf("no database created at %s", path)
	}
	return fmt.Errorf("there is no database at %s (%s): run denar admin where denar serve keeps its data, or set DENAR_DATA_DIR or DENAR_DATABASE_URL to it; --create-database starts a new, empty one", path, from)
}

// readLine reads one line from r a byte at a time, so that nothing after
// it (a password given on stdin) is consumed.
func readLine(r io.Reader) string {
	var b []byte
	one := make([]byte, 1)
	for {
		n, err := r.Read(one)
		if n == 1 {
			if one[0] == '\n' {
				break
			}
			b = append(b, one[0])
		}
		if err != nil {
			break
		}
	}
	return string(b)
}

// redactURL is a database URL without its password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// parse parses a command's flags (no positional arguments) and opens the
// store.
func (a *admin) parse(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.parseArgs(ctx, fs, args, 0, 0)
}

// parseArgs is parse for commands with between min and max positional
// arguments.
func (a *admin) parseArgs(ctx context.Context, fs *flag.FlagSet, args []string, min, max int) error {
	if err := cli.Parse(fs, args, min, max, a.cmd.usage(), a.stdout, a.stderr); err != nil {
		return err
	}
	if a.db != nil {
		// A store the caller opened (a test on both engines).
		a.auth = &auth.Store{DB: a.db}
		return nil
	}
	cfg, err := LoadConfig()
	if err != nil {
		return err
	}
	if err := a.checkStore(cfg); err != nil {
		return err
	}
	if a.db, err = openStore(ctx, cfg); err != nil {
		return err
	}
	a.auth = &auth.Store{DB: a.db}
	return nil
}

func (a *admin) close() {
	if a.db != nil {
		a.db.Close()
	}
}

func (a *admin) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (a *admin) accountCreate(ctx context.Context, args []string) error {
	fs := a.flags("account create")
	name := fs.String("name", "", "account name (required)")
	plan := fs.String("plan", "sandbox", "plan code (denar admin plan list): sandbox, starter, business, enterprise, …")
	var owners stringList
	fs.Var(&owners, "owner-email", "an owner's e-mail address, mailed when a webhook endpoint is disabled; repeat for several")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	if *name == "" {
		return fmt.Errorf("account create: --name is required")
	}
	acct, err := a.auth.CreateAccount(ctx, *name, *plan)
	if err != nil {
		return fmt.Errorf("account create: %w", err)
	}
	if len(owners) > 0 {
		if err := a.auth.SetOwners(ctx, acct.ID, owners); err != nil {
			return fmt.Errorf("account create: account %s created, but: %w", acct.ID, err)
		}
	}
	if *asJSON {
		return a.printJSON(map[string]any{"id": acct.ID, "name": acct.Name, "plan": acct.Plan, "productionEnabled": acct.ProductionEnabled,
			"ownerEmails": []string(owners)})
	}
	fmt.Fprintf(a.stdout, "created account %s (%s, plan %s)\n", acct.ID, acct.Name, acct.Plan)
	return nil
}

func (a *admin) accountList(ctx context.Context, args []string) error {
	fs := a.flags("account list")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	rows, err := a.db.Reader().ListAccounts(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		out := []map[string]any{}
		for _, r := range rows {
			out = append(out, map[string]any{"id": r.ID, "name": r.Name, "plan": r.Plan, "productionEnabled": r.ProductionEnabled,
				"ownerEmails": strings.Fields(r.OwnerEmails), "createdAt": r.CreatedAt})
		}
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPLAN\tOWNERS\tCREATED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, r.Plan, strings.ReplaceAll(r.OwnerEmails, " ", ","), r.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

// accountSetPlan moves an account to another plan; production credentials
// of an account on a plan without production answer 403
// production_not_enabled from the next request on.
func (a *admin) accountSetPlan(ctx context.Context, args []string) error {
	fs := a.flags("account set-plan")
	account := fs.String("account", "", "account id (required)")
	plan := fs.String("plan", "", "plan code (required; denar admin plan list)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	if *account == "" || *plan == "" {
		return fmt.Errorf("account set-plan: --account and --plan are required")
	}
	p, err := a.auth.SetAccountPlan(ctx, *account, *plan)
	if err != nil {
		return fmt.Errorf("account set-plan: %w", err)
	}
	if *asJSON {
		return a.printJSON(map[string]any{"id": *account, "plan": p})
	}
	fmt.Fprintf(a.stdout, "account %s is on plan %s (%d documents included, %s %s per extra document, production %v)\n",
		*account, p.Code, p.IncludedDocuments, p.ExtraDocumentPrice, p.Currency, p.Production)
	return nil
}

func (a *admin) planList(ctx context.Context, args []string) error {
	fs := a.flags("plan list")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	plans, err := a.auth.Plans(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.printJSON(plans)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CODE\tINCLUDED\tEXTRA DOCUMENT\tPRODUCTION")
	for _, p := range plans {
		fmt.Fprintf(tw, "%s\t%d\t%s %s\t%v\n", p.Code, p.IncludedDocuments, p.ExtraDocumentPrice, p.Currency, p.Production)
	}
	return tw.Flush()
}

func (a *admin) planSet(ctx context.Context, args []string) error {
	fs := a.flags("plan set")
	code := fs.String("code", "", "plan code (required)")
	included := fs.Int("included", -1, "production documents included per month (required)")
	price := fs.String("extra-price", "", "price of each production document beyond the included ones, a decimal amount (required)")
	currency := fs.String("currency", "MKD", "currency of the price")
	production := fs.Bool("production", true, "whether production credentials work on this plan")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	if *code == "" || *included < 0 || *price == "" {
		return fmt.Errorf("plan set: --code, --included and --extra-price are required")
	}
	p, err := a.auth.PutPlan(ctx, auth.Plan{Code: *code, IncludedDocuments: *included, ExtraDocumentPrice: *price,
		Currency: *currency, Production: *production})
	if err != nil {
		return fmt.Errorf("plan set: %w", err)
	}
	if *asJSON {
		return a.printJSON(p)
	}
	fmt.Fprintf(a.stdout, "plan %s: %d documents included, %s %s per extra document, production %v\n",
		p.Code, p.IncludedDocuments, p.ExtraDocumentPrice, p.Currency, p.Production)
	return nil
}

// accountOwners sets who is mailed when one of the account's webhook
// endpoints is disabled; no address clears the list.
func (a *admin) accountOwners(ctx context.Context, args []string) error {
	fs := a.flags("account owners")
	if err := a.parseArgs(ctx, fs, args, 1, -1); err != nil {
		return err
	}
	args = fs.Args()
	if err := a.auth.SetOwners(ctx, args[0], args[1:]); err != nil {
		return fmt.Errorf("account owners: %w", err)
	}
	if len(args) == 1 {
		fmt.Fprintf(a.stdout, "account %s has no owner addresses now\n", args[0])
		return nil
	}
	fmt.Fprintf(a.stdout, "account %s owners: %s\n", args[0], strings.Join(args[1:], ", "))
	return nil
}

func (a *admin) companyCreate(ctx context.Context, args []string) error {
	fs := a.flags("company create")
	account := fs.String("account", "", "account id (required)")
	name := fs.String("name", "", "company name (required)")
	tax := fs.String("tax-number", "", "ЕДБ, 13 digits with a valid check digit (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	if *account == "" || *name == "" || *tax == "" {
		return fmt.Errorf("company create: --account, --name and --tax-number are required")
	}
	if err := ident.EDB(*tax); err != nil {
		return fmt.Errorf("company create: --tax-number %q is not an ЕДБ: %w", *tax, err)
	}
	var c dbq.Company
	err := a.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.GetAccount(ctx, *account); err != nil {
			return fmt.Errorf("no account %q", *account)
		}
		var err error
		c, err = tx.CreateCompanyRecord(ctx, dbq.CreateCompanyRecordParams{
			ID: denar.NewID("cmp"), AccountID: *account, Name: *name, TaxNumber: *tax, CreatedAt: tx.Now,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("company create: %w", err)
	}
	if *asJSON {
		return a.printJSON(map[string]any{"id": c.ID, "name": c.Name, "taxNumber": c.TaxNumber})
	}
	fmt.Fprintf(a.stdout, "created company %s (%s)\n", c.ID, c.Name)
	return nil
}

func (a *admin) keyCreate(ctx context.Context, args []string) error {
	fs := a.flags("key create")
	var scopes, companies stringList
	account := fs.String("account", "", "account id (required)")
	service := fs.String("service", "", "payroll or einvoice (required)")
	env := fs.String("env", "", "sandbox or production (required)")
	fs.Var(&scopes, "scope", "scope; repeat for several (default: the service's default scopes)")
	fs.Var(&companies, "company", "company the key may act for; repeat for several (default: every company)")
	asJSON := fs.Bool("json", false, `print {"id":…,"key":…}`)
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	if *account == "" || *service == "" || *env == "" {
		return fmt.Errorf("key create: --account, --service and --env are required")
	}
	key, secret, err := a.auth.CreateKey(ctx, auth.KeyParams{
		AccountID: *account, Service: *service, Environment: *env, Scopes: scopes, CompanyIDs: companies,
	})
	if err != nil {
		return fmt.Errorf("key create: %w", err)
	}
	if *asJSON {
		return json.NewEncoder(a.stdout).Encode(map[string]string{"id": key.ID, "key": secret})
	}
	fmt.Fprintf(a.stdout, "created %s key %s for %s (%s; scopes: %s)\n\n  %s\n\nThe key is shown only now.\n",
		key.Service, key.ID, key.AccountID, key.Environment, key.Scopes, secret)
	return nil
}

func (a *admin) keyList(ctx context.Context, args []string) error {
	fs := a.flags("key list")
	account := fs.String("account", "", "only keys of this account")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	rows, err := a.db.Reader().ListAPIKeys(ctx)
	if err != nil {
		return err
	}
	type keyView struct {
		ID          string     `json:"id"`
		Account     string     `json:"account"`
		Service     string     `json:"service"`
		Environment string     `json:"environment"`
		Display     string     `json:"display"`
		Scopes      []string   `json:"scopes"`
		Companies   []string   `json:"companies"`
		CreatedAt   time.Time  `json:"createdAt"`
		RevokedAt   *time.Time `json:"revokedAt"`
	}
	var out []keyView
	for _, r := range rows {
		if *account != "" && r.AccountID != *account {
			continue
		}
		v := keyView{ID: r.ID, Account: r.AccountID, Service: r.Service, Environment: r.Environment, Display: r.Display + "…",
			Scopes: strings.Fields(r.Scopes), Companies: strings.Fields(r.CompanyIds), CreatedAt: r.CreatedAt}
		if r.RevokedAt.Valid {
			t := r.RevokedAt.Time
			v.RevokedAt = &t
		}
		out = append(out, v)
	}
	if *asJSON {
		if out == nil {
			out = []keyView{}
		}
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACCOUNT\tSERVICE\tENV\tKEY\tSTATUS")
	for _, v := range out {
		status := "active"
		if v.RevokedAt != nil {
			status = "revoked " + v.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.Account, v.Service, v.Environment, v.Display, status)
	}
	return tw.Flush()
}

func (a *admin) keyRevoke(ctx context.Context, args []string) error {
	fs := a.flags("key revoke")
	if err := a.parseArgs(ctx, fs, args, 1, 1); err != nil {
		return err
	}
	args = fs.Args()
	if err := a.auth.RevokeKey(ctx, args[0]); err != nil {
		return fmt.Errorf("key revoke: %w", err)
	}
	fmt.Fprintf(a.stdout, "revoked %s\n", args[0])
	return nil
}

// credentialView is a row of client list and agent list.
type credentialView struct {
	ID          string     `json:"id"`
	Account     string     `json:"account"`
	Environment string     `json:"environment"`
	Name        string     `json:"name,omitempty"`
	Scopes      []string   `json:"scopes,omitempty"`
	Companies   []string   `json:"companies,omitempty"`
	LastSeenAt  *time.Time `json:"lastSeenAt,omitempty"`
	CreatedAt   time.Time  `json:"createdAt"`
	RevokedAt   *time.Time `json:"revokedAt"`
}

func nullTimePtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

// printCredentials prints client or agent rows as a table (with the extra
// column named extra) or JSON.
func (a *admin) printCredentials(out []credentialView, asJSON bool, extra string, col func(credentialView) string) error {
	if asJSON {
		if out == nil {
			out = []credentialView{}
		}
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "ID\tACCOUNT\tENV\t%s\tSTATUS\n", extra)
	for _, v := range out {
		status := "active"
		if v.RevokedAt != nil {
			status = "revoked " + v.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.ID, v.Account, v.Environment, col(v), status)
	}
	return tw.Flush()
}

func (a *admin) clientList(ctx context.Context, args []string) error {
	fs := a.flags("client list")
	account := fs.String("account", "", "only clients of this account")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	rows, err := a.db.Reader().ListOAuthClients(ctx)
	if err != nil {
		return err
	}
	var out []credentialView
	for _, r := range rows {
		if *account != "" && r.AccountID != *account {
			continue
		}
		out = append(out, credentialView{ID: r.ID, Account: r.AccountID, Environment: r.Environment,
			Scopes: strings.Fields(r.Scopes), Companies: strings.Fields(r.CompanyIds), CreatedAt: r.CreatedAt.UTC(), RevokedAt: nullTimePtr(r.RevokedAt)})
	}
	return a.printCredentials(out, *asJSON, "SCOPES", func(v credentialView) string { return strings.Join(v.Scopes, ",") })
}

// clientRevoke revokes OAuth client credentials; the access tokens issued
// to the client stop working at once.
func (a *admin) clientRevoke(ctx context.Context, args []string) error {
	fs := a.flags("client revoke")
	if err := a.parseArgs(ctx, fs, args, 1, 1); err != nil {
		return err
	}
	args = fs.Args()
	if err := a.auth.RevokeClient(ctx, args[0]); err != nil {
		return fmt.Errorf("client revoke: %w", err)
	}
	fmt.Fprintf(a.stdout, "revoked %s (its access tokens no longer work)\n", args[0])
	return nil
}

func (a *admin) agentList(ctx context.Context, args []string) error {
	fs := a.flags("agent list")
	account := fs.String("account", "", "only agents of this account")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	rows, err := a.db.Reader().ListSigningAgents(ctx)
	if err != nil {
		return err
	}
	var out []credentialView
	for _, r := range rows {
		if *account != "" && r.AccountID != *account {
			continue
		}
		out = append(out, credentialView{ID: r.ID, Account: r.AccountID, Environment: r.Environment, Name: r.Name,
			Companies: strings.Fields(r.CompanyIds), LastSeenAt: nullTimePtr(r.LastSeenAt), CreatedAt: r.CreatedAt.UTC(),
			RevokedAt: nullTimePtr(r.RevokedAt)})
	}
	return a.printCredentials(out, *asJSON, "NAME", func(v credentialView) string { return v.Name })
}

// agentRevoke revokes a signing agent through the application layer, with
// every effect of POST /v1/agents/{id}/revoke: its sockets and long-polls
// in running servers end within signing.AgentRecheck.
func (a *admin) agentRevoke(ctx context.Context, args []string) error {
	fs := a.flags("agent revoke")
	if err := a.parseArgs(ctx, fs, args, 1, 1); err != nil {
		return err
	}
	args = fs.Args()
	// The revocation's events are published as the server publishes them;
	// nothing here delivers them (the server's webhook runner does).
	events := webhooks.New(webhooks.Deps{DB: a.db, Resources: einvoiceapi.EventResources()}, webhooks.Config{})
	// Every room, as the server builds them: a revocation expires the
	// agent's requests, and each request's room says what that means (a
	// decision waiting on the agent fails).
	app := newApplication(einvoicing.Deps{DB: a.db, Log: slog.New(slog.DiscardHandler), Events: events}, ujpSide{}, Config{}, events, nil)
	if _, err := app.signing.AdminRevokeAgent(ctx, args[0]); err != nil {
		return fmt.Errorf("agent revoke: %w", err)
	}
	fmt.Fprintf(a.stdout, "revoked %s (its connections close within %s)\n", args[0], signing.AgentRecheck)
	return nil
}

// clientCreate issues OAuth client credentials for the e-invoicing service.
func (a *admin) clientCreate(ctx context.Context, args []string) error {
	fs := a.flags("client create")
	var scopes, companies stringList
	account := fs.String("account", "", "account id (required)")
	env := fs.String("env", "", "sandbox or production (required)")
	fs.Var(&scopes, "scope", "scope; repeat for several (default: the e-invoicing default scopes)")
	fs.Var(&companies, "company", "company the client may act for; repeat for several (default: every company)")
	asJSON := fs.Bool("json", false, `print {"client_id":…,"client_secret":…}`)
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	if *account == "" || *env == "" {
		return fmt.Errorf("client create: --account and --env are required")
	}
	c, secret, err := a.auth.CreateClient(ctx, auth.ClientParams{
		AccountID: *account, Environment: *env, Scopes: scopes, CompanyIDs: companies,
	})
	if err != nil {
		return fmt.Errorf("client create: %w", err)
	}
	if *asJSON {
		return json.NewEncoder(a.stdout).Encode(map[string]string{"client_id": c.ID, "client_secret": secret})
	}
	fmt.Fprintf(a.stdout, "created OAuth client %s for %s (%s; scopes: %s)\n\n  client_id:     %s\n  client_secret: %s\n\nThe secret is shown only now.\n",
		c.ID, c.AccountID, c.Environment, c.Scopes, c.ID, secret)
	return nil
}

// mailList shows the mail outbox, newest first. Bodies (and the links in
// them, which are credentials: a mandate link accepts a mandate) are shown
// only when asked for.
func (a *admin) mailList(ctx context.Context, args []string) error {
	fs := a.flags("mail list")
	state := fs.String("state", "", "only messages in this state: queued, sent, logged or dead")
	limit := fs.Int("limit", 100, "at most this many messages")
	showBody := fs.Bool("show-body", false, "also print each message's body (it may hold a mandate link)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	if *state != "" && !mail.ValidState(*state) {
		return fmt.Errorf("mail list: --state must be queued, sent, logged or dead, not %q", *state)
	}
	if *limit < 1 {
		return fmt.Errorf("mail list: --limit must be positive")
	}
	rows, err := a.db.Reader().ListMail(ctx, dbq.ListMailParams{State: *state, Lim: int64(*limit)})
	if err != nil {
		return err
	}
	type mailView struct {
		ID            string     `json:"id"`
		To            string     `json:"to"`
		Subject       string     `json:"subject"`
		State         string     `json:"state"`
		Attempts      int        `json:"attempts"`
		LastError     string     `json:"lastError"`
		CreatedAt     time.Time  `json:"createdAt"`
		UpdatedAt     *time.Time `json:"updatedAt"`
		SentAt        *time.Time `json:"sentAt"`
		NextAttemptAt *time.Time `json:"nextAttemptAt"`
		Body          *string    `json:"body,omitempty"`
	}
	opt := func(t sql.NullTime) *time.Time {
		if !t.Valid {
			return nil
		}
		v := t.Time.UTC()
		return &v
	}
	// Mandate mails are kept sealed; the operator's key opens them.
	var box *auth.SecretBox
	var boxErr error
	if *showBody {
		cfg, err := LoadConfig()
		if err != nil {
			return err
		}
		box, boxErr = webhookSecrets(cfg, a.db.Dialect(), slog.New(slog.DiscardHandler))
	}
	out := make([]mailView, 0, len(rows))
	for _, r := range rows {
		v := mailView{ID: r.ID, To: r.Recipient, Subject: r.Subject, State: r.State, Attempts: int(r.Attempts),
			LastError: r.LastError, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: opt(r.UpdatedAt), SentAt: opt(r.SentAt)}
		if r.State == mail.StateQueued && r.JobState.String != "running" {
			v.NextAttemptAt = opt(r.JobRunAt)
		}
		if *showBody {
			body, _, err := mail.Opened(box, r.ID, r.Body, r.Link)
			if err != nil {
				body = fmt.Sprintf("(sealed; cannot open it: %v)", errors.Join(boxErr, err))
			}
			v.Body = &body
		}
		out = append(out, v)
	}
	if *asJSON {
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTO\tSUBJECT\tSTATE\tATTEMPTS\tCREATED\tUPDATED\tNEXT ATTEMPT\tLAST ERROR")
	ts := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Format(time.RFC3339)
	}
	for _, v := range out {
		lastErr := strings.Join(strings.Fields(v.LastError), " ")
		if lastErr == "" {
			lastErr = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", v.ID, v.To, v.Subject, v.State, v.Attempts,
			v.CreatedAt.Format(time.RFC3339), ts(v.UpdatedAt), ts(v.NextAttemptAt), lastErr)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if *showBody {
		for _, v := range out {
			fmt.Fprintf(a.stdout, "\n--- %s to %s ---\n%s\n", v.ID, v.To, *v.Body)
		}
	}
	return nil
}

// mailRetry queues a message that was not sent for delivery again.
func (a *admin) mailRetry(ctx context.Context, args []string) error {
	fs := a.flags("mail retry")
	if err := a.parseArgs(ctx, fs, args, 1, 1); err != nil {
		return err
	}
	args = fs.Args()
	if err := mail.Retry(ctx, a.db, args[0]); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "queued %s for delivery again\n", args[0])
	return nil
}

// userCreate adds a dashboard user. The password is read from standard
// input (--password-stdin, one line) or generated and printed once.
func (a *admin) userCreate(ctx context.Context, args []string) error {
	fs := a.flags("user create")
	account := fs.String("account", "", "account id (required)")
	email := fs.String("email", "", "the user's e-mail address, the sign-in name (required)")
	role := fs.String("role", "", "owner, staff or viewer (required)")
	fromStdin := fs.Bool("password-stdin", false, "read the password from standard input instead of generating one")
	asJSON := fs.Bool("json", false, `print {"id":…,"email":…,"role":…,"password":…}`)
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	if *account == "" || *email == "" || *role == "" {
		return fmt.Errorf("user create: --account, --email and --role are required")
	}
	password, generated := "", false
	if *fromStdin {
		line, err := bufio.NewReader(a.stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("user create: read the password: %w", err)
		}
		password = strings.TrimRight(line, "\r\n")
	} else {
		password, generated = auth.RandomToken(20), true
	}
	u, err := (&auth.Users{DB: a.db}).CreateUser(ctx, *account, *email, *role, password)
	if err != nil {
		return fmt.Errorf("user create: %w", err)
	}
	if *asJSON {
		out := map[string]string{"id": u.ID, "email": u.Email, "role": u.Role}
		if generated {
			out["password"] = password
		}
		return json.NewEncoder(a.stdout).Encode(out)
	}
	fmt.Fprintf(a.stdout, "created %s user %s (%s) of %s\n", u.Role, u.Email, u.ID, u.AccountID)
	if generated {
		fmt.Fprintf(a.stdout, "\n  password: %s\n\nThe password is shown only now; hand it to the user over a safe channel.\n", password)
	}
	return nil
}

func (a *admin) userList(ctx context.Context, args []string) error {
	fs := a.flags("user list")
	account := fs.String("account", "", "account id (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := a.parse(ctx, fs, args); err != nil {
		return err
	}
	if *account == "" {
		return fmt.Errorf("user list: --account is required")
	}
	users, err := (&auth.Users{DB: a.db}).AccountUsers(ctx, &auth.Principal{AccountID: *account})
	if err != nil {
		return err
	}
	if *asJSON {
		return a.printJSON(users)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEMAIL\tROLE\tTOTP\tCREATED")
	for _, u := range users {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", u.ID, u.Email, u.Role, u.TOTPEnabled, u.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}
