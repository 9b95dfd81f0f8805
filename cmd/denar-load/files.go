package main

// The -files mode: the memory a `denar serve` process needs for the largest
// file requests it accepts. It starts the real binary on loopback with a
// throwaway SQLite store, sends several maximum-size requests to each file
// endpoint at once, and prints the process's resident memory before (the
// baseline, same run) and at its peak (VmHWM of /proc/PID/status), one
// fresh process per endpoint and shape, against the target of 400 MB.
// Maximum-size means as many records as fit in the endpoint's body limit
// (payrollapi.MaxFileBody), in two shapes: "lean" records carry only what
// a record needs (the most records: about 47,000 for МПИН), "full" records
// every field with names as long as the TXT allows (fewer records, longer
// strings). Linux only.
//
//	go build -o /tmp/denar ./cmd/denar
//	go run ./cmd/denar-load -files -bin /tmp/denar

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/denar-mk/denar/money"

	"github.com/denar-mk/denar/filing"
	"github.com/denar-mk/denar/ident"
)

// memoryTargetMB is the bound for four concurrent maximum-size requests to
// any file endpoint: the process's peak resident memory stays under it.
const memoryTargetMB = 400

// fileEndpoints are the heavy file endpoints of the payroll service, each
// with the body it takes.
var fileEndpoints = []string{
	"/v1/files/mpin/validate", "/v1/files/mpin/xml", "/v1/files/mpin/txt", "/v1/files/mpin/txt/combined",
	"/v1/files/pddgi", "/v1/files/epdd",
}

type filesConfig struct {
	bin        string
	serverEnv  []string // extra DENAR_* settings of the server
	records    int      // 0: as many as the body limit admits
	limit      int      // the body limit the records are derived from
	concurrent int
	endpoints  []string
	shapes     []string // "lean", "full"
	idempotent bool     // send each request with an Idempotency-Key, as the SDK does
}

// runFiles measures every endpoint with bodies of every shape and reports
// whether the highest peak is under memoryTargetMB.
func runFiles(c filesConfig) (bool, error) {
	dir, err := os.MkdirTemp("", "denar-load-files-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	bin := c.bin
	if bin == "" {
		bin = filepath.Join(dir, "denar")
		build := exec.Command("go", "build", "-o", bin, "github.com/denar-mk/denar/cmd/denar")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return false, fmt.Errorf("build denar: %w", err)
		}
	}
	with := ""
	if c.idempotent {
		with = ", each with an Idempotency-Key"
	}
	fmt.Printf("denar-load -files: %d requests at once per endpoint%s, body limit %d bytes (%.0f MiB), server settings %v%s\n",
		c.concurrent, with, c.limit, float64(c.limit)/(1<<20), c.serverEnv, loadAverage())
	fmt.Printf("%-28s %-5s %8s %9s %9s %9s %8s  %s\n", "endpoint", "shape", "records", "body MB", "base MB", "peak MB", "time", "responses")
	worst, worstAt := int64(0), ""
	for _, ep := range c.endpoints {
		for _, shape := range c.shapes {
			n, body, small, err := fileBody(ep, shape, c.records, c.limit)
			if err != nil {
				return false, fmt.Errorf("%s: %w", ep, err)
			}
			// A fresh process per measurement: Go keeps freed memory a
			// while, so one peak would otherwise start from the last one's
			// heap.
			m, err := measureEndpoint(bin, dir, c.serverEnv, ep, small, body, c.concurrent, c.idempotent)
			if err != nil {
				return false, fmt.Errorf("%s (%s): %w", ep, shape, err)
			}
			fmt.Printf("%-28s %-5s %8d %9.1f %9.1f %9.1f %8s  %s\n", ep, shape, n, float64(len(body))/1e6,
				float64(m.base)/1024, float64(m.peak)/1024, m.elapsed.Round(time.Millisecond), m.responses)
			if m.peak > worst {
				worst, worstAt = m.peak, ep+" ("+shape+")"
			}
		}
	}
	ok := worst/1024 < memoryTargetMB
	verdict := "met"
	if !ok {
		verdict = "NOT met"
	}
	fmt.Printf("highest peak %.1f MB (%s); target under %d MB: %s\n", float64(worst)/1024, worstAt, memoryTargetMB, verdict)
	return ok, nil
}

