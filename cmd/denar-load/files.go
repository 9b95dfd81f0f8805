package main

// The -files mode: the memory a `denar serve` process needs for the largest
// file requests it accepts. It starts the real binary on loopback with a
// throwaway SQLite store, sends several maximum-size МПИН requests to each
// file endpoint at once, and prints the process's resident memory before
// (the baseline, same run) and at its peak (VmHWM of /proc/PID/status), one
// fresh process per endpoint. Linux only.
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

// memoryTargetMB is issue 12's bound for four concurrent maximum-size file
// requests.
const memoryTargetMB = 400

type filesConfig struct {
	bin        string
	serverEnv  []string // extra DENAR_* settings of the server
	records    int
	concurrent int
	endpoints  []string
}

func runFiles(c filesConfig) error {
	body, err := maxMpinRequest(c.records)
	if err != nil {
		return err
	}
	fmt.Printf("denar-load -files: %d records per request, %d bytes (%.1f MiB, %.0f bytes a record), %d at once, server settings %v\n",
		c.records, len(body), float64(len(body))/(1<<20), float64(len(body))/float64(c.records), c.concurrent, c.serverEnv)

	dir, err := os.MkdirTemp("", "denar-load-files-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := c.bin
	if bin == "" {
		bin = filepath.Join(dir, "denar")
		build := exec.Command("go", "build", "-o", bin, "github.com/denar-mk/denar/cmd/denar")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build denar: %w", err)
		}
	}
	// A fresh process per endpoint: Go keeps freed memory a while, so one
	// endpoint's peak would otherwise start from the last one's heap.
	small, _ := maxMpinRequest(2)
	worst := int64(0)
	for _, ep := range c.endpoints {
		peak, err := measureEndpoint(bin, dir, c.serverEnv, ep, small, body, c.concurrent)
		if err != nil {
			return fmt.Errorf("%s: %w", ep, err)
		}
		worst = max(worst, peak)
	}
	verdict := "met"
	if worst/1024 >= memoryTargetMB {
		verdict = "NOT met"
	}
	fmt.Printf("highest peak %.1f MB; target under %d MB: %s\n", float64(worst)/1024, memoryTargetMB, verdict)
	return nil
}

// measureEndpoint starts denar serve, warms it up with one small request,
// takes its resident memory as the baseline, sends concurrent copies of
// body at once and returns the peak resident memory in kB.
func measureEndpoint(bin, dir string, serverEnv []string, ep string, small, body []byte, concurrent int) (int64, error) {
	data, err := os.MkdirTemp(dir, "data-")
	if err != nil {
		return 0, err
	}
	srv, err := startDenar(bin, data, serverEnv)
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	client := &http.Client{Timeout: 5 * time.Minute}
	if status, _, err := post(client, srv.url+ep, srv.key, small); err != nil || status != http.StatusOK {
		return 0, fmt.Errorf("warm-up: %d %v", status, err)
	}
	base, err := procStatusKB(srv.cmd.Process.Pid, "VmRSS")
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	statuses := make([]int, concurrent)
	sizes := make([]int64, concurrent)
	errs := make([]error, concurrent)
	start := time.Now()
	for i := range concurrent {
		wg.Go(func() { statuses[i], sizes[i], errs[i] = post(client, srv.url+ep, srv.key, body) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	peak, err := procStatusKB(srv.cmd.Process.Pid, "VmHWM")
	if err != nil {
		return 0, err
	}
	var parts []string
	for i := range concurrent {
		if errs[i] != nil {
			parts = append(parts, "error: "+errs[i].Error())
			continue
		}
		parts = append(parts, fmt.Sprintf("%d (%d bytes)", statuses[i], sizes[i]))
	}
	fmt.Printf("%-24s baseline %5.1f MB, peak %6.1f MB (%.1f× baseline), %s; responses %s\n", ep, float64(base)/1024,
		float64(peak)/1024, float64(peak)/float64(base), elapsed.Round(time.Millisecond), strings.Join(parts, ", "))
	return peak, nil
}

func post(client *http.Client, url, key string, body []byte) (int, int64, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
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
		if !strings.HasPrefix(kv, "DENAR_") {
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

// maxMpinRequest is an МПИН request of n records in which every field is
// present and every name is as long as the TXT layout allows (Cyrillic, two
// bytes a letter): the largest request a payroll of n employees sends.
func maxMpinRequest(n int) ([]byte, error) {
	sp := func(s string) *string { return &s }
	ip := func(i int) *int { return &i }
	m := func(s string) filing.Money { return filing.M(s) }
	num := func(s string) filing.Num { return filing.N(s) }
	company := filing.Company{
		Name: "DIZAJNIJA DOOEL SKOPJE", NameCyr: sp("Дизајнија ДООЕЛ Скопје"), TaxID: sp("4030990123455"),
		RegistrationNumber: sp("1234567"), Address: sp("Булевар Партизански одреди 101"), AddressStreet: sp("Булевар Партизански одреди"),
		AddressNumber: sp("101"), AddressArea: sp("Карпош"), PostalCode: sp("1000"), Fax: sp("023100100"), City: sp("Скопје"),
		MunicipalityCode: sp("179"), ManagerName: sp("Марија Николовска"), Phone: sp("023100101"), Email: sp("plati@dizajnija.mk"),
		AreaCode: sp("02"), FzomBranch: sp("4061"),
	}
	req := filing.MpinRequest{
		Company: company,
		Batch:   filing.Batch{PeriodMonth: 5, PeriodYear: 2026, WorkingHours: num("152"), VidObvrska: sp("101"), VidObvrznik: sp("110")},
		Force:   true,
		Records: make([]filing.Record, n),
	}
	last := strings.Repeat("Ж", 36)
	first := strings.Repeat("Љ", 26)
	for i := range req.Records {
		embg, err := embgFor(i)
		if err != nil {
			return nil, err
		}
		account, err := accountFor(i)
		if err != nil {
			return nil, err
		}
		gross := money.FromInt(int64(30000 + i%50000)).Add(money.New(int64(i%100), 2))
		pen, hea := gross.Mul(money.MustParse("0.188")).Round(2), gross.Mul(money.MustParse("0.075")).Round(2)
		inj, emp := gross.Mul(money.MustParse("0.005")).Round(2), gross.Mul(money.MustParse("0.012")).Round(2)
		contrib := pen.Add(hea).Add(inj).Add(emp)
		pit := money.Max(gross.Sub(contrib).Sub(money.FromInt(10932)), money.Amount{}).Mul(money.MustParse("0.1")).Round(2)
		net := gross.Sub(contrib).Sub(pit)
		d := func(v money.Amount) filing.Money { return filing.Money{D: v, Set: true} }
		req.Records[i] = filing.Record{
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
		}
	}
	return json.Marshal(req)
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
