// Command denar-agent is the signing bridge of the denar e-invoicing API: it
// runs on the customer's computer or server, holds (or reaches) the signing
// key, and signs the requests the service prepares. The service never sees
// the key.
//
//	denar-agent pair --server URL --code CODE [--name NAME]
//	denar-agent register-certificate --company cmp_… KEY FLAGS
//	denar-agent run [--auto | --auto-purposes query] [--batch N] KEY FLAGS
//	denar-agent run --sandbox-self-signed --company cmp_… [--server URL]
//
// KEY FLAGS select the key source: --key key.pem --cert cert.pem, or
// --p12 file.p12 (password in DENAR_AGENT_P12_PASSWORD), or a smart card /
// USB token with --pkcs11-module, --pkcs11-token, --pkcs11-key and --cert
// (PIN in DENAR_AGENT_PIN; only in binaries built with -tags pkcs11, so the
// default build stays cgo-free).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/denar-mk/denar/internal/agent"
	"github.com/denar-mk/denar/internal/cli"
	"github.com/denar-mk/denar/sdk/signer"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if code := cli.ExitCode(err); code != 0 {
		if code == 1 {
			fmt.Fprintln(os.Stderr, "denar-agent:", err)
		}
		os.Exit(code)
	}
}

const usage = `denar-agent: the signing bridge of the denar e-invoicing API

Usage:
  denar-agent pair --server URL --code CODE [--name NAME]
  denar-agent register-certificate --company cmp_… KEY FLAGS
  denar-agent run [--auto | --auto-purposes query] [--batch N] KEY FLAGS
  denar-agent run --sandbox-self-signed --company cmp_… [--server URL]
                                    sandbox: a throw-away key and certificate, registered and signing
  denar-agent version               the build's version and commit
  denar-agent help [COMMAND]        this text, or a command's ("denar-agent COMMAND -h" too)

KEY FLAGS select the key: --key key.pem --cert cert.pem, or --p12 file.p12
(password in DENAR_AGENT_P12_PASSWORD), or a PKCS#11 token with
--pkcs11-module, --pkcs11-token, --pkcs11-key and --cert (PIN in
DENAR_AGENT_PIN; binaries built with -tags pkcs11). See docs/signing.md.
Exit status: 0 success, 1 failure, 2 a wrong command line.
`

const versionUsage = `Usage: denar-agent version

Prints the build's module version, the commit it was built from (with its
time and whether the tree had uncommitted changes) and the Go version.
`

const pairUsage = `Usage: denar-agent pair --server URL --code CODE [--name NAME]

Pairs this machine with the e-invoicing service using a pairing code from
POST /v1/agents/pairing-codes, and saves the agent's credentials (0600).
The agent may act for the companies the credential that created the code
may. The credentials are shown once: if the answer was lost, running pair
again with the same code says so; create a new code and pair again.
`

const registerUsage = `Usage: denar-agent register-certificate --company cmp_… --eujp-id ID KEY FLAGS

Registers the signing certificate of the key for a company of the paired
agent's account; the agent then receives that company's signing requests.
--eujp-id is the certificate holder's EUJP id from their e-UJP registration,
which UJP knows the signer by; only a sandbox company whose UJP is the
service's simulator does without it.
`

const runUsage = `Usage:
  denar-agent run [--auto | --auto-purposes query] [--batch N] KEY FLAGS
  denar-agent run --sandbox-self-signed --company cmp_… [--server URL]

Signs the signing requests of the companies this agent registered a
certificate for: over a WebSocket, else by long-polling; reconnects by
itself. It takes the requests waiting in batches of up to --batch (default
and most 100): one claim and one answer for the lot, one PIN login of a
PKCS#11 token for it. Purposes not signed automatically (--auto-purposes,
default query; --auto: all) are asked on the terminal in one question per
batch listing each document's number, buyer, total, company and when its
request expires (answer y, n, or the numbers to sign); without a terminal (a
service, a pipe) it refuses to start unless --auto or --auto-purposes
covers document, decision and query. Every signature is logged.

With --sandbox-self-signed (sandbox companies only) it makes a throw-away
RSA key and self-signed certificate in memory, registers the certificate for
--company and signs every request. With --server it first pairs a new agent
using the e-invoicing API key in DENAR_API_KEY (scope companies:write);
without, it uses the paired agent of --credentials.
`