// fileBody is the body of n records of the shape for the endpoint, or,
// with n 0, of as many records as fit in limit bytes, and a small body of
// the same kind for the warm-up.
func fileBody(ep, shape string, n, limit int) (int, []byte, []byte, error) {
	var record func(int) (json.RawMessage, error)
	var wrap func([]json.RawMessage) ([]byte, error)
	switch ep {
	case "/v1/files/mpin/validate", "/v1/files/mpin/xml", "/v1/files/mpin/txt":
		record, wrap = leanRecord, func(r []json.RawMessage) ([]byte, error) { return mpinBody(r, 0) }
		if shape == "full" {
			record = fullRecord
		}
	case "/v1/files/mpin/txt/combined":
		record, wrap = leanRecord, func(r []json.RawMessage) ([]byte, error) { return mpinBody(r, 4) }
		if shape == "full" {
			record = fullRecord
		}
	case "/v1/files/pddgi":
		record, wrap = func(i int) (json.RawMessage, error) { return pddgiRecord(i, shape == "full") }, pddgiBody
	case "/v1/files/epdd":
		record, wrap = func(i int) (json.RawMessage, error) { return eppdRow(i, shape == "full") }, eppdBody
	default:
		return 0, nil, nil, errors.New("no body for this endpoint (one of " + strings.Join(fileEndpoints, ", ") + ")")
	}
	_, small, err := records(2, 0, record, wrap)
	if err != nil {
		return 0, nil, nil, err
	}
	n, body, err := records(n, limit, record, wrap)
	return n, body, small, err
}

// records wraps n records, or with n 0 as many as fit in limit bytes, and
// returns how many it wrapped.
func records(n, limit int, record func(int) (json.RawMessage, error), wrap func([]json.RawMessage) ([]byte, error)) (int, []byte, error) {
	var recs []json.RawMessage
	if n > 0 {
		for i := range n {
			r, err := record(i)
			if err != nil {
				return 0, nil, err
			}
			recs = append(recs, r)
		}
		body, err := wrap(recs)
		return n, body, err
	}
	empty, err := wrap(nil)
	if err != nil {
		return 0, nil, err
	}
	// Records are added while their bytes and separators fit beside the
	// wrapping (with room for the separators between batches); the last
	// few are dropped if the whole is still over.
	size := len(empty) + 64
	for i := 0; ; i++ {
		r, err := record(i)
		if err != nil {
			return 0, nil, err
		}
		if size+len(r)+1 > limit {
			break
		}
		size += len(r) + 1
		recs = append(recs, r)
	}
	for {
		body, err := wrap(recs)
		if err != nil || len(body) <= limit {
			return len(recs), body, err
		}
		recs = recs[:len(recs)-1]
	}
}

// measurement is one endpoint's figures: resident memory in kB.
type measurement struct {
	base, peak int64
	elapsed    time.Duration
	responses  string
}

// measureEndpoint starts denar serve, warms it up with one small request,
// takes its resident memory as the baseline, sends concurrent copies of
// body at once and returns the peak resident memory.
func measureEndpoint(bin, dir string, serverEnv []string, ep string, small, body []byte, concurrent int, idempotent bool) (measurement, error) {
	var m measurement
	data, err := os.MkdirTemp(dir, "data-")
	if err != nil {
		return m, err
	}
	srv, err := startDenar(bin, data, serverEnv)
	if err != nil {
		return m, err
	}
	defer srv.stop()
	client := &http.Client{Timeout: 5 * time.Minute}
	key := func(i int) string {
		if !idempotent {
			return ""
		}
		return fmt.Sprintf("denar-load-%d-%d", time.Now().UnixNano(), i)
	}
	if status, _, err := post(client, srv.url+ep, srv.key, key(-1), small); err != nil || status != http.StatusOK {
		return m, fmt.Errorf("warm-up: %d %v", status, err)
	}
	if m.base, err = procStatusKB(srv.cmd.Process.Pid, "VmRSS"); err != nil {
		return m, err
	}
	var wg sync.WaitGroup
	statuses := make([]int, concurrent)
	sizes := make([]int64, concurrent)
	errs := make([]error, concurrent)
	start := time.Now()
	for i := range concurrent {
		wg.Go(func() { statuses[i], sizes[i], errs[i] = post(client, srv.url+ep, srv.key, key(i), body) })
	}
	wg.Wait()
	m.elapsed = time.Since(start)
	if m.peak, err = procStatusKB(srv.cmd.Process.Pid, "VmHWM"); err != nil {
		return m, err
	}
	var parts []string
	for i := range concurrent {
		switch {
		case errs[i] != nil:
			parts = append(parts, "error: "+errs[i].Error())
		case statuses[i] == http.StatusOK:
			parts = append(parts, fmt.Sprintf("200 (%.1f MB)", float64(sizes[i])/1e6))
		default:
			parts = append(parts, strconv.Itoa(statuses[i]))
		}
	}
	m.responses = strings.Join(parts, ", ")
	return m, nil
}