// sandboxSigner prepares the sandbox signer: the agent's credentials (a new
// agent paired with DENAR_API_KEY when server is given, else the
// credentials file), refused unless they are the sandbox's, and a
// throw-away key whose self-signed certificate it registers for company.
// The service refuses such a certificate for a production company too.
func sandboxSigner(ctx context.Context, client *http.Client, credPath, server, company string, stdout io.Writer,
	log *slog.Logger) (signer.Credentials, agent.Key, error) {
	var c signer.Credentials
	var err error
	if server != "" {
		apiKey := os.Getenv("DENAR_API_KEY")
		if apiKey == "" {
			return c, agent.Key{}, errors.New("--server needs an e-invoicing API key in DENAR_API_KEY (scope companies:write) to pair")
		}
		code, err := signer.NewPairingCode(ctx, client, server, apiKey)
		if err != nil {
			return c, agent.Key{}, fmt.Errorf("pairing code: %w", err)
		}
		host, _ := os.Hostname()
		if c, err = signer.Pair(ctx, client, server, code, "sandbox signer on "+host); err != nil {
			return c, agent.Key{}, fmt.Errorf("pair: %w", err)
		}
		log.Info("paired a sandbox agent (its credentials are kept in memory only)", "agent", c.AgentID)
	} else if c, err = agent.LoadCredentials(credPath); err != nil {
		return c, agent.Key{}, err
	}
	if c.Environment != "" && c.Environment != "sandbox" {
		return c, agent.Key{}, fmt.Errorf("--sandbox-self-signed signs for sandbox companies only; agent %s was paired in %s", c.AgentID, c.Environment)
	}
	key, err := agent.SandboxKey(company)
	if err != nil {
		return c, agent.Key{}, err
	}
	if err := signer.RegisterCertificate(ctx, client, c, key.Cert, company); err != nil {
		var apiErr *signer.APIError
		if errors.As(err, &apiErr) && (apiErr.Code == "self_signed_certificate" || apiErr.Code == "environment_mismatch") {
			return c, agent.Key{}, fmt.Errorf("--sandbox-self-signed signs for sandbox companies only: %w", err)
		}
		return c, agent.Key{}, fmt.Errorf("register certificate: %w", err)
	}
	fmt.Fprintf(stdout, "sandbox signer: self-signed certificate %s registered for %s; signing every request (Ctrl-C stops)\n",
		key.Cert.SerialNumber, company)
	return c, key, nil
}

func defaultCredentials() string {
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "denar-agent", "credentials.json")
	}
	return "denar-agent-credentials.json"
}

type keyFlags struct{ key, cert, p12, module, token, keyLabel string }

func (k *keyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.key, "key", "", "PEM private key (with --cert)")
	fs.StringVar(&k.cert, "cert", "", "PEM certificate (with --key)")
	fs.StringVar(&k.p12, "p12", "", "PKCS#12 file; password in DENAR_AGENT_P12_PASSWORD")
	fs.StringVar(&k.module, "pkcs11-module", "", "PKCS#11 module (e.g. /usr/lib/softhsm/libsofthsm2.so); needs a -tags pkcs11 build; PIN in DENAR_AGENT_PIN")
	fs.StringVar(&k.token, "pkcs11-token", "", "token label")
	fs.StringVar(&k.keyLabel, "pkcs11-key", "", "private key label on the token (certificate from --cert)")
}

func (k *keyFlags) load() (agent.Key, error) {
	switch {
	case k.module != "":
		return agent.LoadPKCS11(k.module, k.token, os.Getenv("DENAR_AGENT_PIN"), k.keyLabel, k.cert)
	case k.p12 != "":
		return agent.LoadPKCS12(k.p12, os.Getenv("DENAR_AGENT_P12_PASSWORD"))
	case k.key != "" && k.cert != "":
		return agent.LoadPEM(k.key, k.cert)
	}
	return agent.Key{}, errors.New("choose a key: --key and --cert, or --p12")
}

// run runs one command; stdin is where a person is asked before a
// signature.
func run(ctx context.Context, args []string, stdin *os.File, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.Fail(stderr, usage, nil, "denar-agent: no command given")
	}
	if cli.IsHelp(args[0]) {
		if args[0] == "help" && len(args) > 1 && !cli.IsHelp(args[1]) {
			return run(ctx, []string{args[1], "-h"}, stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return cli.ErrHelp
	}
	fs := flag.NewFlagSet("denar-agent "+args[0], flag.ContinueOnError)
	credPath := fs.String("credentials", defaultCredentials(), "credentials file (0600)")
	client := &http.Client{Timeout: 90 * time.Second}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	switch args[0] {
	case "version":
		if err := cli.Parse(fs, args[1:], 0, 0, versionUsage, stdout, stderr); err != nil {
			return err
		}
		fmt.Fprint(stdout, cli.Version("denar-agent"))
		return nil
	case "pair":
		server := fs.String("server", "", "e-invoicing API base URL")
		code := fs.String("code", "", "pairing code from POST /v1/agents/pairing-codes")
		host, _ := os.Hostname()
		name := fs.String("name", host, "name shown for this agent")
		if err := cli.Parse(fs, args[1:], 0, 0, pairUsage, stdout, stderr); err != nil {
			return err
		}
		if *server == "" || *code == "" {
			return cli.Fail(stderr, pairUsage, fs, "denar-agent pair: --server and --code are required")
		}
		c, err := signer.Pair(ctx, client, *server, *code, *name)
		if err != nil {
			return fmt.Errorf("pair: %w", err)
		}
		if err := agent.SaveCredentials(*credPath, c); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "paired as %s; credentials in %s\n", c.AgentID, *credPath)
		return nil
	case "register-certificate":
		var k keyFlags
		k.register(fs)
		company := fs.String("company", "", "company id (cmp_…)")
		eujpID := fs.String("eujp-id", "", "the certificate holder's EUJP id (from their e-UJP registration); required unless the company's UJP is the sandbox simulator")
		if err := cli.Parse(fs, args[1:], 0, 0, registerUsage, stdout, stderr); err != nil {
			return err
		}
		c, err := agent.LoadCredentials(*credPath)
		if err != nil {
			return err
		}
		key, err := k.load()
		if err != nil {
			return err
		}
		defer key.Close()
		if err := signer.RegisterCertificateAs(ctx, client, c, key.Cert, *company, *eujpID); err != nil {
			return fmt.Errorf("register certificate: %w", err)
		}
		fmt.Fprintf(stdout, "certificate %s registered for %s\n", key.Cert.SerialNumber, *company)
		return nil
	case "run":
		var k keyFlags
		k.register(fs)
		auto := fs.Bool("auto", false, "sign every purpose without asking (servers)")
		autoPurposes := fs.String("auto-purposes", "query", "purposes signed without asking, comma-separated")
		batch := fs.Int("batch", signer.MaxBatch, fmt.Sprintf("most requests taken and answered at once, 1 to %d", signer.MaxBatch))
		sandbox := fs.Bool("sandbox-self-signed", false, "sandbox only: make a throw-away key and self-signed certificate, register it for --company and sign everything")
		company := fs.String("company", "", "with --sandbox-self-signed: the sandbox company (cmp_…)")
		server := fs.String("server", "", "with --sandbox-self-signed: pair a new agent with this e-invoicing API (API key in DENAR_API_KEY) instead of using --credentials")
		if err := cli.Parse(fs, args[1:], 0, 0, runUsage, stdout, stderr); err != nil {
			return err
		}
		if *batch < 1 || *batch > signer.MaxBatch {
			return cli.Fail(stderr, runUsage, fs, fmt.Sprintf("denar-agent run: --batch is 1 to %d", signer.MaxBatch))
		}
		allowed := map[string]bool{}
		for _, p := range strings.Split(*autoPurposes, ",") {
			allowed[strings.TrimSpace(p)] = true
		}
		if *auto || *sandbox {
			allowed = map[string]bool{"document": true, "decision": true, "query": true}
		}
		var asked []string
		for _, p := range []string{"document", "decision", "query"} {
			if !allowed[p] {
				asked = append(asked, p)
			}
		}
		if len(asked) > 0 && !cli.IsTerminal(stdin) {
			// Nobody would answer: every such request would be refused.
			return cli.Fail(stderr, runUsage, fs, fmt.Sprintf("denar-agent run: no terminal to ask whether to sign %s requests on; "+
				"run it at a terminal, or pass --auto to sign every request (a server), or --auto-purposes document,decision,query",
				strings.Join(asked, " and ")))
		}
		var c signer.Credentials
		var key agent.Key
		var err error
		if *sandbox {
			if k != (keyFlags{}) || *auto || *company == "" {
				return cli.Fail(stderr, runUsage, fs, "denar-agent run: --sandbox-self-signed takes --company and no key flags (it signs everything itself)")
			}
			c, key, err = sandboxSigner(ctx, client, *credPath, *server, *company, stdout, log)
			if err != nil {
				return err
			}
		} else {
			if *company != "" || *server != "" {
				return cli.Fail(stderr, runUsage, fs, "denar-agent run: --company and --server go with --sandbox-self-signed")
			}
			if c, err = agent.LoadCredentials(*credPath); err != nil {
				return err
			}
			if key, err = k.load(); err != nil {
				return err
			}
		}
		defer key.Close()
		w := &signer.Worker{Creds: c, Signer: key.Signer, HTTP: client, Log: log, Batch: *batch,
			BatchPolicy: agent.TerminalPolicy(stdin, stdout, allowed),
			OnSigned: func(r signer.Request, jws string) {
				log.Info("signature made", "request", r.ID, "purpose", r.Purpose, "company", r.CompanyID,
					"links", r.Links, "certificate", key.Cert.SerialNumber.String(), "jws_bytes", len(jws))
			}}
		log.Info("running", "agent", c.AgentID, "server", c.Server)
		if err := w.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}
	return cli.Fail(stderr, usage, nil, fmt.Sprintf("denar-agent: unknown command %q", args[0]))
}