func post(client *http.Client, url, key, idempotencyKey string, body []byte) (int, int64, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, n, err
}

// procStatusKB reads one "Name:   123 kB" line of /proc/PID/status.
func procStatusKB(pid int, name string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("resident memory needs Linux /proc: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", name, pid)
}

type denarProcess struct {
	cmd *exec.Cmd
	url string
	key string
}

func startDenar(bin, dir string, serverEnv []string) (*denarProcess, error) {
	addrs := make([]string, 2)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		addrs[i] = l.Addr().String()
		l.Close()
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DENAR_") && !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GOGC=") {
			env = append(env, kv)
		}
	}
	env = append(env, "DENAR_DATA_DIR="+dir, "DENAR_PAYROLL_ADDR="+addrs[0], "DENAR_EINVOICE_ADDR="+addrs[1],
		"DENAR_LOG_LEVEL=error", "DENAR_RATE_LIMIT_RPS=0")
	env = append(env, serverEnv...)
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	var stdout bytes.Buffer
	var mu sync.Mutex
	cmd.Stdout = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return stdout.Write(p) })
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &denarProcess{cmd: cmd, url: "http://" + addrs[0]}
	keyRE := regexp.MustCompile(`payroll API key \(sandbox\):\s+(\S+)`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		mu.Lock()
		m := keyRE.FindSubmatch(stdout.Bytes())
		mu.Unlock()
		if m != nil {
			resp, err := http.Get(p.url + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					p.key = string(m[1])
					return p, nil
				}
			}
		}
		if ctx.Err() != nil {
			p.stop()
			return nil, errors.New("denar serve did not start within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *denarProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func sp(s string) *string { return &s }

// payer is the employer of every generated МПИН request, every field filled.
func payer() filing.Company {
	return filing.Company{
		Name: "DIZAJNIJA DOOEL SKOPJE", NameCyr: sp("Дизајнија ДООЕЛ Скопје"), TaxID: sp("4030990123455"),
		RegistrationNumber: sp("1234567"), Address: sp("Булевар Партизански одреди 101"), AddressStreet: sp("Булевар Партизански одреди"),
		AddressNumber: sp("101"), AddressArea: sp("Карпош"), PostalCode: sp("1000"), Fax: sp("023100100"), City: sp("Скопје"),
		MunicipalityCode: sp("179"), ManagerName: sp("Марија Николовска"), Phone: sp("023100101"), Email: sp("plati@dizajnija.mk"),
		AreaCode: sp("02"), FzomBranch: sp("4061"),
	}
}

// mpinBody is an МПИН request of the given records (force set, so that
// the generators write the file whatever the checks find); with batches
// > 0 a combined request, the records dealt into that many batches.
func mpinBody(recs []json.RawMessage, batches int) ([]byte, error) {
	company, err := json.Marshal(payer())
	if err != nil {
		return nil, err
	}
	batch, err := json.Marshal(filing.Batch{PeriodMonth: 5, PeriodYear: 2026, WorkingHours: filing.N("152"), VidObvrska: sp("101"), VidObvrznik: sp("110")})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"company":`)
	b.Write(company)
	b.WriteString(`,"batch":`)
	b.Write(batch)
	b.WriteString(`,"force":true,`)
	if batches <= 0 {
		b.WriteString(`"records":`)
		list(&b, recs)
	} else {
		b.WriteString(`"batches":[`)
		for k := range batches {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"records":`)
			list(&b, recs[len(recs)*k/batches:len(recs)*(k+1)/batches])
			b.WriteByte('}')
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// list writes a JSON array of items.
func list(b *bytes.Buffer, items []json.RawMessage) {
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
}

// salaryFigures are a consistent set of a record's amounts for gross
// 30,000 and up.
func salaryFigures(i int) (gross, pen, hea, inj, emp, pit, net money.Amount) {
	gross = money.FromInt(int64(30000 + i%50000)).Add(money.New(int64(i%100), 2))
	pen, hea = gross.Mul(money.MustParse("0.188")).Round(2), gross.Mul(money.MustParse("0.075")).Round(2)
	inj, emp = gross.Mul(money.MustParse("0.005")).Round(2), gross.Mul(money.MustParse("0.012")).Round(2)
	contrib := pen.Add(hea).Add(inj).Add(emp)
	pit = money.Max(gross.Sub(contrib).Sub(money.FromInt(10932)), money.Amount{}).Mul(money.MustParse("0.1")).Round(2)
	net = gross.Sub(contrib).Sub(pit)
	return
}

// fullRecord is record i with every field present and names as long as
// the TXT allows.
func fullRecord(i int) (json.RawMessage, error) {
	ip := func(i int) *int { return &i }
	m := func(s string) filing.Money { return filing.M(s) }
	num := func(s string) filing.Num { return filing.N(s) }
	embg, err := embgFor(i)
	if err != nil {
		return nil, err
	}
	account, err := accountFor(i)
	if err != nil {
		return nil, err
	}
	last := strings.Repeat("Ж", 36)
	first := strings.Repeat("Љ", 26)
	gross, pen, hea, inj, emp, pit, net := salaryFigures(i)
	d := func(v money.Amount) filing.Money { return filing.Money{D: v, Set: true} }
	return json.Marshal(filing.Record{
		SalaryGross: d(gross), SalaryNet: d(net), Pension: d(pen), Health: d(hea), AdditionalHealth: d(inj),
		EmploymentContrib: d(emp), PIT: d(pit),
		Employee: filing.Employee{FirstName: "Ljubomir-Aleksandar", LastName: "Stojanovski-Gjorgjievski" + strconv.Itoa(i),
			EMBG: sp(embg), FirstNameCyr: sp(first), LastNameCyr: sp(last + strconv.Itoa(i%10)), BankAccount: sp(account),
			MunicipalityCode: sp("179"), FzomBranch: sp("4061")},
		PersonalAllowance: m("10932.00"), OvertimePay: m("1234.56"), NightPay: m("789.01"), HolidayPay: m("456.78"),
		SundayPay: m("345.67"), SickFundPay: m("0.00"), SickCompanyPay: m("0.00"), PensionTopUp: m("0.00"),
		HealthTopUp: m("0.00"), DisabilityTopUp: m("0.00"), EmploymentTopUp: m("0.00"), SickFundBase: m("0.00"),
		MaternityBase: m("0.00"), NetPaid: d(net),
		OvertimeHours: num("8"), NightHours: num("16"), HolidayHours: num("8"), SundayHours: num("8"), WorkingHours: num("136"),
		SickFundHours: num("0"), SickFundRate: num("0"), SickCompanyHours: num("0"), SickCompanyRate: num("0"),
		UnpaidHours: num("0"), ServiceDays: num("0"), MaternityHours: num("16"), MaternityPartialHours: num("0.5"), AbsentHours: num("0"),
		HireDay: ip(1), LeaveDay: ip(31), ContractNo: ip(1),
		InsuranceCode: sp("0047"), SickFundCode: sp("140"), ClientTaxID: sp("4030990123455"),
	})
}

// leanRecord is record i with only what a record needs, written compactly
// (omitted fields are absent, not null): the most records a body of a
// given size can hold.
func leanRecord(i int) (json.RawMessage, error) {
	embg, err := embgFor(i)
	if err != nil {
		return nil, err
	}
	gross, pen, hea, inj, emp, pit, net := salaryFigures(i)
	return fmt.Appendf(nil, `{"salaryGross":"%s","salaryNet":"%s","pension":"%s","health":"%s","additionalHealth":"%s","employmentContrib":"%s","pit":"%s","workingHours":152,"employee":{"firstName":"Ана","lastName":"Петрова","embg":"%s"}}`,
		gross, net, pen, hea, inj, emp, pit, embg), nil
}

// pddgiRecord is contractor payment i: names only, or (full) every field
// with long names.
func pddgiRecord(i int, full bool) (json.RawMessage, error) {
	gross := money.FromInt(int64(5000 + i%90000)).Add(money.New(int64(i%100), 2))
	if !full {
		return fmt.Appendf(nil, `{"salaryGross":"%s","employee":{"firstName":"Ana","lastName":"Petrova%d"}}`, gross, i), nil
	}
	embg, err := embgFor(i)
	if err != nil {
		return nil, err
	}
	account, err := accountFor(i)
	if err != nil {
		return nil, err
	}
	return json.Marshal(filing.PddgiRecord{SalaryGross: filing.Money{D: gross, Set: true},
		Employee: filing.PddgiEmployee{EMBG: sp(embg), FirstName: "Ljubomir-Aleksandar", LastName: "Stojanovski-Gjorgjievski" + strconv.Itoa(i), BankAccount: sp(account)}})
}

func pddgiBody(recs []json.RawMessage) ([]byte, error) {
	company, err := json.Marshal(filing.PddgiCompany{Name: "Дизајнија ДООЕЛ Скопје", TaxID: sp("4030990123455"), Email: sp("plati@dizajnija.mk"),
		Phone: sp("023100101"), ContactPerson: sp("Марија Николовска"), MunicipalityCode: sp("179")})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"company":`)
	b.Write(company)
	b.WriteString(`,"month":5,"year":2026,"records":`)
	list(&b, recs)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// eppdRow is payment i of an е-ППД: what a row needs, or (full) every
// field with long names.
func eppdRow(i int, full bool) (json.RawMessage, error) {
	gross := money.FromInt(int64(5000 + i%90000)).Add(money.New(int64(i%100), 2))
	embg, err := embgFor(i)
	if err != nil {
		return nil, err
	}
	if !full {
		return fmt.Appendf(nil, `{"embg":"%s","firstName":"Ana","lastName":"Petrova%d","grossIncome":"%s"}`, embg, i, gross), nil
	}
	account, err := accountFor(i)
	if err != nil {
		return nil, err
	}
	return json.Marshal(filing.EppdRow{EMBG: embg, FirstName: "Ljubomir-Aleksandar", LastName: "Stojanovski-Gjorgjievski" + strconv.Itoa(i),
		GrossIncome: filing.Money{D: gross, Set: true}, MunicipalityCode: sp("179"), SubtypeIncome: sp("13.2"), BankAccount: sp(account)})
}

func eppdBody(rows []json.RawMessage) ([]byte, error) {
	issuer, err := json.Marshal(filing.EppdIssuer{EDB: "4030990123455", Name: "Дизајнија ДООЕЛ Скопје", Email: sp("plati@dizajnija.mk"), Phone: sp("023100101")})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"issuer":`)
	b.Write(issuer)
	b.WriteString(`,"periodFrom":"2026-05-01","periodTo":"2026-05-31","comment":"Хонорари за мај","rows":`)
	list(&b, rows)
	b.WriteByte('}')
	return b.Bytes(), nil
}

func embgFor(i int) (string, error) {
	prefix := fmt.Sprintf("%02d%02d9%02d45%03d", 1+i%28, 1+(i/28)%12, 50+(i/336)%40, i%1000)
	for k := '0'; k <= '9'; k++ {
		if ident.EMBG(prefix+string(k)) == nil {
			return prefix + string(k), nil
		}
	}
	return "", fmt.Errorf("no ЕМБГ check digit for %s", prefix)
}

func accountFor(i int) (string, error) {
	prefix := fmt.Sprintf("3000%09d", 100000000+i)
	c, err := ident.BankAccountCheckDigits(prefix)
	if err != nil {
		return "", err
	}
	return prefix + c, nil
}
